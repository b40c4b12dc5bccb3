//! The text encodings of a public ID's body: Crockford's base32 (with its optional check
//! symbol), Bitcoin's base58 and base62, each at a fixed width for any 64-bit value.

use super::Encoding;

/// Crockford's base32 alphabet, lower case as written (no i, l, o, u).
pub(super) const CROCKFORD: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
/// Crockford's check symbols for the values 32 to 36 (after the 32 digits).
pub(super) const CHECK_EXTRA: &[u8; 5] = b"*~$=u";
/// Bitcoin's base58 alphabet: no 0, O, I, l.
pub(super) const BASE58: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
/// Base62 in ASCII order, so that texts of one length sort as their values do.
pub(super) const BASE62: &[u8; 62] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Not a digit of the alphabet, in a decoding table.
pub(super) const NONE: u8 = 0xff;

/// The decoding table of an alphabet: each byte's digit value, or [`NONE`].
const fn table(alphabet: &[u8]) -> [u8; 256] {
    let mut t = [NONE; 256];
    let mut i = 0;
    while i < alphabet.len() {
        // At most 62 digits: fits a u8.
        #[allow(clippy::cast_possible_truncation)]
        {
            t[alphabet[i] as usize] = i as u8;
        }
        i += 1;
    }
    t
}

/// Crockford's decoding: either case, and the look-alikes i and l read as 1, o as 0.
const fn crockford_table() -> [u8; 256] {
    let mut t = table(CROCKFORD);
    let mut i = 0;
    while i < 32 {
        #[allow(clippy::cast_possible_truncation)]
        {
            t[CROCKFORD[i].to_ascii_uppercase() as usize] = i as u8;
        }
        i += 1;
    }
    t[b'i' as usize] = 1;
    t[b'I' as usize] = 1;
    t[b'l' as usize] = 1;
    t[b'L' as usize] = 1;
    t[b'o' as usize] = 0;
    t[b'O' as usize] = 0;
    t
}

pub(super) static CROCKFORD_TABLE: [u8; 256] = crockford_table();
static BASE58_TABLE: [u8; 256] = table(BASE58);
static BASE62_TABLE: [u8; 256] = table(BASE62);

/// Crockford's check symbols: the digits' table, and `*~$=u` (either case) for 32 to 36.
const fn check_table() -> [u8; 256] {
    let mut t = crockford_table();
    let mut i = 0;
    while i < 5 {
        #[allow(clippy::cast_possible_truncation)]
        {
            t[CHECK_EXTRA[i] as usize] = 32 + i as u8;
        }
        i += 1;
    }
    t[b'U' as usize] = 36;
    t
}

static CHECK_TABLE: [u8; 256] = check_table();

/// A check symbol's value (0 to 36), in either case, with Crockford's look-alikes.
#[inline]
pub(super) fn check_value(symbol: u8) -> Option<u8> {
    match CHECK_TABLE[symbol as usize] {
        NONE => None,
        v => Some(v),
    }
}

/// The check symbol of a body whose version symbol has `version` and whose value is `value`:
/// the value of the number all its digits spell (`version · 2^65 + value`) modulo 37.
pub(super) const fn check_symbol(version: u8, value: u64) -> u8 {
    // 2^65 mod 37 = 2^(65 mod 36) mod 37 (Fermat) = 2^29 mod 37 = 24.
    let v = (version as u64 % 37 * 24 + value % 37) % 37;
    if v < 32 {
        CROCKFORD[v as usize]
    } else {
        CHECK_EXTRA[v as usize - 32]
    }
}

impl Encoding {
    /// How many digits spell any 64-bit value: 13 in base32 (65 bits), 11 in base58 and
    /// base62 (58^11 and 62^11 are above 2^64).
    pub const fn digits(self) -> usize {
        match self {
            Encoding::Base32 | Encoding::Base32Check => 13,
            Encoding::Base58 | Encoding::Base62 => 11,
        }
    }

    /// The alphabet, in digit order, as written by the encoder.
    pub const fn alphabet(self) -> &'static [u8] {
        match self {
            Encoding::Base32 | Encoding::Base32Check => CROCKFORD,
            Encoding::Base58 => BASE58,
            Encoding::Base62 => BASE62,
        }
    }

    /// The decoding table.
    pub(super) fn table(self) -> &'static [u8; 256] {
        match self {
            Encoding::Base32 | Encoding::Base32Check => &CROCKFORD_TABLE,
            Encoding::Base58 => &BASE58_TABLE,
            Encoding::Base62 => &BASE62_TABLE,
        }
    }

    /// Writes the [`Encoding::digits`] digits of `value`, most significant first.
    #[inline]
    pub(super) fn write_digits(self, value: u64, out: &mut [u8]) {
        match self {
            Encoding::Base32 | Encoding::Base32Check => {
                // 13 digits of 5 bits; the first holds the top 4.
                let out = &mut out[..13];
                let mut i = 0;
                while i < 13 {
                    // Below 32.
                    #[allow(clippy::cast_possible_truncation)]
                    let d = ((value >> (60 - 5 * i)) & 31) as usize;
                    out[i] = CROCKFORD[d];
                    i += 1;
                }
            }
            Encoding::Base58 => write_radix::<58>(value, BASE58, &mut out[..11]),
            Encoding::Base62 => write_radix::<62>(value, BASE62, &mut out[..11]),
        }
    }

    /// The value the digits spell, or `Err(None)` if it is 2^64 or more. A byte outside the
    /// alphabet is `Err(Some(index))`, the first such.
    #[inline]
    pub(super) fn read_digits(self, digits: &[u8]) -> Result<u64, Option<usize>> {
        let table = self.table();
        let fast = match self {
            Encoding::Base32 | Encoding::Base32Check => read_base32(digits),
            Encoding::Base58 => read_radix::<58>(digits, table),
            Encoding::Base62 => read_radix::<62>(digits, table),
        };
        match fast {
            Some(Ok(value)) => Ok(value),
            Some(Err(())) => Err(None),
            // A byte outside the alphabet (or the wrong count): find the first (error path).
            None => Err(Some(
                digits
                    .iter()
                    .position(|&c| table[c as usize] == NONE)
                    .unwrap_or(digits.len()),
            )),
        }
    }
}

/// `R^5`: five digits of radix `R` fit a `u32` for R up to 84.
const fn pow5(radix: u64) -> u64 {
    radix * radix * radix * radix * radix
}

/// Writes `value` as 11 digits of radix `R` into `out`, most significant first: a first digit
/// and two groups of five, each group worked out in 32 bits and the two side by side (eleven
/// dependent 64-bit divisions would take twice as long).
#[inline]
fn write_radix<const R: u64>(value: u64, alphabet: &[u8], out: &mut [u8]) {
    let p5 = pow5(R);
    // Each below R^5 < 2^32, and `first` below R (R^11 > 2^64).
    #[allow(clippy::cast_possible_truncation)]
    let (first, mut a, mut b) = (
        (value / p5 / p5) as usize,
        (value / p5 % p5) as u32,
        (value % p5) as u32,
    );
    out[0] = alphabet[first];
    // R fits a u32.
    #[allow(clippy::cast_possible_truncation)]
    let r = R as u32;
    for i in (0..5).rev() {
        out[1 + i] = alphabet[(a % r) as usize];
        out[6 + i] = alphabet[(b % r) as usize];
        a /= r;
        b /= r;
    }
}

/// 11 digits of radix `R`: `None` for a byte outside the alphabet (or another count),
/// `Some(Err(()))` for a value of 2^64 or more. Two groups of five digits accumulate in 32 bits
/// side by side.
#[inline]
fn read_radix<const R: u64>(digits: &[u8], table: &[u8; 256]) -> Option<Result<u64, ()>> {
    let digits: &[u8; 11] = digits.try_into().ok()?;
    let digit = |i: usize| table[digits[i] as usize];
    // Any NONE (0xff) among the digits sets the top bit of `any`; digits are below 64.
    let mut any = digit(0);
    let (mut high, mut low) = (0u32, 0u32);
    #[allow(clippy::cast_possible_truncation)]
    let radix = R as u32;
    for i in 0..5 {
        let (h, l) = (digit(1 + i), digit(6 + i));
        any |= h | l;
        // Masked to 6 bits, five digits stay below 63 * 62^5 / 61 < 2^32 even when one is not
        // a digit.
        high = high * radix + u32::from(h & 63);
        low = low * radix + u32::from(l & 63);
    }
    if any & 0x80 != 0 {
        return None;
    }
    let p5 = pow5(R);
    let top = u64::from(digit(0)) * p5 + u64::from(high);
    Some(
        top.checked_mul(p5)
            .and_then(|v| v.checked_add(u64::from(low)))
            .ok_or(()),
    )
}

/// 13 base32 digits: `None` for a byte outside the alphabet (or another count),
/// `Some(Err(()))` when the first digit is 16 or more (2^64 and up).
#[inline]
fn read_base32(digits: &[u8]) -> Option<Result<u64, ()>> {
    let digits: &[u8; 13] = digits.try_into().ok()?;
    let mut any = 0u8;
    let mut value = 0u64;
    let mut i = 0;
    while i < 13 {
        let d = CROCKFORD_TABLE[digits[i] as usize];
        any |= d;
        // Each digit shifted to its place on its own (not `value << 5 | d`, whose thirteen
        // dependent steps would be the longest chain of a decode after the cipher's).
        value |= u64::from(d & 31) << (60 - 5 * i);
        i += 1;
    }
    if any & 0x80 != 0 {
        return None;
    }
    Some(if CROCKFORD_TABLE[digits[0] as usize] < 16 {
        Ok(value)
    } else {
        Err(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_hold_every_64_bit_value_and_no_fewer_digits_would() {
        assert!(58u128.pow(11) > 1 << 64 && 58u128.pow(10) < 1 << 64);
        assert!(62u128.pow(11) > 1 << 64 && 62u128.pow(10) < 1 << 64);
        // The digits before the last never overflow.
        assert!(62u128.pow(10) < 1 << 60);
        for encoding in Encoding::ALL {
            let mut buf = [0u8; 13];
            let n = encoding.digits();
            for v in [0, 1, 57, 58, u64::MAX, u64::MAX - 1, 1 << 63] {
                encoding.write_digits(v, &mut buf);
                assert_eq!(encoding.read_digits(&buf[..n]), Ok(v), "{encoding:?} {v}");
            }
        }
    }

    #[test]
    fn values_of_2_to_the_64_and_more_overflow() {
        // Base32's first digit holds 4 bits: "g" (16) is 2^64.
        assert_eq!(Encoding::Base32.read_digits(b"g000000000000"), Err(None));
        assert_eq!(Encoding::Base32.read_digits(b"fzzzzzzzzzzzz"), Ok(u64::MAX));
        assert_eq!(Encoding::Base58.read_digits(b"zzzzzzzzzzz"), Err(None));
        assert_eq!(Encoding::Base62.read_digits(b"zzzzzzzzzzz"), Err(None));
        assert_eq!(Encoding::Base62.read_digits(b"LygHa16AHYF"), Ok(u64::MAX));
        assert_eq!(Encoding::Base62.read_digits(b"LygHa16AHYG"), Err(None));
        assert_eq!(Encoding::Base58.read_digits(b"jpXCZedGfVQ"), Ok(u64::MAX));
        assert_eq!(Encoding::Base58.read_digits(b"jpXCZedGfVR"), Err(None));
    }

    #[test]
    fn crockford_reads_either_case_and_its_look_alikes() {
        let upper = Encoding::Base32.read_digits(b"0123456789ABC");
        assert_eq!(upper, Encoding::Base32.read_digits(b"0123456789abc"));
        assert_eq!(
            Encoding::Base32.read_digits(b"0000000000000"),
            Encoding::Base32.read_digits(b"oOooooooooooo")
        );
        assert_eq!(
            Encoding::Base32.read_digits(b"0000000000001"),
            Encoding::Base32.read_digits(b"000000000000L")
        );
        assert_eq!(
            Encoding::Base32.read_digits(b"000000000000i"),
            Encoding::Base32.read_digits(b"000000000000l")
        );
        assert_eq!(
            Encoding::Base32.read_digits(b"00000000000u0"),
            Err(Some(11))
        );
        assert_eq!(Encoding::Base58.read_digits(b"0zzzzzzzzzz"), Err(Some(0)));
        assert_eq!(Encoding::Base58.read_digits(b"zzzzzzzzzzl"), Err(Some(10)));
    }

    #[test]
    fn check_symbols_are_crockfords() {
        // Every value 0..37 has its symbol, and reads back.
        for v in 0..37u64 {
            let symbol = check_symbol(0, v);
            assert_eq!(check_value(symbol), Some(u8::try_from(v).unwrap()));
            assert_eq!(
                check_value(symbol.to_ascii_uppercase()),
                Some(u8::try_from(v).unwrap())
            );
        }
        // The number the 14 digits spell, modulo 37, computed the long way.
        for (version, value) in [(0u8, 0u64), (1, 0), (31, u64::MAX), (7, 123_456_789)] {
            let n = (u128::from(version) << 65) + u128::from(value);
            let expected = u8::try_from(n % 37).unwrap();
            assert_eq!(check_value(check_symbol(version, value)), Some(expected));
        }
        assert_eq!(check_value(b'!'), None);
    }
}
