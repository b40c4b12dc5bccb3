//! Decimal IDs: exactly what every binding accepts from a string.
use proptest::prelude::*;
use shardid::parse_decimal;

#[test]
fn plain_digits_up_to_u64_max() {
    assert_eq!(parse_decimal(b"0"), Some(0));
    assert_eq!(parse_decimal(b"007"), Some(7));
    assert_eq!(
        parse_decimal(b"175928847299117063"),
        Some(175_928_847_299_117_063)
    );
    assert_eq!(parse_decimal(b"18446744073709551615"), Some(u64::MAX));
    assert_eq!(
        parse_decimal(b"09999999999999999999"),
        Some(9_999_999_999_999_999_999)
    );
}

#[test]
fn anything_else_is_refused() {
    for bad in [
        &b""[..],
        b"18446744073709551616",
        b"99999999999999999999",
        b"000000000000000000001",
        b"-1",
        b"+1",
        b" 1",
        b"1 ",
        b"1_000",
        b"0x10",
        b"1e3",
        b"1,2",
        "\u{661}\u{662}".as_bytes(), // Arabic-Indic digits, which `int()` would take
    ] {
        assert_eq!(
            parse_decimal(bad),
            None,
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
}

proptest! {
    #[test]
    fn agrees_with_the_standard_parser_on_digits(id: u64, zeros in 0usize..3) {
        let text = format!("{}{id}", "0".repeat(zeros));
        let expected = if text.len() <= 20 { Some(id) } else { None };
        prop_assert_eq!(parse_decimal(text.as_bytes()), expected);
    }

    #[test]
    fn never_accepts_more_than_the_standard_parser(text in "[0-9+ _-]{0,22}") {
        if let Some(v) = parse_decimal(text.as_bytes()) {
            prop_assert_eq!(text.parse::<u64>().ok(), Some(v));
        }
    }
}
