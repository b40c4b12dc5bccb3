//! The rules for a 64-bit argument, as every binding applies them before the core sees it.
//!
//! Bindings take IDs, shards, times and counts from dynamic languages: a Python `int` of any
//! size, a JavaScript `bigint`, `number` or decimal string. Each binding converts, but which
//! error a bad value gets — and what the message says — is decided here, once, so that
//! `shard=-1` is a `SHARD_OUT_OF_RANGE` in C, Python, Node and the browser alike.
//!
//! The rules:
//! - a value of the wrong type (a string for a shard, a float in Python, `null`) is
//!   `INVALID_ARGUMENT` (Python's and JavaScript's `TypeError`);
//! - an integer outside `0..2^64` — negative, too large, or in JavaScript a `number` that is
//!   not a safe integer — is the argument's own kind ([`Arg::kind`]): `INVALID_ID` for an ID,
//!   `SHARD_OUT_OF_RANGE` for a shard, `TIMESTAMP_BEFORE_EPOCH` for a negative time, ...;
//! - only IDs are also taken as decimal text ([`crate::parse_decimal`]: ASCII digits, nothing
//!   else), and only times as a date object;
//! - the message is `<argument> <reason>`, with the reason from [`Problem::reason`].

use crate::ErrorKind;

/// What an argument is; decides its error kind and what it accepts besides an integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Arg {
    /// An ID: decimal text accepted too.
    Id,
    /// A shard of a layout.
    Shard,
    /// A sequence of a layout.
    Sequence,
    /// A count of logical shards.
    LogicalShards,
    /// A time in Unix milliseconds: a date object accepted too.
    Timestamp,
    /// A field of a custom layout (epoch, unit, widths).
    LayoutField,
    /// Anything else: a key, a count of IDs, an option.
    Other,
}

/// What is wrong with an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Problem {
    /// An integer below 0.
    Negative,
    /// An integer of 2^64 or more.
    TooLarge,
    /// A number that is not an integer (a fraction, NaN, an infinity).
    NotInteger,
    /// A JavaScript `number` above 2^53 - 1, which may already have been rounded.
    Unsafe,
    /// Text that is not 1 to 20 ASCII digits of a value below 2^64.
    NotDecimal,
    /// A date object that holds no time.
    InvalidDate,
    /// A value of a type the argument does not take.
    WrongType,
}

impl Arg {
    /// Every argument kind, for the tables generated from this one.
    pub const ALL: [Arg; 7] = [
        Arg::Id,
        Arg::Shard,
        Arg::Sequence,
        Arg::LogicalShards,
        Arg::Timestamp,
        Arg::LayoutField,
        Arg::Other,
    ];

    /// The error kind for `problem` with this argument.
    pub const fn kind(self, problem: Problem) -> ErrorKind {
        match (self, problem) {
            (_, Problem::WrongType | Problem::InvalidDate) | (Arg::Other, _) => {
                ErrorKind::InvalidArgument
            }
            (Arg::Id, _) => ErrorKind::InvalidId,
            (Arg::Shard, _) => ErrorKind::ShardOutOfRange,
            (Arg::Sequence, _) => ErrorKind::SequenceOutOfRange,
            (Arg::LogicalShards, _) => ErrorKind::InvalidShardCount,
            (Arg::Timestamp, Problem::Negative) => ErrorKind::TimestampBeforeEpoch,
            // A fraction of a millisecond is neither before the epoch nor past the expiry.
            (Arg::Timestamp, Problem::NotInteger) => ErrorKind::InvalidArgument,
            (Arg::Timestamp, _) => ErrorKind::TimestampPastExpiry,
            (Arg::LayoutField, _) => ErrorKind::InvalidLayout,
        }
    }

    /// Whether the argument is also taken as decimal text (IDs, as they travel in JSON).
    pub const fn accepts_text(self) -> bool {
        matches!(self, Arg::Id)
    }

    /// Whether the argument is also taken as a date object (times).
    pub const fn accepts_date(self) -> bool {
        matches!(self, Arg::Timestamp)
    }

    /// A name for the tables generated from this one (`"logical_shards"`).
    pub const fn name(self) -> &'static str {
        match self {
            Arg::Id => "id",
            Arg::Shard => "shard",
            Arg::Sequence => "sequence",
            Arg::LogicalShards => "logical_shards",
            Arg::Timestamp => "timestamp",
            Arg::LayoutField => "layout_field",
            Arg::Other => "other",
        }
    }
}

impl Problem {
    /// Every problem, for the tables generated from this one.
    pub const ALL: [Problem; 7] = [
        Problem::Negative,
        Problem::TooLarge,
        Problem::NotInteger,
        Problem::Unsafe,
        Problem::NotDecimal,
        Problem::InvalidDate,
        Problem::WrongType,
    ];

    /// The problem in words, after the argument's name (`"shard is negative"`). For
    /// [`Problem::WrongType`] the binding adds what was expected, in its language's words.
    pub const fn reason(self, arg: Arg) -> &'static str {
        match self {
            Problem::Negative => "is negative",
            Problem::TooLarge => "does not fit in 64 bits",
            Problem::NotInteger => "is not an integer",
            Problem::Unsafe if arg.accepts_text() => {
                "is not a safe integer (above 2^53): pass a bigint or a decimal string"
            }
            Problem::Unsafe => "is not a safe integer (above 2^53): pass a bigint",
            Problem::NotDecimal => "is not a decimal integer in 0..2^64",
            Problem::InvalidDate => "is an invalid date",
            Problem::WrongType => "has the wrong type",
        }
    }

    /// A name for the tables generated from this one (`"not_decimal"`).
    pub const fn name(self) -> &'static str {
        match self {
            Problem::Negative => "negative",
            Problem::TooLarge => "too_large",
            Problem::NotInteger => "not_integer",
            Problem::Unsafe => "unsafe",
            Problem::NotDecimal => "not_decimal",
            Problem::InvalidDate => "invalid_date",
            Problem::WrongType => "wrong_type",
        }
    }
}

/// The most IDs one batch call of a binding makes (`next_ids(n)`, `nextIds(n)`): 2^24 =
/// 16,777,216, 128 MiB of IDs, and at least 16 s of a layout's time units at 1,024 IDs a
/// millisecond (Instagram's). A count above it is refused (`INVALID_ARGUMENT`, reason
/// [`TOO_MANY_IDS`]) before anything is allocated, so that no argument can make a binding
/// abort its host process on a failed allocation, or block it for hours; ask in batches.
pub const MAX_BATCH_IDS: u64 = 1 << 24;

/// The reason a count above [`MAX_BATCH_IDS`] is refused with.
pub const TOO_MANY_IDS: &str = "must be at most 16777216 IDs per call: ask in batches";

/// Checks the count of a batch call: the count as a `usize`, or the reason it is refused
/// ([`TOO_MANY_IDS`]).
///
/// # Errors
/// [`TOO_MANY_IDS`] above [`MAX_BATCH_IDS`].
pub const fn check_batch_count(n: u64) -> Result<usize, &'static str> {
    if n > MAX_BATCH_IDS {
        Err(TOO_MANY_IDS)
    } else {
        // At most 2^24: fits every usize the core builds for (16 bits and up would not, but
        // bindings run on 32- and 64-bit targets).
        #[allow(clippy::cast_possible_truncation)]
        Ok(n as usize)
    }
}

#[cfg(test)]
mod batch_tests {
    use super::*;

    #[test]
    fn batch_counts_are_bounded() {
        assert_eq!(check_batch_count(0), Ok(0));
        assert_eq!(check_batch_count(MAX_BATCH_IDS), Ok(1 << 24));
        assert_eq!(check_batch_count(MAX_BATCH_IDS + 1), Err(TOO_MANY_IDS));
        assert_eq!(check_batch_count(u64::MAX), Err(TOO_MANY_IDS));
        assert!(TOO_MANY_IDS.contains("16777216"));
        assert_eq!(MAX_BATCH_IDS, 16_777_216);
    }
}
