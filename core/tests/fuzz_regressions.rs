//! Inputs the fuzzers (`fuzz/fuzz_targets/`) found, kept as tests so the bugs stay fixed in
//! every build, not only in fuzzing runs.
use shardid::{Error, Layout, ScatterDigits};

/// `fuzz/corpus/scatter`: a value above a signed layout's largest ID gathered to a valid ID
/// whose scattered form is something else, so gather was not the inverse of scatter there.
#[test]
fn gather_refuses_values_no_id_scatters_to() {
    let scattered = 9_621_148_955_505_808_896; // above 2^63 - 1
    for layout in [Layout::SONYFLAKE, Layout::INSTAGRAM, Layout::TWITTER] {
        for digits in 1..=3 {
            let digits = ScatterDigits::new(digits).unwrap();
            assert_eq!(
                layout.gather_decimal_digits(scattered, digits),
                Err(Error::InvalidId { id: scattered }),
                "{layout:?} {digits:?}"
            );
        }
    }
    // Unsigned Discord holds it: gather then scatter gives it back.
    let three = ScatterDigits::new(3).unwrap();
    let id = Layout::DISCORD
        .gather_decimal_digits(scattered, three)
        .unwrap();
    assert_eq!(
        Layout::DISCORD.scatter_decimal_digits(id, three),
        Ok(scattered)
    );
}
