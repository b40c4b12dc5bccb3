//! IDs written as decimal text, the way they travel in JSON and URLs.
//!
//! Every binding reads IDs from strings (a JSON payload, a query parameter) and must accept
//! exactly the same ones: plain ASCII digits, nothing a general-purpose integer parser would
//! also take (signs, spaces, `_`, non-ASCII digits), and never a value that wraps.

/// The longest decimal form of a `u64`: `18446744073709551615`.
const MAX_DIGITS: usize = 20;

/// Parses an ID written as 1 to 20 ASCII digits with a value below 2^64 (leading zeros
/// allowed); anything else is `None`.
///
/// Batches of IDs from JSON go through here once per ID, so the digits are taken eight at a
/// time as one little-endian word (SWAR: checked and combined with a few multiplies), and
/// only a 20-digit text is checked for overflow. No checked multiply: on `wasm32` that is a
/// call to a 128-bit routine.
#[inline]
pub fn parse_decimal(text: &[u8]) -> Option<u64> {
    if text.is_empty() || text.len() > MAX_DIGITS {
        return None;
    }
    let (head, words) = text.split_at(text.len() % 8);
    let mut value = 0u64;
    for &d in head {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value * 10 + u64::from(d - b'0');
    }
    let mut words = words.chunks_exact(8);
    // Up to 19 digits cannot overflow a u64; with 20, the head holds 4 and the last word
    // is checked before it is added.
    let last = words.next_back();
    for word in words {
        value = value * 100_000_000 + eight_digits(word)?;
    }
    match last {
        None => Some(value),
        Some(word) => {
            let eight = eight_digits(word)?;
            (value <= (u64::MAX - eight) / 100_000_000).then(|| value * 100_000_000 + eight)
        }
    }
}

/// The value of eight ASCII digits (`word.len() == 8`, the first digit most significant), or
/// `None` if any byte is not `b'0'..=b'9'`.
#[inline]
fn eight_digits(word: &[u8]) -> Option<u64> {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(word);
    let w = u64::from_le_bytes(bytes);
    // Byte by byte, `b - 0x30` sets the top bit for b < 0x30 and b >= 0xB0, and `b + 0x46`
    // for 0x3A <= b < 0xBA. The lowest offending byte has no borrow or carry coming in from
    // below, so it always shows.
    if nondigit_bytes(w) != 0 {
        return None;
    }
    Some(combine_eight(w.wrapping_sub(0x3030_3030_3030_3030)))
}

/// Parses comma-separated IDs, as `text.split(|&b| b == b',').map(parse_decimal)` does, in one
/// pass: the bytes are read eight at a time, and each word both finds the end of the ID and
/// gives its digits. For batches (a column of IDs from JSON, joined).
///
/// ```
/// use shardid::DecimalList;
/// let ids: Vec<_> = DecimalList::new(b"1,22,x").collect();
/// assert_eq!(ids, [Some(1), Some(22), None]);
/// ```
#[derive(Clone, Debug)]
pub struct DecimalList<'a> {
    text: &'a [u8],
    /// Where the next ID starts; past the end once the last one is read.
    at: usize,
}

impl<'a> DecimalList<'a> {
    /// The IDs of `text`; an empty text holds one (invalid, empty) ID, as `split` has it.
    pub const fn new(text: &'a [u8]) -> Self {
        Self { text, at: 0 }
    }

    /// The eight bytes at `at` as a little-endian word, padded with zero bytes (non-digits)
    /// past the end of the text.
    #[inline]
    fn word(&self, at: usize) -> u64 {
        let mut bytes = [0u8; 8];
        if let Some(eight) = self.text.get(at..at + 8) {
            bytes.copy_from_slice(eight);
        } else {
            let rest = self.text.get(at..).unwrap_or_default();
            bytes[..rest.len()].copy_from_slice(rest);
        }
        u64::from_le_bytes(bytes)
    }
}

/// 10^k for k in 0..=8.
const POW10: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

impl Iterator for DecimalList<'_> {
    type Item = Option<u64>;

    fn next(&mut self) -> Option<Option<u64>> {
        if self.at > self.text.len() {
            return None;
        }
        let start = self.at;
        let mut value = 0u64;
        let mut digits = 0usize;
        let mut at = start;
        let mut ok = true;
        loop {
            let w = self.word(at);
            let nondigits = nondigit_bytes(w);
            // How many bytes from `at` are digits: 8, or up to the first other byte.
            let k = (nondigits.trailing_zeros() / 8) as usize;
            if k > 0 {
                // The k digits moved to the top of the word, '0's shifted in below them.
                let aligned = if k == 8 {
                    w
                } else {
                    (w << (8 * (8 - k))) | (0x3030_3030_3030_3030 >> (8 * k))
                };
                let more = combine_eight(aligned.wrapping_sub(0x3030_3030_3030_3030));
                digits += k;
                if digits <= 19 {
                    value = value * POW10[k] + more;
                } else {
                    // Only 20 digits can overflow; more than 20 never parse.
                    match value
                        .checked_mul(POW10[k])
                        .and_then(|v| v.checked_add(more))
                    {
                        Some(v) if digits == MAX_DIGITS => value = v,
                        _ => ok = false,
                    }
                }
                at += k;
            }
            if k < 8 {
                break;
            }
        }
        // The ID ends at a comma or at the end of the text; anything else spoils it.
        let end = if let Some(offset) = self.text[at..].iter().position(|&b| b == b',') {
            ok &= offset == 0;
            at + offset
        } else {
            ok &= at == self.text.len();
            self.text.len()
        };
        self.at = end + 1;
        Some((ok && digits > 0 && digits <= MAX_DIGITS && end > start).then_some(value))
    }
}

/// A word with the top bit set in every byte that is not an ASCII digit (see `eight_digits`).
#[inline]
const fn nondigit_bytes(w: u64) -> u64 {
    let low = w.wrapping_sub(0x3030_3030_3030_3030);
    let high = w.wrapping_add(0x4646_4646_4646_4646);
    // Bytes above the first non-digit may be disturbed by a borrow or carry; only the
    // position of the first one is used.
    (low | high) & 0x8080_8080_8080_8080
}

/// The value of eight digits given as bytes 0..=9, the first (lowest byte) most significant.
#[inline]
const fn combine_eight(digits: u64) -> u64 {
    let pairs = digits.wrapping_mul(10).wrapping_add(digits >> 8);
    let mask = 0x0000_00FF_0000_00FF;
    (pairs & mask)
        .wrapping_mul(100 + (1_000_000 << 32))
        .wrapping_add(((pairs >> 16) & mask).wrapping_mul(1 + (10_000 << 32)))
        >> 32
}
