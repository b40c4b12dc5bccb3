//! The statements run on real SQLite files (`rusqlite`, SQLite bundled), as a driver sends
//! them: the take's numbers, an unknown and an exhausted tag, the dictionary's density under
//! four threads with a connection each on one WAL file, and a lease refused until it expires.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::string::{String, ToString};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use std::vec::Vec;
use std::{format, thread, vec};

use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OptionalExtension, params_from_iter};

use super::*;
use crate::Layout;
use crate::sql::{MIN_TTL_MS, Placeholders, SqlError, Value};

/// A fresh database file in the temporary directory, removed (with its WAL) when dropped.
struct File(PathBuf);

impl File {
    fn new(name: &str) -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "shardid-sqlite-{name}-{}-{}.db",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let file = Self(path);
        file.remove();
        file
    }

    fn remove(&self) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut path = self.0.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }

    /// A connection set up as a driver sets one up ([`ConnectionSetup`]).
    fn open(&self) -> Connection {
        let conn = Connection::open(&self.0).unwrap();
        conn.execute_batch(&ConnectionSetup(DEFAULT_BUSY_TIMEOUT_MS).to_string())
            .unwrap();
        conn
    }
}

impl Drop for File {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Registers serial `tag` as the drivers do: the daily format `{prefix}-{yyyy}{MM}{dd}-{seq:6}`
/// in `zone`, its pieces, its canonical text and `shape`. `None` when it was registered before.
fn register_serial(
    conn: &Connection,
    serials: &SqliteSerialStatements<'_>,
    tag: &str,
    prefix: &str,
    zone: &str,
    shape: &str,
) -> rusqlite::Result<Option<String>> {
    let format = format!("{prefix}-{{yyyy}}{{MM}}{{dd}}-{{seq:6}}");
    let canonical = format!("{prefix}-{{yyyy}}{{MM}}{{dd}}-{{seq:6:day}}");
    let pieces = [
        format!("L{prefix}-"),
        "yyyy".into(),
        "MM".into(),
        "dd".into(),
        "L-".into(),
        "seq".into(),
    ];
    let mut params: Vec<Sql> = [tag, &format, zone, &canonical, shape]
        .iter()
        .map(|t| Sql::Text((*t).into()))
        .collect();
    params.extend(pieces.iter().map(|p| Sql::Text(p.clone())));
    params.extend([Sql::Integer(6), Sql::Text("day".into()), Sql::Integer(1)]);
    conn.query_row(
        &serials.create(pieces.len()).to_string(),
        params_from_iter(params),
        |r| r.get::<_, String>(0),
    )
    .optional()
}

fn ints(values: &[i64]) -> Vec<Sql> {
    values.iter().map(|v| Sql::Integer(*v)).collect()
}

/// Runs a statement expected to return at most one row of three integers.
fn row3(conn: &Connection, sql: &str, params: Vec<Sql>) -> Option<(i64, i64, i64)> {
    conn.query_row(sql, params_from_iter(params), |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })
    .optional()
    .unwrap()
}

/// Runs a statement expected to return at most one row of one integer.
fn row1(conn: &Connection, sql: &str, params: Vec<Sql>) -> Option<i64> {
    conn.query_row(sql, params_from_iter(params), |r| r.get(0))
        .optional()
        .unwrap()
}

/// A driver's take: the statement, and on no row the read that says why.
fn take(
    conn: &Connection,
    st: &SqliteSegmentStatements<'_>,
    tag: &str,
    size: u64,
) -> Result<crate::segment::Segment, TakeError> {
    let mut steps = SqliteTake::new(size);
    loop {
        let row = match steps.step() {
            SqliteTakeStep::Take => {
                let size = Sql::Integer(i64::try_from(size).unwrap());
                row3(
                    conn,
                    &st.take().to_string(),
                    vec![size, Sql::Text(tag.into())],
                )
            }
            SqliteTakeStep::Read => row3(conn, &st.read().to_string(), vec![Sql::Text(tag.into())]),
        };
        if let Some(segment) = steps.answer(row)? {
            return Ok(segment);
        }
    }
}

#[test]
fn a_takes_steps_are_the_cores_for_every_client() {
    use SqliteTakeStep::{Read, Take};
    // The answers of a file, step by step: what comes next, or the end.
    let run = |size: u64, rows: &[Option<(i64, i64, i64)>]| {
        let mut steps = SqliteTake::new(size);
        let mut seen = Vec::new();
        for &row in rows {
            seen.push(steps.step());
            match steps.answer(row) {
                Ok(None) => {}
                end => return (seen, Some(end)),
            }
        }
        (seen, None)
    };
    let segment = |first, count| crate::segment::Segment {
        first,
        count,
        stride: 1,
    };
    // The take answers: the segment.
    assert_eq!(
        run(10, &[Some((1, 10, 1))]),
        (vec![Take], Some(Ok(Some(segment(1, 10)))))
    );
    // No row, and no tag: UNKNOWN_TAG (a serial period's driver makes its tag then).
    let (seen, end) = run(10, &[None, None]);
    assert_eq!(
        (seen, end),
        (vec![Take, Read], Some(Err(TakeError::UnknownTag)))
    );
    // No row, and a tag that would pass 2^63 - 1: TAG_EXHAUSTED.
    let (_, end) = run(10, &[None, Some((i64::MAX - 5, 10, 1))]);
    assert_eq!(end, Some(Err(TakeError::Exhausted)));
    // Created between the take and the read: taken again.
    let (seen, end) = run(10, &[None, Some((1, 0, 1)), Some((1, 10, 1))]);
    assert_eq!(
        (seen, end),
        (vec![Take, Read, Take], Some(Ok(Some(segment(1, 10)))))
    );
    // A row that refuses every take its read allows is no shardid row: after TAKES takes.
    let allows = Some((1, 0, 1));
    let (seen, end) = run(10, &[None, allows, None, allows, None]);
    assert_eq!(seen, vec![Take, Read, Take, Read]);
    assert_eq!(end, Some(Err(TakeError::Refused)));
    assert_eq!(SqliteTake::TAKES, 2);
    // A take's row no DDL makes; a size out of range (the read says so).
    assert_eq!(
        run(10, &[Some((1, 10, 2))]).1,
        Some(Err(TakeError::Unusable))
    );
    assert_eq!(
        run(1 << 41, &[None, allows]).1,
        Some(Err(TakeError::InvalidSize))
    );
}

#[test]
fn connection_setup_makes_a_wal_file_with_a_busy_timeout() {
    let file = File::new("setup");
    let conn = file.open();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let timeout: i64 = conn
        .query_row("PRAGMA busy_timeout", [], |r| r.get(0))
        .unwrap();
    assert_eq!(timeout, 5_000);
    let synchronous: i64 = conn
        .query_row("PRAGMA synchronous", [], |r| r.get(0))
        .unwrap();
    assert_eq!(synchronous, 2, "FULL");
}

#[test]
fn the_clock_is_unix_milliseconds() {
    let conn = Connection::open_in_memory().unwrap();
    let db: i64 = conn
        .query_row(&format!("SELECT {NOW_MS}"), [], |r| r.get(0))
        .unwrap();
    let host = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap();
    assert!((db - host).abs() < 1_000, "database {db}, host {host}");
}

#[test]
fn placeholders_are_question_marks_or_numbered() {
    let st = SqliteSegments::new("main")
        .unwrap()
        .statements(Placeholders::Numbered);
    let sql = st.give_back().to_string();
    assert!(sql.contains("SELECT ?1 AS first_id, ?2 AS end_id"), "{sql}");
    assert!(sql.contains("WHERE t.tag = ?3"), "{sql}");
    let st = SqliteDictionary::new("main")
        .unwrap()
        .statements(Placeholders::Format);
    let sql = st.insert(2).to_string();
    assert!(
        sql.ends_with("VALUES (?, ?, ?), (?, ?, ?)") && !sql.contains('%'),
        "{sql}"
    );
    let sql = SqliteDictionary::new("main")
        .unwrap()
        .statements(Placeholders::Numbered)
        .find(3)
        .to_string();
    assert!(
        sql.contains("topic = ?1") && sql.ends_with("IN (?2, ?3, ?4)"),
        "{sql}"
    );
}

#[test]
fn the_take_guards_with_the_core_limits() {
    let sql = SqliteSegments::new("main")
        .unwrap()
        .statements(Placeholders::Question)
        .take()
        .to_string();
    assert!(
        sql.contains(&format!("BETWEEN 0 AND {}", crate::sql::MAX_SEGMENT)),
        "{sql}"
    );
    assert!(
        sql.contains(&format!(" <= {} - t.stride", i64::MAX)),
        "{sql}"
    );
    assert!(
        sql.contains(&format!("ELSE {} END", crate::sql::DEFAULT_SEGMENT)),
        "{sql}"
    );
}

#[test]
fn names_are_checked() {
    assert!(matches!(
        SqliteSegments::new("main; DROP TABLE x"),
        Err(SqlError::SchemaName { .. })
    ));
    assert!(matches!(
        SqliteDictionary::new(""),
        Err(SqlError::SchemaName { .. })
    ));
    let layout = Layout::TWITTER;
    assert!(matches!(
        SqliteLease::new(layout, "Leases", Placeholders::Question, 0, 1, "h", "t"),
        Err(SqlError::TableName { .. })
    ));
    assert!(matches!(
        SqliteLease::new(layout, "leases", Placeholders::Question, 3, 3, "h", "t"),
        Err(SqlError::EmptyShards { first: 3, end: 3 })
    ));
}

#[test]
fn segments_take_create_give_back_and_refuse() {
    for placeholders in [Placeholders::Question, Placeholders::Numbered] {
        let file = File::new("segments");
        let conn = file.open();
        let ddl = SqliteSegments::new("main").unwrap();
        conn.execute_batch(&ddl.to_string()).unwrap();
        conn.execute_batch(&ddl.to_string()).unwrap(); // again: kept
        let st = ddl.statements(placeholders);
        let create = |tag: &str, first: i64| {
            conn.query_row(
                &st.create_tag().to_string(),
                params_from_iter([Sql::Text(tag.into()), Sql::Integer(first)]),
                |r| r.get::<_, String>(0),
            )
            .optional()
        };
        assert_eq!(create("orders", 1).unwrap().as_deref(), Some("orders"));
        assert_eq!(create("orders", 500).unwrap(), None, "exists: left alone");

        // Size 0 at first: the default; then the size asked; 0 again: the size remembered.
        let seg = take(&conn, &st, "orders", 0).unwrap();
        assert_eq!((seg.first, seg.count, seg.stride), (1, 1_000, 1));
        let seg = take(&conn, &st, "orders", 5).unwrap();
        assert_eq!((seg.first, seg.count), (1_001, 5));
        let seg = take(&conn, &st, "orders", 0).unwrap();
        assert_eq!((seg.first, seg.count), (1_006, 5));

        // The unused tail goes back only while nobody took since.
        let give = |first: i64, end: i64| {
            row1(
                &conn,
                &st.give_back().to_string(),
                ints(&[first, end])
                    .into_iter()
                    .chain([Sql::Text("orders".into())])
                    .collect(),
            )
        };
        assert!(give(1_008, 1_011).is_some());
        assert!(give(1_006, 1_011).is_none(), "the row reads 1008 now");
        let seg = take(&conn, &st, "orders", 2).unwrap();
        assert_eq!((seg.first, seg.count), (1_008, 2));

        assert_eq!(take(&conn, &st, "order", 5), Err(TakeError::UnknownTag));
        assert_eq!(
            take(&conn, &st, "orders", 1 << 41),
            Err(TakeError::InvalidSize)
        );
        assert_eq!(TakeError::UnknownTag.sqlstate(), "SI001");

        // Near 2^63 - 1: the last whole segment, then exhausted, the row unchanged.
        create("big", i64::MAX - 10).unwrap();
        let seg = take(&conn, &st, "big", 10).unwrap();
        assert_eq!(seg.first, (i64::MAX - 10) as u64);
        assert_eq!(take(&conn, &st, "big", 1), Err(TakeError::Exhausted));
        assert_eq!(TakeError::Exhausted.sqlstate(), "SI002");
        let next: i64 = conn
            .query_row("SELECT next FROM shardid_tags WHERE tag = 'big'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(next, i64::MAX);

        // Bad arguments fail on the named CHECKs.
        for (tag, first) in [("", 1), ("neg", -1)] {
            let error = create(tag, first).unwrap_err().to_string();
            assert!(
                error.contains("CHECK constraint failed: shardid_"),
                "{error}"
            );
        }
        let long = "x".repeat(crate::sql::MAX_TAG_LEN + 1);
        assert!(create(&long, 1).is_err());

        conn.execute_batch(&ddl.uninstall().to_string()).unwrap();
        let left: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'shardid_tags'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(left, 0, "uninstalled");
    }
}

/// A driver's `dict_ids`, in the order the module docs give; `fail_before_commit` rolls the
/// transaction back after the inserts, as an error there would.
fn dict_ids(
    conn: &Connection,
    st: &SqliteDictionaryStatements<'_>,
    topic: &str,
    values: &[String],
    fail_before_commit: bool,
) -> Vec<i64> {
    let mut distinct: Vec<&String> = Vec::new();
    for value in values {
        if !distinct.contains(&value) {
            distinct.push(value);
        }
    }
    let found = |sql: &str, params: Vec<Sql>| -> HashMap<String, i64> {
        let mut stmt = conn.prepare(sql).unwrap();
        let rows = stmt
            .query_map(params_from_iter(params), |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
            })
            .unwrap();
        rows.map(Result::unwrap).collect()
    };
    // 1. Without the write lock.
    let mut known: HashMap<String, i64> = HashMap::new();
    {
        let mut stmt = conn.prepare(&st.find(distinct.len()).to_string()).unwrap();
        let params: Vec<Sql> = core::iter::once(Sql::Text(topic.into()))
            .chain(distinct.iter().map(|v| Sql::Text((*v).clone())))
            .collect();
        let mut rows = stmt.query(params_from_iter(params)).unwrap();
        let mut any = false;
        while let Some(row) = rows.next().unwrap() {
            any = true;
            if let Some(value) = row.get::<_, Option<String>>(2).unwrap() {
                known.insert(value, row.get(3).unwrap());
            }
        }
        assert!(any, "no such topic");
    }
    let missing: Vec<&String> = distinct
        .iter()
        .copied()
        .filter(|v| !known.contains_key(*v))
        .collect();
    if !missing.is_empty() {
        // 2. One transaction holding the write lock.
        conn.execute_batch(BEGIN_IMMEDIATE).unwrap();
        let (topic_id, next, dropped) =
            row3(conn, &st.lock().to_string(), vec![Sql::Text(topic.into())]).expect("the topic");
        assert_eq!(dropped, 0);
        let mut params = vec![Sql::Integer(topic_id)];
        params.extend(missing.iter().map(|v| Sql::Text((*v).clone())));
        let again = found(&st.recheck(missing.len()).to_string(), params);
        let answers: Vec<Option<u64>> = missing
            .iter()
            .map(|v| again.get(*v).map(|id| u64::try_from(*id).unwrap()))
            .collect();
        let new: Vec<(usize, u64)> = assign_new(&answers, u64::try_from(next).unwrap()).collect();
        if !new.is_empty() {
            let mut params = Vec::new();
            for (i, id) in &new {
                params.push(Sql::Integer(topic_id));
                params.push(Sql::Text(missing[*i].clone()));
                params.push(Sql::Integer(i64::try_from(*id).unwrap()));
            }
            conn.execute(&st.insert(new.len()).to_string(), params_from_iter(params))
                .unwrap();
            let moved = next + i64::try_from(new.len()).unwrap();
            let advanced = row1(
                conn,
                &st.advance().to_string(),
                ints(&[moved, topic_id, next]),
            );
            assert_eq!(advanced, Some(moved), "the row moved under the write lock");
        }
        if fail_before_commit {
            conn.execute_batch(ROLLBACK).unwrap();
            return Vec::new();
        }
        conn.execute_batch(COMMIT).unwrap();
        known.extend(again);
        for (i, id) in new {
            known.insert(missing[i].clone(), i64::try_from(id).unwrap());
        }
    }
    values.iter().map(|v| known[v]).collect()
}

#[test]
#[allow(clippy::too_many_lines)] // one scenario, read top to bottom
fn dictionary_ids_are_dense_under_four_writers_on_one_wal_file() {
    const THREADS: usize = 4;
    const BATCHES: usize = 60;
    const POOL: u64 = 600;
    let file = File::new("dictionary");
    let conn = file.open();
    let ddl = SqliteDictionary::new("main").unwrap();
    conn.execute_batch(&ddl.to_string()).unwrap();
    let st = ddl.statements(Placeholders::Question);
    let created = conn
        .query_row(&st.create_topic().to_string(), ["words"], |r| {
            r.get::<_, i64>(0)
        })
        .optional()
        .unwrap();
    assert!(created.is_some());
    let again = conn
        .query_row(&st.create_topic().to_string(), ["words"], |r| {
            r.get::<_, i64>(0)
        })
        .optional()
        .unwrap();
    assert!(again.is_none(), "exists");

    let answers: Vec<Vec<(String, i64)>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let file = &file;
                scope.spawn(move || {
                    let conn = file.open();
                    let st = SqliteDictionary::new("main")
                        .unwrap()
                        .statements(Placeholders::Numbered);
                    let mut seen = Vec::new();
                    let mut x = 0x9e37_79b9_u64 + t as u64;
                    for batch in 0..BATCHES {
                        let values: Vec<String> = (0..15)
                            .map(|_| {
                                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                                format!("w{}", (x >> 33) % POOL)
                            })
                            .collect();
                        // Every seventh batch of each thread fails before its commit.
                        let fail = batch % 7 == 3;
                        let ids = dict_ids(&conn, &st, "words", &values, fail);
                        seen.extend(values.into_iter().zip(ids));
                    }
                    seen
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    let mut stored: Vec<(String, i64)> = {
        let mut stmt = conn
            .prepare("SELECT value, id FROM shardid_strings ORDER BY id")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let stored_len = stored.len();
    let n = i64::try_from(stored_len).unwrap();
    assert!(n > 100, "only {n} strings");
    let ids: Vec<i64> = stored.iter().map(|(_, id)| *id).collect();
    assert_eq!(ids, (0..n).collect::<Vec<_>>(), "0..n-1, no hole");
    let next: i64 = conn
        .query_row(
            "SELECT next FROM shardid_topics WHERE topic = 'words'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(next, n);
    let by_value: HashMap<String, i64> = stored.drain(..).collect();
    assert_eq!(by_value.len(), stored_len, "one ID per string");
    let mut answered = HashSet::new();
    for (value, id) in answers.into_iter().flatten() {
        assert_eq!(by_value[&value], id, "{value} answered {id}");
        answered.insert(value);
    }
    assert!(answered.len() <= stored_len);

    // A dropped topic reads, and assigns nothing.
    let dropped = conn
        .query_row(&st.drop_topic().to_string(), ["words"], |r| {
            r.get::<_, i64>(0)
        })
        .optional()
        .unwrap();
    assert!(dropped.is_some());
    let state: bool = conn
        .query_row(&st.state().to_string(), ["words"], |r| r.get(0))
        .unwrap();
    assert!(state);
    conn.execute_batch(BEGIN_IMMEDIATE).unwrap();
    let locked = row3(
        &conn,
        &st.lock().to_string(),
        vec![Sql::Text("words".into())],
    );
    conn.execute_batch(ROLLBACK).unwrap();
    assert_eq!(
        locked.map(|(_, _, dropped)| dropped),
        Some(1),
        "the writer sees it dropped"
    );
    let (value, id) = by_value.iter().next().unwrap();
    let known = dict_ids(&conn, &st, "words", core::slice::from_ref(value), false);
    assert_eq!(known, [*id], "its strings still read");
    let unknown = conn
        .query_row(&st.drop_topic().to_string(), ["nope"], |r| {
            r.get::<_, i64>(0)
        })
        .optional()
        .unwrap();
    assert!(unknown.is_none());
    conn.execute_batch(&ddl.uninstall().to_string()).unwrap();
}

fn run(conn: &Connection, (sql, params): (String, Vec<Value<'_>>)) -> Option<(i64, i64)> {
    let params: Vec<Sql> = params
        .into_iter()
        .map(|v| match v {
            Value::Text(t) => Sql::Text(t.into()),
            Value::Int(n) => Sql::Integer(i64::try_from(n).unwrap()),
        })
        .collect();
    let columns = conn.prepare(&sql).unwrap().column_count();
    conn.query_row(&sql, params_from_iter(params), |r| {
        Ok((r.get(0)?, if columns > 1 { r.get(1)? } else { 0 }))
    })
    .optional()
    .unwrap()
}

#[test]
#[allow(clippy::many_single_char_names)] // the claimants, a to f
fn a_lease_taken_is_refused_to_another_until_it_expires() {
    for placeholders in [Placeholders::Question, Placeholders::Numbered] {
        let file = File::new("lease");
        let a_conn = file.open();
        let b_conn = file.open();
        let layout = Layout::TWITTER;
        let lease = |first, end, token: &str| {
            SqliteLease::new(
                layout,
                "shardid_leases",
                placeholders,
                first,
                end,
                "host 1",
                token,
            )
            .unwrap()
            .ttl(MIN_TTL_MS)
            .unwrap()
        };
        let a = lease(0, 1, "token-a");
        let b = lease(0, 1, "token-b");
        a_conn.execute_batch(&a.create_table()).unwrap();
        b_conn.execute_batch(&b.create_table()).unwrap();

        assert_eq!(run(&a_conn, a.claim(0, 0)), Some((0, 0)));
        assert_eq!(run(&b_conn, b.claim(0, 0)), None, "held");
        assert!(run(&a_conn, a.record(0, 77)).is_some());
        assert_eq!(run(&b_conn, b.claim(0, 0)), None, "renewed: still held");
        thread::sleep(Duration::from_millis(MIN_TTL_MS + 100));
        // Expired by the database's clock: B takes it over, above A's ceiling.
        assert_eq!(run(&b_conn, b.claim(0, 0)), Some((0, 77)));
        assert_eq!(run(&a_conn, a.renew(0)), None, "A was taken over");
        assert_eq!(run(&a_conn, a.record(0, 99)), None);
        assert_eq!(run(&a_conn, a.release(0)), None);
        assert!(run(&b_conn, b.renew(0)).is_some());
        // Released: free at once.
        assert!(run(&b_conn, b.release(0)).is_some());
        assert_eq!(run(&a_conn, a.claim(0, 0)), Some((0, 77)));

        // A range: each claimant its own shard, the first free; none left after.
        let c = lease(0, 3, "token-c");
        let d = lease(0, 3, "token-d");
        let e = lease(0, 3, "token-e");
        assert_eq!(run(&b_conn, c.claim(0, 0)).map(|r| r.0), Some(1));
        assert_eq!(run(&b_conn, d.claim(0, 0)).map(|r| r.0), Some(2));
        assert_eq!(run(&b_conn, e.claim(0, 0)), None);
        assert!(run(&b_conn, c.release(1)).is_some());
        assert_eq!(run(&b_conn, e.claim(0, 0)).map(|r| r.0), Some(1));
        // Another layout's rows are another table's, in effect.
        let other = SqliteLease::new(
            Layout::SONYFLAKE,
            "shardid_leases",
            placeholders,
            0,
            1,
            "host 2",
            "token-f",
        )
        .unwrap();
        assert_eq!(run(&b_conn, other.claim(0, 0)), Some((0, 0)));
        assert!(a.clone().ttl(MIN_TTL_MS - 1).is_err());
    }
}

/// Runs a lease protocol's steps on `conn` as a driver does, to the shard it takes and the
/// ceiling it starts above.
fn take_lease(conn: &Connection, p: &mut crate::sql::LeaseProtocol) -> (u64, Option<u64>) {
    use crate::sql::{Answer, Cell, Next};
    loop {
        let (sql, params) = match p.next() {
            Next::Run { sql, params } => (
                sql,
                params
                    .into_iter()
                    .map(|v| match v {
                        Value::Text(t) => Sql::Text(t.into()),
                        Value::Int(n) => Sql::Integer(i64::try_from(n).unwrap()),
                    })
                    .collect::<Vec<_>>(),
            ),
            Next::Taken {
                shard, recorded, ..
            } => return (shard, recorded),
            other => panic!("{other:?}"),
        };
        let answer = conn.prepare(&sql).and_then(|mut st| {
            let n = st.column_count();
            st.query_row(params_from_iter(params), |r| {
                (0..n)
                    .map(|i| r.get::<_, Option<i64>>(i))
                    .collect::<Result<Vec<_>, _>>()
            })
            .optional()
        });
        match answer {
            Ok(Some(row)) => {
                let cells: Vec<Cell<'_>> = row
                    .iter()
                    .map(|c| c.map_or(Cell::Null, Cell::Int))
                    .collect();
                p.feed(Answer::Row(&cells));
            }
            Ok(None) => p.feed(Answer::NoRow),
            Err(_) => p.feed(Answer::Error(Some("1"))),
        }
    }
}

/// Issue 54's lease row on SQLite, through the core's steps: a copy taken before the lease
/// table existed, and one with the table but without shard 0's row, each put back after a
/// holder of shard 0 recorded a ceiling 2 s ahead and marked restored: the next holder starts
/// past the database's clock plus the failover rule's skew (above that ceiling), where it
/// started from the copy's 0. A file never restored starts at 0, and a row taken after the mark
/// is its own again.
#[test]
fn a_lease_row_the_copy_lacks_starts_past_the_lost_ceiling_once_marked() {
    use crate::sql::{Dialect, LeaseKind, LeaseProtocol};
    let layout = Layout::SONYFLAKE;
    let lease = |first: u64, token: &str| {
        LeaseProtocol::new(
            LeaseKind::Expiring { ttl_ms: MIN_TTL_MS },
            layout,
            "shardid_leases",
            Placeholders::Numbered,
            first,
            first + 1,
            "host 1",
            token,
        )
        .unwrap()
        .dialect(Dialect::Sqlite)
        .unwrap()
    };
    let units = |ms: u64| (ms - layout.epoch_ms()) / layout.unit_ms();
    for table_in_copy in [false, true] {
        let file = File::new("lease-restored");
        let backup = File::new("lease-restored-backup");
        let conn = file.open();
        if table_in_copy {
            let mut other = lease(1, "other");
            assert_eq!(
                take_lease(&conn, &mut other),
                (1, None),
                "never restored: from 0"
            );
        } else {
            conn.execute_batch("CREATE TABLE app (x INTEGER)").unwrap();
        }
        conn.execute("VACUUM INTO ?1", [backup.0.to_str().unwrap()])
            .unwrap();
        let mut lost = lease(0, "lost");
        assert_eq!(
            take_lease(&conn, &mut lost),
            (0, None),
            "never restored: from 0"
        );
        let lost_ceiling = units(crate::clock::now_ms() + 2_000);
        assert!(run(&conn, lost.record(0, lost_ceiling)).is_some());
        drop(conn);
        file.remove();
        std::fs::copy(&backup.0, &file.0).unwrap();
        let conn = file.open();
        mark_restored_as_the_cli_does(&conn);
        let before = units(crate::clock::now_ms() + crate::sql::failover::SKEW_MS);
        let mut next = lease(0, "next");
        let (shard, recorded) = take_lease(&conn, &mut next);
        let recorded = recorded.expect("the copy lacks the row: a ceiling past the lost one");
        assert_eq!(shard, 0);
        assert!(
            recorded > lost_ceiling && recorded >= before,
            "table in copy {table_in_copy}: {recorded} vs the lost {lost_ceiling}"
        );
        // Taken since the mark: its own ceiling again, no second jump.
        assert!(run(&conn, next.release(0)).is_some());
        let mut again = lease(0, "again");
        assert_eq!(take_lease(&conn, &mut again), (0, Some(recorded)));
    }
}

/// A driver's take of a serial period, in the order `serials.rs` gives.
fn take_serial(
    conn: &Connection,
    ddl: &SqliteSegments<'_>,
    tag: &str,
    period: &str,
    size: u64,
) -> Result<crate::segment::Segment, TakeError> {
    let st = ddl.statements(Placeholders::Numbered);
    let serials = ddl.serial_statements(Placeholders::Numbered);
    let period_tag = period_tag(tag, period).to_string();
    let mut created = false;
    loop {
        let params = vec![
            Sql::Integer(i64::try_from(size).unwrap()),
            Sql::Text(period_tag.clone()),
        ];
        if let Some(row) = row3(conn, &st.take().to_string(), params) {
            return took(row);
        }
        if let Some(row) = row3(
            conn,
            &st.read().to_string(),
            vec![Sql::Text(period_tag.clone())],
        ) {
            read(size, Some(row))?;
            continue;
        }
        let reset: Option<String> = conn
            .query_row(&serials.info().to_string(), [tag], |r| r.get(3))
            .optional()
            .unwrap();
        let reset = reset.ok_or(TakeError::UnknownTag)?;
        if !period_fits(&reset, period) || created {
            return Err(TakeError::InvalidSize); // the test's stand-in for INVALID_ARGUMENT
        }
        conn.query_row(
            &st.create_tag().to_string(),
            params_from_iter([Sql::Text(period_tag.clone()), Sql::Integer(1)]),
            |r| r.get::<_, String>(0),
        )
        .optional()
        .unwrap();
        created = true;
    }
}

#[test]
fn serials_register_once_and_take_each_period_from_one() {
    let file = File::new("serials");
    let conn = file.open();
    let ddl = SqliteSegments::new("main").unwrap();
    conn.execute_batch(&ddl.to_string()).unwrap();
    let serials = ddl.serial_statements(Placeholders::Question);
    let register = |tag: &str, shape: &str| {
        register_serial(&conn, &serials, tag, "ORD", "Asia/Shanghai", shape)
    };
    let shape = "ORD-{yyyy}{MM}{dd}-{seq:6}";
    assert_eq!(
        register("orders", shape).unwrap().as_deref(),
        Some("orders")
    );
    assert_eq!(
        register("orders", shape).unwrap(),
        None,
        "registered before"
    );
    let error = register("invoices", shape).unwrap_err().to_string();
    assert!(
        error.contains("UNIQUE constraint failed: shardid_serials.shape"),
        "{error}"
    );
    assert!(register("a@b", "other").is_err(), "no @ in a serial tag");
    let (canonical, zone, max_gap, reset): (String, String, i64, String) = conn
        .query_row(&serials.info().to_string(), ["orders"], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .unwrap();
    assert_eq!(
        (canonical.as_str(), zone.as_str(), max_gap, reset.as_str()),
        ("ORD-{yyyy}{MM}{dd}-{seq:6:day}", "Asia/Shanghai", 1, "day")
    );
    let stored: String = conn
        .query_row(
            "SELECT pieces FROM shardid_serials WHERE tag = 'orders'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored, r#"["LORD-","yyyy","MM","dd","L-","seq"]"#);

    let seg = take_serial(&conn, &ddl, "orders", "2026-11-25", 10).unwrap();
    assert_eq!((seg.first, seg.count), (1, 10));
    let seg = take_serial(&conn, &ddl, "orders", "2026-11-25", 10).unwrap();
    assert_eq!(seg.first, 11);
    let seg = take_serial(&conn, &ddl, "orders", "2026-11-26", 5).unwrap();
    assert_eq!(seg.first, 1, "a new period starts from 1");
    assert_eq!(
        take_serial(&conn, &ddl, "refunds", "2026-11-25", 5),
        Err(TakeError::UnknownTag)
    );
    assert_eq!(
        take_serial(&conn, &ddl, "orders", "2026-11", 5),
        Err(TakeError::InvalidSize),
        "not a day"
    );
    assert!(period_fits("never", "") && period_fits("year", "2026"));
    assert!(!period_fits("month", "2026-1x") && !period_fits("weekly", ""));
    assert_eq!(period_tag("orders", "").to_string(), "orders");
    conn.execute_batch(&ddl.uninstall().to_string()).unwrap();
}

#[test]
fn concurrent_takes_on_one_wal_file_hand_out_every_number_once() {
    const THREADS: usize = 4;
    const TAKES: usize = 150;
    let file = File::new("takes");
    let conn = file.open();
    let ddl = SqliteSegments::new("main").unwrap();
    conn.execute_batch(&ddl.to_string()).unwrap();
    conn.query_row(
        &ddl.statements(Placeholders::Question)
            .create_tag()
            .to_string(),
        params_from_iter([Sql::Text("t".into()), Sql::Integer(1)]),
        |r| r.get::<_, String>(0),
    )
    .unwrap();
    let segments: Vec<crate::segment::Segment> = thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let file = &file;
                scope.spawn(move || {
                    let conn = file.open();
                    let st = SqliteSegments::new("main")
                        .unwrap()
                        .statements(Placeholders::Numbered);
                    (0..TAKES)
                        .map(|i| take(&conn, &st, "t", 1 + ((t + i) % 3) as u64).unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut numbers: Vec<u64> = segments
        .iter()
        .flat_map(|s| (0..s.count).map(move |k| s.first + k * s.stride))
        .collect();
    numbers.sort_unstable();
    let total = numbers.len() as u64;
    assert_eq!(
        numbers,
        (1..=total).collect::<Vec<_>>(),
        "each number once, none skipped"
    );
}

/// Issue 42 on SQLite: a WAL file copied (`VACUUM INTO`, a consistent copy) after some takes,
/// more handed out, the old copy put back and marked restored (`shardid restored`'s
/// statements): no dense ID, serial or dictionary ID is handed out twice, and the skip is
/// bounded by failover.rs's rule.
#[test]
#[allow(clippy::too_many_lines)] // one scenario, read top to bottom
fn a_file_copied_back_and_marked_restored_hands_nothing_out_twice() {
    let file = File::new("restored");
    let backup = File::new("restored-backup");
    let segments = SqliteSegments::new("main").unwrap();
    let dictionary = SqliteDictionary::new("main").unwrap();
    let st = segments.statements(Placeholders::Numbered);
    let dst = dictionary.statements(Placeholders::Question);
    let serials = segments.serial_statements(Placeholders::Question);
    let setup = |conn: &Connection| {
        conn.execute_batch(&segments.to_string()).unwrap();
        conn.execute_batch(&dictionary.to_string()).unwrap();
    };
    let strings = |from: usize, to: usize| -> Vec<String> {
        (from..to)
            .map(|i| format!("https://e.test/item/{i}"))
            .collect()
    };
    let day = "2026-11-25";
    let mut dense: Vec<(u64, u64)> = Vec::new();
    let mut serial: Vec<(u64, u64)> = Vec::new();
    let mut named: HashMap<i64, String> = HashMap::new();
    let hand_out = |conn: &Connection,
                    round: usize,
                    dense: &mut Vec<(u64, u64)>,
                    serial: &mut Vec<(u64, u64)>,
                    named: &mut HashMap<i64, String>| {
        for _ in 0..5 {
            let seg = take(conn, &st, "orders", 100).unwrap();
            dense.push((seg.first, seg.first + seg.count));
            let seg = take_serial(conn, &segments, "invoices", day, 1).unwrap();
            serial.push((seg.first, seg.first + seg.count));
        }
        let values = strings(round * 40, round * 40 + 40);
        for (value, id) in values
            .iter()
            .zip(dict_ids(conn, &dst, "urls", &values, false))
        {
            if let Some(old) = named.insert(id, value.clone()) {
                assert_eq!(&old, value, "dictionary ID {id} names a second string");
            }
        }
    };
    {
        let conn = file.open();
        setup(&conn);
        conn.query_row(
            &st.create_tag().to_string(),
            params_from_iter([Sql::Text("orders".into()), Sql::Integer(1)]),
            |r| r.get::<_, String>(0),
        )
        .unwrap();
        register_serial(
            &conn,
            &serials,
            "invoices",
            "INV",
            "UTC",
            "INV-{yyyy}{MM}{dd}-{seq:6}",
        )
        .unwrap();
        conn.query_row(&dst.create_topic().to_string(), ["urls"], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap();
        hand_out(&conn, 0, &mut dense, &mut serial, &mut named);
        conn.execute("VACUUM INTO ?1", [backup.0.to_str().unwrap()])
            .unwrap();
        hand_out(&conn, 1, &mut dense, &mut serial, &mut named);
    }
    let lost_dense = dense.last().unwrap().1 - dense[4].1;
    let lost_serial = serial.last().unwrap().1 - serial[4].1;
    // The old copy back in place of the file (its WAL and shared memory gone with it).
    file.remove();
    std::fs::copy(&backup.0, &file.0).unwrap();
    let conn = file.open();
    setup(&conn);
    conn.execute_batch(&st.mark_restored().to_string()).unwrap();
    conn.execute_batch(&dst.mark_restored().to_string())
        .unwrap();
    // A give_back of the tail of the last segment taken before the copy: the copy's row reads
    // its end, but the lost takes handed out past it, so a marked tag is not given back (as
    // MySQL refuses a row that stepped back), and the mark stays for the take to skip.
    let (old_first, old_end) = dense[4];
    let give_back = |first: u64| {
        row1(
            &conn,
            &st.give_back().to_string(),
            vec![
                Sql::Integer(i64::try_from(first).unwrap()),
                Sql::Integer(i64::try_from(old_end).unwrap()),
                Sql::Text("orders".into()),
            ],
        )
    };
    let next: i64 = conn
        .query_row(
            "SELECT next FROM shardid_tags WHERE tag = 'orders'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        u64::try_from(next).unwrap(),
        old_end,
        "the copy reads the old end"
    );
    assert_eq!(
        give_back(old_first + 50),
        None,
        "given back on a marked tag"
    );
    assert_eq!(give_back(old_first), None);
    let high_dense = dense.last().unwrap().1;
    let high_serial = serial.last().unwrap().1;
    let before = (dense.len(), serial.len());
    hand_out(&conn, 2, &mut dense, &mut serial, &mut named);
    // Marked rows skip once: the second take after the restore follows the first.
    let (new_dense, new_serial) = (&dense[before.0..], &serial[before.1..]);
    assert!(new_dense.windows(2).all(|w| w[1].0 == w[0].1));
    let mut all: Vec<(u64, u64)> = dense.clone();
    all.sort_unstable();
    assert!(
        all.windows(2).all(|w| w[0].1 <= w[1].0),
        "a dense ID handed out twice: {all:?}"
    );
    let mut all: Vec<(u64, u64)> = serial.clone();
    all.sort_unstable();
    assert!(
        all.windows(2).all(|w| w[0].1 <= w[1].0),
        "a serial handed out twice: {all:?}"
    );
    // The skip: at least what was lost, at most the rule's bound (the rate over the current
    // window of 10 takes within a second is at most 1,000 numbers a take's millisecond; the
    // test runs well within 2 s, so MARGIN * rate * (elapsed + SKEW) stays within the bound).
    let skip_dense = new_dense[0].0 - high_dense;
    let skip_serial = new_serial[0].0 - high_serial;
    std::eprintln!(
        "restored: dense lost {lost_dense}, skipped {skip_dense} past them; \
         serials lost {lost_serial}, skipped {skip_serial} past them"
    );
    // The floor (4 segments of twice the last size) and MARGIN times what the rate hands out
    // over SKEW_MS plus the elapsed time; 500 numbers in a window of at least 1 s is at most
    // 500/s, so a run under 10 s skips at most 4 * 500 * 12 + 801 numbers.
    assert!(skip_dense <= 4 * 500 * 12 + 801, "{skip_dense}");
    assert!(skip_serial <= 4 * 5 * 12 + 9, "{skip_serial}");
    // A second mark of a row with no recorded take (a file of an older version) skips by
    // count: LOST_WRITES segments of twice its size.
    conn.execute("DELETE FROM shardid_tag_marks WHERE tag = 'orders'", [])
        .unwrap();
    conn.execute_batch(&st.mark_restored().to_string()).unwrap();
    let end = dense.last().unwrap().1;
    let seg = take(&conn, &st, "orders", 100).unwrap();
    assert_eq!(seg.first - end, 10_485 * 2 * 1_000);
}

/// Runs `shardid restored`'s statements on `conn` as a binding does (every cell read as text).
fn mark_restored_as_the_cli_does(conn: &Connection) -> (usize, usize) {
    let reader = crate::sql::status::StatusReader::new(
        crate::sql::Dialect::Sqlite,
        "shardid_leases",
        "main",
        "main",
        Layout::INSTAGRAM,
    )
    .unwrap()
    .marking_restored();
    run_status(conn, reader)
}

/// Runs a status reader's statements on `conn` as a binding does; what it marked restored.
fn run_status(conn: &Connection, mut reader: crate::sql::status::StatusReader) -> (usize, usize) {
    while let Some(sql) = reader.next() {
        let mut statement = conn.prepare(&sql).unwrap();
        let n = statement.column_count();
        let rows: Vec<Vec<Option<String>>> = statement
            .query_map([], |r| {
                (0..n).map(|i| r.get::<_, Option<String>>(i)).collect()
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        reader.feed(&rows).unwrap();
    }
    reader.report().restored.unwrap()
}

/// Issue 54 on SQLite: a tag, a serial period and a topic created after the copy (so absent
/// from it) and created again after it is put back and marked restored start past what the
/// lost state could have handed out from them (the file's fence, set from the rate of the
/// tags and topics the copy remembers), also when a take of a marked tag came first; a period
/// that began after the fence was set starts from 1.
#[test]
#[allow(clippy::too_many_lines)] // one scenario, read top to bottom
fn what_was_created_after_the_copy_starts_past_it_when_created_again() {
    let file = File::new("created-after");
    let backup = File::new("created-after-backup");
    let segments = SqliteSegments::new("main").unwrap();
    let dictionary = SqliteDictionary::new("main").unwrap();
    let st = segments.statements(Placeholders::Numbered);
    let dst = dictionary.statements(Placeholders::Question);
    let serials = segments.serial_statements(Placeholders::Question);
    let create_tag = |conn: &Connection, tag: &str| {
        conn.query_row(
            &st.create_tag().to_string(),
            params_from_iter([Sql::Text(tag.into()), Sql::Integer(1)]),
            |r| r.get::<_, String>(0),
        )
        .unwrap();
    };
    let create_topic = |conn: &Connection, topic: &str| {
        conn.query_row(&dst.create_topic().to_string(), [topic], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap();
    };
    let strings =
        |prefix: &str| -> Vec<String> { (0..30).map(|i| format!("{prefix}{i}")).collect() };
    // Two days of the past: the second one's period began before any fence is set.
    let (day1, day2) = ("2026-11-25", "2026-11-26");
    let (lost_dense, lost_serials, lost_ids);
    {
        let conn = file.open();
        conn.execute_batch(&segments.to_string()).unwrap();
        conn.execute_batch(&dictionary.to_string()).unwrap();
        create_tag(&conn, "orders");
        register_serial(
            &conn,
            &serials,
            "invoices",
            "INV",
            "UTC",
            "INV-{yyyy}{MM}{dd}-{seq:6}",
        )
        .unwrap();
        create_topic(&conn, "urls");
        for _ in 0..5 {
            take(&conn, &st, "orders", 100).unwrap();
            take_serial(&conn, &segments, "invoices", day1, 10).unwrap();
        }
        dict_ids(&conn, &dst, "urls", &strings("u"), false);
        conn.execute("VACUUM INTO ?1", [backup.0.to_str().unwrap()])
            .unwrap();
        // After the copy: the next day's serials, a new tag and a new topic.
        lost_serials = (0..3)
            .map(|_| take_serial(&conn, &segments, "invoices", day2, 10).unwrap())
            .map(|s| (s.first, s.first + s.count))
            .collect::<Vec<_>>();
        create_tag(&conn, "fresh");
        lost_dense = (0..3)
            .map(|_| take(&conn, &st, "fresh", 100).unwrap())
            .map(|s| (s.first, s.first + s.count))
            .collect::<Vec<_>>();
        create_topic(&conn, "fresh");
        lost_ids = dict_ids(&conn, &dst, "fresh", &strings("x"), false);
        assert_eq!((lost_serials[0].0, lost_dense[0].0, lost_ids[0]), (1, 1, 0));
    }
    file.remove();
    std::fs::copy(&backup.0, &file.0).unwrap();
    let conn = file.open();
    assert_eq!(mark_restored_as_the_cli_does(&conn), (2, 1)); // orders, its day1 period; urls
    // A take of a marked tag first (it clears its own mark; the fence is set from the copy).
    take(&conn, &st, "orders", 100).unwrap();
    let again = take_serial(&conn, &segments, "invoices", day2, 10).unwrap();
    create_tag(&conn, "fresh");
    let dense = take(&conn, &st, "fresh", 100).unwrap();
    create_topic(&conn, "fresh");
    let ids = dict_ids(&conn, &dst, "fresh", &strings("y"), false);
    let past = |first: u64, lost: &[(u64, u64)]| lost.iter().all(|&(_, end)| first >= end);
    assert!(
        past(again.first, &lost_serials),
        "{again:?} {lost_serials:?}"
    );
    assert!(past(dense.first, &lost_dense), "{dense:?} {lost_dense:?}");
    assert!(
        ids.iter().min() > lost_ids.iter().max(),
        "a dictionary ID names a second string: {ids:?} {lost_ids:?}"
    );
    // Bounded by the rule: 500 numbers of a tag within a second (a rate of at most 500/s),
    // MARGIN times that over SKEW_MS and the test's seconds, plus the floor.
    assert!(dense.first <= 4 * 500 * 12 + 801, "{dense:?}");
    // Set once: a period that began after the fence (a day far ahead) starts from 1.
    let later = take_serial(&conn, &segments, "invoices", "2099-01-01", 10).unwrap();
    assert_eq!(later.first, 1);
    std::eprintln!(
        "created again after the copy: serials from {}, dense from {}, IDs from {}",
        again.first,
        dense.first,
        ids[0]
    );
}

/// Issue 54's `shardid restored --after`: the operator's last number of a tag, last serial of a
/// serial (its period absent from the copy) and last ID of a topic win over the rate's bound:
/// each next one starts right past it plus the margin, the rest skip by their rates.
#[test]
#[allow(clippy::too_many_lines)] // one scenario, read top to bottom
fn restored_after_starts_right_past_the_numbers_the_operator_gives() {
    let file = File::new("restored-after");
    let segments = SqliteSegments::new("main").unwrap();
    let dictionary = SqliteDictionary::new("main").unwrap();
    let st = segments.statements(Placeholders::Numbered);
    let dst = dictionary.statements(Placeholders::Question);
    let serials = segments.serial_statements(Placeholders::Question);
    let conn = file.open();
    conn.execute_batch(&segments.to_string()).unwrap();
    conn.execute_batch(&dictionary.to_string()).unwrap();
    for tag in ["orders", "other"] {
        conn.query_row(
            &st.create_tag().to_string(),
            params_from_iter([Sql::Text(tag.into()), Sql::Integer(1)]),
            |r| r.get::<_, String>(0),
        )
        .unwrap();
    }
    register_serial(
        &conn,
        &serials,
        "invoices",
        "INV",
        "UTC",
        "INV-{yyyy}{MM}{dd}-{seq:6}",
    )
    .unwrap();
    conn.query_row(&dst.create_topic().to_string(), ["urls"], |r| {
        r.get::<_, i64>(0)
    })
    .unwrap();
    for _ in 0..5 {
        take(&conn, &st, "orders", 100).unwrap();
        take(&conn, &st, "other", 100).unwrap();
    }
    take_serial(&conn, &segments, "invoices", "2026-11-25", 10).unwrap();
    let reader = crate::sql::status::StatusReader::new(
        crate::sql::Dialect::Sqlite,
        "shardid_leases",
        "main",
        "main",
        Layout::INSTAGRAM,
    )
    .unwrap()
    .marking_restored()
    .after("orders", "52311", false)
    .unwrap()
    .after("invoices", "INV-20261126-000010", false)
    .unwrap()
    .after("urls", "812", true)
    .unwrap()
    .after_margin(5);
    assert_eq!(run_status(&conn, reader), (4, 1)); // with the period made by --after
    assert_eq!(
        take(&conn, &st, "orders", 100).unwrap().first,
        52_311 + 5 + 1
    );
    // A period the copy lacks, made right past the serial given.
    assert_eq!(
        take_serial(&conn, &segments, "invoices", "2026-11-26", 10)
            .unwrap()
            .first,
        10 + 5 + 1
    );
    let ids = dict_ids(&conn, &dst, "urls", &["new".to_string()], false);
    assert_eq!(ids, [812 + 5 + 1]);
    // Without --after, the bound: past the 500 numbers taken, by the rate.
    assert!(take(&conn, &st, "other", 100).unwrap().first > 501 + 4 * 2 * 100);
    // Refused: a value that is neither, a serial of another format.
    let reader = || {
        crate::sql::status::StatusReader::new(
            crate::sql::Dialect::Sqlite,
            "shardid_leases",
            "main",
            "main",
            Layout::INSTAGRAM,
        )
        .unwrap()
        .marking_restored()
    };
    assert!(reader().after("urls", "x1", true).is_err());
    assert!(reader().after("orders", "", false).is_err());
    let mut bad = reader()
        .after("invoices", "ORD-20261126-000010", false)
        .unwrap();
    let mut failed = None;
    while let Some(sql) = bad.next() {
        let mut statement = conn.prepare(&sql).unwrap();
        let n = statement.column_count();
        let rows: Vec<Vec<Option<String>>> = statement
            .query_map([], |r| {
                (0..n).map(|i| r.get::<_, Option<String>>(i)).collect()
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        if let Err(e) = bad.feed(&rows) {
            failed = Some(e);
            break;
        }
    }
    assert!(
        failed.is_some_and(|e| e.contains("not a serial of")),
        "refused"
    );
}
