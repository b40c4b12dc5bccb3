//! IDs in serde formats (feature `serde`, `no_std`): as decimal strings or as numbers, chosen
//! per field.
//!
//! Most IDs are above 2^53, where JavaScript's `JSON.parse` rounds numbers, so an API read by
//! JavaScript should send them as strings:
//!
//! ```
//! # #[cfg(feature = "serde")] {
//! #[derive(serde::Serialize, serde::Deserialize)]
//! struct Note {
//!     #[serde(with = "shardid::serde::as_string")]
//!     id: u64,
//! }
//! # }
//! ```
//!
//! [`as_string`] writes a decimal string and reads a string of plain ASCII digits (the same
//! rule as every binding's, [`crate::parse_decimal`]) or an integer; [`as_number`] writes and
//! reads integers, for consumers that keep 64 bits (Rust, Python, Go). Neither reads a float:
//! one above 2^53 has already lost digits.

use core::fmt;

use serde::de::{self, Visitor};
use serde::{Deserializer, Serializer};

/// Reads an ID from a decimal string or an integer (not a float, sign or space).
struct IdVisitor;

impl Visitor<'_> for IdVisitor {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an ID: a decimal string of 1 to 20 ASCII digits, or an integer in 0..2^64")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        Ok(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
        u64::try_from(v).map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
        crate::parse_decimal(v.as_bytes())
            .ok_or_else(|| E::invalid_value(de::Unexpected::Str(v), &self))
    }
}

/// `#[serde(with = "shardid::serde::as_string")]`: a decimal string out; a decimal string or an
/// integer in.
pub mod as_string {
    use super::{Deserializer, IdVisitor, Serializer};

    /// Writes `id` as a decimal string.
    ///
    /// # Errors
    /// The serializer's.
    #[allow(clippy::trivially_copy_pass_by_ref)] // serde's `with` passes a reference
    pub fn serialize<S: Serializer>(id: &u64, serializer: S) -> Result<S::Ok, S::Error> {
        // At most 20 digits: formatted on the stack, no allocation.
        let mut buf = [0u8; 20];
        let mut at = buf.len();
        let mut v = *id;
        loop {
            at -= 1;
            buf[at] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        // Only ASCII digits were written.
        serializer.serialize_str(core::str::from_utf8(&buf[at..]).unwrap_or_default())
    }

    /// Reads an ID from a decimal string or an integer.
    ///
    /// # Errors
    /// Anything else: a float, a negative number, a sign, a space, more than 20 digits, 2^64.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
        deserializer.deserialize_any(IdVisitor)
    }
}

/// `#[serde(with = "shardid::serde::as_number")]`: an integer out; an integer or a decimal
/// string in.
pub mod as_number {
    use super::{Deserializer, IdVisitor, Serializer};

    /// Writes `id` as an integer.
    ///
    /// # Errors
    /// The serializer's.
    #[allow(clippy::trivially_copy_pass_by_ref)] // serde's `with` passes a reference
    pub fn serialize<S: Serializer>(id: &u64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(*id)
    }

    /// Reads an ID from an integer or a decimal string.
    ///
    /// # Errors
    /// As [`super::as_string::deserialize`].
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
        deserializer.deserialize_any(IdVisitor)
    }
}
