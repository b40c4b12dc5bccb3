//! The one error type of the crate.
//!
//! Every binding maps these kinds one-to-one (a C status code, a Python exception class, a JS
//! `err.code`), so the kinds are few, stable and carry only `Copy` data: no allocation, and a
//! message that says what was wrong and by how much.

use core::fmt;

/// What went wrong. Small and `Copy`; [`Error::code`] is the stable name bindings expose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// The layout's parameters do not describe a usable ID space.
    InvalidLayout {
        /// Which rule the layout broke.
        reason: &'static str,
    },
    /// A shard number does not fit the layout's shard field.
    ShardOutOfRange {
        /// The shard that was asked for.
        shard: u64,
        /// The largest shard the layout can hold.
        max: u64,
    },
    /// A sequence number does not fit the layout's sequence field.
    SequenceOutOfRange {
        /// The sequence that was asked for.
        sequence: u64,
        /// The largest sequence the layout can hold.
        max: u64,
    },
    /// A count of logical shards that is zero or larger than the layout's shard field holds.
    InvalidShardCount {
        /// The count that was asked for.
        count: u64,
        /// The largest count the layout allows.
        max: u64,
    },
    /// The value is not an ID this layout can produce (bits outside its width, or the sign bit
    /// of a layout that must fit a signed 64-bit column).
    InvalidId {
        /// The rejected value.
        id: u64,
    },
    /// Scattering would produce a value that does not fit the layout's ID range.
    ScatterOverflow {
        /// The ID that could not be scattered.
        id: u64,
    },
    /// A timestamp earlier than the layout's epoch.
    TimestampBeforeEpoch {
        /// The timestamp, Unix milliseconds.
        timestamp_ms: u64,
        /// The layout's epoch, Unix milliseconds.
        epoch_ms: u64,
    },
    /// A timestamp later than the last one the layout can represent.
    TimestampPastExpiry {
        /// The timestamp, Unix milliseconds.
        timestamp_ms: u64,
        /// The last representable timestamp, Unix milliseconds.
        expires_at_ms: u64,
    },
    /// The clock is further behind the last issued ID than the generator tolerates.
    ClockMovedBackwards {
        /// How far the clock is behind the last issued ID's time, in milliseconds.
        behind_ms: u64,
        /// The generator's configured tolerance, in milliseconds.
        tolerance_ms: u64,
    },
    /// Every sequence number of the current time unit (and of every unit the generator may
    /// borrow) is used. Nothing was issued; retry once the clock reads `retry_at_ms`.
    SequenceExhausted {
        /// The first Unix millisecond at which a retry can succeed.
        retry_at_ms: u64,
    },
}

impl Error {
    /// The stable, language-neutral name of this error's kind, e.g. `"INVALID_ID"`.
    ///
    /// The conformance vectors, the JavaScript `err.code` and the C status names all use it.
    pub const fn code(&self) -> &'static str {
        match self {
            Self::InvalidLayout { .. } => "INVALID_LAYOUT",
            Self::ShardOutOfRange { .. } => "SHARD_OUT_OF_RANGE",
            Self::SequenceOutOfRange { .. } => "SEQUENCE_OUT_OF_RANGE",
            Self::InvalidShardCount { .. } => "INVALID_SHARD_COUNT",
            Self::InvalidId { .. } => "INVALID_ID",
            Self::ScatterOverflow { .. } => "SCATTER_OVERFLOW",
            Self::TimestampBeforeEpoch { .. } => "TIMESTAMP_BEFORE_EPOCH",
            Self::TimestampPastExpiry { .. } => "TIMESTAMP_PAST_EXPIRY",
            Self::ClockMovedBackwards { .. } => "CLOCK_MOVED_BACKWARDS",
            Self::SequenceExhausted { .. } => "SEQUENCE_EXHAUSTED",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::InvalidLayout { reason } => write!(f, "invalid layout: {reason}"),
            Self::ShardOutOfRange { shard, max } => {
                write!(
                    f,
                    "shard {shard} is out of range: the layout holds 0..={max}"
                )
            }
            Self::SequenceOutOfRange { sequence, max } => {
                write!(
                    f,
                    "sequence {sequence} is out of range: the layout holds 0..={max}"
                )
            }
            Self::InvalidShardCount { count, max } => {
                write!(
                    f,
                    "logical shard count {count} is invalid: it must be in 1..={max}"
                )
            }
            Self::InvalidId { id } => write!(f, "{id} is not a valid ID for this layout"),
            Self::ScatterOverflow { id } => {
                write!(
                    f,
                    "scattering {id} gives a value outside the layout's ID range"
                )
            }
            Self::TimestampBeforeEpoch {
                timestamp_ms,
                epoch_ms,
            } => write!(
                f,
                "timestamp {timestamp_ms} ms is before the layout's epoch {epoch_ms} ms"
            ),
            Self::TimestampPastExpiry {
                timestamp_ms,
                expires_at_ms,
            } => write!(
                f,
                "timestamp {timestamp_ms} ms is past the layout's last representable time {expires_at_ms} ms"
            ),
            Self::ClockMovedBackwards {
                behind_ms,
                tolerance_ms,
            } => write!(
                f,
                "clock moved backwards: {behind_ms} ms behind the last issued ID (tolerance {tolerance_ms} ms)"
            ),
            Self::SequenceExhausted { retry_at_ms } => write!(
                f,
                "sequence exhausted for this time unit; retry at {retry_at_ms} ms"
            ),
        }
    }
}

impl core::error::Error for Error {}
