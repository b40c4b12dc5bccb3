//! What JavaScript numbers and `Date`s can hold, for the two JavaScript bindings (the Node
//! addon and the WebAssembly module), which must agree on it.
//!
//! Both hand shards, sequences and times to JavaScript as `number`s and IDs as `bigint`s, so a
//! layout whose shards, sequences or times do not fit a `number` exactly is refused when it is
//! built there, rather than decoded into silently rounded values; and a `number` argument is
//! taken only when it is an exact, non-negative integer.

use crate::{Error, Layout};

/// The largest integer a JavaScript `number` holds exactly: 2^53 - 1.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// The last Unix millisecond a JavaScript `Date` holds.
pub const MAX_DATE_MS: u64 = 8_640_000_000_000_000;

/// Checks that a layout's shards, sequences and times fit JavaScript `number`s and `Date`s.
///
/// # Errors
/// [`Error::InvalidLayout`] saying so.
pub const fn check_layout(layout: &Layout) -> Result<(), Error> {
    if layout.max_shard() > MAX_SAFE_INTEGER
        || layout.max_sequence() > MAX_SAFE_INTEGER
        || layout.expires_at_ms() > MAX_DATE_MS
    {
        Err(Error::InvalidLayout {
            reason: "its shards, sequences or times do not fit JavaScript numbers and Dates",
        })
    } else {
        Ok(())
    }
}

/// Why a JavaScript `number` is not a 64-bit unsigned integer argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberProblem {
    /// A negative integer.
    Negative,
    /// Not an integer, not finite, or above [`MAX_SAFE_INTEGER`] (where it may already have
    /// been rounded): such a value must come as a `bigint` or a decimal string.
    NotSafeInteger,
}

impl NumberProblem {
    /// The problem in words, after the argument's name: `"shard is negative"`.
    pub const fn reason(self) -> &'static str {
        match self {
            Self::Negative => "is negative",
            Self::NotSafeInteger => "is not a safe integer: pass a bigint or a decimal string",
        }
    }
}

/// A JavaScript `number` as a `u64`, only when it is a non-negative safe integer.
///
/// # Errors
/// The [`NumberProblem`].
#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::float_cmp // exactness is the point: an integer-valued f64
)]
pub fn u64_from_number(value: f64) -> Result<u64, NumberProblem> {
    // 2^53 - 1 is exact in an f64; NaN fails every comparison.
    let safe = value.abs() <= MAX_SAFE_INTEGER as f64 && value == (value as i64) as f64;
    if !safe {
        Err(NumberProblem::NotSafeInteger)
    } else if value < 0.0 {
        Err(NumberProblem::Negative)
    } else {
        Ok(value as u64)
    }
}
