//! IDs through `serde_json` with `shardid::serde` (feature `serde`).
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct AsString {
    #[serde(with = "shardid::serde::as_string")]
    id: u64,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct AsNumber {
    #[serde(with = "shardid::serde::as_number")]
    id: u64,
}

const BIG: u64 = 4_036_916_263_258_161_153; // above 2^53, not a float

#[test]
fn as_string_writes_strings_and_reads_strings_or_integers() {
    for id in [0, 7, BIG, u64::MAX] {
        let text = serde_json::to_string(&AsString { id }).unwrap();
        assert_eq!(text, format!("{{\"id\":\"{id}\"}}"));
        assert_eq!(serde_json::from_str::<AsString>(&text).unwrap().id, id);
        assert_eq!(
            serde_json::from_str::<AsString>(&format!("{{\"id\":{id}}}"))
                .unwrap()
                .id,
            id
        );
    }
}

#[test]
fn as_number_writes_integers() {
    assert_eq!(
        serde_json::to_string(&AsNumber { id: BIG }).unwrap(),
        format!("{{\"id\":{BIG}}}")
    );
    assert_eq!(
        serde_json::from_str::<AsNumber>(&format!("{{\"id\":\"{BIG}\"}}"))
            .unwrap()
            .id,
        BIG
    );
}

#[test]
fn what_is_not_an_id_is_refused() {
    for bad in [
        "4.036916263258161e18",
        "1.0",
        "-5",
        "\"-5\"",
        "\"+5\"",
        "\" 5\"",
        "\"5 \"",
        "\"\"",
        "\"18446744073709551616\"",
        "18446744073709551616",
        "\"0x10\"",
        "true",
        "null",
        "[5]",
        "\"\u{665}\"",
    ] {
        let json = format!("{{\"id\":{bad}}}");
        assert!(serde_json::from_str::<AsString>(&json).is_err(), "{bad}");
        assert!(serde_json::from_str::<AsNumber>(&json).is_err(), "{bad}");
    }
}
