//! The one error type of the crate.
//!
//! Each variant is one [`ErrorKind`] of the shared table in `kind.rs`, which every binding maps
//! one-to-one (a C status code, a Python exception class, a JS `err.code`), so the kinds are
//! few, stable and carry only `Copy` data: no allocation, and a message (the kind's template)
//! that says what was wrong and by how much.

use core::fmt;

use crate::ErrorKind;

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
    /// An argument with no error kind of its own has the wrong value: a public IDs' key,
    /// prefix, key version or encoding.
    InvalidArgument {
        /// The argument's name.
        argument: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A public ID does not start with its type's prefix and `_`.
    PublicIdPrefix,
    /// A public ID's body has the wrong length for its encoding.
    PublicIdLength {
        /// The body's length in the encoding, in symbols.
        expected: u64,
    },
    /// A public ID has a character outside its encoding's alphabet.
    PublicIdAlphabet {
        /// Where, counted from 0 with the prefix (every character before it is ASCII, so
        /// bytes, characters and UTF-16 units count alike).
        position: u64,
    },
    /// A public ID's check symbol does not match its body.
    PublicIdCheck,
    /// A public ID names a key version the decoder does not hold.
    UnknownKeyVersion {
        /// The version the text names.
        version: u64,
    },
    /// A public ID's digits spell a value of 2^64 or more.
    PublicIdOverflow,
    /// A public ID decodes to a value that is not an ID of the layout: made under another key
    /// or type, or forged. The value is not shown (that would decrypt texts for anyone).
    PublicIdMismatch,
}

impl Error {
    /// This error's kind: its stable number, code, class name and message template.
    pub const fn kind(&self) -> ErrorKind {
        match self {
            Self::InvalidLayout { .. } => ErrorKind::InvalidLayout,
            Self::ShardOutOfRange { .. } => ErrorKind::ShardOutOfRange,
            Self::SequenceOutOfRange { .. } => ErrorKind::SequenceOutOfRange,
            Self::InvalidShardCount { .. } => ErrorKind::InvalidShardCount,
            Self::InvalidId { .. } => ErrorKind::InvalidId,
            Self::ScatterOverflow { .. } => ErrorKind::ScatterOverflow,
            Self::TimestampBeforeEpoch { .. } => ErrorKind::TimestampBeforeEpoch,
            Self::TimestampPastExpiry { .. } => ErrorKind::TimestampPastExpiry,
            Self::ClockMovedBackwards { .. } => ErrorKind::ClockMovedBackwards,
            Self::SequenceExhausted { .. } => ErrorKind::SequenceExhausted,
            Self::InvalidArgument { .. } => ErrorKind::InvalidArgument,
            Self::PublicIdPrefix => ErrorKind::PublicIdPrefix,
            Self::PublicIdLength { .. } => ErrorKind::PublicIdLength,
            Self::PublicIdAlphabet { .. } => ErrorKind::PublicIdAlphabet,
            Self::PublicIdCheck => ErrorKind::PublicIdCheck,
            Self::UnknownKeyVersion { .. } => ErrorKind::UnknownKeyVersion,
            Self::PublicIdOverflow => ErrorKind::PublicIdOverflow,
            Self::PublicIdMismatch => ErrorKind::PublicIdMismatch,
        }
    }

    /// The stable, language-neutral name of this error's kind, e.g. `"INVALID_ID"`.
    ///
    /// The conformance vectors, the JavaScript `err.code` and the C status names all use it.
    pub const fn code(&self) -> &'static str {
        self.kind().code()
    }

    /// The error's fields, in the order of [`ErrorKind::fields`]: what every binding puts on
    /// its exception (`err.retry_at_ms` in Python, `err.retryAtMs` in JavaScript).
    pub const fn fields(&self) -> Fields {
        use FieldValue::{Int, Text};
        let values: [FieldValue; 2] = match *self {
            Self::InvalidLayout { reason } => [Text(reason), Int(0)],
            Self::InvalidArgument { argument, reason } => [Text(argument), Text(reason)],
            Self::ShardOutOfRange { shard: a, max: b }
            | Self::SequenceOutOfRange {
                sequence: a,
                max: b,
            }
            | Self::InvalidShardCount { count: a, max: b }
            | Self::TimestampBeforeEpoch {
                timestamp_ms: a,
                epoch_ms: b,
            }
            | Self::TimestampPastExpiry {
                timestamp_ms: a,
                expires_at_ms: b,
            }
            | Self::ClockMovedBackwards {
                behind_ms: a,
                tolerance_ms: b,
            } => [Int(a), Int(b)],
            Self::InvalidId { id: a }
            | Self::ScatterOverflow { id: a }
            | Self::SequenceExhausted { retry_at_ms: a }
            | Self::PublicIdLength { expected: a }
            | Self::PublicIdAlphabet { position: a }
            | Self::UnknownKeyVersion { version: a } => [Int(a), Int(0)],
            Self::PublicIdPrefix
            | Self::PublicIdCheck
            | Self::PublicIdOverflow
            | Self::PublicIdMismatch => [Int(0), Int(0)],
        };
        Fields {
            names: self.kind().fields(),
            values,
        }
    }

    /// The value of the field `name`, if the error has one.
    pub fn field(&self, name: &str) -> Option<FieldValue> {
        self.fields().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}

/// The value of an error field: a number, or a text for a reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldValue {
    /// A 64-bit number (an ID, a shard, a time in Unix milliseconds, ...).
    Int(u64),
    /// A static text, such as the rule an invalid layout broke.
    Text(&'static str),
}

impl fmt::Display for FieldValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Int(v) => v.fmt(f),
            Self::Text(t) => f.write_str(t),
        }
    }
}

/// The `(name, value)` pairs of an error's fields; see [`Error::fields`].
#[derive(Clone, Debug)]
pub struct Fields {
    names: &'static [&'static str],
    values: [FieldValue; 2],
}

impl Iterator for Fields {
    type Item = (&'static str, FieldValue);

    fn next(&mut self) -> Option<Self::Item> {
        let (name, rest) = self.names.split_first()?;
        let value = self.values[0];
        self.values[0] = self.values[1];
        self.names = rest;
        Some((name, value))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.kind().render(f, |name, out| match self.field(name) {
            Some(value) => write!(out, "{value}"),
            None => Ok(()),
        })
    }
}

impl core::error::Error for Error {}
