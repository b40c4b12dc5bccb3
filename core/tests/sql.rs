//! The PostgreSQL DDL emitter's arguments and output. The SQL itself runs against a real server
//! in `tests/postgres/`.

use shardid::sql::{
    Answer, Cell, Dialect, LeaseKind, LeaseProtocol, MAX_RESENDS, MAX_SCHEMA_LEN, MAX_TTL_MS,
    MIN_TTL_MS, Next, Placeholders, Postgres, SqlError, Tenure, TtlError, Value, check_table,
};
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

fn protocol(kind: LeaseKind, placeholders: Placeholders, first: u64, end: u64) -> LeaseProtocol {
    let mut p = fresh(kind, placeholders, first, end);
    owned(&mut p);
    p
}

/// A lease protocol before its first statement.
fn fresh(kind: LeaseKind, placeholders: Placeholders, first: u64, end: u64) -> LeaseProtocol {
    LeaseProtocol::new(
        kind,
        Layout::TWITTER,
        "leases",
        placeholders,
        first,
        end,
        "h pid 1",
        "tok",
    )
    .unwrap()
}

/// Answers the owner check a PostgreSQL lease starts with: the table is `public.leases`, owned
/// by the lease's user.
fn owned(p: &mut LeaseProtocol) {
    let (check, _) = run(p);
    assert!(check.starts_with("SELECT coalesce(n.nspname, "), "{check}");
    p.feed(Answer::Row(&[
        Cell::Text("public"),
        Cell::Text("app"),
        Cell::Bool(true),
        Cell::Text("app"),
    ]));
    no_fence(p);
}

/// Answers the read of the table's fence row each dialect sends before its first claim, once
/// (issue 54), when it is the next statement: none yet (on the MySQL family, then added).
fn no_fence(p: &mut LeaseProtocol) {
    let Next::Run { sql, .. } = p.next() else {
        return;
    };
    if sql.starts_with("WITH added AS (INSERT INTO ") || sql.starts_with("SELECT taken_at, 0, ") {
        p.feed(Answer::NoRow);
    } else if sql.starts_with(MYSQL_FENCE) {
        p.feed(Answer::NoRow);
        assert!(run(p).0.starts_with("INSERT IGNORE INTO "));
        p.feed(Answer::Row(&reply(0)));
    }
}

/// How the MySQL family's read of a lease table's fence row starts.
const MYSQL_FENCE: &str = "SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', taken_at) DIV 1000, IF(server IS NOT NULL AND server <> ";

fn run(protocol: &LeaseProtocol) -> (String, Vec<Value<'_>>) {
    match protocol.next() {
        Next::Run { sql, params } => (sql, params),
        other => panic!("expected a statement, got {other:?}"),
    }
}

#[test]
fn lease_statements_number_their_parameters_for_each_driver() {
    let numbered = protocol(LeaseKind::DEFAULT, Placeholders::Numbered, 0, 4);
    let format = protocol(LeaseKind::DEFAULT, Placeholders::Format, 0, 4);
    let key =
        "shardid leases epoch_ms=1288834974657 unit_ms=1 bits=41/10/12 order=TimeShardSequence";
    let sig = "epoch_ms=1288834974657 unit_ms=1 bits=41/10/12 order=TimeShardSequence";
    assert_eq!((numbered.key(), numbered.signature()), (key, sig));
    // The lock files record the same signature.
    #[cfg(feature = "std")]
    assert_eq!(sig, shardid::lease::signature(&Layout::TWITTER));
    // Numbered: one `$n` per distinct parameter, reused; format: `%s` for every use, each
    // value passed again.
    let (claim, params) = run(&numbered);
    assert!(claim.starts_with("WITH free AS (SELECT shard FROM \"public\".\"leases\" WHERE layout = $1::text AND shard >= $2::bigint AND shard < $3::bigint AND (expires_at IS NULL OR expires_at <= now() OR (expires_at = 'infinity' AND NOT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND classid = hashtext($4::text)::oid"), "{claim}");
    assert_eq!(
        params,
        [
            Value::Text(sig),
            Value::Int(0),
            Value::Int(4),
            Value::Text(key),
            Value::Text("tok"),
            Value::Text("h pid 1"),
            Value::Int(10_000),
            // On a row of another timeline, the ceiling jumps to the database's clock plus the
            // hosts' skew (and 250 ms for ceilings written ahead), in the layout's units.
            Value::Int(2_250),
            Value::Int(1_288_834_974_657),
            Value::Int(1),
            // After a restore, the fence's mark and floor (issue 54): none here.
            Value::Int(0),
            Value::Int(0),
        ]
    );
    assert!(!claim.contains('@') && !claim.contains('{'));
    assert!(claim.contains(
        "ceiling = greatest(CASE WHEN (l.tli IS NOT NULL AND l.tli <> ('x' || left(pg_walfile_name(pg_current_wal_lsn()), 8))::bit(32)::int) OR (l.sysid IS NOT NULL AND l.sysid <> (pg_control_system()).system_identifier) THEN greatest(l.ceiling, (floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint + $8::bigint - $9::bigint) / $10::bigint) ELSE l.ceiling END, CASE WHEN l.taken_at IS NULL OR floor(extract(epoch FROM l.taken_at) * 1000)::bigint < $11::bigint THEN $12::bigint ELSE 0 END)"
    ), "{claim}");
    let (claim, params) = run(&format);
    assert_eq!(claim.matches("%s").count(), params.len());
    assert!(params.len() > 7 && !claim.contains('$'));
    let (record, params) = numbered.record(3, 900);
    assert!(
        record.starts_with("UPDATE \"public\".\"leases\" SET ceiling = greatest(CASE WHEN (tli IS NOT NULL AND tli <> ")
            && record.ends_with(", $4::bigint), expires_at = now() + $5::bigint * interval '1 millisecond', tli = ('x' || left(pg_walfile_name(pg_current_wal_lsn()), 8))::bit(32)::int, sysid = (pg_control_system()).system_identifier WHERE layout = $6::text AND shard = $7::bigint AND token = $8::text RETURNING shard"),
        "{record}"
    );
    assert_eq!(
        params,
        [
            Value::Int(2_250),
            Value::Int(1_288_834_974_657),
            Value::Int(1),
            Value::Int(900),
            Value::Int(10_000),
            Value::Text(sig),
            Value::Int(3),
            Value::Text("tok")
        ]
    );
    let (renew, params) = format.renew(3).unwrap();
    assert!(
        renew.starts_with("UPDATE \"public\".\"leases\" SET expires_at = now() + %s::bigint * interval '1 millisecond', ceiling = CASE WHEN (tli")
            && renew.ends_with("WHERE layout = %s::text AND shard = %s::bigint AND token = %s::text RETURNING shard, floor(extract(epoch FROM now()) * 1000)::bigint"),
        "{renew}"
    );
    assert_eq!(params.len(), renew.matches("%s").count());
    let (release, _) = format.release(3);
    assert!(release.starts_with(
        "UPDATE \"public\".\"leases\" SET token = NULL, holder = NULL, expires_at = NULL, ceiling = CASE WHEN (tli"
    ));
    // A session lease has no renewal: its lock keeps it.
    let session = protocol(LeaseKind::Session, Placeholders::Numbered, 0, 4);
    assert!(session.renew(0).is_none());
    let (record, _) = session.record(3, 900);
    assert!(record.contains("pg_backend_pid() = $8::int"), "{record}");
}

#[test]
fn lease_tables_must_be_plain_lower_case_identifiers() {
    for (bad, why) in [
        ("", "it is empty"),
        ("Leases", "only a-z, 0-9 and _ are allowed"),
        ("leases; drop table x", "only a-z, 0-9 and _ are allowed"),
        ("1leases", "it starts with a digit"),
    ] {
        assert_eq!(
            LeaseProtocol::new(
                LeaseKind::DEFAULT,
                Layout::TWITTER,
                bad,
                Placeholders::Format,
                0,
                1,
                "h",
                "t"
            )
            .unwrap_err(),
            SqlError::TableName { reason: why },
            "{bad:?}"
        );
        assert_eq!(check_table(bad), Err(SqlError::TableName { reason: why }));
    }
    assert_eq!(
        SqlError::TableName {
            reason: "it is empty"
        }
        .to_string(),
        "invalid table name: it is empty"
    );
    assert_eq!(
        LeaseProtocol::new(
            LeaseKind::DEFAULT,
            Layout::TWITTER,
            "t",
            Placeholders::Format,
            4,
            4,
            "h",
            "t"
        )
        .unwrap_err(),
        SqlError::EmptyShards { first: 4, end: 4 }
    );
}

#[test]
fn lease_kinds_and_times_to_live_are_checked() {
    assert_eq!(LeaseKind::parse("expiring", 10_000), Ok(LeaseKind::DEFAULT));
    assert_eq!(LeaseKind::parse("session", 0), Ok(LeaseKind::Session));
    assert_eq!(LeaseKind::parse("advisory", 10_000), Err(TtlError::Kind));
    assert_eq!(
        LeaseKind::parse("expiring", MIN_TTL_MS - 1),
        Err(TtlError::Range)
    );
    assert_eq!(
        LeaseKind::parse("expiring", MAX_TTL_MS + 1),
        Err(TtlError::Range)
    );
    assert_eq!(
        TtlError::Range.to_string(),
        "must be within 300..=3600000 ms"
    );
    assert_eq!(TtlError::Kind.argument(), "kind");
}

/// An expiring lease, scripted without a database: one statement in the common case, the table
/// made or upgraded once when needed, races retried, and no free shard only when every shard
/// of the range is held.
#[test]
fn an_expiring_lease_is_taken_in_one_statement() {
    let claim = run(&protocol(LeaseKind::DEFAULT, Placeholders::Numbered, 3, 6)).0;
    let mut p = protocol(LeaseKind::DEFAULT, Placeholders::Numbered, 3, 6);
    p.feed(Answer::Row(&[Cell::Int(4), Cell::Int(77), Cell::Int(1)]));
    assert_eq!(
        p.next(),
        Next::Taken {
            shard: 4,
            recorded: Some(77),
            backend: None
        }
    );
    // A shard never held records 0: no ceiling. pg may hand integers back as text.
    let mut p = protocol(LeaseKind::DEFAULT, Placeholders::Numbered, 3, 6);
    p.feed(Answer::Row(&[
        Cell::Text("3"),
        Cell::Text("0"),
        Cell::Text("0"),
    ]));
    assert!(matches!(
        p.next(),
        Next::Taken {
            shard: 3,
            recorded: None,
            ..
        }
    ));
    // The table missing: made, then the claim again; missing columns: added, then again.
    let mut p = protocol(LeaseKind::DEFAULT, Placeholders::Numbered, 3, 6);
    p.feed(Answer::Error(Some("42P01")));
    assert!(
        run(&p)
            .0
            .starts_with("CREATE TABLE IF NOT EXISTS \"public\".\"leases\" (layout text NOT NULL")
    );
    p.feed(Answer::Error(Some("42P07"))); // another session made it first: whose is it?
    owned(&mut p);
    assert_eq!(run(&p).0, claim);
    p.feed(Answer::Error(Some("42703")));
    assert!(
        run(&p)
            .0
            .starts_with("ALTER TABLE \"public\".\"leases\" ADD COLUMN IF NOT EXISTS token text")
    );
    p.feed(Answer::NoRow);
    assert_eq!(run(&p).0, claim);
    // ... each once: the same error again is raised as it is, as is any other.
    p.feed(Answer::Error(Some("42P01")));
    assert_eq!(p.next(), Next::Raise);
    let mut p = protocol(LeaseKind::DEFAULT, Placeholders::Numbered, 3, 6);
    p.feed(Answer::Error(Some("42501")));
    assert_eq!(p.next(), Next::Raise);
    let mut p = protocol(LeaseKind::DEFAULT, Placeholders::Numbered, 3, 6);
    p.feed(Answer::Error(None));
    assert_eq!(p.next(), Next::Raise);
    // Nothing taken while 2 of 3 shards are held: a race lost, claim again; 3 of 3: none free.
    let mut p = protocol(LeaseKind::DEFAULT, Placeholders::Numbered, 3, 6);
    p.feed(Answer::Row(&[Cell::Null, Cell::Null, Cell::Int(2)]));
    assert_eq!(run(&p).0, claim);
    p.feed(Answer::Row(&[Cell::Null, Cell::Null, Cell::Int(3)]));
    assert_eq!(
        p.next(),
        Next::NoFreeShard {
            first: 3,
            end: 6,
            held_in: "table public.leases".into()
        }
    );
    // Races lost again and again end too.
    let mut p = protocol(LeaseKind::DEFAULT, Placeholders::Numbered, 0, 1000);
    let mut claims = 0;
    while let Next::Run { .. } = p.next() {
        p.feed(Answer::Row(&[Cell::Null, Cell::Null, Cell::Int(1)]));
        claims += 1;
    }
    assert_eq!(claims, 32);
    assert!(matches!(p.next(), Next::NoFreeShard { .. }));
}

/// A session lease: each shard's lock in turn, then its row; a row an expiring lease holds is
/// let go.
#[test]
fn a_session_lease_tries_each_lock_then_claims_the_row() {
    let mut p = protocol(LeaseKind::Session, Placeholders::Numbered, 3, 6);
    let (lock, params) = run(&p);
    assert!(
        lock.starts_with(
            "SELECT pg_try_advisory_lock(hashtext($1::text), $2::int), pg_backend_pid()"
        )
    );
    assert_eq!(params[1], Value::Int(3));
    p.feed(Answer::Row(&[
        Cell::Bool(false),
        Cell::Int(11),
        Cell::Text("a 1 t 11"),
    ]));
    assert_eq!(run(&p).1[1], Value::Int(4));
    p.feed(Answer::Row(&[
        Cell::Bool(true),
        Cell::Int(12),
        Cell::Text("a 1 t 12"),
    ]));
    let (claim, _) = run(&p);
    assert!(
        claim.starts_with("INSERT INTO \"public\".\"leases\" AS l"),
        "{claim}"
    );
    // Shard 4's row is held by an expiring lease: unlock, and try 5.
    p.feed(Answer::NoRow);
    let (unlock, params) = run(&p);
    assert!(unlock.starts_with("SELECT pg_advisory_unlock("));
    assert_eq!(params[1], Value::Int(4));
    p.feed(Answer::Row(&[Cell::Bool(true)]));
    assert_eq!(run(&p).1[1], Value::Int(5));
    p.feed(Answer::Row(&[
        Cell::Bool(true),
        Cell::Int(13),
        Cell::Text("a 1 t 13"),
    ]));
    p.feed(Answer::Error(Some("42P01")));
    assert!(run(&p).0.starts_with("CREATE TABLE"));
    p.feed(Answer::NoRow);
    owned(&mut p);
    p.feed(Answer::Row(&[Cell::Int(900)]));
    assert_eq!(
        p.next(),
        Next::Taken {
            shard: 5,
            recorded: Some(900),
            backend: Some("a 1 t 13")
        }
    );
    // The pid recorded with the lock guards every ceiling write.
    let (record, params) = p.record(5, 901);
    assert!(record.contains("pg_backend_pid() = $8::int"), "{record}");
    assert_eq!(params[7], Value::Int(13));
    let mut held = protocol(LeaseKind::Session, Placeholders::Numbered, 0, 1);
    held.feed(Answer::Row(&[
        Cell::Bool(false),
        Cell::Int(1),
        Cell::Text("x"),
    ]));
    assert!(matches!(
        held.next(),
        Next::NoFreeShard {
            first: 0,
            end: 1,
            ..
        }
    ));
}

fn mysql(kind: LeaseKind, first: u64, end: u64) -> LeaseProtocol {
    let mut p = fresh(kind, Placeholders::Question, first, end)
        .dialect(Dialect::Mariadb)
        .unwrap();
    // The server's clock first: this host's.
    assert!(run(&p).0.starts_with("SELECT (TIMESTAMPDIFF(MICROSECOND"));
    let now = i64::try_from(shardid::now_ms()).unwrap();
    p.feed(Answer::Row(&[Cell::Int(now)]));
    // The table's fence row (issue 54): none yet, so it is added.
    assert!(run(&p).0.starts_with(MYSQL_FENCE));
    p.feed(Answer::NoRow);
    assert!(run(&p).0.starts_with(
        "INSERT IGNORE INTO `leases` (layout, shard, ceiling, server) VALUES ('', -1, 0, CONCAT_WS("
    ));
    p.feed(Answer::Row(&reply(0)));
    p
}

/// The reply of a MySQL statement without rows: (affected rows, last insert ID).
fn reply(id: u64) -> [Cell<'static>; 2] {
    [Cell::Int(1), Cell::Int(i64::try_from(id).unwrap())]
}

/// The MySQL family's expiring lease, scripted: a claim is one `UPDATE ... ORDER BY shard
/// LIMIT 1` whose last insert ID packs the shard and its ceiling; an insert of the first shard
/// without a row when none is free; a count only when nothing could be inserted.
#[test]
fn a_mysql_expiring_lease_is_one_statement_when_a_row_is_free() {
    let p = mysql(LeaseKind::DEFAULT, 3, 6);
    let (claim, params) = run(&p);
    assert!(claim.starts_with("UPDATE `leases` SET ceiling = (LAST_INSERT_ID((LEAST(GREATEST(IF(server IS NOT NULL AND server <> CONCAT_WS(' ', IF(@@global.wsrep_on, CONCAT('galera ', @@global.wsrep_cluster_name), CONCAT('server ', @@global.server_id)), IF(@@global.wsrep_on, (SELECT variable_value FROM information_schema.global_status WHERE variable_name = 'WSREP_CLUSTER_STATE_UUID'), (SELECT CAST(UNIX_TIMESTAMP(create_time) AS CHAR) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'leases'))), GREATEST(ceiling, ((TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000) + 2250 - 1288834974657) DIV 1), ceiling), IF(taken_at IS NULL OR TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', taken_at) DIV 1000 < 0, 0, 0)), 2199023255551) << 10 | shard) + 1) - 1) >> 10, token = ?"), "{claim}");
    assert!(claim.ends_with(" ORDER BY shard LIMIT 1"), "{claim}");
    assert_eq!(claim.matches('?').count(), params.len());
    assert!(
        !claim.contains('{')
            && !claim.contains('$')
            && !claim.replace("@@global.", "").contains('@')
    );
    // The lock names of session leases: at most 64 characters, one namespace per table and
    // layout (the last parameter is their prefix).
    assert_eq!(
        p.lock_name(8191).len(),
        "shardid 0123456789abcdef 8191".len()
    );
    assert_eq!(
        *params.last().unwrap(),
        Value::Text(p.lock_name(0).trim_end_matches('0'))
    );
    // Taken: (ceiling << 10 | shard) + 1, Twitter's layout having 10 shard bits.
    let mut taken = mysql(LeaseKind::DEFAULT, 3, 6);
    taken.feed(Answer::Row(&reply((77 << 10 | 4) + 1)));
    assert_eq!(
        taken.next(),
        Next::Taken {
            shard: 4,
            recorded: Some(77),
            backend: None
        }
    );
    // A shard outside the range cannot be an answer to this claim.
    let mut odd = mysql(LeaseKind::DEFAULT, 3, 6);
    odd.feed(Answer::Row(&reply((77 << 10 | 9) + 1)));
    assert_eq!(odd.next(), Next::Raise);
    // None free: the first shard without a row, then (none inserted) the count of held rows.
    let mut p = mysql(LeaseKind::DEFAULT, 3, 6);
    p.feed(Answer::Row(&reply(0)));
    let (insert, params) = run(&p);
    assert!(insert.starts_with("INSERT INTO `leases` (layout, shard, ceiling, token, holder, taken_at, expires_at, server) SELECT ?, MIN(c.s), 0 + 0 * LAST_INSERT_ID(MIN(c.s) + 1)"), "{insert}");
    assert_eq!(insert.matches('?').count(), params.len());
    p.feed(Answer::Row(&[Cell::Int(1), Cell::Text("6")]));
    assert_eq!(
        p.next(),
        Next::Taken {
            shard: 5,
            recorded: None,
            backend: None
        }
    );
    let mut p = mysql(LeaseKind::DEFAULT, 3, 6);
    p.feed(Answer::Row(&reply(0)));
    p.feed(Answer::Row(&[Cell::Int(0), Cell::Int(0)]));
    let (held, _) = run(&p);
    assert!(
        held.starts_with("SELECT COUNT(*) FROM `leases` WHERE layout = ?"),
        "{held}"
    );
    // 2 of 3 held: one was freed meanwhile, claim again; 3 of 3: none free.
    p.feed(Answer::Row(&[Cell::Int(2)]));
    assert_eq!(run(&p).0, claim);
    p.feed(Answer::Row(&reply(0)));
    p.feed(Answer::Row(&reply(0)));
    p.feed(Answer::Row(&[Cell::Int(3)]));
    assert!(matches!(
        p.next(),
        Next::NoFreeShard {
            first: 3,
            end: 6,
            ..
        }
    ));
}

/// A MySQL claim that lost a race is sent again; a missing table is made once; anything else is
/// raised as it is.
#[test]
fn a_mysql_claim_retries_races_and_makes_its_table() {
    let claim = run(&mysql(LeaseKind::DEFAULT, 3, 6)).0;
    // Another claimant inserted the shard first, or a deadlock (a Galera certification
    // conflict too) rolled a claim back: claim again, 32 times at most.
    let mut p = mysql(LeaseKind::DEFAULT, 0, 1000);
    let mut claims = 0;
    while let Next::Run { sql, .. } = p.next() {
        if sql.starts_with("UPDATE") {
            p.feed(Answer::Error(Some(if claims % 2 == 0 {
                "1213"
            } else {
                "1205"
            })));
        } else {
            p.feed(Answer::Error(Some("1062")));
        }
        claims += 1;
    }
    assert!(matches!(p.next(), Next::NoFreeShard { .. }), "{claims}");
    // The table missing: made once (a concurrent creator's 1050 is fine), then the claim again.
    let mut p = mysql(LeaseKind::DEFAULT, 3, 6);
    p.feed(Answer::Error(Some("1146")));
    assert!(
        run(&p)
            .0
            .starts_with("CREATE TABLE IF NOT EXISTS `leases` (layout VARBINARY(255) NOT NULL")
    );
    p.feed(Answer::Error(Some("1050")));
    assert_eq!(run(&p).0, claim);
    p.feed(Answer::Error(Some("1146")));
    assert_eq!(p.next(), Next::Raise);
    // Any other error is raised as it is.
    let mut p = mysql(LeaseKind::DEFAULT, 3, 6);
    p.feed(Answer::Error(Some("1142")));
    assert_eq!(p.next(), Next::Raise);
    // A range beyond the layout's shards is refused: the answer packs the shard in its bits.
    assert!(matches!(
        protocol(LeaseKind::DEFAULT, Placeholders::Format, 0, 1025).dialect(Dialect::Mysql),
        Err(SqlError::Core(shardid::Error::ShardOutOfRange {
            shard: 1024,
            max: 1023
        }))
    ));
}

/// MySQL refuses MariaDB's variables (1193): the same step is sent again in MySQL's SQL, whose
/// server names itself by `server_id` alone, and every later statement is MySQL's.
#[test]
fn mysql_refusing_mariadbs_variables_gets_mysqls_sql() {
    let mut p = mysql(LeaseKind::DEFAULT, 0, 4);
    assert!(run(&p).0.contains("@@global.wsrep_on"));
    p.feed(Answer::Error(Some("1193")));
    assert_eq!(p.sql_dialect(), Dialect::Mysql);
    let (claim, _) = run(&p);
    assert!(
        !claim.contains("wsrep")
            && claim.contains("server <> CONCAT_WS(' ', CONCAT('server ', @@global.server_id), (SELECT CAST(UNIX_TIMESTAMP(create_time) AS CHAR) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'leases'))"),
        "{claim}"
    );
    // Once MySQL's, a 1193 is an error like any other.
    p.feed(Answer::Error(Some("1193")));
    assert_eq!(p.next(), Next::Raise);
}

/// Ceiling writes and releases on MySQL answer with the new ceiling plus one as the last insert
/// ID, renewals with the server's clock, 0 when the row no longer held the token: the core
/// tells which.
#[test]
fn mysql_writes_of_a_lease_are_kept_by_their_last_insert_id() {
    let p = mysql(LeaseKind::DEFAULT, 0, 4);
    let (renew, params) = p.renew(2).unwrap();
    assert!(
        renew.starts_with("UPDATE `leases` SET ceiling = IF(server IS NOT NULL"),
        "{renew}"
    );
    assert!(renew.ends_with("expires_at = UTC_TIMESTAMP(6) + INTERVAL (? * 1000 + 0 * LAST_INSERT_ID((TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000))) MICROSECOND WHERE layout = ? AND shard = ? AND token = ?"), "{renew}");
    assert_eq!(
        params[params.len() - 2..],
        [Value::Int(2), Value::Text("tok")]
    );
    let (record, params) = p.record(2, 900);
    assert!(record.contains("GREATEST(IF(server"), "{record}");
    assert!(params.contains(&Value::Int(900)));
    assert!(p.kept(Answer::Row(&reply(901))));
    // Changed nothing (no CLIENT_FOUND_ROWS): still held.
    assert!(p.kept(Answer::Row(&[Cell::Int(0), Cell::Int(901)])));
    assert!(!p.kept(Answer::Row(&[Cell::Int(0), Cell::Int(0)])));
    assert!(!p.kept(Answer::NoRow));
    // PostgreSQL: a row is kept.
    let pg = protocol(LeaseKind::DEFAULT, Placeholders::Numbered, 0, 4);
    assert!(pg.kept(Answer::Row(&[Cell::Int(2)])) && !pg.kept(Answer::NoRow));
    let (release, _) = p.release(2);
    assert!(
        release.contains("token = NULL, holder = NULL, expires_at = NULL WHERE"),
        "{release}"
    );
}

/// On a Galera cluster another node's DDL aborts even a read of the lease table (1213): the
/// server's clock, the fence row, the table's `IF NOT EXISTS` and the count of held rows are
/// sent again as they were, within the claims' bound, and the lease goes on.
#[test]
fn a_mysql_leases_reads_rolled_back_whole_are_sent_again_bounded() {
    let mut p = fresh(LeaseKind::DEFAULT, Placeholders::Question, 0, 4)
        .dialect(Dialect::Mariadb)
        .unwrap();
    let clock = run(&p).0;
    p.feed(Answer::Error(Some("1213")));
    assert_eq!(run(&p).0, clock);
    let now = i64::try_from(shardid::now_ms()).unwrap();
    p.feed(Answer::Row(&[Cell::Int(now)]));
    let fence = run(&p).0;
    assert!(fence.starts_with(MYSQL_FENCE), "{fence}");
    p.feed(Answer::Error(Some("1205")));
    assert_eq!(run(&p).0, fence);
    // The table missing, its creation aborted by another node's, sent again.
    p.feed(Answer::Error(Some("1146")));
    let create = run(&p).0;
    assert!(create.starts_with("CREATE TABLE IF NOT EXISTS"), "{create}");
    p.feed(Answer::Error(Some("1213")));
    assert_eq!(run(&p).0, create);
    p.feed(Answer::NoRow);
    assert_eq!(run(&p).0, fence);
    // Bounded: a read that is rolled back every time is raised in the end.
    let mut resent = 0;
    while let Next::Run { sql, .. } = p.next() {
        assert_eq!(sql, fence);
        p.feed(Answer::Error(Some("1213")));
        resent += 1;
    }
    assert_eq!(p.next(), Next::Raise);
    assert!((2..32).contains(&resent), "{resent}");
    // Any other error of a read is raised as it is.
    let mut p = fresh(LeaseKind::DEFAULT, Placeholders::Question, 0, 4)
        .dialect(Dialect::Mariadb)
        .unwrap();
    p.feed(Answer::Error(Some("2013")));
    assert_eq!(p.next(), Next::Raise);
}

/// A held lease's statement the MySQL family rolled back whole (a deadlock, a lock wait
/// timeout, a Galera node refusing writes while a node is evicted: 1180 and 1047) is sent again
/// after a wait that doubles, at most `MAX_RESENDS` times; any other error, and every error on
/// PostgreSQL and SQLite, is reported at once.
#[test]
fn a_held_leases_statement_rolled_back_whole_is_sent_again_bounded() {
    let p = mysql(LeaseKind::DEFAULT, 0, 4);
    for code in ["1213", "1205", "1180", "1047"] {
        let waits: Vec<u64> = (0..=MAX_RESENDS)
            .map_while(|resent| p.resend_after(Some(code), resent))
            .collect();
        assert_eq!(
            waits,
            [25, 50, 100, 200, 400, 800, 1000, 1000, 1000, 1000],
            "{code}"
        );
    }
    for other in [Some("1062"), Some("1146"), Some("2013"), None] {
        assert_eq!(p.resend_after(other, 0), None, "{other:?}");
    }
    let pg = protocol(LeaseKind::DEFAULT, Placeholders::Numbered, 0, 4);
    assert_eq!(pg.resend_after(Some("1213"), 0), None);
    assert_eq!(pg.resend_after(Some("40001"), 0), None);
}

/// A MySQL session lease: `GET_LOCK` tried shard by shard (refused when this very connection
/// holds it already: re-entrant locks would grant it twice), refused at once on a Galera node,
/// then the row claimed or inserted; a row an expiring lease holds is let go.
#[test]
fn a_mysql_session_lease_tries_each_lock_and_refuses_galera() {
    let mut p = mysql(LeaseKind::Session, 3, 6);
    let (lock, params) = run(&p);
    assert!(lock.starts_with("SELECT IF(@@global.wsrep_on, -2, IF(IS_USED_LOCK(CONCAT(?, ?)) = CONNECTION_ID(), 0, GET_LOCK(CONCAT(?, ?), 0))), CONNECTION_ID()"), "{lock}");
    assert_eq!(params[1], Value::Int(3));
    p.feed(Answer::Row(&[
        Cell::Int(0),
        Cell::Int(11),
        Cell::Text("h 3306 server 1 11"),
    ]));
    assert_eq!(run(&p).1[1], Value::Int(4));
    p.feed(Answer::Row(&[
        Cell::Int(1),
        Cell::Int(12),
        Cell::Text("h 3306 server 1 12"),
    ]));
    let (claim, _) = run(&p);
    assert!(
        claim.starts_with("UPDATE `leases` SET ceiling = CAST(LAST_INSERT_ID("),
        "{claim}"
    );
    // Shard 4's row missing: inserted; there already (an expiring lease holds it): unlocked.
    p.feed(Answer::Row(&reply(0)));
    assert!(run(&p).0.starts_with("INSERT INTO `leases` (layout, shard, ceiling, token, holder, taken_at, expires_at, server) VALUES (?, ?, 0"));
    p.feed(Answer::Error(Some("1062")));
    let (unlock, params) = run(&p);
    assert_eq!(unlock, "SELECT RELEASE_LOCK(CONCAT(?, ?))");
    assert_eq!(params[1], Value::Int(4));
    p.feed(Answer::Row(&[Cell::Int(1)]));
    p.feed(Answer::Row(&[
        Cell::Int(1),
        Cell::Int(13),
        Cell::Text("h 3306 server 1 13"),
    ]));
    p.feed(Answer::Row(&reply(901)));
    assert_eq!(
        p.next(),
        Next::Taken {
            shard: 5,
            recorded: Some(900),
            backend: Some("h 3306 server 1 13")
        }
    );
    let (record, params) = p.record(5, 950);
    assert!(
        record.contains("CONNECTION_ID() = ? AND IS_USED_LOCK(CONCAT(?, ?)) = CONNECTION_ID()"),
        "{record}"
    );
    assert!(params.contains(&Value::Int(13)));
    // A Galera node: refused before any lock is taken.
    let mut galera = mysql(LeaseKind::Session, 0, 4);
    galera.feed(Answer::Row(&[Cell::Int(-2), Cell::Int(5), Cell::Text("x")]));
    assert!(matches!(galera.next(), Next::Refuse { reason } if reason.contains("Galera")));
    // MySQL: no Galera variable to read.
    let mut plain = mysql(LeaseKind::Session, 0, 4);
    plain.feed(Answer::Error(Some("1193")));
    assert!(run(&plain).0.starts_with("SELECT IF(FALSE, -2,"));
}

/// When an expiring lease's holder must stop: from when it sent its last renewal, a fifth of
/// the time to live early; a renewal sent past the deadline counts for nothing.
#[test]
fn an_expiring_leases_holder_stops_before_the_database_lets_another_take_it() {
    let mut t = Tenure::new(10_000, 1_000);
    assert_eq!((t.renew_at_ms(), t.deadline_ms()), (4_333, 9_000));
    assert!(t.holds(8_999) && !t.holds(9_000));
    t.renewed(4_000);
    assert_eq!(t.deadline_ms(), 12_000);
    t.renewed(3_000); // an older answer arriving late changes nothing
    assert_eq!(t.deadline_ms(), 12_000);
    t.renewed(12_500); // sent after the deadline
    assert!(!t.holds(12_600));
    let mut t = Tenure::new(10_000, 0);
    t.lose();
    assert!(t.is_lost() && !t.holds(1));
    t.renewed(1);
    assert!(!t.holds(2));
}

/// Before its first write a PostgreSQL lease reads who owns its table, by the schema named or,
/// with none, where `search_path` finds it; a table another role owns is refused (its trigger
/// would run as the lease's user), a missing one is made and checked again, and from then on
/// every statement names `"schema"."table"`, never the search path's.
#[test]
fn a_postgres_lease_checks_its_tables_owner_and_names_its_schema() {
    // No schema named: the table the search path finds, else the first schema of it.
    let mut p = fresh(LeaseKind::DEFAULT, Placeholders::Numbered, 0, 4);
    let (check, params) = run(&p);
    assert!(
        check.starts_with("SELECT coalesce(n.nspname, current_schema()), pg_get_userbyid(c.relowner), c.relowner IN (WITH RECURSIVE mine(r) AS (SELECT oid FROM pg_roles WHERE rolname = current_user UNION SELECT m.roleid FROM pg_auth_members AS m JOIN mine ON m.member = mine.r) SELECT r FROM mine), current_user::text")
            && check.ends_with("LEFT JOIN pg_class AS c ON c.oid = to_regclass($1::text) LEFT JOIN pg_namespace AS n ON n.oid = c.relnamespace"),
        "{check}"
    );
    assert_eq!(params, [Value::Text("\"leases\"")]);
    // Found in public, owned by another role: refused, naming the table and both roles.
    p.feed(Answer::Row(&[
        Cell::Text("public"),
        Cell::Text("mallory"),
        Cell::Bool(false),
        Cell::Text("alice"),
    ]));
    match p.next() {
        Next::Invalid { argument, reason } => {
            assert_eq!(argument, "table");
            assert!(
                reason.starts_with(
                    "public.leases is owned by role mallory, which the lease's user alice neither is nor is a member of: its triggers and rules would run as alice"
                ),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
    // A schema named: looked up there alone; missing, it is made there and checked again.
    let mut p = fresh(LeaseKind::DEFAULT, Placeholders::Format, 0, 4)
        .schema(Some("app"))
        .unwrap();
    let (check, params) = run(&p);
    assert!(
        check.starts_with("SELECT coalesce(n.nspname, %s::text), "),
        "{check}"
    );
    assert_eq!(
        params,
        [Value::Text("app"), Value::Text("\"app\".\"leases\"")]
    );
    p.feed(Answer::Row(&[
        Cell::Text("app"),
        Cell::Null,
        Cell::Null,
        Cell::Text("alice"),
    ]));
    assert!(
        run(&p)
            .0
            .starts_with("CREATE TABLE IF NOT EXISTS \"app\".\"leases\" (layout text")
    );
    p.feed(Answer::NoRow);
    assert_eq!(run(&p).0, check);
    // Made by another session at that moment, of another role: refused all the same.
    p.feed(Answer::Row(&[
        Cell::Text("app"),
        Cell::Text("mallory"),
        Cell::Bool(false),
        Cell::Text("alice"),
    ]));
    assert!(matches!(
        p.next(),
        Next::Invalid {
            argument: "table",
            ..
        }
    ));
}

/// A table of the user's own roles: every statement names its schema; a session lease checks
/// before its first lock; no schema anywhere is refused; a schema's name is checked.
#[test]
fn a_postgres_lease_on_its_own_table_names_the_schema_everywhere() {
    let mut p = fresh(LeaseKind::DEFAULT, Placeholders::Numbered, 0, 4)
        .schema(Some("app"))
        .unwrap();
    p.feed(Answer::Row(&[
        Cell::Text("app"),
        Cell::Text("app_owner"),
        Cell::Bool(true),
        Cell::Text("alice"),
    ]));
    no_fence(&mut p);
    let (claim, _) = run(&p);
    assert!(
        claim.starts_with("WITH free AS (SELECT shard FROM \"app\".\"leases\" WHERE")
            && !claim.contains(" leases ")
            && claim.matches("\"app\".\"leases\"").count() == 5,
        "{claim}"
    );
    for (sql, _) in [p.record(1, 2), p.release(1), p.renew(1).unwrap()] {
        assert!(sql.starts_with("UPDATE \"app\".\"leases\" SET"), "{sql}");
    }
    // A session lease checks before its first lock.
    let mut p = fresh(LeaseKind::Session, Placeholders::Numbered, 0, 4);
    owned(&mut p);
    assert!(run(&p).0.starts_with("SELECT pg_try_advisory_lock("));
    // No schema named and none in the search path: nowhere to make the table.
    let mut p = fresh(LeaseKind::DEFAULT, Placeholders::Numbered, 0, 4);
    p.feed(Answer::Row(&[
        Cell::Null,
        Cell::Null,
        Cell::Null,
        Cell::Text("alice"),
    ]));
    assert!(matches!(
        p.next(),
        Next::Invalid {
            argument: "schema",
            ..
        }
    ));
    // Schema names follow the rule of every schema's.
    assert!(matches!(
        fresh(LeaseKind::DEFAULT, Placeholders::Numbered, 0, 4).schema(Some("App; drop")),
        Err(SqlError::SchemaName { .. })
    ));
}

/// On the MySQL family a named schema is the database of the table (and of its origin, for
/// failovers); none, the URL's. On SQLite the table is `main`'s unless another is named.
#[test]
fn mysql_and_sqlite_leases_name_their_schema() {
    let mut named = fresh(LeaseKind::DEFAULT, Placeholders::Question, 0, 4)
        .schema(Some("app"))
        .and_then(|p| p.dialect(Dialect::Mariadb))
        .unwrap();
    named.feed(Answer::Row(&[Cell::Int(
        i64::try_from(shardid::now_ms()).unwrap(),
    )]));
    no_fence(&mut named);
    let (claim, _) = run(&named);
    assert!(claim.starts_with("UPDATE `app`.`leases` SET"), "{claim}");
    assert!(claim.contains("WHERE table_schema = 'app' AND table_name = 'leases'"));
    assert!(!claim.contains("DATABASE()"));
    let mut sqlite = fresh(LeaseKind::DEFAULT, Placeholders::Question, 0, 4)
        .dialect(Dialect::Sqlite)
        .unwrap();
    no_fence(&mut sqlite);
    let (claim, _) = run(&sqlite);
    assert!(
        claim.starts_with("INSERT INTO \"main\".\"leases\" (layout") && !claim.contains(" leases "),
        "{claim}"
    );
    let attached = fresh(LeaseKind::DEFAULT, Placeholders::Question, 0, 4)
        .schema(Some("aux"))
        .and_then(|p| p.dialect(Dialect::Sqlite))
        .unwrap();
    assert!(
        attached
            .renew(1)
            .unwrap()
            .0
            .starts_with("UPDATE \"aux\".\"leases\" SET")
    );
}

/// A row whose ceiling is past the layout's last time unit (2^63 - 1 wrapped the generator's
/// first slot to the epoch's first IDs) or below 0 is refused when taken, in every dialect,
/// naming the row; the last unit itself is a ceiling.
#[test]
fn a_claimed_row_whose_ceiling_the_layout_cannot_hold_is_refused() {
    let last = 2_199_023_255_551; // Twitter's 41 bits of time.
    for (ceiling, taken) in [
        (i64::MAX, false),
        (last + 1, false),
        (-5, false),
        (last, true),
    ] {
        let mut p = protocol(LeaseKind::DEFAULT, Placeholders::Numbered, 3, 6);
        p.feed(Answer::Row(&[
            Cell::Int(4),
            Cell::Int(ceiling),
            Cell::Int(0),
        ]));
        match p.next() {
            Next::Taken { recorded, .. } if taken => {
                assert_eq!(recorded, u64::try_from(ceiling).ok());
            }
            Next::Corrupt { reason } if !taken => assert!(
                reason.starts_with(&format!(
                    "the row of shard 4 in lease table public.leases records a ceiling of {ceiling} time units, outside what the layout's time can hold (0 to {last})"
                )),
                "{reason}"
            ),
            other => panic!("{ceiling}: {other:?}"),
        }
    }
    // A session lease's claim and SQLite's too.
    let mut p = fresh(LeaseKind::Session, Placeholders::Numbered, 0, 1);
    owned(&mut p);
    p.feed(Answer::Row(&[
        Cell::Bool(true),
        Cell::Int(9),
        Cell::Text("x"),
    ]));
    p.feed(Answer::Row(&[Cell::Int(i64::MAX)]));
    assert!(matches!(p.next(), Next::Corrupt { .. }));
    let mut p = fresh(LeaseKind::DEFAULT, Placeholders::Question, 0, 4)
        .dialect(Dialect::Sqlite)
        .unwrap();
    no_fence(&mut p);
    p.feed(Answer::Row(&[
        Cell::Int(1),
        Cell::Text("9223372036854775807"),
    ]));
    assert!(matches!(p.next(), Next::Corrupt { .. }));
}

/// The client's clock as the skew tests script it.
static CLIENT_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn client_ms() -> u64 {
    CLIENT_MS.load(std::sync::atomic::Ordering::SeqCst)
}

/// Held by each test that scripts the client's clock: tests run on parallel threads.
static SCRIPTED: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn set_client(ms: u64) {
    CLIENT_MS.store(ms, std::sync::atomic::Ordering::SeqCst);
}

/// A client whose clock, read when a claim or renewal is handed to the driver, is more than
/// the failover rule's skew (2 s) ahead of the database's clock that the statement returns is
/// refused (issue 60, finding 8): at the claim (the shard it took given back first), and at a
/// renewal (the lease must stop). A database clock later than the client's, however much (a
/// slow round trip), is never skew. On the MySQL family the clock is read before the claim.
#[test]
fn a_client_clock_ahead_of_the_databases_beyond_the_skew_is_refused() {
    const DB: i64 = 1_800_000_000_000;
    let _clock = SCRIPTED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let db = u64::try_from(DB).unwrap();
    let claim = |p: &mut LeaseProtocol, client: u64, now: i64| {
        set_client(client);
        let (sql, _) = run(p);
        assert!(sql.starts_with("WITH free AS"), "{sql}");
        assert!(
            sql.contains(", floor(extract(epoch FROM now()) * 1000)::bigint FROM (SELECT) AS one"),
            "{sql}"
        );
        p.feed(Answer::Row(&[
            Cell::Int(4),
            Cell::Int(77),
            Cell::Int(0),
            Cell::Int(now),
        ]));
    };
    // 3 s fast: the shard taken is released, then CLOCK_SKEW with how far ahead.
    let mut p = fresh(LeaseKind::DEFAULT, Placeholders::Numbered, 3, 6).clock(client_ms);
    owned(&mut p);
    claim(&mut p, db + 3_000, DB);
    let (release, params) = run(&p);
    assert!(release.contains("SET token = NULL"), "{release}");
    assert!(params.contains(&Value::Int(4)) && params.contains(&Value::Text("tok")));
    p.feed(Answer::Row(&[Cell::Int(4)]));
    assert_eq!(
        p.next(),
        Next::ClockSkew {
            ahead_ms: 3_000,
            max_ms: 2_000
        }
    );
    // 2 s ahead, the skew itself: taken. The database 1.5 s later than the client (a slow round
    // trip, or a client behind): taken.
    for (client, now) in [(db + 2_000, DB), (db, DB + 1_500)] {
        let mut p = fresh(LeaseKind::DEFAULT, Placeholders::Numbered, 3, 6).clock(client_ms);
        owned(&mut p);
        claim(&mut p, client, now);
        assert!(
            matches!(p.next(), Next::Taken { shard: 4, .. }),
            "{client} {now}"
        );
        // Renewals return the database's clock: 2.5 s fast stops the lease, 1 s does not.
        set_client(db + 2_500);
        let (renew, _) = p.renew(4).unwrap();
        assert!(
            renew.ends_with("RETURNING shard, floor(extract(epoch FROM now()) * 1000)::bigint"),
            "{renew}"
        );
        let answer = [Cell::Int(4), Cell::Int(DB)];
        assert!(p.kept(Answer::Row(&answer)));
        assert_eq!(p.clock_ahead(Answer::Row(&answer)), Some(2_500));
        set_client(db + 1_000);
        p.renew(4);
        assert_eq!(p.clock_ahead(Answer::Row(&answer)), None);
        assert_eq!(p.clock_ahead(Answer::NoRow), None);
    }
}

/// The same rule for a session lease's claim, SQLite's claim, and the MySQL family's clock read
/// before the claim and its renewal's last insert ID.
#[test]
fn every_kind_and_dialect_compares_the_clocks() {
    const DB: i64 = 1_900_000_000_000;
    let _clock = SCRIPTED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let db = u64::try_from(DB).unwrap();
    // A session lease's claim returns the clock too.
    let mut p = fresh(LeaseKind::Session, Placeholders::Numbered, 0, 1).clock(client_ms);
    owned(&mut p);
    p.feed(Answer::Row(&[
        Cell::Bool(true),
        Cell::Int(9),
        Cell::Text("x"),
    ]));
    set_client(db + 3_000);
    assert!(
        run(&p)
            .0
            .ends_with("RETURNING l.ceiling, floor(extract(epoch FROM now()) * 1000)::bigint")
    );
    p.feed(Answer::Row(&[Cell::Int(5), Cell::Int(DB)]));
    assert!(run(&p).0.contains("SET token = NULL"));
    p.feed(Answer::NoRow);
    assert!(matches!(
        p.next(),
        Next::ClockSkew {
            ahead_ms: 3_000,
            ..
        }
    ));
    // SQLite: the claim's third column.
    let mut p = fresh(LeaseKind::DEFAULT, Placeholders::Question, 0, 4)
        .dialect(Dialect::Sqlite)
        .unwrap()
        .clock(client_ms);
    no_fence(&mut p);
    set_client(db + 3_000);
    assert!(run(&p).0.ends_with("RETURNING shard, ceiling, CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)"));
    p.feed(Answer::Row(&[Cell::Int(1), Cell::Int(0), Cell::Int(DB)]));
    assert!(
        run(&p)
            .0
            .starts_with("UPDATE \"main\".\"leases\" SET token = NULL")
    );
    p.feed(Answer::NoRow);
    assert!(matches!(
        p.next(),
        Next::ClockSkew {
            ahead_ms: 3_000,
            ..
        }
    ));
    // The MySQL family: the server's clock first, nothing claimed when it is too far behind;
    // a renewal's last insert ID is the server's clock.
    let mut p = fresh(LeaseKind::DEFAULT, Placeholders::Question, 0, 4)
        .dialect(Dialect::Mariadb)
        .unwrap()
        .clock(client_ms);
    set_client(db + 3_000);
    assert_eq!(
        run(&p).0,
        "SELECT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)"
    );
    p.feed(Answer::Row(&[Cell::Int(DB)]));
    assert!(matches!(
        p.next(),
        Next::ClockSkew {
            ahead_ms: 3_000,
            ..
        }
    ));
    let mut p = fresh(LeaseKind::DEFAULT, Placeholders::Question, 0, 4)
        .dialect(Dialect::Mariadb)
        .unwrap()
        .clock(client_ms);
    set_client(db + 1_000);
    run(&p);
    p.feed(Answer::Row(&[Cell::Int(DB)]));
    no_fence(&mut p);
    assert!(
        run(&p)
            .0
            .starts_with("UPDATE `leases` SET ceiling = (LAST_INSERT_ID(")
    );
    set_client(db + 2_001);
    let (renew, _) = p.renew(1).unwrap();
    assert!(
        renew.contains("INTERVAL (? * 1000 + 0 * LAST_INSERT_ID((TIMESTAMPDIFF(MICROSECOND"),
        "{renew}"
    );
    let answer = reply(db);
    assert!(p.kept(Answer::Row(&answer)));
    assert_eq!(p.clock_ahead(Answer::Row(&answer)), Some(2_001));
}

/// Issue 54: the table's fence row is read once, before the first claim. A mark of `shardid
/// restored` (or, on PostgreSQL, a fence written on another timeline or in another cluster;
/// on the MySQL family by another server or before the table's data was restored) raises what
/// a missing row, or a row last taken before the mark, starts from: the database's clock, read
/// with the fence, plus 2,250 ms. No fence, or one neither marked nor stepped back: nothing.
#[test]
#[allow(clippy::too_many_lines)] // one scenario, read top to bottom
fn a_restore_mark_or_a_step_back_raises_what_a_claim_starts_from() {
    const NOW: i64 = 1_900_000_000_500;
    const MARK: i64 = 1_900_000_000_000;
    let floor =
        (1_900_000_000_500 + 2_250 - Layout::TWITTER.epoch_ms()) / Layout::TWITTER.unit_ms();
    // PostgreSQL: the fence's answer (mark, stepped back, clock) and the claim's parameters.
    for (mark, stepped, expected) in [
        (
            Cell::Int(MARK),
            Cell::Bool(false),
            (floor, 1_900_000_000_000),
        ),
        (Cell::Null, Cell::Bool(true), (floor, 0)),
        (Cell::Null, Cell::Bool(false), (0, 0)),
    ] {
        let mut p = fresh(LeaseKind::DEFAULT, Placeholders::Numbered, 3, 6);
        p.feed(Answer::Row(&[
            Cell::Text("public"),
            Cell::Text("app"),
            Cell::Bool(true),
            Cell::Text("app"),
        ]));
        assert!(run(&p).0.starts_with("WITH added AS (INSERT INTO \"public\".\"leases\" (layout, shard, ceiling, tli, sysid) VALUES ('', -1, 0, "));
        p.feed(Answer::Row(&[mark, stepped, Cell::Int(NOW)]));
        let (claim, params) = run(&p);
        assert!(
            claim.contains("THEN $12::bigint ELSE 0 END)")
                && claim.contains("SELECT $1::text, s, $12::bigint, $5::text"),
            "{claim}"
        );
        assert_eq!(
            (params[11], params[10]),
            (Value::Int(expected.0), Value::Int(expected.1))
        );
        // Read once: a race lost claims again without reading it.
        p.feed(Answer::Row(&[Cell::Null, Cell::Null, Cell::Int(1)]));
        assert_eq!(run(&p).0, claim);
    }
    // A session lease reads it before its first lock, and its claim carries it too.
    let mut p = fresh(LeaseKind::Session, Placeholders::Numbered, 0, 1);
    p.feed(Answer::Row(&[
        Cell::Text("public"),
        Cell::Text("app"),
        Cell::Bool(true),
        Cell::Text("app"),
    ]));
    p.feed(Answer::Row(&[
        Cell::Int(MARK),
        Cell::Bool(false),
        Cell::Int(NOW),
    ]));
    assert!(run(&p).0.starts_with("SELECT pg_try_advisory_lock("));
    p.feed(Answer::Row(&[
        Cell::Bool(true),
        Cell::Int(9),
        Cell::Text("x"),
    ]));
    let (claim, params) = run(&p);
    assert!(
        claim.contains("VALUES ($1::text, $2::bigint, $3::bigint,"),
        "{claim}"
    );
    assert_eq!(params[2], Value::Int(floor));
    // The MySQL family: the fence after the server's clock; the table missing there is made,
    // then the fence read again; the floor and the mark are written in, and a row the claim
    // inserts records the floor.
    let mut p = fresh(LeaseKind::DEFAULT, Placeholders::Question, 3, 6)
        .dialect(Dialect::Mariadb)
        .unwrap();
    p.feed(Answer::Row(&[Cell::Int(
        i64::try_from(shardid::now_ms()).unwrap(),
    )]));
    assert!(run(&p).0.starts_with(MYSQL_FENCE));
    p.feed(Answer::Error(Some("1146")));
    assert!(run(&p).0.starts_with("CREATE TABLE IF NOT EXISTS `leases`"));
    p.feed(Answer::Row(&reply(0)));
    assert!(run(&p).0.starts_with(MYSQL_FENCE));
    p.feed(Answer::Row(&[
        Cell::Text("1900000000000"),
        Cell::Int(0),
        Cell::Int(NOW),
    ]));
    let (claim, _) = run(&p);
    assert!(
        claim.contains(&format!(
            "DIV 1000 < 1900000000000, {floor}, 0)), 2199023255551)"
        )),
        "{claim}"
    );
    p.feed(Answer::Row(&reply(0)));
    let (insert, _) = run(&p);
    assert!(
        insert.contains(&format!("MIN(c.s), {floor} + 0 * LAST_INSERT_ID(")),
        "{insert}"
    );
    p.feed(Answer::Row(&[Cell::Int(1), Cell::Int(5)]));
    assert_eq!(
        p.next(),
        Next::Taken {
            shard: 4,
            recorded: Some(floor),
            backend: None
        }
    );
    // A fence another server wrote (stepped back, no mark): the floor for missing rows only.
    let mut p = fresh(LeaseKind::DEFAULT, Placeholders::Question, 3, 6)
        .dialect(Dialect::Mysql)
        .unwrap();
    p.feed(Answer::Row(&[Cell::Int(NOW)]));
    p.feed(Answer::Row(&[Cell::Null, Cell::Text("1"), Cell::Int(NOW)]));
    let (claim, _) = run(&p);
    assert!(
        claim.contains(&format!("DIV 1000 < 0, {floor}, 0))")),
        "{claim}"
    );
}
