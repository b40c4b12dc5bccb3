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

/// How many trailing decimal digits [`Layout::scatter_decimal_digits`] moves: 1, 2 or 3 (10,
/// 100 or 1,000 key ranges), the three TiDB measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScatterDigits(u8);

impl ScatterDigits {
    /// One digit: TiDB's transform, [`Layout::scatter_decimal`].
    pub const ONE: Self = Self(1);
    /// The most digits moved.
    pub const MAX: u32 = 3;
    /// The reason a count of digits outside `1..=3` is refused with (`INVALID_ARGUMENT`).
    pub const INVALID: &'static str = "must be 1, 2 or 3";

    /// `digits` if it is 1, 2 or 3.
    pub const fn new(digits: u64) -> Option<Self> {
        match digits {
            // At most 3: fits a u8.
            #[allow(clippy::cast_possible_truncation)]
            1..=3 => Some(Self(digits as u8)),
            _ => None,
        }
    }

    /// The count of digits.
    pub const fn get(self) -> u32 {
        self.0 as u32
    }
}

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
    /// [`Layout::gather_decimal`]. IDs below 100 are unchanged. The same as
    /// [`Layout::scatter_decimal_digits`] with one digit.
    ///
    /// # Errors
    /// [`Error::InvalidId`] when `id` is not valid for the layout; [`Error::ScatterOverflow`]
    /// when the scattered value is above the layout's largest ID (for example
    /// `9223372036854775807` in a signed layout). Prefer [`Layout::scatter_bits`], which never
    /// leaves the range, unless you need TiDB's exact transform.
    pub const fn scatter_decimal(&self, id: u64) -> Result<u64, Error> {
        self.scatter_decimal_digits(id, ScatterDigits::ONE)
    }

    /// The inverse of [`Layout::scatter_decimal`]: moves the second decimal digit to the end.
    ///
    /// # Errors
    /// [`Error::InvalidId`] when `scattered` is not the image of a valid ID.
    pub const fn gather_decimal(&self, scattered: u64) -> Result<u64, Error> {
        self.gather_decimal_digits(scattered, ScatterDigits::ONE)
    }

    /// TiDB's decimal scattering by `digits` trailing digits: moves the ID's last 1, 2 or 3
    /// decimal digits to just after its first digit, keeping the digit count (`1234567` by two
    /// → `1672345`), so consecutive IDs spread over 10, 100 or 1,000 key ranges. TiDB's
    /// engineers measured all three and advise matching the number of ranges to the number of
    /// `TiKV` instances: more ranges than instances slowed their writes. IDs of fewer than
    /// `digits + 2` digits are unchanged. Undo with [`Layout::gather_decimal_digits`].
    ///
    /// # Errors
    /// As [`Layout::scatter_decimal`].
    pub const fn scatter_decimal_digits(
        &self,
        id: u64,
        digits: ScatterDigits,
    ) -> Result<u64, Error> {
        if let Err(e) = self.validate_id(id) {
            return Err(e);
        }
        let k = digits.get() as usize;
        let d = decimal_digits(id);
        if d < k + 2 {
            return Ok(id);
        }
        let low = POW10[d - 1 - k]; // the middle digits' place
        let moved = id % POW10[k];
        let rest = id / POW10[k]; // the first digit, then d - 1 - k more
        let first = rest / low;
        let middle = rest % low;
        // (first * 10^k + moved) * 10^(d-1-k) + middle, checked: 20-digit IDs overflow.
        let scattered = match (first * POW10[k] + moved).checked_mul(low) {
            Some(high) => high.checked_add(middle),
            None => None,
        };
        match scattered {
            Some(s) if s <= self.max_id() => Ok(s),
            _ => Err(Error::ScatterOverflow { id }),
        }
    }

    /// The inverse of [`Layout::scatter_decimal_digits`]: moves the `digits` digits after the
    /// first back to the end.
    ///
    /// # Errors
    /// [`Error::InvalidId`] when `scattered` is not the image of a valid ID.
    pub const fn gather_decimal_digits(
        &self,
        scattered: u64,
        digits: ScatterDigits,
    ) -> Result<u64, Error> {
        // Scattering never goes above the layout's largest ID, so nothing above it is an image
        // (without this, a value above it would gather to a valid ID that scatters elsewhere:
        // found by the fuzzer, `fuzz/fuzz_targets/scatter.rs`).
        if scattered > self.max_id() {
            return Err(Error::InvalidId { id: scattered });
        }
        let k = digits.get() as usize;
        let d = decimal_digits(scattered);
        if d < k + 2 {
            return self.validate_id(scattered);
        }
        let low = POW10[d - 1 - k];
        let first = scattered / POW10[d - 1];
        let moved = (scattered / low) % POW10[k];
        let middle = scattered % low;
        let gathered = match (first * low + middle).checked_mul(POW10[k]) {
            Some(v) => v.checked_add(moved),
            None => None,
        };
        match gathered {
            Some(id) if id <= self.max_id() => match self.validate_id(id) {
                Ok(id) => Ok(id),
                Err(_) => Err(Error::InvalidId { id: scattered }),
            },
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
