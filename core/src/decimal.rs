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
/// Nineteen digits cannot overflow a `u64`, so only a twentieth is checked: no checked
/// multiply per digit, which on `wasm32` is a call to a 128-bit multiply routine.
#[inline]
pub fn parse_decimal(text: &[u8]) -> Option<u64> {
    if text.is_empty() || text.len() > MAX_DIGITS || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let (head, last) = text.split_at(text.len().min(MAX_DIGITS - 1));
    let value = head.iter().fold(0u64, |v, &d| v * 10 + u64::from(d - b'0'));
    match last {
        [] => Some(value),
        [d] => {
            let d = u64::from(d - b'0');
            (value <= (u64::MAX - d) / 10).then(|| value * 10 + d)
        }
        _ => None,
    }
}
