//! The MySQL family's SQL as the core renders it: the clients' statements with each driver's
//! placeholders, the scripts split for drivers, and the steps of a segment fetch. The SQL runs
//! on a real MariaDB in tests/mysql.

use shardid::Layout;
use shardid::segment::Segment;
use shardid::sql::mysql::{
    ASSIGN_ATTEMPTS, FetchError, FetchStep, MAX_PREPARED_LIST, MysqlFetch, ROLLED_BACK_RETRIES,
    assign_again, assign_new, rolled_back, script_statements,
};
use shardid::sql::{
    DEFAULT_SEGMENT, Dialect, Mysql, MysqlDictionary, MysqlSegments, Placeholders, SqlError,
};

#[test]
fn statements_take_each_drivers_placeholders_and_lists() {
    let seg = MysqlSegments::new("seg").unwrap();
    let pymysql = seg.statements(Placeholders::Format);
    let mysql2 = seg.statements(Placeholders::Question);
    assert_eq!(mysql2.give_back().to_string().matches('?').count(), 5);
    let dict = MysqlDictionary::new("dict").unwrap();
    let s = dict.statements(Placeholders::Question);
    let find = s.find(3).to_string();
    assert!(find.contains("s.value IN (?, ?, ?)"), "{find}");
    assert!(find.ends_with("WHERE t.topic = ?"), "{find}");
    assert_eq!(
        s.insert(2).to_string(),
        "INSERT INTO dict.shardid_strings (topic_id, value, id) VALUES (?, ?, ?), (?, ?, ?)"
    );
    let format = dict.statements(Placeholders::Format);
    assert_eq!(format.recheck(2).to_string().matches("%s").count(), 3);
    assert!(format.lock().to_string().ends_with("FOR UPDATE"));
    // PyMySQL interpolates with %: no statement may hold a % of its own.
    for text in [
        pymysql.take().to_string(),
        pymysql.give_back().to_string(),
        pymysql.read().to_string(),
        format.find(4).to_string(),
        format.find_values(4).to_string(),
        format.recheck(4).to_string(),
        format.insert(4).to_string(),
        format.advance().to_string(),
        format.create_topic().to_string(),
        format.drop_topic().to_string(),
        format.state().to_string(),
    ] {
        assert_eq!(
            text.matches('%').count(),
            text.matches("%s").count(),
            "{text}"
        );
        assert!(!text.contains('['), "{text}");
    }
    // An insert of the longest prepared list stays under the protocol's 65,535 placeholders.
    assert!(s.insert(MAX_PREPARED_LIST).to_string().matches('?').count() < 65_535);
}

#[test]
fn a_take_skips_by_rate_after_a_step_back_reading_the_origin_once() {
    let seg = MysqlSegments::new("seg").unwrap();
    let pymysql = seg.statements(Placeholders::Format);
    let mysql2 = seg.statements(Placeholders::Question);
    // After a step back (another server, another origin of the table's data, or marked
    // restored) the skip by rate, the failover module's constants written in; one statement.
    let origin = "(SELECT CAST(UNIX_TIMESTAMP(create_time) AS CHAR) \
        FROM information_schema.tables WHERE table_schema = 'seg' AND table_name = 'shardid_tags')";
    let back = format!(
        "COALESCE(server IS NOT NULL AND server <> CONCAT('server ', @@global.server_id) \
         OR origin IS NOT NULL AND origin <> {origin} OR restored, FALSE)"
    );
    let now = shardid::sql::failover::MYSQL_NOW_MS;
    let skip = format!(
        "IF(window_ms IS NULL OR written_ms IS NULL, \
         stride * 10485 * 2 * GREATEST(step, 1000), stride * (4 * 2 * GREATEST(step, 1) + \
         CAST(CEIL(4 * GREATEST(rate, window_n * 1000 / GREATEST(written_ms - window_ms, 1000)) * \
         (GREATEST({now} - written_ms, 0) + 2000) / 1000) AS SIGNED)))"
    );
    let base = format!("IF({back}, next + {skip}, next)");
    // A take reads the origin once: `restored` first becomes whether the row stepped back.
    let marked = format!("IF(restored, next + {skip}, next)");
    let take = pymysql.take().to_string();
    assert!(
        take.starts_with(&format!(
            "UPDATE seg.shardid_tags SET restored = {back}, \
             back_ms = IF(restored, written_ms, back_ms), back_seen_ms = IF(restored, {now}, back_seen_ms), \
             grown_at = IF(%s > GREATEST(step, 1000), {marked}, grown_at), \
             next = CAST(LAST_INSERT_ID({marked}) AS SIGNED) + stride * %s, step = %s, \
             rate = IF(restored, IF(window_ms IS NULL OR written_ms IS NULL, rate, GREATEST(rate, \
             window_n * 1000 / GREATEST(written_ms - window_ms, 1000))), \
             IF(window_ms IS NOT NULL AND {now} - window_ms >= 1000, \
             GREATEST(rate, (window_n + step) * 1000 / ({now} - window_ms)), rate)), \
             window_n = IF(restored OR window_ms IS NULL, step, "
        )),
        "{take}"
    );
    let written = take.split(" WHERE tag = ").next().unwrap();
    assert_eq!(written.matches(origin).count(), 3, "{written}");
    assert!(written.contains(&format!(
        "origin = IF(restored, {origin}, COALESCE(origin, {origin})), restored = FALSE"
    )));
    // What a tag created later skips needs (issue 54): the last write before a step back,
    // read before `written_ms` is written.
    let at = |what: &str| take.find(what).unwrap();
    assert!(at("back_ms = IF(restored, written_ms") < at("written_ms = "));
    // MySQL assigns left to right: the marks of a step back are written last.
    assert!(at("step = %s") < at("rate = ") && at("rate = ") < at("window_n = "));
    assert!(at("window_n = ") < at("window_ms = IF") && at("window_ms = IF") < at("server = "));
    assert!(take.contains(
        "server = CONCAT('server ', @@global.server_id), origin = IF(restored, (SELECT CAST(UNIX_TIMESTAMP(create_time)"
    ));
    assert!(take.ends_with(&format!(
        "WHERE tag = %s AND (%s <= GREATEST(step, 1000) OR %s <= 2 * GREATEST(step, 1000) AND \
         (grown_at IS NULL OR {base} - grown_at >= stride * 10485 * 2 * GREATEST(step, 1000)))"
    )));
    assert_eq!(take.matches("%s").count(), 6);
    assert_eq!(
        mysql2.read().to_string(),
        format!(
            "SELECT step, stride, IF((grown_at IS NULL OR {base} - grown_at >= \
             stride * 10485 * 2 * GREATEST(step, 1000)), 2, 1) * GREATEST(step, 1000) \
             FROM seg.shardid_tags WHERE tag = ?"
        )
    );
    // MariaDB's names a Galera cluster as one server, and as one origin (its state UUID).
    let galera = seg
        .dialect(Dialect::Mariadb)
        .statements(Placeholders::Question);
    assert!(galera.take().to_string().contains(
        "server = IF(@@global.wsrep_on, CONCAT('galera ', @@global.wsrep_cluster_name), \
         CONCAT('server ', @@global.server_id)), origin = IF(restored, IF(@@global.wsrep_on, \
         (SELECT variable_value FROM information_schema.global_status \
         WHERE variable_name = 'WSREP_CLUSTER_STATE_UUID'), (SELECT"
    ));
    assert!(
        mysql2
            .give_back()
            .to_string()
            .ends_with(&format!("AND NOT {back} AND server IS NOT NULL"))
    );
}

#[test]
fn scripts_split_into_the_statements_a_driver_sends() {
    let layout = Layout::INSTAGRAM;
    let scripts = [
        Mysql::new(layout, 5, "insta5").unwrap().to_string(),
        MysqlSegments::new("seg").unwrap().to_string(),
        MysqlDictionary::new("dict").unwrap().to_string(),
    ];
    for script in &scripts {
        assert!(script.contains("DELIMITER $$\n") && script.ends_with("DELIMITER ;\n"));
        let statements: Vec<&str> = script_statements(script).collect();
        assert!(statements.len() >= 5, "{statements:?}");
        for statement in &statements {
            assert!(!statement.contains("$$") && !statement.contains("DELIMITER"));
            assert!(!statement.trim().is_empty());
        }
        assert!(
            statements[0].ends_with("CREATE DATABASE IF NOT EXISTS insta5")
                || statements[0].ends_with("CREATE DATABASE IF NOT EXISTS seg")
                || statements[0].ends_with("CREATE DATABASE IF NOT EXISTS dict")
        );
    }
    let next_id: Vec<&str> = script_statements(&scripts[0]).collect();
    assert!(
        next_id
            .iter()
            .any(|s| s.starts_with("CREATE FUNCTION insta5.next_id() RETURNS BIGINT"))
    );
    // The counter's update is checked: a missing row would leave a stale LAST_INSERT_ID().
    assert!(scripts[0].contains("IF ROW_COUNT() <> 1 THEN"));
    let segments: Vec<&str> = script_statements(&scripts[1]).collect();
    assert!(
        segments
            .iter()
            .any(|s| s.starts_with("CREATE FUNCTION seg.create_tag(p_tag"))
    );
}

#[test]
fn names_and_layouts_are_checked() {
    for bad in [
        "Seg",
        "seg; DROP TABLE x",
        "",
        "1seg",
        "seg`",
        &"s".repeat(41),
    ] {
        assert!(
            matches!(MysqlSegments::new(bad), Err(SqlError::SchemaName { .. })),
            "{bad}"
        );
        assert!(
            matches!(MysqlDictionary::new(bad), Err(SqlError::SchemaName { .. })),
            "{bad}"
        );
        assert!(matches!(
            Mysql::new(Layout::INSTAGRAM, 1, bad),
            Err(SqlError::SchemaName { .. })
        ));
    }
    assert!(
        MysqlSegments::new("seg")
            .unwrap()
            .ticket_server(2, 2)
            .is_err()
    );
    assert!(
        MysqlSegments::new("seg")
            .unwrap()
            .ticket_server(0, 0)
            .is_err()
    );
    let odd = MysqlSegments::new("seg")
        .unwrap()
        .ticket_server(2, 1)
        .unwrap()
        .to_string();
    assert!(odd.contains("Ticket server 1 of 2"));
    assert!(matches!(
        Mysql::new(Layout::INSTAGRAM, 8192, "x"),
        Err(SqlError::Core(_))
    ));
    assert_eq!(Dialect::from_name("mariadb"), Some(Dialect::Mariadb));
    assert_eq!(Dialect::from_name("mysql"), Some(Dialect::Mysql));
    assert!(
        Dialect::Mariadb.is_mysql() && Dialect::Mysql.is_mysql() && !Dialect::Postgres.is_mysql()
    );
    assert_eq!(Dialect::from_name("postgresql"), Some(Dialect::Postgres));
    assert_eq!(Dialect::from_name("oracle"), None);
}

#[test]
fn a_fetch_reads_the_row_first_then_takes_in_one_statement() {
    let segment = |first, count, stride| {
        Some(Segment {
            first,
            count,
            stride,
        })
    };
    // A client's first fetch (size 0): read the row, for its remembered size and stride.
    let mut first = MysqlFetch::new(0, None);
    assert_eq!(first.step(), FetchStep::Read);
    first.read(Some((0, 1, 2000))).unwrap();
    assert_eq!(
        first.step(),
        FetchStep::Take {
            size: DEFAULT_SEGMENT
        }
    );
    assert_eq!(first.took(1, 1).unwrap(), segment(1, DEFAULT_SEGMENT, 1));
    let mut remembered = MysqlFetch::new(0, Some(2));
    assert_eq!(remembered.step(), FetchStep::Read, "size 0 always reads");
    remembered.read(Some((500, 2, 1000))).unwrap();
    assert_eq!(remembered.step(), FetchStep::Take { size: 500 });
    assert_eq!(remembered.took(1, 7).unwrap(), segment(7, 500, 2));
    // Later fetches know the stride: one statement.
    let mut later = MysqlFetch::new(64, remembered.stride());
    assert_eq!(later.step(), FetchStep::Take { size: 64 });
    assert_eq!(later.took(1, 1007).unwrap(), segment(1007, 64, 2));
    // A take the server rolled back whole (a deadlock; on Galera a certification conflict with
    // another node's take, 1213; or a lock wait timeout, 1205) is sent again, the same step, a
    // bounded number of times per fetch; other errors are the driver's.
    let mut conflicted = MysqlFetch::new(64, Some(2));
    for _ in 0..ROLLED_BACK_RETRIES {
        assert!(conflicted.rolled_back(1213));
        assert_eq!(conflicted.step(), FetchStep::Take { size: 64 });
    }
    assert!(!conflicted.rolled_back(1213), "bounded");
    assert!(MysqlFetch::new(64, Some(2)).rolled_back(1205));
    assert!(!MysqlFetch::new(64, Some(2)).rolled_back(1062));
    assert!(
        !MysqlFetch::new(64, Some(2)).rolled_back(2013),
        "a lost connection is not"
    );
    assert_eq!(conflicted.took(1, 77).unwrap(), segment(77, 64, 2));
    // No row updated: the tag is gone, or the take too large (the last insert ID is another
    // statement's): read the row, which tells which.
    let mut gone = MysqlFetch::new(64, Some(2));
    assert_eq!(gone.took(0, 12345), Ok(None));
    assert_eq!(gone.step(), FetchStep::Read);
    assert_eq!(gone.read(None), Err(FetchError::UnknownTag));
    assert_eq!(
        MysqlFetch::new(0, None).read(None),
        Err(FetchError::UnknownTag)
    );
    assert_eq!(FetchError::UnknownTag.sqlstate(), "SI001");
    // Rows no shardid DDL makes.
    for row in [
        (0, 0, 1000),
        (-1, 1, 1000),
        (0, -1, 1000),
        (0, 2000, 1000),
        (1 << 41, 1, 1000),
        (0, 1, 999),
    ] {
        assert_eq!(
            MysqlFetch::new(0, None).read(Some(row)),
            Err(FetchError::Unusable),
            "{row:?}"
        );
    }
}

/// A take the row refuses as larger than it allows now (see `segments.rs`): read, then take
/// at most what the row says; refused again (another client changed the row in between), at
/// most the default size, which no row refuses; and one more refusal is no shardid row.
#[test]
fn a_take_refused_as_too_large_reads_then_takes_what_the_row_allows() {
    let mut fetch = MysqlFetch::new(8_000, Some(1));
    assert_eq!(fetch.step(), FetchStep::Take { size: 8_000 });
    assert_eq!(fetch.took(0, 0), Ok(None));
    assert_eq!(fetch.step(), FetchStep::Read);
    fetch.read(Some((1_500, 1, 3_000))).unwrap();
    assert_eq!(fetch.step(), FetchStep::Take { size: 3_000 });
    assert_eq!(fetch.took(0, 0), Ok(None));
    fetch.read(Some((2_000, 1, 2_000))).unwrap();
    assert_eq!(
        fetch.step(),
        FetchStep::Take {
            size: DEFAULT_SEGMENT
        }
    );
    assert_eq!(fetch.took(0, 0), Err(FetchError::Unusable));
    // Asked for less than the row allows: taken as asked, after the read too.
    let mut small = MysqlFetch::new(300, Some(1));
    assert_eq!(small.took(0, 0), Ok(None));
    small.read(Some((5_000, 1, 5_000))).unwrap();
    assert_eq!(small.step(), FetchStep::Take { size: 300 });
    assert_eq!(
        small.took(1, 41),
        Ok(Some(Segment {
            first: 41,
            count: 300,
            stride: 1
        }))
    );
}

#[test]
fn new_strings_are_numbered_in_order_from_the_topics_next() {
    let answers = [Some(4), None, Some(0), None, None];
    let new: Vec<(usize, u64)> = assign_new(&answers, 10).collect();
    assert_eq!(new, [(1, 10), (3, 11), (4, 12)]);
    assert_eq!(assign_new(&[Some(1), Some(2)], 3).count(), 0);
}

/// The one rule of a statement or transaction the server rolled back whole (a deadlock, a
/// Galera certification conflict, a lock wait timeout): the dictionary's transaction runs again,
/// `ASSIGN_ATTEMPTS` times in all; anything else is raised at once.
#[test]
fn the_dictionarys_transaction_runs_again_only_when_rolled_back_whole() {
    assert!(rolled_back(1213) && rolled_back(1205));
    for other in [1062, 1146, 1180, 2013, 0] {
        assert!(!rolled_back(other), "{other}");
        assert!(!assign_again(other, 1), "{other}");
    }
    let runs = (1..=ASSIGN_ATTEMPTS + 1)
        .take_while(|&attempt| assign_again(1213, attempt))
        .count();
    assert_eq!(runs + 1, ASSIGN_ATTEMPTS as usize);
    assert!(assign_again(1205, ASSIGN_ATTEMPTS - 1) && !assign_again(1205, ASSIGN_ATTEMPTS));
}

#[test]
fn the_command_line_renders_each_dialect() {
    let run = |args: &[&str]| shardid::cli::run(args, None);
    let seg = run(&["sql", "--dialect", "mysql", "--segments", "--schema", "seg"]);
    assert_eq!(seg.code, 0, "{}", seg.stderr);
    assert_eq!(seg.stdout, MysqlSegments::new("seg").unwrap().to_string());
    let dict = run(&[
        "sql",
        "--dialect=mariadb",
        "--dictionary",
        "--schema",
        "dict",
    ]);
    assert_eq!(
        dict.stdout,
        MysqlDictionary::new("dict")
            .unwrap()
            .dialect(Dialect::Mariadb)
            .to_string()
    );
    let ids = run(&[
        "sql",
        "--dialect",
        "mysql",
        "--layout",
        "twitter",
        "--shard",
        "3",
        "--schema",
        "tw",
    ]);
    assert_eq!(
        ids.stdout,
        Mysql::new(Layout::TWITTER, 3, "tw").unwrap().to_string()
    );
    let postgres = run(&["sql", "--segments", "--schema", "seg"]);
    assert!(
        postgres.stdout.contains("LANGUAGE plpgsql"),
        "the default stays PostgreSQL"
    );
    let bad = run(&[
        "sql",
        "--dialect",
        "oracle",
        "--segments",
        "--schema",
        "seg",
    ]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("postgres, mysql, mariadb"),
        "{}",
        bad.stderr
    );
}

#[test]
fn urls_are_read_alike_everywhere() {
    use shardid::sql::mysql::MysqlUrl;
    let url = MysqlUrl::parse("mysql://app:p%40ss%3Aw%2Frd@db.example:3307/shop").unwrap();
    assert_eq!(url.user, "app");
    assert_eq!(url.password.as_deref(), Some("p@ss:w/rd"));
    assert_eq!((url.host.as_str(), url.port), ("db.example", 3307));
    assert_eq!(url.database.as_deref(), Some("shop"));
    let bare = MysqlUrl::parse("mariadb://127.0.0.1").unwrap();
    assert_eq!(
        (bare.user.as_str(), bare.password, bare.port, bare.database),
        ("root", None, 3306, None)
    );
    let v6 = MysqlUrl::parse("mysql://u@[::1]:4000/x?ssl=0").unwrap();
    assert_eq!(
        (v6.host.as_str(), v6.port, v6.database.as_deref()),
        ("::1", 4000, Some("x"))
    );
    // An unencoded @ in a password: the authority ends at the last @.
    let raw = MysqlUrl::parse("mysql://u:a@b@h/d").unwrap();
    assert_eq!(
        (raw.password.as_deref(), raw.host.as_str()),
        (Some("a@b"), "h")
    );
    for bad in [
        "postgresql://u@h/d",
        "mysql://",
        "mysql://u@:3306/d",
        "mysql://h:99999/d",
        "mysql://h:x/d",
        "mysql://u:%zz@h/d",
        "mysql://u:%ff@h/d",
        "mysql://[::1/d",
    ] {
        assert!(MysqlUrl::parse(bad).is_err(), "{bad}");
    }
    assert!(MysqlUrl::is_url("mariadb://h") && !MysqlUrl::is_url("host=h dbname=d"));
}
