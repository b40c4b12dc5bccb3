//! `parse_decimal` and `DecimalList` against a reference built on the standard parser: the
//! same IDs accepted, the same values, nothing a general-purpose parser also takes (signs,
//! spaces, `_`), and a list parses as `split(',')` then `parse_decimal`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shardid::{DecimalList, parse_decimal};

/// The reference: 1 to 20 ASCII digits whose value fits a u64.
fn reference(bytes: &[u8]) -> Option<u64> {
    if bytes.is_empty() || bytes.len() > 20 || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(bytes).ok()?.parse::<u64>().ok()
}

fuzz_target!(|data: &[u8]| {
    assert_eq!(parse_decimal(data), reference(data), "{data:?}");
    let listed: Vec<Option<u64>> = DecimalList::new(data).collect();
    let split: Vec<Option<u64>> = data.split(|&b| b == b',').map(reference).collect();
    assert_eq!(listed, split, "{data:?}");
});
