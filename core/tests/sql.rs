//! The PostgreSQL DDL emitter's arguments and output. The SQL itself runs against a real server
//! in `tests/postgres/`.

use shardid::sql::{MAX_SCHEMA_LEN, Postgres, SqlError};
use shardid::{Error, FieldOrder, Layout, Options};

fn render(layout: Layout, shard: u64, schema: &str) -> String {
    Postgres::new(layout, shard, schema).unwrap().to_string()
}

#[test]
fn schema_names_must_be_plain_lower_case_identifiers() {
    for good in [
        "insta5",
        "_x",
        "a",
        "shard_0001",
        &"s".repeat(MAX_SCHEMA_LEN),
    ] {
        assert!(
            Postgres::new(Layout::INSTAGRAM, 5, good).is_ok(),
            "{good:?}"
        );
    }
    for (bad, why) in [
        ("", "it is empty"),
        ("5insta", "it starts with a digit"),
        ("Insta5", "only a-z, 0-9 and _ are allowed"),
        ("insta-5", "only a-z, 0-9 and _ are allowed"),
        ("in\"sta", "only a-z, 0-9 and _ are allowed"),
        ("a;drop", "only a-z, 0-9 and _ are allowed"),
        ("insta é", "only a-z, 0-9 and _ are allowed"),
        ("pg_ids", "names starting with pg_ are reserved"),
        (
            &"s".repeat(MAX_SCHEMA_LEN + 1),
            "it is longer than 40 bytes",
        ),
    ] {
        assert_eq!(
            Postgres::new(Layout::INSTAGRAM, 5, bad).unwrap_err(),
            SqlError::SchemaName { reason: why },
            "{bad:?}"
        );
    }
}

#[test]
fn the_shard_must_fit_the_layout() {
    assert_eq!(
        Postgres::new(Layout::INSTAGRAM, 8192, "insta5").unwrap_err(),
        SqlError::Core(Error::ShardOutOfRange {
            shard: 8192,
            max: 8191
        })
    );
    assert!(Postgres::new(Layout::INSTAGRAM, 8191, "insta5").is_ok());
}

#[test]
fn layouts_beyond_a_bigint_of_milliseconds_are_refused() {
    let far = Layout::builder()
        .epoch_ms(i64::MAX as u64 - 1_000)
        .bits(20, 0, 0)
        .build()
        .unwrap();
    assert!(matches!(
        Postgres::new(far, 0, "far").unwrap_err(),
        SqlError::Core(Error::InvalidLayout { .. })
    ));
}

#[test]
fn layouts_without_room_for_the_counters_are_refused() {
    // Each time unit spans at least 2^(sequence bits + 1) counter values, and the counter of the
    // last unit plus two must fit a bigint.
    let full = Layout::builder()
        .epoch_ms(0)
        .unit_ms(1000)
        .bits(30, 0, 33)
        .build()
        .unwrap();
    assert_eq!(
        Postgres::new(full, 0, "full").unwrap_err(),
        SqlError::Core(Error::InvalidLayout {
            reason: "PostgreSQL needs the time and sequence bits to leave two spare bits in a bigint"
        })
    );
}

#[test]
fn an_unsigned_layout_is_served_up_to_the_largest_bigint() {
    let sql = render(Layout::DISCORD, 1, "disc");
    assert!(sql.contains("BETWEEN 0 AND 9223372036854775807"), "{sql}");
    assert!(!sql.contains("18446744073709551615"));
    // Discord's 42 time bits lose the top one: the SQL side expires at 2^41 ms after 2015.
    let expires = Layout::DISCORD.epoch_ms() + (1u64 << 41) - 1;
    assert!(sql.contains(&format!("last representable time {expires} ms")));
}

#[test]
fn the_ddl_carries_the_layouts_constants() {
    let sql = render(Layout::INSTAGRAM, 5, "insta5");
    for needle in [
        "CREATE SCHEMA IF NOT EXISTS insta5;",
        "CREATE OR REPLACE FUNCTION insta5.next_id() RETURNS bigint",
        "CREATE OR REPLACE FUNCTION insta5.shardid_timestamp(id bigint) RETURNS timestamptz",
        "CREATE OR REPLACE FUNCTION insta5.shardid_min_id_at(ts timestamptz) RETURNS bigint",
        // A unit spans 2^16 counter values; shard 5 sits above the 10 sequence bits, time above
        // the 23 low bits.
        "((v >> 16) << 23) | 5120 | (v & 1023)",
        "(now_ms - 1314220021721)",
        "IF v - (now_units << 16) BETWEEN 1 AND 1023 AND now_units <= 1099511627775 THEN",
        "'shardid epoch 1314220021721 ms, unit 1 ms, 41 time / 13 shard / 10 sequence bits, time|shard|sequence'",
    ] {
        assert!(sql.contains(needle), "missing {needle:?} in:\n{sql}");
    }
    // Nothing left of the template.
    assert!(!sql.contains('{') && !sql.contains('}'), "{sql}");

    let sony = render(Layout::SONYFLAKE, 7, "sony");
    // 10 ms units, floored before the epoch; the sequence sits above the 16-bit machine id.
    assert!(
        sony.contains("((now_ms - 1409529600000) / 10 - (now_ms < 1409529600000)::int)"),
        "{sony}"
    );
    assert!(
        sony.contains("((v >> 16) << 24) | 7 | ((v & 255) << 16)"),
        "{sony}"
    );
    assert!(sony.contains("time|sequence|shard"));
}

#[test]
fn options_reach_the_function() {
    let options = Options::new()
        .backwards_tolerance_ms(250)
        .max_borrow_units(3);
    let sql = Postgres::new(Layout::TWITTER, 1, "tw")
        .unwrap()
        .options(options)
        .to_string();
    assert!(sql.contains("now_ms > 250\n"), "{sql}");
    assert!(
        sql.contains("ELSIF last_units > now_units + 3 THEN"),
        "{sql}"
    );
    assert!(sql.contains("IF t + 1 > now_units + 3 THEN"), "{sql}");
}

#[test]
fn every_layout_renders() {
    let custom = Layout::builder()
        .epoch_ms(0)
        .unit_ms(1000)
        .bits(30, 2, 31)
        .order(FieldOrder::TimeSequenceShard)
        .build()
        .unwrap();
    for layout in [
        Layout::INSTAGRAM,
        Layout::TWITTER,
        Layout::DISCORD,
        Layout::SONYFLAKE,
        custom,
    ] {
        let sql = render(layout, layout.max_shard(), "s");
        assert!(sql.ends_with("$shardid$;\n"));
    }
}

#[test]
fn uninstall_drops_every_function_the_install_creates() {
    use shardid::sql::PostgresUninstall;
    let install = render(Layout::INSTAGRAM, 5, "insta5");
    let uninstall = PostgresUninstall::new("insta5").unwrap().to_string();
    let created = install
        .matches("CREATE OR REPLACE FUNCTION insta5.")
        .count();
    assert_eq!(
        uninstall.matches("DROP FUNCTION IF EXISTS insta5.").count(),
        created
    );
    for counter in ["even", "odd"] {
        assert!(install.contains(&format!(
            "CREATE SEQUENCE IF NOT EXISTS insta5.shardid_counter_{counter} "
        )));
        assert!(uninstall.contains(&format!(
            "DROP SEQUENCE IF EXISTS insta5.shardid_counter_{counter};"
        )));
    }
    assert!(PostgresUninstall::new("Bad").is_err());
}

#[test]
fn lease_statements_number_their_parameters_for_each_driver() {
    use shardid::sql::{Placeholders, PostgresLease};
    let numbered = PostgresLease::new(Layout::TWITTER, "leases", Placeholders::Numbered).unwrap();
    let format = PostgresLease::new(Layout::TWITTER, "leases", Placeholders::Format).unwrap();
    assert_eq!(
        numbered.try_lock().to_string(),
        "SELECT pg_try_advisory_lock(hashtext($1), $2)"
    );
    assert_eq!(
        format.try_lock().to_string(),
        "SELECT pg_try_advisory_lock(hashtext(%s), %s)"
    );
    // One placeholder per parameter, in the documented order, and the table where it belongs.
    let record = numbered.record().to_string();
    assert!(
        record.starts_with(
            "UPDATE leases SET ceiling = greatest(ceiling, $1) WHERE layout = $2 AND shard = $3"
        ),
        "{record}"
    );
    assert!(
        record
            .ends_with("classid = hashtext($4)::oid AND objid = $5::bigint::oid AND objsubid = 2)")
    );
    assert_eq!(format.record().to_string().matches("%s").count(), 5);
    assert_eq!(
        numbered.claim().to_string(),
        "UPDATE leases SET holder = $1, taken_at = now() WHERE layout = $2 AND shard = $3 RETURNING ceiling"
    );
    assert_eq!(
        numbered.insert().to_string(),
        "INSERT INTO leases (layout, shard, ceiling) VALUES ($1, $2, 0) ON CONFLICT DO NOTHING"
    );
    let create = format.create_table().to_string();
    assert!(create.starts_with("CREATE TABLE IF NOT EXISTS leases (layout text NOT NULL"));
    assert!(!create.contains("%s") && !create.contains('$'));
    assert_eq!(
        numbered.key().to_string(),
        "shardid leases epoch_ms=1288834974657 unit_ms=1 bits=41/10/12 order=TimeShardSequence"
    );
    assert_eq!(
        numbered.signature().to_string(),
        "epoch_ms=1288834974657 unit_ms=1 bits=41/10/12 order=TimeShardSequence"
    );
    // The lock files record the same signature.
    #[cfg(feature = "std")]
    assert_eq!(
        numbered.signature().to_string(),
        shardid::lease::signature(&Layout::TWITTER)
    );
}

#[test]
fn lease_tables_must_be_plain_lower_case_identifiers() {
    use shardid::sql::{Placeholders, PostgresLease};
    for (bad, why) in [
        ("", "it is empty"),
        ("Leases", "only a-z, 0-9 and _ are allowed"),
        ("leases; drop table x", "only a-z, 0-9 and _ are allowed"),
        ("1leases", "it starts with a digit"),
    ] {
        assert_eq!(
            PostgresLease::new(Layout::TWITTER, bad, Placeholders::Format).unwrap_err(),
            SqlError::TableName { reason: why },
            "{bad:?}"
        );
    }
    assert_eq!(
        SqlError::TableName {
            reason: "it is empty"
        }
        .to_string(),
        "invalid table name: it is empty"
    );
}

/// The lease protocol, scripted without a database: the statements in order, with their
/// parameters, and where each answer leads.
#[test]
fn a_lease_is_taken_in_the_protocols_steps() {
    use shardid::sql::{Acquire, Action, Fed, Param, Placeholders, PostgresLease};
    let lease = PostgresLease::new(Layout::TWITTER, "leases", Placeholders::Numbered).unwrap();
    let run = |acquire: &Acquire| match acquire.next(&lease) {
        Action::Run {
            statement,
            params,
            tolerate,
        } => (
            statement.to_string(),
            params.as_slice().to_vec(),
            tolerate.len(),
        ),
        other => panic!("expected a statement, got {other:?}"),
    };
    let mut acquire = Acquire::new(3, 6);
    assert_eq!(run(&acquire), (lease.create_table().to_string(), vec![], 3));
    acquire.feed(Fed::Nothing);
    // Shards 3 and 4 are held; 5 is free.
    for shard in [3, 4, 5] {
        let (sql, params, _) = run(&acquire);
        assert_eq!(sql, lease.try_lock().to_string());
        assert_eq!(params, [Param::Key, Param::Shard(shard)]);
        acquire.feed(Fed::Bool(shard == 5));
    }
    assert_eq!(run(&acquire).1, [Param::Signature, Param::Shard(5)]);
    acquire.feed(Fed::Nothing);
    let (sql, params, _) = run(&acquire);
    assert_eq!(sql, lease.claim().to_string());
    assert_eq!(params, [Param::Holder, Param::Signature, Param::Shard(5)]);
    acquire.feed(Fed::Int(77));
    assert!(matches!(
        acquire.next(&lease),
        Action::Taken {
            shard: 5,
            recorded: Some(77)
        }
    ));
    // A shard never held records 0: no ceiling.
    let mut fresh = Acquire::new(0, 1);
    for answer in [Fed::Nothing, Fed::Bool(true), Fed::Nothing, Fed::Int(0)] {
        fresh.feed(answer);
    }
    assert!(matches!(
        fresh.next(&lease),
        Action::Taken {
            shard: 0,
            recorded: None
        }
    ));
    // Every shard held, or an empty range: no free shard, naming the range.
    let mut held = Acquire::new(0, 2);
    for answer in [Fed::Nothing, Fed::Bool(false), Fed::Bool(false)] {
        held.feed(answer);
    }
    assert!(matches!(
        held.next(&lease),
        Action::NoFreeShard { first: 0, end: 2 }
    ));
    let mut empty = Acquire::new(4, 4);
    empty.feed(Fed::Nothing);
    assert!(matches!(empty.next(&lease), Action::NoFreeShard { .. }));
    // Recording a ceiling: the units, then the row and the lock that must still be held.
    assert_eq!(
        lease.record_params(5, 900).as_slice(),
        [
            Param::Units(900),
            Param::Signature,
            Param::Shard(5),
            Param::Key,
            Param::Shard(5)
        ]
    );
}

/// The driver the bindings hold: the same steps with every parameter's value resolved.
#[test]
fn the_lease_driver_resolves_every_parameter() {
    use shardid::sql::{Fed, LeaseDriver, Next, Placeholders, PostgresLease, Value};
    let mut driver = LeaseDriver::new(
        Layout::TWITTER,
        "leases",
        Placeholders::Format,
        2,
        3,
        "h pid 1",
    )
    .unwrap();
    let lease = PostgresLease::new(Layout::TWITTER, "leases", Placeholders::Format).unwrap();
    let key = lease.key().to_string();
    let signature = lease.signature().to_string();
    let Next::Run { sql, params, .. } = driver.next() else {
        panic!("create the table first")
    };
    assert_eq!((sql, params), (lease.create_table().to_string(), vec![]));
    driver.feed(Fed::Nothing);
    let Next::Run { params, .. } = driver.next() else {
        panic!("then try the lock")
    };
    assert_eq!(params, [Value::Text(&key), Value::Int(2)]);
    driver.feed(Fed::Bool(true));
    driver.feed(Fed::Nothing);
    let Next::Run { params, .. } = driver.next() else {
        panic!("then claim")
    };
    assert_eq!(
        params,
        [
            Value::Text("h pid 1"),
            Value::Text(&signature),
            Value::Int(2)
        ]
    );
    driver.feed(Fed::Int(5));
    assert_eq!(
        driver.next(),
        Next::Taken {
            shard: 2,
            recorded: Some(5)
        }
    );
    let (sql, params) = driver.record(2, 9);
    assert_eq!(sql, lease.record().to_string());
    assert_eq!(params[0], Value::Int(9));
    let mut held =
        LeaseDriver::new(Layout::TWITTER, "leases", Placeholders::Format, 0, 1, "h").unwrap();
    held.feed(Fed::Nothing);
    held.feed(Fed::Bool(false));
    assert_eq!(
        held.next(),
        Next::NoFreeShard {
            first: 0,
            end: 1,
            held_in: "table leases".into()
        }
    );
    assert!(LeaseDriver::new(Layout::TWITTER, "Leases", Placeholders::Format, 0, 1, "h").is_err());
}
