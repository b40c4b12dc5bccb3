//! Scattering for range-partitioned stores: `gather(scatter(id)) == id` for every preset and
//! digit count, and `scatter(gather(x)) == x` whenever gather accepts `x`: no two IDs share a
//! scattered form, nothing wraps.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use shardid::{Layout, ScatterDigits};

#[derive(Arbitrary, Debug)]
struct Input {
    preset: u8,
    digits: u8,
    id: u64,
}

fuzz_target!(|input: Input| {
    let presets = Layout::PRESETS;
    let (_, layout) = presets[usize::from(input.preset) % presets.len()];
    let id = input.id;
    if let Ok(s) = layout.scatter_bits(id) {
        assert_eq!(layout.gather_bits(s), Ok(id));
    }
    if let Ok(g) = layout.gather_bits(id) {
        assert_eq!(layout.scatter_bits(g), Ok(id));
    }
    let Some(digits) = ScatterDigits::new(u64::from(input.digits % 4)) else {
        assert_eq!(input.digits % 4, 0);
        return;
    };
    if let Ok(s) = layout.scatter_decimal_digits(id, digits) {
        assert_eq!(
            layout.gather_decimal_digits(s, digits),
            Ok(id),
            "{digits:?}"
        );
    }
    if let Ok(g) = layout.gather_decimal_digits(id, digits) {
        assert_eq!(
            layout.scatter_decimal_digits(g, digits),
            Ok(id),
            "{digits:?}"
        );
    }
});
