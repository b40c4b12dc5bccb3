//! SQLite's DDL as the command line prints it (`shardid sql --dialect sqlite`), for projects
//! that manage their migrations; the clients create the same tables on first use. With the
//! feature `sqlite`, the printed DDL is also run on a real file.

use shardid::sql::sqlite::{SqliteDictionary, SqliteSegments};

fn run(args: &[&str]) -> shardid::cli::Output {
    shardid::cli::run(args, None)
}

/// `shardid sql --dialect sqlite --<what> --schema main`.
fn main_ddl(what: &str) -> shardid::cli::Output {
    run(&["sql", "--dialect", "sqlite", what, "--schema", "main"])
}

#[test]
fn sqlite_the_command_line_prints_sqlites_ddl() {
    let seg = main_ddl("--segments");
    assert_eq!(seg.code, 0, "{}", seg.stderr);
    assert_eq!(seg.stdout, SqliteSegments::new("main").unwrap().to_string());
    assert!(
        seg.stdout
            .contains("CREATE TABLE IF NOT EXISTS main.shardid_tags")
    );
    assert!(
        seg.stdout.contains("main.shardid_serials"),
        "the serials' registrations come with the segments"
    );
    for schema in ["aux", "main"] {
        let dict = run(&[
            "sql",
            "--dialect=sqlite",
            "--dictionary",
            "--schema",
            schema,
        ]);
        assert_eq!(dict.code, 0, "{}", dict.stderr);
        assert_eq!(
            dict.stdout,
            SqliteDictionary::new(schema).unwrap().to_string()
        );
        for out in [&seg.stdout, &dict.stdout] {
            // Neither PostgreSQL's nor the MySQL family's.
            for other in ["plpgsql", "ENGINE", "VARBINARY", "$$", "DELIMITER"] {
                assert!(!out.contains(other), "{other} in {out}");
            }
        }
    }
}

/// What SQLite has no counterpart of, each a usage error (exit 2) whose message says so.
#[test]
fn sqlite_what_sqlite_has_no_counterpart_of_is_refused() {
    let sqlite = ["sql", "--dialect", "sqlite"];
    for (args, says) in [
        (
            &[
                "--segments",
                "--servers",
                "2",
                "--index",
                "1",
                "--schema",
                "main",
            ][..],
            "ticket servers",
        ),
        (
            &["--layout", "twitter", "--shard", "3", "--schema", "main"],
            "no next_id()",
        ),
        (&["--shard", "1", "--schema", "main"], "no stored routines"),
        (&["--public-ids", "--schema", "main"], ""),
        (&["--segments", "--schema", "no such"], ""),
    ] {
        let out = run(&[&sqlite[..], args].concat());
        assert_eq!(out.code, 2, "{args:?}: {}", out.stdout);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
    }
    let names = run(&[
        "sql",
        "--dialect",
        "oracle",
        "--segments",
        "--schema",
        "main",
    ]);
    assert!(names.stderr.contains("sqlite"), "{}", names.stderr);
}

/// The printed DDL runs on a real file, twice (safe to run again), and the uninstall removes it.
#[cfg(all(feature = "sqlite", not(miri)))]
#[test]
fn sqlite_the_printed_ddl_runs_on_a_file_twice() {
    let dir = std::env::temp_dir().join(format!("shardid-sqlite-ddl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ddl.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    for what in ["--segments", "--dictionary"] {
        let ddl = main_ddl(what).stdout;
        conn.execute_batch(&ddl).unwrap();
        conn.execute_batch(&ddl).unwrap();
    }
    let count = |kind: &str| -> i64 {
        conn.query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'shardid_%' AND type LIKE ?1",
            [kind],
            |r| r.get(0),
        )
        .unwrap()
    };
    assert_eq!(
        count("table"),
        8,
        "tags, serials, topics, strings, the tags' and topics' marks and fences"
    );
    assert_eq!(
        count("trigger"),
        6,
        "the marks' triggers, and the fences' (set by a take, a tag, a batch, a topic)"
    );
    conn.execute_batch(&SqliteSegments::new("main").unwrap().uninstall().to_string())
        .unwrap();
    conn.execute_batch(
        &SqliteDictionary::new("main")
            .unwrap()
            .uninstall()
            .to_string(),
    )
    .unwrap();
    assert_eq!(count("%"), 0, "the uninstall leaves nothing");
    drop(conn);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The lease protocol on SQLite: SQLite's own statements (no `$n`, no stored routine), the
/// table made once on the first claim's error, no row as every shard held, and no session
/// lease.
#[test]
#[allow(clippy::too_many_lines)] // one scenario, read top to bottom
fn sqlite_the_lease_protocol_renders_sqlites_statements() {
    use shardid::Layout;
    use shardid::sql::{
        Answer, Cell, Dialect, LeaseKind, LeaseProtocol, Next, Placeholders, Value,
    };
    let protocol = |kind| {
        LeaseProtocol::new(
            kind,
            Layout::INSTAGRAM,
            "shardid_leases",
            Placeholders::Numbered,
            2,
            5,
            "host pid 1",
            "token",
        )
        .unwrap()
        .dialect(Dialect::Sqlite)
        .unwrap()
    };
    // Before the first claim, once: the table's fence row (issue 54); a missing table is made.
    let fenced = |p: &mut LeaseProtocol| {
        let Next::Run { sql, .. } = p.next() else {
            panic!("the fence first")
        };
        assert!(
            sql.starts_with("SELECT taken_at, 0, ")
                && sql.contains("WHERE layout = '' AND shard = -1"),
            "{sql}"
        );
        p.feed(Answer::NoRow);
    };
    let mut p = protocol(LeaseKind::DEFAULT);
    p.feed(Answer::Error(Some("1")));
    let Next::Run { sql, params } = p.next() else {
        panic!("the table made")
    };
    assert!(
        sql.starts_with("CREATE TABLE IF NOT EXISTS \"main\".\"shardid_leases\""),
        "{sql}"
    );
    assert!(params.is_empty());
    p.feed(Answer::NoRow);
    fenced(&mut p);
    let Next::Run { sql, params } = p.next() else {
        panic!("the claim")
    };
    assert!(
        sql.starts_with("INSERT INTO \"main\".\"shardid_leases\""),
        "{sql}"
    );
    assert!(sql.contains("?1") && !sql.contains('$'), "{sql}");
    assert!(
        sql.contains("julianday('now')"),
        "the database's clock: {sql}"
    );
    // No mark: a missing row starts at 0, and a row is its own.
    assert_eq!(
        (params[1], params[7]),
        (Value::Int(0), Value::Int(0)),
        "{sql}"
    );
    p.feed(Answer::Error(Some("1")));
    assert_eq!(p.next(), Next::Raise, "the same error twice is raised");
    // Marked restored at 1_900_000_000_000 (Unix ms), read at 1_900_000_000_500: a missing row
    // and a row last taken before the mark start at the clock plus 2,250 ms (issue 54).
    let mut p = protocol(LeaseKind::DEFAULT);
    assert!(matches!(p.next(), Next::Run { .. }));
    p.feed(Answer::Row(&[
        Cell::Int(1_900_000_000_000),
        Cell::Int(0),
        Cell::Int(1_900_000_000_500),
    ]));
    let Next::Run { sql, params } = p.next() else {
        panic!("the claim")
    };
    assert!(
        sql.contains("SELECT ?1, c.shard, ?2, ?3")
            && sql.contains("ceiling = CASE WHEN taken_at IS NULL OR taken_at < ?8 THEN max(ceiling, ?2) ELSE ceiling END"),
        "{sql}"
    );
    let floor =
        (1_900_000_000_500 + 2_250 - Layout::INSTAGRAM.epoch_ms()) / Layout::INSTAGRAM.unit_ms();
    assert_eq!(
        (params[1], params[7]),
        (Value::Int(floor), Value::Int(1_900_000_000_000))
    );
    let mut p = protocol(LeaseKind::DEFAULT);
    fenced(&mut p);
    p.feed(Answer::NoRow);
    assert!(matches!(
        p.next(),
        Next::NoFreeShard {
            first: 2,
            end: 5,
            ..
        }
    ));
    let mut p = protocol(LeaseKind::DEFAULT);
    fenced(&mut p);
    p.feed(Answer::Row(&[Cell::Int(3), Cell::Int(0)]));
    assert!(matches!(
        p.next(),
        Next::Taken {
            shard: 3,
            recorded: None,
            ..
        }
    ));
    let (renew, _) = p.renew(3).unwrap();
    assert!(
        renew.starts_with("UPDATE \"main\".\"shardid_leases\"") && renew.contains('?'),
        "{renew}"
    );
    assert!(p.kept(Answer::Row(&[Cell::Int(3)])) && !p.kept(Answer::NoRow));
    assert!(
        p.record(3, 99).0.contains("max(ceiling"),
        "{}",
        p.record(3, 99).0
    );
    assert!(p.release(3).0.contains("token = NULL"));
    let mut p = protocol(LeaseKind::DEFAULT);
    fenced(&mut p);
    p.feed(Answer::Row(&[Cell::Int(9), Cell::Int(0)]));
    assert_eq!(p.next(), Next::Raise, "a shard outside the range");
    let p = protocol(LeaseKind::Session);
    let Next::Refuse { reason } = p.next() else {
        panic!("no advisory locks")
    };
    assert!(reason.contains("SQLite"), "{reason}");
}
