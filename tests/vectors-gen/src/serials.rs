//! `tests/vectors/serials.json`: serial formats in IANA zones, rendered at instants around
//! midnight and DST changes, parsed back, and refused — every answer the core's.

use serde_json::{Map, Value, json};
use shardid::serial::{FieldRef, MAX_UNIX_MS, MIN_UNIX_MS, SerialError, SerialFormat};

use crate::n;

/// An error as JSON: its code, its fields (numbers as decimal strings) and its message.
pub fn serial_error_json(e: &SerialError) -> Value {
    let mut out = Map::new();
    out.insert("error".into(), Value::String(e.kind().code().into()));
    for (name, value) in e.fields() {
        let value = match value {
            FieldRef::Int(v) => n(v),
            FieldRef::Text(t) => Value::String(t.into()),
        };
        out.insert(name.into(), value);
    }
    out.insert("message".into(), Value::String(e.to_string()));
    Value::Object(out)
}

/// Unix ms of 2026-11-24T16:00:00Z: midnight of 2026-11-25 in Asia/Shanghai.
const SHANGHAI_MIDNIGHT: u64 = 1_795_536_000_000;
/// 2026-03-08T07:00:00Z: 02:00 EST becomes 03:00 EDT in New York.
const NY_SPRING: u64 = 1_772_953_200_000;
/// 2026-11-01T06:00:00Z: 02:00 EDT becomes 01:00 EST in New York.
const NY_FALL: u64 = 1_793_512_800_000;
/// 2026-12-31T23:59:59.999Z and the next millisecond.
const NEW_YEAR: u64 = 1_798_761_600_000;
const HOUR: u64 = 3_600_000;

/// The formats of the vectors, each with the instants it is rendered at.
fn formats() -> Vec<(&'static str, &'static str, Vec<u64>)> {
    let around = |t: u64| vec![t - 1, t, t + 1];
    let mut shanghai = around(SHANGHAI_MIDNIGHT);
    shanghai.extend([
        SHANGHAI_MIDNIGHT + 12 * HOUR,
        NEW_YEAR - 8 * HOUR - 1,
        NEW_YEAR - 8 * HOUR,
    ]);
    let mut ny = around(NY_SPRING);
    ny.extend(around(NY_FALL));
    ny.extend([
        NY_FALL - HOUR,
        NY_SPRING - 2 * HOUR - 1,
        NY_SPRING - 2 * HOUR,
    ]); // the spring day's midnight (05:00Z)
    vec![
        (
            "ORD-{yyyy}{MM}{dd}-{seq:6}",
            "Asia/Shanghai",
            shanghai.clone(),
        ),
        (
            "ORD-{yyyy}{MM}{dd}-{seq:6}{check}",
            "Asia/Shanghai",
            shanghai.clone(),
        ),
        ("INV{yy}{MM}-{seq:5}", "Asia/Shanghai", shanghai.clone()),
        (
            "T{yyyy}W{ww}-{seq:4:year}",
            "UTC",
            vec![NEW_YEAR - 1, NEW_YEAR, SHANGHAI_MIDNIGHT, 1_609_459_200_000],
        ),
        (
            "NY{yyyy}{MM}{dd}{HH}-{seq:3}{check}",
            "America/New_York",
            ny.clone(),
        ),
        ("{dd}.{MM}.{yyyy}/{seq:2:never}", "America/New_York", ny),
        ("订单{yyyy}{MM}{dd}{{{seq:4}}}", "Asia/Shanghai", shanghai),
        (
            "{seq:8}",
            "UTC",
            vec![MIN_UNIX_MS, MAX_UNIX_MS, SHANGHAI_MIDNIGHT],
        ),
        (
            "K{yyyy}{MM}{dd}-{seq:1}",
            "Pacific/Kiritimati",
            vec![MAX_UNIX_MS, NEW_YEAR - 14 * HOUR],
        ),
        (
            "A{yyyy}{MM}{dd}-{seq:2}",
            "Pacific/Apia",
            vec![1_325_239_199_000, 1_325_239_200_000],
        ), // the day Samoa skipped
    ]
}

/// The text of a serial with one character replaced (`at`, in characters).
fn replace(serial: &str, at: usize, with: char) -> String {
    serial
        .chars()
        .enumerate()
        .map(|(i, c)| if i == at { with } else { c })
        .collect()
}

fn parsed_json(f: &SerialFormat, serial: &str) -> Value {
    match f.parse(serial) {
        Ok(p) => {
            let mut ok = Map::new();
            ok.insert("number".into(), n(p.number));
            ok.insert("period".into(), Value::String(p.period.to_string()));
            for (name, value) in [
                ("year", p.year.map(i64::from)),
                ("month", p.month.map(i64::from)),
                ("day", p.day.map(i64::from)),
                ("hour", p.hour.map(i64::from)),
                ("week", p.week.map(i64::from)),
            ] {
                ok.insert(name.into(), value.map_or(Value::Null, Value::from));
            }
            json!({ "ok": ok })
        }
        Err(e) => serial_error_json(&e),
    }
}

fn format_case(format: &str, zone: &str, times: &[u64]) -> Value {
    let f = SerialFormat::new(format, zone).expect("a valid format");
    let max = f.max_number();
    let mut render = Vec::new();
    let mut serials = Vec::new();
    for (i, &t) in times.iter().enumerate() {
        let number = [1, 123 % max + 1, max][i % 3];
        let expect = match f.render(number, t) {
            Ok(s) => {
                serials.push(s.to_string());
                json!({ "ok": s.as_str() })
            }
            Err(e) => serial_error_json(&e),
        };
        render.push(json!({ "number": n(number), "unix_ms": n(t), "period": f.period_at(t).map_or(Value::Null, |p| Value::String(p.to_string())), "expect": expect }));
    }
    let t = times[0];
    for (number, t) in [
        (0, t),
        (max + 1, t),
        (1, MIN_UNIX_MS - 1),
        (1, MAX_UNIX_MS + 1),
    ] {
        let expect = f
            .render(number, t)
            .map_or_else(|e| serial_error_json(&e), |s| json!({ "ok": s.as_str() }));
        render.push(json!({ "number": n(number), "unix_ms": n(t), "expect": expect }));
    }
    let mut parse: Vec<Value> = Vec::new();
    let push = |serial: String, parse: &mut Vec<Value>| {
        let expect = parsed_json(&f, &serial);
        parse.push(json!({ "serial": serial, "expect": expect }));
    };
    for serial in &serials {
        push(serial.clone(), &mut parse);
    }
    let first = serials[0].clone();
    let len = first.chars().count();
    // Mistyped: each character replaced by a digit or a letter, one short, one long, another
    // format's, empty.
    for at in 0..len {
        let c = first.chars().nth(at).expect("a character");
        push(
            replace(&first, at, if c == '7' { '8' } else { '7' }),
            &mut parse,
        );
    }
    push(replace(&first, len / 2, 'x'), &mut parse);
    push(first.chars().skip(1).collect(), &mut parse);
    push(format!("{first}0"), &mut parse);
    push(String::new(), &mut parse);
    push("ORD-20261131-000001".into(), &mut parse);
    json!({
        "format": format,
        "zone": zone,
        "canonical": f.canonical(),
        "shape": f.shape(),
        "zone_canonical": f.zone(),
        "reset": f.reset().name(),
        "width": f.width(),
        "max_number": n(max),
        "length": f.len_chars(),
        "render": render,
        "parse": parse,
    })
}

/// Formats and zones every language refuses alike.
fn invalid() -> Vec<Value> {
    let formats = [
        "ORD-{yyyy}{MM}{dd}",
        "",
        "ORD-{yyyy}{MM}-{seq:6:day}",
        "{MM}{dd}{seq:6:day}",
        "{yyyy}{seq:6:month}",
        "A{yyy}{seq:6}",
        "{mm}{seq:6}",
        "A{seq}",
        "A{seq:0}",
        "A{seq:19}",
        "A{seq:6:weekly}",
        "A{seq:6:day:x}",
        "A{yyyy:4}{seq:6}",
        "{seq:6}{seq:6}",
        "{yyyy}{yy}{seq:6}",
        "{check}{seq:6}",
        "ORD{seq:6",
        "ORD}{seq:6}",
        "订单-{yyyy}-{seq:6",
        "A\tB{seq:6}",
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{seq:6}",
    ];
    let mut out: Vec<Value> = formats
        .iter()
        .map(|format| {
            let e = SerialFormat::new(format, "UTC").expect_err("an invalid format");
            json!({ "format": format, "zone": "UTC", "expect": serial_error_json(&e) })
        })
        .collect();
    for zone in ["Mars/Olympus", "", "+08:00", "CST", "Asia/Shanghai "] {
        let e = SerialFormat::new("{seq:6}", zone).expect_err("an unknown zone");
        out.push(json!({ "format": "{seq:6}", "zone": zone, "expect": serial_error_json(&e) }));
    }
    out
}

/// The file.
pub fn file() -> Value {
    json!({
        "_comment": "Business serial numbers: formats in IANA zones. For each format: make SerialFormat(format, zone) (canonical, shape, zone_canonical, reset, width, max_number, length are its properties); render(number, unix_ms) -> the serial or an error (period: the period unix_ms falls in); parse(serial) -> {number, period, year, month, day, hour, week} (null: not shown) or an error (INVALID_SERIAL with position in characters and reason). invalid: formats and zones the constructor refuses, with the error. Errors carry code, fields and the exact message.",
        "schema_version": crate::SCHEMA_VERSION,
        "formats": formats().iter().map(|(f, z, t)| format_case(f, z, t)).collect::<Vec<_>>(),
        "invalid": invalid(),
    })
}
