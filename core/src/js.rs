//! What JavaScript numbers and `Date`s can hold, for the two JavaScript bindings (the Node
//! addon and the WebAssembly module), which must agree on it.
//!
//! Both hand shards, sequences and times to JavaScript as `number`s and IDs as `bigint`s, so a
//! layout whose shards, sequences or times do not fit a `number` exactly is refused when it is
//! built there, rather than decoded into silently rounded values; and a `number` argument is
//! taken only when it is an exact, non-negative integer.

use crate::args::Problem;
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

/// A JavaScript `number` as a `u64`, only when it is a non-negative safe integer.
///
/// # Errors
/// [`Problem::NotInteger`] for a fraction, NaN or an infinity, [`Problem::Unsafe`] above
/// [`MAX_SAFE_INTEGER`] (where it may already have been rounded), [`Problem::Negative`].
#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::float_cmp // exactness is the point: an integer-valued f64
)]
pub fn u64_from_number(value: f64) -> Result<u64, Problem> {
    if !value.is_finite() || value != (value as i64) as f64 {
        // `as i64` saturates, so only integers below 2^63 in magnitude compare equal.
        return Err(
            if value.is_finite() && value.abs() > MAX_SAFE_INTEGER as f64 {
                Problem::Unsafe
            } else {
                Problem::NotInteger
            },
        );
    }
    if value.abs() > MAX_SAFE_INTEGER as f64 {
        Err(Problem::Unsafe)
    } else if value < 0.0 {
        Err(Problem::Negative)
    } else {
        Ok(value as u64)
    }
}

/// Where a layout's fields lie in its IDs, for JavaScript to decode single IDs itself: a call
/// into the WebAssembly module costs more than a whole decode. `[time_shift, time_width,
/// shard_shift, shard_width, sequence_shift, sequence_width, id_bits]`: each field is `width`
/// bits from bit `shift`; a valid ID (at most [`Layout::max_id`]) has no bit at or above
/// `id_bits`, and its timestamp is `time * unit_ms + epoch_ms`.
///
/// JS applies them to the ID's two 32-bit halves with its 32-bit operators (`BigInt`
/// operators allocate); a JS layout's fields fit 53 bits ([`check_layout`]), so every field
/// and timestamp is exact in a `number`. The JS suites test that decode against the core's,
/// ID by ID.
#[must_use]
pub const fn field_positions(layout: &Layout) -> [u64; 7] {
    let id_bits = layout.id_bits();
    [
        layout.time_shift() as u64,
        (id_bits - layout.time_shift()) as u64,
        layout.shard_shift() as u64,
        layout.shard_bits() as u64,
        layout.sequence_shift() as u64,
        layout.sequence_bits() as u64,
        id_bits as u64,
    ]
}
