//! Hot-spot scattering for range-partitioned SQL stores.
//!
//! Time-sortable IDs are sequential, and a store that splits its key space into ranges (TiDB,
//! CockroachDB, Spanner) sends every new row to the one range holding the newest keys: one
//! node takes all the writes. Scattering is a reversible transform applied to the key before
//! it is written, and undone when it is read back. It trades away range scans by time on the
//! key itself (keep the unscattered ID in a column for those) for writes spread over ranges.
//! Use it only for such stores; PostgreSQL and MySQL B-trees *prefer* sequential keys.

use crate::{Error, Layout};

/// How many high time bits [`Layout::scatter_bits`] flips: 2^8 = 256 key ranges.
pub const SCATTER_BITS: u32 = 8;

/// Powers of ten that fit in a `u64`: `POW10[n] = 10^n`.
const POW10: [u64; 20] = {
    let mut table = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        table[i] = table[i - 1] * 10;
        i += 1;
    }
    table
};

/// The number of decimal digits of `n` (1 for 0).
const fn decimal_digits(n: u64) -> usize {
    let mut digits = 1;
    while digits < 20 && n >= POW10[digits] {
        digits += 1;
    }
    digits
}

impl Layout {
    /// TiDB's decimal scattering: moves the ID's last decimal digit to the second position,
    /// keeping the digit count (`1234567` → `1723456`). The last digit of a time-sortable ID
    /// changes with every ID, so consecutive IDs land ten ranges apart. Undo with
    /// [`Layout::gather_decimal`]. IDs below 100 are unchanged.
    ///
    /// # Errors
    /// [`Error::InvalidId`] when `id` is not valid for the layout; [`Error::ScatterOverflow`]
    /// when the scattered value is above the layout's largest ID (for example
    /// `9223372036854775807` in a signed layout). Prefer [`Layout::scatter_bits`], which never
    /// leaves the range, unless you need TiDB's exact transform.
    pub const fn scatter_decimal(&self, id: u64) -> Result<u64, Error> {
        if let Err(e) = self.validate_id(id) {
            return Err(e);
        }
        let digits = decimal_digits(id);
        if digits < 3 {
            return Ok(id);
        }
        let low = POW10[digits - 2];
        let last = id % 10;
        let rest = id / 10; // digits - 1 digits: the first digit, then digits - 2 more
        let first = rest / low;
        let middle = rest % low;
        // first * 10^(digits-1) + last * 10^(digits-2) + middle, checked: 20-digit IDs overflow.
        let scattered = match (first * 10 + last).checked_mul(low) {
            Some(high) => high.checked_add(middle),
            None => None,
        };
        match scattered {
            Some(s) if s <= self.max_id() => Ok(s),
            _ => Err(Error::ScatterOverflow { id }),
        }
    }

    /// The inverse of [`Layout::scatter_decimal`]: moves the second decimal digit to the end.
    ///
    /// # Errors
    /// [`Error::InvalidId`] when `scattered` is not the image of a valid ID.
    pub const fn gather_decimal(&self, scattered: u64) -> Result<u64, Error> {
        let digits = decimal_digits(scattered);
        if digits < 3 {
            return self.validate_id(scattered);
        }
        let low = POW10[digits - 2];
        let first = scattered / POW10[digits - 1];
        let moved = (scattered / low) % 10;
        let middle = scattered % low;
        let gathered = match (first * low + middle).checked_mul(10) {
            Some(v) => v.checked_add(moved),
            None => None,
        };
        match gathered {
            Some(id) if id <= self.max_id() => Ok(id),
            _ => Err(Error::InvalidId { id: scattered }),
        }
    }

    /// Bit-level scattering that never leaves the layout's range: flips the top
    /// [`SCATTER_BITS`] bits of the time field by the low bits of `time ^ sequence`.
    ///
    /// Consecutive IDs differ in the low time bits (one per time unit) or the low sequence bits
    /// (within a unit), so they land in up to 256 different top-level key ranges. The transform
    /// is its own inverse ([`Layout::gather_bits`] is the same function) and works for every
    /// valid ID, unlike [`Layout::scatter_decimal`]. For layouts with fewer than 16 time bits
    /// it flips half of them.
    ///
    /// # Errors
    /// [`Error::InvalidId`] when `id` is not valid for the layout.
    pub const fn scatter_bits(&self, id: u64) -> Result<u64, Error> {
        if let Err(e) = self.validate_id(id) {
            return Err(e);
        }
        let time_bits = self.id_bits() - self.time_shift();
        let k = if time_bits / 2 < SCATTER_BITS {
            time_bits / 2
        } else {
            SCATTER_BITS
        };
        if k == 0 {
            return Ok(id); // a 1-bit time field has nothing to flip
        }
        let units = id >> self.time_shift();
        let sequence = (id >> self.sequence_shift()) & self.max_sequence();
        // The source bits (low k bits of the time field, and the sequence) are never among the
        // flipped ones (the top k time bits, k <= time_bits / 2), so applying it twice undoes it.
        let flip = (units ^ sequence) & crate::layout::mask(k);
        Ok(id ^ (flip << (self.id_bits() - k)))
    }

    /// The inverse of [`Layout::scatter_bits`] (the transform is its own inverse).
    ///
    /// # Errors
    /// [`Error::InvalidId`] when `scattered` is not valid for the layout.
    pub const fn gather_bits(&self, scattered: u64) -> Result<u64, Error> {
        self.scatter_bits(scattered)
    }
}
