//! The shared table of error kinds: unique numbers and codes, templates that name exactly
//! their fields, and errors whose fields and messages follow the table.
use shardid::{CamelCase, Error, ErrorKind, FieldValue, Layout};

#[test]
fn numbers_codes_and_names_are_unique_and_consistent() {
    let all = ErrorKind::ALL;
    for (i, a) in all.iter().enumerate() {
        assert_eq!(ErrorKind::from_number(a.number()), Some(*a));
        assert_eq!(ErrorKind::from_code(a.code()), Some(*a));
        assert_ne!(a.number(), 0, "0 is success in C");
        // The code is the name in SCREAMING_SNAKE_CASE.
        let mut snake = String::new();
        for c in a.name().chars() {
            if c.is_ascii_uppercase() && !snake.is_empty() {
                snake.push('_');
            }
            snake.push(c.to_ascii_uppercase());
        }
        assert_eq!(snake, a.code());
        assert!(
            !a.summary().is_empty() && !a.summary().contains('\n'),
            "{a:?}"
        );
        for b in &all[i + 1..] {
            assert!(
                a.number() < b.number(),
                "ALL is in order of number: {a:?} {b:?}"
            );
        }
    }
    assert_eq!(ErrorKind::from_number(0), None);
    assert_eq!(ErrorKind::from_code("NOPE"), None);
}

#[test]
fn templates_name_exactly_their_fields() {
    for kind in ErrorKind::ALL {
        let mut named = Vec::new();
        let mut rest = kind.template();
        while let Some(open) = rest.find('{') {
            let close = rest[open..].find('}').expect("closed placeholder") + open;
            named.push(&rest[open + 1..close]);
            rest = &rest[close + 1..];
        }
        assert_eq!(named, kind.fields(), "{kind:?}");
    }
}

fn every_core_error() -> Vec<Error> {
    vec![
        Error::InvalidLayout { reason: "why" },
        Error::ShardOutOfRange { shard: 9, max: 7 },
        Error::SequenceOutOfRange {
            sequence: 9,
            max: 7,
        },
        Error::InvalidShardCount { count: 0, max: 8 },
        Error::InvalidId { id: u64::MAX },
        Error::ScatterOverflow { id: 12 },
        Error::TimestampBeforeEpoch {
            timestamp_ms: 1,
            epoch_ms: 2,
        },
        Error::TimestampPastExpiry {
            timestamp_ms: 3,
            expires_at_ms: 2,
        },
        Error::ClockMovedBackwards {
            behind_ms: 5,
            tolerance_ms: 1,
        },
        Error::SequenceExhausted { retry_at_ms: 77 },
    ]
}

#[test]
fn core_errors_carry_their_kinds_fields() {
    let errors = every_core_error();
    for e in &errors {
        let names: Vec<_> = e.fields().map(|(n, _)| n).collect();
        assert_eq!(names, e.kind().fields(), "{e:?}");
        assert_eq!(e.code(), e.kind().code());
    }
    // Every kind numbered below 100 is the core's own, and each has one variant here.
    let core_kinds: Vec<_> = ErrorKind::ALL.iter().filter(|k| k.number() < 100).collect();
    assert_eq!(core_kinds.len(), errors.len());
    assert_eq!(
        Error::ShardOutOfRange { shard: 9, max: 7 }.field("max"),
        Some(FieldValue::Int(7))
    );
    assert_eq!(
        Error::InvalidLayout { reason: "why" }.field("reason"),
        Some(FieldValue::Text("why"))
    );
    assert_eq!(Error::InvalidId { id: 1 }.field("max"), None);
}

#[test]
fn messages_are_the_templates_filled_in() {
    assert_eq!(
        Error::ShardOutOfRange { shard: 9, max: 7 }.to_string(),
        "shard 9 is out of range: the layout holds 0..=7"
    );
    assert_eq!(
        Error::InvalidId { id: u64::MAX }.to_string(),
        "18446744073709551615 is not a valid ID for this layout"
    );
    assert_eq!(
        Layout::INSTAGRAM.compose(0, 0, 0).unwrap_err().to_string(),
        "timestamp 0 ms is before the layout's epoch 1314220021721 ms"
    );
    let mut out = String::new();
    ErrorKind::NoFreeShard
        .render(&mut out, |name, out| {
            out.push_str(match name {
                "first" => "0",
                "end" => "4",
                _ => "/run/ids",
            });
            Ok(())
        })
        .unwrap();
    assert_eq!(
        out,
        "no free shard: every shard in 0..4 is leased by a live process (/run/ids)"
    );
}

#[test]
fn javascript_field_names_are_camel_case() {
    assert_eq!(CamelCase("retry_at_ms").to_string(), "retryAtMs");
    assert_eq!(CamelCase("id").to_string(), "id");
    assert_eq!(CamelCase("held_in").to_string(), "heldIn");
}

#[test]
fn javascript_numbers_and_layouts() {
    use shardid::args::Problem;
    use shardid::js::{check_layout, u64_from_number};
    assert_eq!(u64_from_number(5.0), Ok(5));
    assert_eq!(u64_from_number(-0.0), Ok(0));
    assert_eq!(u64_from_number(9_007_199_254_740_991.0), Ok((1 << 53) - 1));
    assert_eq!(u64_from_number(-1.0), Err(Problem::Negative));
    for bad in [9_007_199_254_740_992.0, -9_007_199_254_740_992.0, 1e300] {
        assert_eq!(u64_from_number(bad), Err(Problem::Unsafe), "{bad}");
    }
    for bad in [1.5, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.5] {
        assert_eq!(u64_from_number(bad), Err(Problem::NotInteger), "{bad}");
    }
    for preset in [
        Layout::INSTAGRAM,
        Layout::TWITTER,
        Layout::DISCORD,
        Layout::SONYFLAKE,
    ] {
        assert_eq!(check_layout(&preset), Ok(()));
    }
    let wide = Layout::builder().bits(8, 55, 1).build().unwrap();
    assert_eq!(check_layout(&wide).unwrap_err().code(), "INVALID_LAYOUT");
}

#[test]
fn argument_rules() {
    use shardid::args::{Arg, Problem};
    // A wrong type is never an out-of-range kind.
    for arg in Arg::ALL {
        assert_eq!(
            arg.kind(Problem::WrongType),
            ErrorKind::InvalidArgument,
            "{arg:?}"
        );
        for problem in Problem::ALL {
            assert!(!arg.kind(problem).fields().is_empty());
            assert!(!problem.reason(arg).is_empty());
        }
    }
    assert_eq!(
        Arg::Shard.kind(Problem::Negative),
        ErrorKind::ShardOutOfRange
    );
    assert_eq!(Arg::Id.kind(Problem::NotDecimal), ErrorKind::InvalidId);
    assert_eq!(
        Arg::Timestamp.kind(Problem::Negative),
        ErrorKind::TimestampBeforeEpoch
    );
    assert_eq!(
        Arg::Timestamp.kind(Problem::TooLarge),
        ErrorKind::TimestampPastExpiry
    );
    assert_eq!(
        Arg::Other.kind(Problem::Negative),
        ErrorKind::InvalidArgument
    );
    // Only IDs take text, and only their advice mentions it.
    assert!(Arg::Id.accepts_text() && !Arg::Shard.accepts_text());
    assert!(Problem::Unsafe.reason(Arg::Id).contains("decimal string"));
    assert!(!Problem::Unsafe.reason(Arg::Shard).contains("string"));
}
