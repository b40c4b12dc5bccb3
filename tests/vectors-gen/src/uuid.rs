//! `uuid.json`: the UUIDv7 bridge's vectors, IDs of every vector layout to UUID text and back,
//! and the UUIDs every language must refuse, with their error.
use serde_json::{Value, json};
use shardid::Layout;
use shardid::uuid::{format, from_uuid_text, parse, to_uuid};

use crate::{SCHEMA_VERSION, arg, error_json, layout, layouts, n};

/// Runs one case: `to_uuid` (`args.id` → the UUID's text) or `from_uuid` (`args.uuid`, text →
/// the ID), with the case's layout, or none (`null`: the UUID's marker names the preset).
pub fn run(layout_name: Option<&str>, op: &str, args: &Value) -> Value {
    let l = layout_name.map(layout);
    let result = match op {
        "to_uuid" => to_uuid(l.as_ref().expect("to_uuid needs a layout"), arg(args, "id"))
            .map(|u| Value::String(format(&u).to_string())),
        "from_uuid" => from_uuid_text(
            l.as_ref(),
            args["uuid"].as_str().expect("uuid must be text"),
        )
        .map(n),
        _ => panic!("unknown op {op}"),
    };
    match result {
        Ok(v) => json!({ "ok": v }),
        Err(e) => error_json(e),
    }
}

fn case(name: &str, layout: Option<&str>, op: &str, args: &Value) -> Value {
    let expect = run(layout, op, args);
    json!({ "name": name, "layout": layout, "op": op, "args": args, "expect": expect })
}

/// A UUID text with one byte changed.
fn tampered(text: &str, at: usize, f: impl Fn(u8) -> u8) -> String {
    let mut u = parse(text).expect("uuid text");
    u[at] = f(u[at]);
    format(&u).to_string()
}

fn cases() -> Vec<Value> {
    let mut cases = Vec::new();
    for (name, l) in layouts() {
        let mid_ms = l.epoch_ms() + (l.expires_at_ms() - l.epoch_ms()) / 3;
        let ids = [
            ("zero", 0),
            ("one", 1),
            (
                "max_shard_sequence",
                l.compose(l.epoch_ms(), l.max_shard(), l.max_sequence())
                    .expect("compose"),
            ),
            (
                "mid",
                l.compose(mid_ms, l.max_shard() / 2, 1).expect("compose"),
            ),
            ("max_id", l.max_id()),
        ];
        let preset = l.preset_name().is_some();
        for (what, id) in ids {
            let to = case(
                &format!("{name}_{what}"),
                Some(name),
                "to_uuid",
                &json!({ "id": n(id) }),
            );
            if let Some(text) = to["expect"]["ok"].as_str() {
                let back = json!({ "uuid": text });
                cases.push(case(
                    &format!("{name}_{what}_back"),
                    Some(name),
                    "from_uuid",
                    &back,
                ));
                cases.push(case(
                    &format!("{name}_{what}_back_no_layout"),
                    None,
                    "from_uuid",
                    &back,
                ));
                assert!(preset || cases.last().expect("case")["expect"]["error"].is_string());
            }
            cases.push(to);
        }
    }
    let id = Layout::TWITTER
        .compose(1_700_000_000_000, 5, 7)
        .expect("compose");
    let twitter = format(&to_uuid(&Layout::TWITTER, id).expect("uuid")).to_string();
    let from = |name: &str, layout: Option<&str>, text: &str| {
        case(name, layout, "from_uuid", &json!({ "uuid": text }))
    };
    cases.extend([
        from("uppercase_text", None, &twitter.to_uppercase()),
        from(
            "version_4",
            None,
            &tampered(&twitter, 6, |b| (b & 0x0F) | 0x40),
        ),
        from("variant_ncs", None, &tampered(&twitter, 8, |b| b & 0x7F)),
        from(
            "variant_microsoft",
            None,
            &tampered(&twitter, 8, |b| b | 0x40),
        ),
        from("nil", None, "00000000-0000-0000-0000-000000000000"),
        from("max", None, "ffffffff-ffff-ffff-ffff-ffffffffffff"),
        // A UUIDv7 of PostgreSQL 18's uuidv7(): random rand_a, no marker.
        from(
            "foreign_uuidv7",
            None,
            "019ae0c1-2c3a-7b5e-9f21-3c4d5e6f7a8b",
        ),
        from("other_preset", Some("discord"), &twitter),
        from("preset_asked_as_custom", Some("instagram_blog"), &twitter),
        from("time_not_the_ids", None, &tampered(&twitter, 5, |b| b ^ 1)),
        from("no_hyphens", None, &twitter.replace('-', "")),
        from("braces", None, &format!("{{{twitter}}}")),
        from("urn", None, &format!("urn:uuid:{twitter}")),
        from("too_long", None, &format!("{twitter}0")),
        from("not_hex", None, &twitter.replace(['a', 'b'], "g")),
        from("empty", None, ""),
        case(
            "signed_top_bit",
            Some("instagram"),
            "to_uuid",
            &json!({ "id": n(1 << 63) }),
        ),
    ]);
    let blog = layout("instagram_blog");
    let custom = format(
        &to_uuid(
            &blog,
            blog.compose(1_700_000_000_000, 1, 1).expect("compose"),
        )
        .expect("uuid"),
    )
    .to_string();
    cases.extend([
        from("custom_without_layout", None, &custom),
        from("custom_asked_as_preset", Some("instagram"), &custom),
        from("custom_asked_as_other_custom", Some("tiny"), &custom),
    ]);
    cases
}

/// The file.
pub fn file() -> Value {
    json!({
        "_comment": "The UUIDv7 bridge: to_uuid(id) with the case's layout -> the UUID's lowercase hyphenated text; from_uuid(uuid text) with the case's layout, or none when layout is null (the UUID's marker names its preset) -> the ID. A UUID the bridge did not make, of another version or variant, or of another layout than the one asked for is INVALID_ARGUMENT (argument uuid, the reason in message). Byte order of the UUIDs of one layout is the order of their IDs.",
        "schema_version": SCHEMA_VERSION,
        "cases": cases(),
    })
}
