//! `tests/vectors/public_ids.json`: public IDs made and read by every language, with the same
//! key giving byte-identical text everywhere (C, Python, Node, WebAssembly, the command line,
//! PostgreSQL).

use serde_json::{Value, json};
use shardid::public::Format;
use shardid::{Encoding, Error, PublicIds};

use crate::{SCHEMA_VERSION, error_json, layout};

/// The keys of the cases, by name (hex in the file).
const KEYS: &[(&str, [u8; 16])] = &[
    ("ascii", *b"0123456789abcdef"),
    ("other", *b"0123456789abcdeg"),
    ("zero", [0; 16]),
    ("ones", [0xff; 16]),
    (
        "speck_paper",
        [
            0x00, 0x01, 0x02, 0x03, 0x08, 0x09, 0x0a, 0x0b, 0x10, 0x11, 0x12, 0x13, 0x18, 0x19,
            0x1a, 0x1b,
        ],
    ),
];

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

fn unhex(text: &str) -> Vec<u8> {
    assert!(text.len().is_multiple_of(2), "hex {text}");
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

fn key(name: &str) -> String {
    let (_, k) = KEYS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("key {name}"));
    hex(k)
}

/// A `PublicIds` spec: what every language passes to its constructor.
fn spec(key_name: &str, key_version: u32, prefix: &str, encoding: &str, layout: &str) -> Value {
    json!({
        "key": key(key_name),
        "key_version": key_version,
        "prefix": prefix,
        "encoding": encoding,
        "layout": layout,
        "old_keys": [],
    })
}

/// Builds a `PublicIds` from a spec, as every language's constructor will.
///
/// # Errors
/// The core's errors for a bad key, version, prefix, encoding or old key.
pub fn build(spec: &Value) -> Result<PublicIds, Error> {
    let encoding = Encoding::from_name(spec["encoding"].as_str().expect("encoding"))?;
    let version =
        u32::try_from(spec["key_version"].as_u64().expect("key_version")).expect("key_version");
    let mut ids = PublicIds::new(
        &unhex(spec["key"].as_str().expect("key")),
        version,
        spec["prefix"].as_str().expect("prefix"),
        encoding,
    )?
    .with_layout(layout(spec["layout"].as_str().expect("layout")));
    for old in spec["old_keys"].as_array().expect("old_keys") {
        let version =
            u32::try_from(old["key_version"].as_u64().expect("key_version")).expect("key_version");
        ids = ids.with_old_key(version, &unhex(old["key"].as_str().expect("key")))?;
    }
    Ok(ids)
}

/// The text argument of a case: `text`, or `text_repeat` (`{text, times}`).
pub fn text_arg(args: &Value) -> String {
    if let Some(t) = args["text"].as_str() {
        return t.to_owned();
    }
    let r = &args["text_repeat"];
    let times = usize::try_from(r["times"].as_u64().expect("times")).expect("times");
    r["text"].as_str().expect("text").repeat(times)
}

/// Runs one public-ID operation of a case on the core: `encode` (`args.id`), `decode`
/// (`args.text` or `args.text_repeat`), `check` (the shape only: prefix and encoding).
pub fn run(spec: &Value, op: &str, args: &Value) -> Value {
    let outcome = |r: Result<Value, Error>| match r {
        Ok(v) => json!({ "ok": v }),
        Err(e) => error_json(e),
    };
    if op == "check" {
        let format = Format::new(
            spec["prefix"].as_str().expect("prefix"),
            Encoding::from_name(spec["encoding"].as_str().expect("encoding")).expect("enc"),
        )
        .expect("format");
        return outcome(
            format
                .check(&text_arg(args))
                .map(|v| Value::String(v.to_string())),
        );
    }
    let ids = match build(spec) {
        Ok(ids) => ids,
        Err(e) => return error_json(e),
    };
    outcome(match op {
        "encode" => ids
            .encode(crate::arg(args, "id"))
            .map(|t| Value::String(t.to_string())),
        "decode" => ids
            .decode(&text_arg(args))
            .map(|id| Value::String(id.to_string())),
        _ => panic!("unknown op {op}"),
    })
}

#[allow(clippy::needless_pass_by_value)] // cases are written as `case(.., json!(..))`
fn case(name: &str, spec: &Value, op: &str, args: Value) -> Value {
    let expect = run(spec, op, &args);
    json!({ "name": name, "ids": spec, "op": op, "args": args, "expect": expect })
}

fn with_old(mut spec: Value, version: u32, key_name: &str) -> Value {
    spec["old_keys"]
        .as_array_mut()
        .expect("old_keys")
        .push(json!({ "key_version": version, "key": key(key_name) }));
    spec
}

/// A text the core makes for a spec and an ID.
fn made(spec: &Value, id: u64) -> String {
    build(spec)
        .expect("spec")
        .encode(id)
        .expect("id")
        .to_string()
}

#[allow(clippy::decimal_bitwise_operands)] // Instagram's formula with its own numbers
fn cases() -> Vec<Value> {
    let mut cases = Vec::new();
    let ids: &[(&str, u64)] = &[
        ("zero", 0),
        ("one", 1),
        // Instagram's next_id() formula at 2023-11-14T22:13:20Z, shard 5, sequence 905.
        (
            "instagram",
            ((1_700_000_000_000 - 1_314_220_021_721) << 23) | (5 << 10) | 905,
        ),
        (
            "instagram_next",
            ((1_700_000_000_000 - 1_314_220_021_721) << 23) | (5 << 10) | 906,
        ),
        // Discord's documented example.
        ("discord_docs", 175_928_847_299_117_063),
        ("i64_max", i64::MAX as u64),
    ];
    // Every encoding, several keys, prefixes and versions: encode, and decode back.
    let specs = [
        ("ascii", 0, "note"),
        ("other", 0, "note"),
        ("ascii", 0, "user"),
        ("ascii", 7, "note"),
        ("zero", 31, "sk_live"),
        ("ones", 1, ""),
        ("speck_paper", 0, "a"),
    ];
    for encoding in Encoding::ALL {
        let e = encoding.name();
        for (key_name, version, prefix) in specs {
            let s = spec(key_name, version, prefix, e, "instagram");
            for (id_name, id) in ids {
                let name = format!("{e}_{key_name}_v{version}_{prefix}_{id_name}");
                cases.push(case(
                    &format!("encode_{name}"),
                    &s,
                    "encode",
                    json!({ "id": id.to_string() }),
                ));
                let text = made(&s, *id);
                cases.push(case(
                    &format!("decode_{name}"),
                    &s,
                    "decode",
                    json!({ "text": text }),
                ));
            }
        }
        // Discord's layout holds all 64 bits; the default refuses them.
        let discord = spec("ascii", 0, "note", e, "discord");
        for id in [1u64 << 63, u64::MAX] {
            cases.push(case(
                &format!("encode_{e}_discord_{id}"),
                &discord,
                "encode",
                json!({ "id": id.to_string() }),
            ));
            let text = made(&discord, id);
            cases.push(case(
                &format!("decode_{e}_discord_{id}"),
                &discord,
                "decode",
                json!({ "text": text }),
            ));
            let instagram = spec("ascii", 0, "note", e, "instagram");
            cases.push(case(
                &format!("encode_{e}_instagram_refuses_{id}"),
                &instagram,
                "encode",
                json!({ "id": id.to_string() }),
            ));
        }
        // A 63-character prefix, the longest.
        let long = spec("ascii", 3, &"p".repeat(63), e, "instagram");
        cases.push(case(
            &format!("encode_{e}_longest_prefix"),
            &long,
            "encode",
            json!({ "id": "123456789" }),
        ));
    }
    cases.extend(hostile_cases());
    cases.extend(rotation_cases());
    cases.extend(check_cases());
    cases
}

/// Texts that must be refused: each error kind, Unicode look-alikes, texts under other keys and
/// types, a huge string.
#[allow(clippy::decimal_bitwise_operands)] // Instagram's formula with its own numbers
fn hostile_cases() -> Vec<Value> {
    let mut cases = Vec::new();
    let id = ((1_700_000_000_000u64 - 1_314_220_021_721) << 23) | (5 << 10) | 905;
    for encoding in Encoding::ALL {
        let e = encoding.name();
        let s = spec("ascii", 0, "note", e, "instagram");
        let good = made(&s, id);
        let body = good["note_".len()..].to_owned();
        let mut texts: Vec<(String, String)> = vec![
            ("empty".into(), String::new()),
            ("prefix_only".into(), "note_".into()),
            ("no_separator".into(), format!("note{body}")),
            ("dash_separator".into(), format!("note-{body}")),
            ("other_prefix".into(), format!("user_{body}")),
            ("longer_prefix".into(), format!("notes_{body}")),
            ("body_only".into(), body.clone()),
            ("upper_case".into(), good.to_ascii_uppercase()),
            ("one_short".into(), good[..good.len() - 1].to_owned()),
            ("one_long".into(), format!("{good}0")),
            ("doubled".into(), format!("{good}{body}")),
            ("space_after".into(), format!("{good} ")),
            ("newline_after".into(), format!("{good}\n")),
            ("space_inside".into(), format!("note_ {}", &body[1..])),
            ("underscore_inside".into(), format!("note__{}", &body[1..])),
            ("nul_inside".into(), format!("note_\u{0}{}", &body[1..])),
            (
                "cyrillic_o_in_prefix".into(),
                good.replacen('o', "\u{43e}", 1),
            ),
            (
                "fullwidth_first".into(),
                format!("note_\u{ff10}{}", &body[1..]),
            ),
            (
                "greek_omicron".into(),
                format!("note_{}\u{3bf}", &body[..body.len() - 1]),
            ),
            (
                "zero_width_space".into(),
                format!("note_{}\u{200b}{}", &body[..3], &body[3..]),
            ),
            ("combining_accent".into(), format!("{good}\u{301}")),
            (
                "kelvin_sign".into(),
                format!("note_{}\u{212a}", &body[..body.len() - 1]),
            ),
            (
                "emoji".into(),
                format!("note_{}\u{1f600}", &body[..body.len() - 1]),
            ),
        ];
        // The last symbol replaced by one outside the alphabet.
        let outside = match encoding {
            Encoding::Base32 => "u",
            Encoding::Base32Check => "!",
            Encoding::Base58 => "0",
            _ => "-",
        };
        texts.push((
            "outside_alphabet".into(),
            format!("{}{outside}", &good[..good.len() - 1]),
        ));
        // Digits that spell 2^64 and more.
        let overflow = match encoding {
            Encoding::Base32 => "0g000000000000".to_owned(),
            Encoding::Base32Check => "0zzzzzzzzzzzzz0".to_owned(),
            Encoding::Base58 => "1jpXCZedGfVR".to_owned(),
            _ => "0LygHa16AHYG".to_owned(),
        };
        texts.push(("overflow".into(), format!("note_{overflow}")));
        // Made under another key with the same version (an unrelated value, refused when it is
        // not an ID of the layout), and with another version (refused by name).
        for (i, other_id) in (id..id + 4).enumerate() {
            let other = made(&spec("other", 0, "note", e, "instagram"), other_id);
            texts.push((format!("other_key_same_version_{i}"), other));
        }
        texts.push((
            "other_key_version_5".into(),
            made(&spec("other", 5, "note", e, "instagram"), id),
        ));
        texts.push((
            "another_type_moved_under_this_prefix".into(),
            format!(
                "note_{}",
                &made(&spec("ascii", 0, "user", e, "instagram"), id)[5..]
            ),
        ));
        if encoding == Encoding::Base32Check {
            // One symbol changed, two neighbours swapped: the check symbol refuses both.
            let mut wrong = good.clone().into_bytes();
            wrong[8] = if wrong[8] == b'7' { b'8' } else { b'7' };
            texts.push((
                "one_symbol_changed".into(),
                String::from_utf8(wrong).expect("ascii"),
            ));
            let mut swapped = good.clone().into_bytes();
            let i = (6..13)
                .find(|&i| swapped[i] != swapped[i + 1])
                .expect("two differ");
            swapped.swap(i, i + 1);
            texts.push((
                "neighbours_swapped".into(),
                String::from_utf8(swapped).expect("ascii"),
            ));
        }
        if encoding == Encoding::Base32 {
            // Crockford's look-alikes and either case: the same ID.
            let aliased = format!("NOTE_{}", body.replace('0', "O").replace('1', "L"));
            texts.push(("look_alikes_and_upper_case".into(), aliased));
        }
        for (name, text) in texts {
            cases.push(case(
                &format!("hostile_{e}_{name}"),
                &s,
                "decode",
                json!({ "text": text }),
            ));
        }
        cases.push(case(
            &format!("hostile_{e}_huge"),
            &s,
            "decode",
            json!({ "text_repeat": { "text": "note_", "times": 20_000 } }),
        ));
    }
    cases
}

/// Key rotation: the current key encodes, old keys decode, an unknown version is refused.
fn rotation_cases() -> Vec<Value> {
    let mut cases = Vec::new();
    let id = 175_928_847_299_117_063u64;
    for encoding in Encoding::ALL {
        let e = encoding.name();
        let old = spec("ascii", 1, "note", e, "instagram");
        let rotated = with_old(spec("other", 2, "note", e, "instagram"), 1, "ascii");
        let three = with_old(
            with_old(
                with_old(spec("zero", 9, "note", e, "instagram"), 2, "other"),
                1,
                "ascii",
            ),
            0,
            "ones",
        );
        cases.push(case(
            &format!("rotation_{e}_encodes_with_the_current_key"),
            &rotated,
            "encode",
            json!({ "id": id.to_string() }),
        ));
        for (name, s) in [("old", &old), ("rotated", &rotated)] {
            let text = made(s, id);
            cases.push(case(
                &format!("rotation_{e}_decodes_{name}"),
                &rotated,
                "decode",
                json!({ "text": text }),
            ));
            cases.push(case(
                &format!("rotation_{e}_four_keys_decode_{name}"),
                &three,
                "decode",
                json!({ "text": text }),
            ));
        }
        cases.push(case(
            &format!("rotation_{e}_old_alone_refuses_the_new_version"),
            &old,
            "decode",
            json!({ "text": made(&rotated, id) }),
        ));
    }
    cases
}

/// The shape alone, without a key: what a browser can check.
fn check_cases() -> Vec<Value> {
    let mut cases = Vec::new();
    for encoding in Encoding::ALL {
        let e = encoding.name();
        let s = spec("ascii", 12, "note", e, "instagram");
        let good = made(&s, 42);
        let shape = json!({ "prefix": "note", "encoding": e });
        for (name, text) in [
            ("good", good.clone()),
            ("wrong_prefix", format!("user_{}", &good[5..])),
            ("short", good[..good.len() - 1].to_owned()),
            (
                "under_another_key",
                made(&spec("other", 3, "note", e, "instagram"), 42),
            ),
        ] {
            let args = json!({ "text": text });
            let expect = run(&s, "check", &args);
            cases.push(json!({
                "name": format!("check_{e}_{name}"), "ids": shape, "op": "check", "args": args, "expect": expect,
            }));
        }
    }
    cases
}

/// Specs the constructor must refuse.
fn invalid() -> Vec<Value> {
    let mut out = Vec::new();
    let mut push = |name: &str, s: Value| {
        let expect = build(&s).map_or_else(error_json, |ids| panic!("{name}: {ids:?} built"));
        out.push(json!({ "name": name, "ids": s, "expect": expect }));
    };
    let base = || spec("ascii", 0, "note", "base32", "instagram");
    for (name, k) in [
        ("key_empty", String::new()),
        ("key_15_bytes", hex(&[1; 15])),
        ("key_17_bytes", hex(&[1; 17])),
        ("key_32_bytes", hex(&[1; 32])),
    ] {
        let mut s = base();
        s["key"] = json!(k);
        push(name, s);
    }
    for (name, prefix) in [
        ("prefix_upper_case", "Note".to_owned()),
        ("prefix_leading_digit", "1note".to_owned()),
        ("prefix_leading_underscore", "_note".to_owned()),
        ("prefix_trailing_underscore", "note_".to_owned()),
        ("prefix_dash", "no-te".to_owned()),
        ("prefix_non_ascii", "n\u{f6}te".to_owned()),
        ("prefix_64_characters", "p".repeat(64)),
    ] {
        let mut s = base();
        s["prefix"] = json!(prefix);
        push(name, s);
    }
    let mut s = base();
    s["encoding"] = json!("base64");
    push("encoding_unknown", s);
    let mut s = base();
    s["key_version"] = json!(32);
    push("key_version_32", s);
    push("old_key_version_taken", with_old(base(), 0, "other"));
    let mut s = with_old(base(), 1, "other");
    s["old_keys"][0]["key"] = json!(hex(&[1; 8]));
    push("old_key_8_bytes", s);
    push(
        "five_keys",
        with_old(
            with_old(with_old(with_old(base(), 1, "other"), 2, "zero"), 3, "ones"),
            4,
            "speck_paper",
        ),
    );
    out
}

/// Keys written as text (`PublicIds::from_keys`): the text of ID 123456789 under them, or the
/// error.
fn keys_text() -> Vec<Value> {
    let (a, b) = (key("ascii"), key("other"));
    let cases: Vec<(&str, String)> = vec![
        ("one_key", a.clone()),
        (
            "one_key_upper_case_and_spaces",
            format!("  {}\t", a.to_uppercase()),
        ),
        ("two_versions", format!("1:{a},2:{b}")),
        ("two_versions_spaced", format!(" 2:{b} , 1:{a} ")),
        (
            "four_versions",
            format!("0:{a},31:{b},7:{},9:{}", key("zero"), key("ones")),
        ),
        ("empty", String::new()),
        ("short", a[..30].to_owned()),
        ("two_keys_without_versions", format!("{a},{b}")),
        ("not_hex", format!("1:{}zz", &a[..30])),
        ("version_32", format!("32:{a}")),
        ("version_twice", format!("1:{a},1:{b}")),
        ("five_keys", format!("1:{a},2:{b},3:{a},4:{b},5:{a}")),
        ("trailing_comma", format!("1:{a},")),
    ];
    cases
        .into_iter()
        .map(|(name, keys)| {
            let expect = match PublicIds::from_keys(&keys, "note", Encoding::Base58) {
                Ok(ids) => json!({ "ok": ids.encode(123_456_789).expect("id").to_string() }),
                Err(e) => error_json(e),
            };
            json!({ "name": name, "keys": keys, "prefix": "note", "encoding": "base58", "id": "123456789", "expect": expect })
        })
        .collect()
}

/// The regular expressions of formats, for URL routers.
fn patterns() -> Vec<Value> {
    let mut out = Vec::new();
    for encoding in Encoding::ALL {
        for prefix in ["note", "sk_live", ""] {
            let format = Format::new(prefix, encoding).expect("format");
            out.push(json!({
                "prefix": prefix,
                "encoding": encoding.name(),
                "pattern": format.pattern().to_string(),
                "text_len": format.text_len(),
            }));
        }
    }
    out
}

/// `tests/vectors/public_ids.json`.
pub fn file() -> Value {
    json!({
        "_comment": "Public IDs (shardid::PublicIds). Each case builds one from `ids` (key: hex bytes; key_version; prefix; encoding; layout: a name from layouts.json; old_keys: [{key_version, key}] added for decoding) and runs `op`: encode (args.id, a decimal string) -> the text; decode (args.text, or args.text_repeat {text, times}) -> the ID as a decimal string; check (the shape without a key: ids holds only prefix and encoding) -> the key version as a decimal string. Errors carry their fields and message (no message ever shows a decoded value). `invalid`: specs the constructor refuses. `patterns`: each format's regular expression (no anchors) and text length. `keys_text`: keys written as text (an environment variable, a setting: 32 hex digits, or VERSION:HEX pairs separated by commas, the highest version current) -> the text of `id` under them (with `prefix`, `encoding`), or the error.",
        "schema_version": SCHEMA_VERSION,
        "cases": cases(),
        "invalid": invalid(),
        "patterns": patterns(),
        "keys_text": keys_text(),
    })
}
