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

    #[test]
    fn never_accepts_bytes_the_standard_parser_refuses(bytes in prop::collection::vec(any::<u8>(), 0..22)) {
        let standard = core::str::from_utf8(&bytes).ok()
            .filter(|t| t.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|t| t.parse::<u64>().ok());
        prop_assert_eq!(parse_decimal(&bytes), standard);
    }

    #[test]
    fn one_stray_byte_among_digits_is_refused(id: u64, at in 0usize..20, stray: u8) {
        let mut text = format!("{id:020}").into_bytes();
        text[at] = stray;
        let expected = if stray.is_ascii_digit() {
            core::str::from_utf8(&text).unwrap().parse::<u64>().ok()
        } else {
            None
        };
        prop_assert_eq!(parse_decimal(&text), expected);
    }
}

proptest! {
    #[test]
    fn a_list_parses_like_split_and_parse_decimal(text in "([0-9]{0,21}[, a]?){0,6}") {
        let expected: Vec<_> = text.as_bytes().split(|&b| b == b',').map(parse_decimal).collect();
        let got: Vec<_> = shardid::DecimalList::new(text.as_bytes()).collect();
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn a_list_of_ids_round_trips(ids in prop::collection::vec(any::<u64>(), 1..40), zeros in 0usize..3) {
        let text = ids.iter().map(|id| format!("{}{id}", "0".repeat(zeros))).collect::<Vec<_>>().join(",");
        let expected: Vec<_> = ids.iter().map(|&id| (format!("{id}").len() + zeros <= 20).then_some(id)).collect();
        let got: Vec<_> = shardid::DecimalList::new(text.as_bytes()).collect();
        prop_assert_eq!(got, expected);
    }
}

#[test]
fn a_list_edge_cases() {
    let list = |t: &str| shardid::DecimalList::new(t.as_bytes()).collect::<Vec<_>>();
    assert_eq!(list(""), [None]);
    assert_eq!(list(","), [None, None]);
    assert_eq!(
        list("18446744073709551615,18446744073709551616"),
        [Some(u64::MAX), None]
    );
    assert_eq!(
        list("12345678,123456789012345678"),
        [Some(12_345_678), Some(123_456_789_012_345_678)]
    );
    assert_eq!(list("1\u{661}"), [None]);
}
