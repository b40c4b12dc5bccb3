//! The checked-in vectors are fresh, and the Rust core passes every one of them when they are
//! read back from disk the way every other language reads them.
use std::path::PathBuf;

use serde_json::Value;
use shardid::Generator;
use shardid_vectors::{
    LAYOUT_OP_FILES, REGENERATE, arg, build_layout, build_options, error_json, layout,
    run_layout_op, run_step,
};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../vectors")
}

fn load(name: &str) -> Value {
    let text = std::fs::read_to_string(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn checked_in_vectors_are_fresh() {
    let mut stale = Vec::new();
    for (path, contents) in shardid_vectors::render_all() {
        if std::fs::read_to_string(dir().join("..").join(&path))
            .ok()
            .as_deref()
            != Some(contents.as_str())
        {
            stale.push(path);
        }
    }
    assert!(
        stale.is_empty(),
        "stale vectors {stale:?}: run `{REGENERATE}` and commit the result"
    );
}

#[test]
fn layouts_build_from_their_specs() {
    let file = load("layouts.json");
    for l in file["layouts"].as_array().unwrap() {
        let built = build_layout(&l["spec"]).unwrap();
        let name = l["name"].as_str().unwrap();
        assert_eq!(built, layout(name), "{name}");
        assert_eq!(arg(l, "max_id"), built.max_id(), "{name}");
        assert_eq!(arg(l, "expires_at_ms"), built.expires_at_ms(), "{name}");
    }
    for l in file["invalid"].as_array().unwrap() {
        let got = build_layout(&l["spec"]).map_or_else(error_json, |ok| panic!("{ok:?} built"));
        assert_eq!(got, l["expect"]);
    }
}

#[test]
fn every_layout_case_passes() {
    let mut count = 0;
    for file in LAYOUT_OP_FILES {
        for c in load(file)["cases"].as_array().unwrap() {
            let l = layout(c["layout"].as_str().unwrap());
            let got = run_layout_op(&l, c["op"].as_str().unwrap(), &c["args"]);
            assert_eq!(got, c["expect"], "{file}: {}", c["name"]);
            count += 1;
        }
    }
    assert!(count > 200, "only {count} cases");
}

#[test]
fn every_uuid_case_passes() {
    let file = load("uuid.json");
    let mut reasons = std::collections::BTreeSet::new();
    let cases = file["cases"].as_array().unwrap();
    for c in cases {
        let got =
            shardid_vectors::uuid::run(c["layout"].as_str(), c["op"].as_str().unwrap(), &c["args"]);
        assert_eq!(got, c["expect"], "{}", c["name"]);
        if let Some(message) = got["message"].as_str() {
            reasons.insert(message.to_owned());
        }
    }
    // Every refusal of a UUID is in the file.
    for reason in [
        shardid::uuid::NOT_TEXT,
        shardid::uuid::NOT_VERSION_7,
        shardid::uuid::NOT_RFC_VARIANT,
        shardid::uuid::NO_MARKER,
        shardid::uuid::CUSTOM_NEEDS_LAYOUT,
        shardid::uuid::OTHER_LAYOUT,
        shardid::uuid::TIME_MISMATCH,
        shardid::uuid::PAST_UUID_TIME,
    ] {
        assert!(
            reasons.iter().any(|m| m.ends_with(reason)),
            "no case refused with {reason}"
        );
    }
    assert!(cases.len() > 80, "only {} cases", cases.len());
}

#[test]
fn every_generator_trace_passes() {
    let traces = load("generator.json");
    for t in traces["traces"].as_array().unwrap() {
        let g = Generator::with_options(
            layout(t["layout"].as_str().unwrap()),
            arg(t, "shard"),
            build_options(&t["options"]),
        )
        .unwrap();
        for (i, step) in t["steps"].as_array().unwrap().iter().enumerate() {
            assert_eq!(run_step(&g, step), step["expect"], "{} step {i}", t["name"]);
        }
    }
}

#[test]
fn the_book_lists_every_error_kind_with_its_number_and_fields() {
    let page = std::fs::read_to_string(dir().join("../../docs/src/reference/errors.md")).unwrap();
    for kind in shardid::ErrorKind::ALL {
        let fields: Vec<String> = kind.fields().iter().map(|f| format!("`{f}`")).collect();
        let row = format!(
            "| {} | `{}` | {} |",
            kind.number(),
            kind.code(),
            fields.join(", ")
        );
        let row = row.replace("|  |", "| |");
        assert!(
            page.lines().any(|line| line.starts_with(&row)),
            "docs/src/reference/errors.md lacks `{row}`"
        );
    }
}

#[test]
fn every_public_id_case_passes() {
    let file = load("public_ids.json");
    let mut errors = std::collections::BTreeSet::new();
    for c in file["cases"].as_array().unwrap() {
        let got = shardid_vectors::public::run(&c["ids"], c["op"].as_str().unwrap(), &c["args"]);
        assert_eq!(got, c["expect"], "{}", c["name"]);
        if let Some(code) = got["error"].as_str() {
            errors.insert(code.to_owned());
            // No message shows a decoded value: none holds a run of 10 digits that the text
            // did not.
            let message = got["message"].as_str().unwrap();
            assert!(message.len() < 200, "{message}");
        }
    }
    // Every kind of refusal is in the file.
    for code in [
        "PUBLIC_ID_PREFIX",
        "PUBLIC_ID_LENGTH",
        "PUBLIC_ID_ALPHABET",
        "PUBLIC_ID_CHECK",
        "UNKNOWN_KEY_VERSION",
        "PUBLIC_ID_OVERFLOW",
        "PUBLIC_ID_MISMATCH",
        "INVALID_ID",
    ] {
        assert!(errors.contains(code), "no case of {code}");
    }
    for c in file["invalid"].as_array().unwrap() {
        let got = shardid_vectors::public::build(&c["ids"])
            .map_or_else(error_json, |ids| panic!("{ids:?} built"));
        assert_eq!(got, c["expect"], "{}", c["name"]);
    }
    for p in file["patterns"].as_array().unwrap() {
        let format = shardid::public::Format::new(
            p["prefix"].as_str().unwrap(),
            shardid::Encoding::from_name(p["encoding"].as_str().unwrap()).unwrap(),
        )
        .unwrap();
        assert_eq!(format.pattern().to_string(), p["pattern"].as_str().unwrap());
    }
    for c in file["keys_text"].as_array().unwrap() {
        let got = shardid::PublicIds::from_keys(
            c["keys"].as_str().unwrap(),
            c["prefix"].as_str().unwrap(),
            shardid::Encoding::from_name(c["encoding"].as_str().unwrap()).unwrap(),
        )
        .map_or_else(
            error_json,
            |ids| serde_json::json!({ "ok": ids.encode(arg(c, "id")).unwrap().to_string() }),
        );
        assert_eq!(got, c["expect"], "{}", c["name"]);
    }
}

/// Every serial case of `serials.json`, read back from disk and run on the core.
#[test]
fn every_serial_case_passes() {
    use shardid::serial::SerialFormat;
    use shardid_vectors::serials::serial_error_json;

    let file = load("serials.json");
    let mut count = 0;
    for case in file["formats"].as_array().unwrap() {
        let format = case["format"].as_str().unwrap();
        let f = SerialFormat::new(format, case["zone"].as_str().unwrap()).unwrap();
        assert_eq!(f.canonical(), case["canonical"], "{format}");
        assert_eq!(f.shape(), case["shape"], "{format}");
        assert_eq!(f.zone(), case["zone_canonical"], "{format}");
        assert_eq!(f.reset().name(), case["reset"], "{format}");
        assert_eq!(
            f.len_chars() as u64,
            case["length"].as_u64().unwrap(),
            "{format}"
        );
        for r in case["render"].as_array().unwrap() {
            let got = f.render(arg(r, "number"), arg(r, "unix_ms")).map_or_else(
                |e| serial_error_json(&e),
                |s| serde_json::json!({ "ok": s.as_str() }),
            );
            assert_eq!(got, r["expect"], "{format} {r}");
            count += 1;
        }
        for p in case["parse"].as_array().unwrap() {
            let got = f.parse(p["serial"].as_str().unwrap());
            match (&got, p["expect"].get("ok")) {
                (Ok(parsed), Some(ok)) => {
                    assert_eq!(parsed.number, arg(ok, "number"), "{p}");
                    assert_eq!(parsed.period.to_string(), ok["period"], "{p}");
                }
                (Err(e), None) => assert_eq!(serial_error_json(e), p["expect"], "{p}"),
                _ => panic!("{format}: {p} gave {got:?}"),
            }
            count += 1;
        }
    }
    for case in file["invalid"].as_array().unwrap() {
        let e = SerialFormat::new(
            case["format"].as_str().unwrap(),
            case["zone"].as_str().unwrap(),
        )
        .unwrap_err();
        assert_eq!(serial_error_json(&e), case["expect"], "{case}");
        count += 1;
    }
    assert!(count > 300, "{count} cases");
}
