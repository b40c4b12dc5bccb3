//! The conformance vectors in `tests/vectors/`: their cases, and the one interpreter that turns
//! a case's operation into the core's answer.
//!
//! The cases are written here by hand (inputs, and for published IDs the expected values too,
//! which [`render`] asserts); the expected results of the rest come from the core. The files
//! are checked in; a test fails when they are stale. Every language runs the same files.
// A data generator: a bad case should stop it loudly, and its case tables are long by nature.
#![allow(clippy::missing_panics_doc, clippy::too_many_lines)]

pub mod c;
pub mod ordinal;
pub mod public;
pub mod serials;
pub mod tables;
pub mod uuid;

use serde_json::{Map, Value, json};
use shardid::{Error, FieldOrder, FieldValue, Generator, Layout, Options};

/// Bumped whenever the shape of the files changes.
pub const SCHEMA_VERSION: u64 = 2;

/// The command that rewrites the files.
pub const REGENERATE: &str = "cargo run -p shardid-vectors";

/// The files of layout operations (`cases`, each run by [`run_layout_op`]).
pub const LAYOUT_OP_FILES: [&str; 5] = [
    "decode.json",
    "compose.json",
    "ranges.json",
    "shard_for_key.json",
    "scatter.json",
];

const T0: u64 = 1_700_000_000_000; // 2023-11-14T22:13:20Z

/// A 64-bit value as JSON: a decimal string, because JavaScript's JSON parser rounds numbers
/// above 2^53.
pub(crate) fn n(v: u64) -> Value {
    Value::String(v.to_string())
}

/// Reads a decimal-string field.
pub fn arg(args: &Value, key: &str) -> u64 {
    args[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} must be a decimal string in {args}"))
        .parse()
        .unwrap_or_else(|e| panic!("{key} in {args}: {e}"))
}

/// The named layouts: the four presets and custom ones that make edge cases short.
pub fn layouts() -> Vec<(&'static str, Layout)> {
    let custom = |b: shardid::LayoutBuilder| b.build().expect("custom vector layout");
    vec![
        ("instagram", Layout::INSTAGRAM),
        ("twitter", Layout::TWITTER),
        ("discord", Layout::DISCORD),
        ("sonyflake", Layout::SONYFLAKE),
        // Instagram's blog post example: same widths, epoch 2011-01-01T00:00:00Z.
        (
            "instagram_blog",
            custom(
                Layout::builder()
                    .epoch_ms(1_293_840_000_000)
                    .bits(41, 13, 10),
            ),
        ),
        // 8 time bits, 2 shard bits, 2 sequence bits: exhaustion after 4 IDs, expiry after 256 ms.
        ("tiny", custom(Layout::builder().epoch_ms(T0).bits(8, 2, 2))),
        // All 64 bits unsigned, sequence above shard, 100 ms units.
        (
            "wide_unsigned",
            custom(
                Layout::builder()
                    .epoch_ms(1_600_000_000_000)
                    .unit_ms(100)
                    .bits(44, 8, 12)
                    .order(FieldOrder::TimeSequenceShard)
                    .signed(false),
            ),
        ),
    ]
}

/// Looks a layout up by its vector name.
pub fn layout(name: &str) -> Layout {
    layouts()
        .into_iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("unknown layout {name}"))
        .1
}

fn layout_spec(l: &Layout) -> Value {
    json!({
        "epoch_ms": n(l.epoch_ms()),
        "unit_ms": n(l.unit_ms()),
        "time_bits": l.time_bits(),
        "shard_bits": l.shard_bits(),
        "sequence_bits": l.sequence_bits(),
        "order": match l.order() {
            FieldOrder::TimeShardSequence => "time_shard_sequence",
            FieldOrder::TimeSequenceShard => "time_sequence_shard",
        },
        "signed": l.signed(),
    })
}

/// Builds a layout from a spec object, as every language's custom constructor will.
///
/// # Errors
/// The core's [`Error::InvalidLayout`].
pub fn build_layout(spec: &Value) -> Result<Layout, Error> {
    let bits = |k: &str| u8::try_from(spec[k].as_u64().expect("bit width")).expect("bit width");
    let order = match spec["order"].as_str() {
        Some("time_sequence_shard") => FieldOrder::TimeSequenceShard,
        _ => FieldOrder::TimeShardSequence,
    };
    Layout::builder()
        .epoch_ms(arg(spec, "epoch_ms"))
        .unit_ms(arg(spec, "unit_ms"))
        .bits(bits("time_bits"), bits("shard_bits"), bits("sequence_bits"))
        .order(order)
        .signed(spec["signed"].as_bool().unwrap_or(true))
        .build()
}

/// An error as JSON: its code, its fields (numbers as decimal strings) and its message.
pub fn error_json(e: Error) -> Value {
    let mut out = Map::new();
    out.insert("error".into(), Value::String(e.code().into()));
    for (name, value) in e.fields() {
        let value = match value {
            FieldValue::Int(v) => n(v),
            FieldValue::Text(t) => Value::String(t.into()),
        };
        out.insert(name.into(), value);
    }
    out.insert("message".into(), Value::String(e.to_string()));
    Value::Object(out)
}

fn outcome(result: Result<Value, Error>) -> Value {
    match result {
        Ok(v) => json!({ "ok": v }),
        Err(e) => error_json(e),
    }
}

/// Runs one layout operation of a case (`op` with its `args`) on the core.
pub fn run_layout_op(l: &Layout, op: &str, args: &Value) -> Value {
    let id = || arg(args, "id");
    let ts = || arg(args, "timestamp_ms");
    outcome(match op {
        "decode" => l.decode(id()).map(|p| {
            json!({ "timestamp_ms": n(p.timestamp_ms), "shard": n(p.shard), "sequence": n(p.sequence) })
        }),
        "compose" => l.compose(ts(), arg(args, "shard"), arg(args, "sequence")).map(n),
        "min_id_at" => l.min_id_at(ts()).map(n),
        "max_id_at" => l.max_id_at(ts()).map(n),
        "shard_for_key" => l.shard_for_key(arg(args, "key"), arg(args, "logical_shards")).map(n),
        "scatter_decimal" => l.scatter_decimal(id()).map(n),
        "gather_decimal" => l.gather_decimal(id()).map(n),
        "scatter_bits" => l.scatter_bits(id()).map(n),
        "gather_bits" => l.gather_bits(id()).map(n),
        "scatter_decimal_digits" | "gather_decimal_digits" => {
            let digits = shardid::ScatterDigits::new(arg(args, "digits")).expect("digits 1..=3");
            if op == "scatter_decimal_digits" {
                l.scatter_decimal_digits(id(), digits).map(n)
            } else {
                l.gather_decimal_digits(id(), digits).map(n)
            }
        }
        _ => panic!("unknown op {op}"),
    })
}

fn options_json(o: Options) -> Value {
    json!({
        "backwards_tolerance_ms": n(o.backwards_tolerance_ms),
        "max_borrow_units": n(o.max_borrow_units),
    })
}

/// Builds a trace's options; absent means the defaults.
pub fn build_options(v: &Value) -> Options {
    let mut o = Options::new();
    if v.get("backwards_tolerance_ms").is_some() {
        o = o.backwards_tolerance_ms(arg(v, "backwards_tolerance_ms"));
    }
    if v.get("max_borrow_units").is_some() {
        o = o.max_borrow_units(arg(v, "max_borrow_units"));
    }
    o
}

/// Runs one step of a generator trace.
pub fn run_step(g: &Generator, step: &Value) -> Value {
    let now = arg(step, "now_ms");
    match step["op"].as_str() {
        Some("next_id_at") => outcome(g.next_id_at(now).map(n)),
        Some("next_ids_at") => {
            let mut out = vec![0u64; usize::try_from(arg(step, "count")).expect("count")];
            outcome(
                g.next_ids_at(now, &mut out)
                    .map(|k| out[..k].iter().copied().map(n).collect()),
            )
        }
        other => panic!("unknown step {other:?}"),
    }
}

fn case(name: &str, layout: &str, op: &str, args: Value) -> Value {
    let expect = run_layout_op(&self::layout(layout), op, &args);
    let mut case = json!({ "name": name, "layout": layout, "op": op });
    case["args"] = args;
    case["expect"] = expect;
    case
}

fn file(comment: &str, key: &str, cases: &[Value]) -> Value {
    json!({ "_comment": comment, "schema_version": SCHEMA_VERSION, key: cases })
}

fn decode_cases() -> Vec<Value> {
    let mut cases = Vec::new();
    let mut published = |name: &str, layout: &str, id: u64, ts: u64, shard: u64, seq: u64| {
        let c = case(name, layout, "decode", json!({ "id": n(id) }));
        // Published values are facts the core must reproduce, not whatever it computes.
        assert_eq!(
            c["expect"]["ok"],
            json!({ "timestamp_ms": n(ts), "shard": n(shard), "sequence": n(seq) }),
            "{name}"
        );
        cases.push(c);
    };
    // Discord's developer docs: 2016-04-30T11:18:25.796Z, worker 1, process 0, increment 7.
    published(
        "discord_docs_example",
        "discord",
        175_928_847_299_117_063,
        1_462_015_105_796,
        32,
        7,
    );
    // A tweet from Twitter's API docs, created "Wed Oct 10 20:19:24 +0000 2018".
    published(
        "twitter_docs_tweet",
        "twitter",
        1_050_118_621_198_921_728,
        1_539_202_764_211,
        347,
        0,
    );
    // Instagram's engineering blog: 1387263000 ms after its example epoch, user 31341 on
    // 2000 logical shards (shard 1341), nextval 5001 (% 1024 = 905).
    #[allow(clippy::decimal_bitwise_operands)] // the blog's own numbers
    published(
        "instagram_blog_example",
        "instagram_blog",
        (1_387_263_000 << 23) | (1341 << 10) | 905,
        1_293_840_000_000 + 1_387_263_000,
        1341,
        905,
    );
    // Instagram's next_id() formula at a known time.
    published(
        "instagram_next_id_formula",
        "instagram",
        ((T0 - 1_314_220_021_721) << 23) | (5 << 10) | (5001 % 1024),
        T0,
        5,
        905,
    );
    for (name, l) in layouts() {
        cases.push(case(
            &format!("{name}_zero"),
            name,
            "decode",
            json!({ "id": "0" }),
        ));
        cases.push(case(
            &format!("{name}_max_id"),
            name,
            "decode",
            json!({ "id": n(l.max_id()) }),
        ));
        let mid = l.compose(
            l.epoch_ms() + 123_456_789 * l.unit_ms() % (l.expires_at_ms() - l.epoch_ms()),
            1,
            2,
        );
        cases.push(case(
            &format!("{name}_mid"),
            name,
            "decode",
            json!({ "id": n(mid.expect("mid")) }),
        ));
        if l.max_id() < u64::MAX {
            let id = l.max_id() + 1;
            cases.push(case(
                &format!("{name}_above_max_id"),
                name,
                "decode",
                json!({ "id": n(id) }),
            ));
            cases.push(case(
                &format!("{name}_u64_max"),
                name,
                "decode",
                json!({ "id": n(u64::MAX) }),
            ));
        }
    }
    cases
}

fn compose_cases() -> Vec<Value> {
    let mut cases = Vec::new();
    let args = |ts: u64, shard: u64, seq: u64| json!({ "timestamp_ms": n(ts), "shard": n(shard), "sequence": n(seq) });
    for (name, l) in layouts() {
        let c = |label: &str, a: Value| case(&format!("{name}_{label}"), name, "compose", a);
        cases.push(c("epoch", args(l.epoch_ms(), 0, 0)));
        cases.push(c(
            "expiry_max_fields",
            args(l.expires_at_ms(), l.max_shard(), l.max_sequence()),
        ));
        cases.push(c("mid_unit_floors", args(l.epoch_ms() + 1_234_567, 1, 1)));
        cases.push(c("before_epoch", args(l.epoch_ms() - 1, 0, 0)));
        cases.push(c("past_expiry", args(l.expires_at_ms() + 1, 0, 0)));
        cases.push(c("shard_too_big", args(l.epoch_ms(), l.max_shard() + 1, 0)));
        cases.push(c(
            "sequence_too_big",
            args(l.epoch_ms(), 0, l.max_sequence() + 1),
        ));
    }
    cases.push(case(
        "discord_docs_example",
        "discord",
        "compose",
        args(1_462_015_105_796, 32, 7),
    ));
    cases
}

fn range_cases() -> Vec<Value> {
    let mut cases = Vec::new();
    for (name, l) in layouts() {
        for op in ["min_id_at", "max_id_at"] {
            for (label, ts) in [
                ("epoch", l.epoch_ms()),
                ("t0", T0.max(l.epoch_ms()).min(l.expires_at_ms())),
                ("expiry", l.expires_at_ms()),
                ("before_epoch", l.epoch_ms() - 1),
                ("past_expiry", l.expires_at_ms() + 1),
            ] {
                cases.push(case(
                    &format!("{name}_{op}_{label}"),
                    name,
                    op,
                    json!({ "timestamp_ms": n(ts) }),
                ));
            }
        }
    }
    cases
}

fn shard_for_key_cases() -> Vec<Value> {
    let c = |name: &str, layout: &str, key: u64, count: u64| {
        case(
            name,
            layout,
            "shard_for_key",
            json!({ "key": n(key), "logical_shards": n(count) }),
        )
    };
    vec![
        c("instagram_blog_user", "instagram", 31_341, 2_000),
        c("all_shards", "instagram", 123_456_789, 8_192),
        c("largest_key", "twitter", u64::MAX, 1_000),
        c("one_shard", "discord", 77, 1),
        c("zero_shards", "instagram", 5, 0),
        c("more_shards_than_the_field_holds", "twitter", 5, 1_025),
    ]
}

fn server_for_cases() -> Vec<Value> {
    let topics = [
        "orders",
        "urls",
        "user-agents",
        "topic-0",
        "topic-1",
        "Topic-1",
        "é",
        "键",
        "🦀 crab",
        "a",
        "the longest topics are 200 bytes; this one is a little shorter but long enough",
    ];
    let mut cases = Vec::new();
    for topic in topics {
        for servers in [1u32, 2, 3, 5, 8, 100] {
            cases.push(json!({
                "topic": topic,
                "servers": servers,
                "server": shardid::dictionary::server_for(topic, servers),
            }));
        }
    }
    cases
}

fn scatter_cases() -> Vec<Value> {
    let mut cases = Vec::new();
    let c = |name: &str, layout: &str, op: &str, id: u64| {
        case(name, layout, op, json!({ "id": n(id) }))
    };
    cases.push(c("tidb_example", "twitter", "scatter_decimal", 1_234_567));
    // By 2 and 3 trailing digits (TiDB's 100- and 1,000-range variants).
    let k = |name: &str, layout: &str, op: &str, id: u64, digits: u64| {
        case(
            name,
            layout,
            op,
            json!({ "id": n(id), "digits": n(digits) }),
        )
    };
    for digits in 1..=3 {
        cases.push(k(
            "seven_digits",
            "twitter",
            "scatter_decimal_digits",
            1_234_567,
            digits,
        ));
        cases.push(k(
            "moved_zeros",
            "twitter",
            "scatter_decimal_digits",
            1_234_507,
            digits,
        ));
        cases.push(k(
            "snowflake_id",
            "twitter",
            "scatter_decimal_digits",
            1_541_815_603_606_036_480,
            digits,
        ));
        cases.push(k(
            "too_short_unchanged",
            "twitter",
            "scatter_decimal_digits",
            10u64.pow(u32::try_from(digits).unwrap()),
            digits,
        ));
        cases.push(k(
            "signed_overflow",
            "twitter",
            "scatter_decimal_digits",
            9_223_372_036_854_775_807,
            digits,
        ));
        cases.push(k(
            "invalid_id",
            "twitter",
            "scatter_decimal_digits",
            1 << 63,
            digits,
        ));
        cases.push(k(
            "seven_digits",
            "twitter",
            "gather_decimal_digits",
            1_672_345,
            digits,
        ));
        cases.push(k(
            "unsigned_not_an_image",
            "discord",
            "gather_decimal_digits",
            17_999_999_999_999_999_999,
            digits,
        ));
    }
    cases.push(c("tidb_example", "twitter", "gather_decimal", 1_723_456));
    cases.push(c("two_digits_unchanged", "twitter", "scatter_decimal", 42));
    cases.push(c(
        "trailing_zero",
        "twitter",
        "scatter_decimal",
        1_000_000_000_000_000_000,
    ));
    cases.push(c(
        "signed_overflow",
        "twitter",
        "scatter_decimal",
        9_223_372_036_854_775_807,
    ));
    cases.push(c(
        "unsigned_overflow",
        "discord",
        "scatter_decimal",
        18_446_744_073_709_551_609,
    ));
    cases.push(c(
        "not_an_image",
        "discord",
        "gather_decimal",
        17_999_999_999_999_999_999,
    ));
    cases.push(c("invalid_input", "instagram", "scatter_decimal", 1 << 63));
    // Above a signed layout's largest ID: no ID scatters there, though moving its digits back
    // gives a valid ID (found by fuzzing: fuzz/fuzz_targets/scatter.rs).
    cases.push(c(
        "above_signed_max_not_an_image",
        "sonyflake",
        "gather_decimal",
        9_621_148_955_505_808_896,
    ));
    for (name, l) in layouts() {
        let id = l
            .compose(T0.max(l.epoch_ms()).min(l.expires_at_ms()), 1, 3)
            .expect("id");
        let d = l.scatter_decimal(id).unwrap_or(id);
        cases.push(c(&format!("{name}_decimal"), name, "scatter_decimal", id));
        cases.push(c(
            &format!("{name}_decimal_back"),
            name,
            "gather_decimal",
            d,
        ));
        cases.push(c(&format!("{name}_bits"), name, "scatter_bits", id));
        cases.push(c(
            &format!("{name}_bits_back"),
            name,
            "gather_bits",
            l.scatter_bits(id).expect("bits"),
        ));
        cases.push(c(
            &format!("{name}_bits_max_id"),
            name,
            "scatter_bits",
            l.max_id(),
        ));
        if l.max_id() < u64::MAX {
            cases.push(c(
                &format!("{name}_bits_invalid"),
                name,
                "scatter_bits",
                l.max_id() + 1,
            ));
        }
    }
    cases
}

fn layout_file() -> Value {
    let presets: Vec<Value> = layouts()
        .into_iter()
        .map(|(name, l)| {
            json!({
                "name": name,
                "preset": Layout::PRESETS.iter().any(|(preset, _)| preset.eq_ignore_ascii_case(name)),
                "spec": layout_spec(&l),
                "max_shard": n(l.max_shard()),
                "max_sequence": n(l.max_sequence()),
                "max_id": n(l.max_id()),
                "expires_at_ms": n(l.expires_at_ms()),
            })
        })
        .collect();
    let invalid = |name: &str, spec: Value| {
        let expect = build_layout(&spec).map_or_else(error_json, |_| panic!("{name} is valid"));
        json!({ "name": name, "spec": spec, "expect": expect })
    };
    let spec = |epoch: u64, unit: u64, bits: (u8, u8, u8), signed: bool| {
        json!({ "epoch_ms": n(epoch), "unit_ms": n(unit), "time_bits": bits.0, "shard_bits": bits.1,
                "sequence_bits": bits.2, "order": "time_shard_sequence", "signed": signed })
    };
    json!({
        "_comment": "Named layouts (the presets and custom ones) with their derived limits, and specs that must be rejected. 64-bit values are decimal strings.",
        "schema_version": SCHEMA_VERSION,
        "layouts": presets,
        "invalid": [
            invalid("no_time_bits", spec(0, 1, (0, 10, 10), true)),
            invalid("wider_than_64_bits", spec(0, 1, (42, 12, 12), false)),
            invalid("signed_without_a_time_bit", spec(0, 1, (1, 53, 10), true)),
            invalid("zero_time_unit", spec(0, 0, (41, 10, 12), true)),
            invalid("lifetime_overflows_u64", spec(u64::MAX - 10, 1, (63, 0, 0), false)),
        ],
    })
}

/// One scripted generator trace: a clock in, IDs or errors out.
struct Trace {
    name: &'static str,
    comment: &'static str,
    layout: &'static str,
    shard: u64,
    options: Option<Options>,
    /// (op, `now_ms`, count for batches)
    steps: Vec<(&'static str, u64, u64)>,
}

fn trace_json(t: &Trace) -> Value {
    let options = t.options.unwrap_or_default();
    let g = Generator::with_options(layout(t.layout), t.shard, options).expect("trace generator");
    let steps: Vec<Value> = t
        .steps
        .iter()
        .map(|&(op, now, count)| {
            let mut step = json!({ "op": op, "now_ms": n(now) });
            if op == "next_ids_at" {
                step["count"] = n(count);
            }
            step["expect"] = run_step(&g, &step);
            step
        })
        .collect();
    json!({
        "name": t.name,
        "_comment": t.comment,
        "layout": t.layout,
        "shard": n(t.shard),
        "options": t.options.map_or_else(|| json!({}), options_json),
        "steps": steps,
    })
}

fn traces() -> Vec<Trace> {
    let one = |now: u64| ("next_id_at", now, 1);
    let many = |now: u64, count: u64| ("next_ids_at", now, count);
    let tight = Options::new().backwards_tolerance_ms(5);
    let tiny = layout("tiny");
    vec![
        Trace {
            name: "clock_standing_still",
            comment: "The same millisecond five times: the sequence counts 0..4.",
            layout: "twitter",
            shard: 7,
            options: None,
            steps: vec![one(T0); 5],
        },
        Trace {
            name: "new_unit_restarts_sequence",
            comment: "The sequence goes back to 0 when the clock reaches a new unit.",
            layout: "instagram",
            shard: 5,
            options: None,
            steps: vec![one(T0), one(T0), one(T0 + 1), one(T0 + 7)],
        },
        Trace {
            name: "sequence_runs_out",
            comment: "2 sequence bits: the fifth ID of a unit is SEQUENCE_EXHAUSTED with retry_at_ms, issues nothing, and the next unit starts at 0.",
            layout: "tiny",
            shard: 1,
            options: None,
            steps: vec![
                one(T0),
                one(T0),
                one(T0),
                one(T0),
                one(T0),
                one(T0),
                one(T0 + 1),
                one(T0 + 1),
            ],
        },
        Trace {
            name: "borrowing_future_units",
            comment: "max_borrow_units 2: a burst runs up to two units ahead of the clock, then must wait.",
            layout: "tiny",
            shard: 2,
            options: Some(Options::new().max_borrow_units(2)),
            steps: [vec![one(T0); 13], vec![one(T0 + 1), one(T0 + 3)]].concat(),
        },
        Trace {
            name: "clock_back_within_tolerance",
            comment: "Tolerance 5 ms: a clock 5 ms behind continues from the last unit; 6 ms behind is CLOCK_MOVED_BACKWARDS with behind_ms.",
            layout: "twitter",
            shard: 3,
            options: Some(tight),
            steps: vec![
                one(T0 + 10),
                one(T0 + 5),
                one(T0 + 4),
                one(T0 + 10),
                one(T0 + 11),
            ],
        },
        Trace {
            name: "clock_back_beyond_tolerance",
            comment: "The default tolerance (1000 ms): 1000 ms behind continues, 1001 ms behind is an error.",
            layout: "discord",
            shard: 1023,
            options: None,
            steps: vec![
                one(T0 + 2_000),
                one(T0 + 1_000),
                one(T0 + 999),
                one(T0 + 2_001),
            ],
        },
        Trace {
            name: "clock_back_after_exhaustion",
            comment: "A used-up unit and a clock far behind: a clock error, not a long wait.",
            layout: "tiny",
            shard: 0,
            options: Some(Options::new().backwards_tolerance_ms(0)),
            steps: vec![
                one(T0 + 50),
                one(T0 + 50),
                one(T0 + 50),
                one(T0 + 50),
                one(T0 + 20),
                one(T0 + 50),
            ],
        },
        Trace {
            name: "expiry",
            comment: "The last unit is usable to its end, then TIMESTAMP_PAST_EXPIRY: never a wrapped ID.",
            layout: "tiny",
            shard: 3,
            options: None,
            steps: vec![
                one(tiny.expires_at_ms() - 1),
                one(tiny.expires_at_ms()),
                one(tiny.expires_at_ms()),
                one(tiny.expires_at_ms()),
                one(tiny.expires_at_ms()),
                one(tiny.expires_at_ms()),
                one(tiny.expires_at_ms() + 1),
            ],
        },
        Trace {
            name: "before_epoch",
            comment: "A clock before the epoch is an error.",
            layout: "tiny",
            shard: 0,
            options: None,
            steps: vec![one(T0 - 1), one(T0)],
        },
        Trace {
            name: "batches",
            comment: "next_ids_at takes what is left of the unit (and of any borrowed units), up to count, in one step.",
            layout: "tiny",
            shard: 1,
            options: None,
            steps: vec![
                one(T0),
                many(T0, 10),
                many(T0, 10),
                many(T0 + 1, 2),
                one(T0 + 1),
            ],
        },
        Trace {
            name: "batches_borrowing",
            comment: "With max_borrow_units 1 a batch spans the current and the next unit.",
            layout: "tiny",
            shard: 2,
            options: Some(Options::new().max_borrow_units(1)),
            steps: vec![many(T0, 10), many(T0, 1), many(T0 + 1, 3)],
        },
        Trace {
            name: "sonyflake_10ms_units",
            comment: "Sonyflake counts 10 ms units: 5 ms later is the same unit.",
            layout: "sonyflake",
            shard: 0xBEEF,
            options: None,
            steps: vec![one(T0 + 3), one(T0 + 8), one(T0 + 13), many(T0 + 19, 3)],
        },
    ]
}

/// Lengths no buffer has, for every C function taking a pointer and a length: the C binding
/// refuses them (`INVALID_ARGUMENT`) before reading or writing, where a slice made of them was
/// a panic that aborts (debug) or undefined behaviour (release). `length` is a C expression of
/// type `size_t`; with `wraps` the pointer is the last bytes of the address space, so a small
/// length runs past its end.
fn c_length_cases() -> Vec<Value> {
    // The functions taking uint64_t arrays, and those taking bytes (or a text buffer).
    let arrays = [
        "shardid_generator_next_batch",
        "shardid_generator_next_batch_at",
    ];
    let bytes = [
        "shardid_public_ids_new",
        "shardid_public_ids_add_old_key",
        "shardid_public_encode",
        "shardid_public_decode",
        "shardid_public_check",
        "shardid_serial_render",
        "shardid_uuid_parse",
    ];
    let array_lengths: &[(&str, &str, bool)] = &[
        ("size_max", "SIZE_MAX", false),
        ("bytes_past_size_max", "SIZE_MAX / 8 + 1", false),
        (
            "bytes_past_ptrdiff_max",
            "(size_t)PTRDIFF_MAX / 8 + 1",
            false,
        ),
        ("past_the_end_of_memory", "2", true),
    ];
    let byte_lengths: &[(&str, &str, bool)] = &[
        ("size_max", "SIZE_MAX", false),
        ("past_ptrdiff_max", "(size_t)PTRDIFF_MAX + 1", false),
        ("past_the_end_of_memory", "16", true),
    ];
    let mut cases = Vec::new();
    for (calls, lengths) in [(&arrays[..], array_lengths), (&bytes[..], byte_lengths)] {
        for call in calls {
            for (name, length, wraps) in lengths {
                cases.push(json!({
                    "name": format!("{}_{name}", call.trim_start_matches("shardid_")),
                    "call": call,
                    "length": length,
                    "wraps": wraps,
                    "expect": { "error": "INVALID_ARGUMENT" },
                }));
            }
        }
    }
    cases
}

/// The byte of a layout's `bool is_signed`, as a C caller can write it by hand: 0 and 1 are
/// the layout (Twitter's, signed or not), any other byte `INVALID_LAYOUT`, read without
/// undefined behaviour.
fn c_bool_cases() -> Vec<Value> {
    [
        (0u8, None),
        (1, None),
        (2, Some("INVALID_LAYOUT")),
        (0x80, Some("INVALID_LAYOUT")),
        (255, Some("INVALID_LAYOUT")),
    ]
    .into_iter()
    .map(|(byte, error)| {
        let expect = error.map_or_else(|| json!({ "ok": null }), |e| json!({ "error": e }));
        json!({ "name": format!("is_signed_byte_{byte}"), "byte": byte, "expect": expect })
    })
    .collect()
}

/// Hostile inputs for the ID argument of `validate_id` (the gate every ID passes through, with
/// `decode` and the rest), one list every language walks (`adversarial.json`). The expected
/// result is computed by the core's own rules, so the file cannot drift from them:
/// - `text`: a string, in the languages that take IDs as text (Python, JS): the core's
///   `parse_decimal`, then the layout's `validate_id`;
/// - `int`: an integer of any size (Python `int`, JS `bigint`; C `uint64_t` when it fits);
/// - `number`: a JS `number` (the core's `js::u64_from_number`). Python takes no `float` as an ID:
///   every `number` case is a `TypeError` there;
/// - `other`: a value of another type (`null`, a boolean, a list, an object): a wrong type in
///   every language (Python `TypeError`, JS `TypeError` with code `INVALID_ARGUMENT`).
fn adversarial_cases() -> Vec<Value> {
    use shardid::Error;
    let code = |r: Result<u64, Error>| match r {
        Ok(id) => json!({ "ok": n(id) }),
        Err(e) => json!({ "error": e.code() }),
    };
    let invalid = || json!({ "error": "INVALID_ID" });
    let mut cases = Vec::new();
    let mut push = |name: &str, layout: &str, input: Value, expect: Value| {
        cases.push(json!({ "name": name, "layout": layout, "op": "validate_id", "input": input, "expect": expect }));
    };
    let texts: &[(&str, &str)] = &[
        ("plain", "5"),
        ("leading_zeros", "00000000000000000005"),
        (
            "twenty_one_chars_with_leading_zeros",
            "000000000000000000005",
        ),
        ("plus_sign", "+5"),
        ("minus_sign", "-5"),
        ("minus_zero", "-0"),
        ("leading_space", " 5"),
        ("trailing_space", "5 "),
        ("trailing_newline", "5\n"),
        ("tab", "\t5"),
        ("underscore", "5_000"),
        ("comma", "5,000"),
        ("decimal_point", "5.0"),
        ("exponent", "5e3"),
        ("hex", "0x10"),
        ("empty", ""),
        ("nul_after", "5\u{0}"),
        ("arabic_indic_digit", "\u{665}"),
        ("fullwidth_digit", "\u{ff15}"),
        ("mathematical_bold_digit", "\u{1d7d3}"),
        ("superscript_digit", "\u{2075}"),
        ("two_to_the_64", "18446744073709551616"),
        (
            "two_to_the_64_minus_1_on_a_signed_layout",
            "18446744073709551615",
        ),
        ("thirty_digits", "999999999999999999999999999999"),
        ("nan_text", "NaN"),
        ("infinity_text", "Infinity"),
    ];
    for &(name, text) in texts {
        let expect = shardid::parse_decimal(text.as_bytes()).map_or_else(invalid, |id| {
            code(shardid::Layout::INSTAGRAM.validate_id(id))
        });
        push(
            &format!("text_{name}"),
            "instagram",
            json!({ "text": text }),
            expect,
        );
    }
    // A 100,000-character string: refused, and the message stays small.
    push(
        "text_huge",
        "instagram",
        json!({ "text_repeat": { "text": "1", "times": 100_000 } }),
        invalid(),
    );
    let ints: &[(&str, &str, &str)] = &[
        ("zero", "instagram", "0"),
        ("minus_one", "instagram", "-1"),
        (
            "two_to_the_63_on_a_signed_layout",
            "instagram",
            "9223372036854775808",
        ),
        (
            "two_to_the_63_on_an_unsigned_layout",
            "discord",
            "9223372036854775808",
        ),
        (
            "u64_max_on_an_unsigned_layout",
            "discord",
            "18446744073709551615",
        ),
        ("two_to_the_64", "discord", "18446744073709551616"),
        ("minus_two_to_the_64", "discord", "-18446744073709551616"),
        (
            "ten_to_the_30",
            "discord",
            "1000000000000000000000000000000",
        ),
        ("a_discord_id_on_twitter", "twitter", "17293822569102704640"),
    ];
    for &(name, layout, int) in ints {
        let expect = int.parse::<u64>().map_or_else(
            |_| invalid(),
            |id| code(self::layout(layout).validate_id(id)),
        );
        push(
            &format!("int_{name}"),
            layout,
            json!({ "int": int }),
            expect,
        );
    }
    let numbers: &[(&str, &str, f64)] = &[
        ("five", "5", 5.0),
        ("negative_zero", "-0", -0.0),
        ("minus_one", "-1", -1.0),
        ("fraction", "1.5", 1.5),
        ("nan", "NaN", f64::NAN),
        ("infinity", "Infinity", f64::INFINITY),
        ("minus_infinity", "-Infinity", f64::NEG_INFINITY),
        ("two_to_the_53", "9007199254740992", 9_007_199_254_740_992.0),
        (
            "max_safe_integer",
            "9007199254740991",
            9_007_199_254_740_991.0,
        ),
        ("one_e_300", "1e300", 1e300),
    ];
    for &(name, text, value) in numbers {
        let expect = shardid::js::u64_from_number(value).map_or_else(
            |_| invalid(),
            |id| code(shardid::Layout::INSTAGRAM.validate_id(id)),
        );
        push(
            &format!("number_{name}"),
            "instagram",
            json!({ "number": text }),
            expect,
        );
    }
    for (name, other) in [
        ("null", Value::Null),
        ("true", json!(true)),
        ("list", json!(["5"])),
        ("object", json!({ "id": "5" })),
    ] {
        push(
            &format!("other_{name}"),
            "instagram",
            json!({ "other": other }),
            json!({ "error": "INVALID_ARGUMENT", "wrong_type": true }),
        );
    }
    cases
}

/// Every JSON vector file: (file name in `tests/vectors/`, contents).
pub fn render() -> Vec<(&'static str, String)> {
    let generator = json!({
        "_comment": "Scripted generator traces: make a generator for (layout, shard, options; {} means the defaults), run the steps in order, and compare each result. Errors carry their fields.",
        "schema_version": SCHEMA_VERSION,
        "traces": traces().iter().map(trace_json).collect::<Vec<_>>(),
    });
    let files = [
        ("layouts.json", layout_file()),
        (
            "decode.json",
            file(
                "decode(id) -> {timestamp_ms, shard, sequence}. Includes published IDs (Discord docs, a tweet from Twitter's docs, Instagram's formula and blog example).",
                "cases",
                &decode_cases(),
            ),
        ),
        (
            "compose.json",
            file(
                "compose(timestamp_ms, shard, sequence) -> id.",
                "cases",
                &compose_cases(),
            ),
        ),
        (
            "ranges.json",
            file(
                "min_id_at / max_id_at(timestamp_ms) -> id.",
                "cases",
                &range_cases(),
            ),
        ),
        (
            "shard_for_key.json",
            file(
                "shard_for_key(key, logical_shards) -> shard.",
                "cases",
                &shard_for_key_cases(),
            ),
        ),
        (
            "scatter.json",
            file(
                "scatter_decimal / gather_decimal / scatter_bits / gather_bits(id) -> id.",
                "cases",
                &scatter_cases(),
            ),
        ),
        ("generator.json", generator),
        (
            "adversarial.json",
            json!({
                "_comment": "Hostile inputs for validate_id's ID argument, every language asserting the same code. input is one of: text (a string), text_repeat ({text, times}), int (a decimal of any size: Python int, JS bigint, C uint64_t when it fits), number (a JS number, written as JS writes it: NaN, -0, Infinity; Python takes no float as an ID, so every number case is a TypeError there), other (a JSON value of another type). wrong_type: the language's wrong-type error (Python TypeError; JS TypeError with code INVALID_ARGUMENT). c_lengths and c_bools: what only C can be handed (tests/c/bad_input.c walks them): a length no buffer has, given to every function that takes a pointer and a length (length: a C expression of type size_t; wraps: the pointer is the last bytes of the address space, so pointer + length wraps), and a byte other than 0 or 1 in a layout's bool is_signed.",
                "schema_version": SCHEMA_VERSION,
                "cases": adversarial_cases(),
                "c_lengths": c_length_cases(),
                "c_bools": c_bool_cases(),
            }),
        ),
        ("public_ids.json", public::file()),
        ("uuid.json", uuid::file()),
        ("ordinal.json", ordinal::file()),
        ("serials.json", serials::file()),
        (
            "dictionary.json",
            json!({
                "_comment": "The string <-> ID dictionary: server_for(topic, servers) -> the index of the server that holds the topic (FNV-1a 64 of the topic's UTF-8 bytes, then jump consistent hash), the same in every language.",
                "schema_version": SCHEMA_VERSION,
                "server_for": server_for_cases(),
            }),
        ),
    ];
    files
        .into_iter()
        .map(|(name, v)| (name, serde_json::to_string_pretty(&v).expect("json") + "\n"))
        .collect()
}

/// Every generated file: (path under `tests/`, contents): the JSON vectors and their C
/// translation.
pub fn render_all() -> Vec<(String, String)> {
    let mut json = render();
    json.push(("errors.json", tables::vectors()));
    let c = c::render(&json);
    json.into_iter()
        .map(|(name, contents)| (format!("vectors/{name}"), contents))
        .chain([("c/vectors.h".to_owned(), c)])
        .chain(tables::bindings())
        .collect()
}
