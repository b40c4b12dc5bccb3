//! Rust's side of the behaviour contract on every database (`tests/postgres/test_contract.py`,
//! issue 41): one process per (database, system) group that makes every call of the group and
//! prints one JSON line, as `tests/postgres/contract_node.mjs` does for Node:
//!
//! ```sh
//! contract DATABASE SYSTEM URL SCHEMA [CASE=DOWN_URL ...]
//! ```
//!
//! `DATABASE`: `postgres`, `pgbouncer-tx`, `mariadb` or `sqlite`; `SYSTEM`: `dense` (tag `d`),
//! `serials` (tag `c`), `dictionary` (topic `t`) or `lease`. Prints `{"down": {CASE: outcome},
//! "closed": outcome, "unknown": outcome, "stats": {...}}`, an outcome being `{"code",
//! "message", "ms"}` of the error or `{"ok": true}`.

use std::fmt::Display;
use std::fmt::Write as _;
use std::time::Instant;

use shardid::Layout;
use shardid::segment::SizePolicy;
use shardid::stats::{Family, collect};

const FORMAT: &str = "C-{yyyy}{MM}{dd}-{seq:6}";

/// The code of an error as the other clients report it.
trait Code: Display {
    fn code(&self) -> &'static str;
}

impl Code for shardid::segment::postgres::SegmentError {
    fn code(&self) -> &'static str {
        self.kind().code()
    }
}

impl Code for shardid::serial::postgres::SerialsError {
    fn code(&self) -> &'static str {
        self.kind().code()
    }
}

impl Code for shardid::dictionary::postgres::DictionaryError {
    fn code(&self) -> &'static str {
        // A database error has no kind of the shared table: the driver's own.
        self.kind().map_or("DATABASE", shardid::ErrorKind::code)
    }
}

impl Code for shardid::lease::LeaseError {
    fn code(&self) -> &'static str {
        self.kind().code()
    }
}

/// `{"code", "message", "ms"}` of what `call` failed with, or `{"ok": true}`.
fn outcome<T, E: Code>(call: impl FnOnce() -> Result<T, E>) -> String {
    let started = Instant::now();
    match call() {
        Ok(_) => r#"{"ok": true}"#.to_string(),
        Err(e) => format!(
            r#"{{"code": "{}", "message": {:?}, "ms": {}}}"#,
            e.code(),
            e.to_string(),
            started.elapsed().as_millis()
        ),
    }
}

/// `{"case": outcome, ...}` of `call` on every down URL.
fn each(down: &[(String, String)], mut call: impl FnMut(&str) -> String) -> String {
    let mut out = String::from("{");
    for (i, (case, url)) in down.iter().enumerate() {
        let sep = if i == 0 { "" } else { ", " };
        write!(out, "{sep}{case:?}: {}", call(url)).unwrap();
    }
    out.push('}');
    out
}

/// `shardid_ids_total` of (layout, shard) in this process's live figures.
fn generator_ids(layout: &str, shard: u64) -> u64 {
    let shard = shard.to_string();
    collect()
        .into_iter()
        .filter(|s| s.family == Family::Generator && s.labels[0] == layout && s.labels[1] == shard)
        .map(|s| s.values[0])
        .sum()
}

/// The group's calls on one database's modules (`postgres`, `mysql` or `sqlite`): the same
/// code for each, as the clients are the same driver over each database.
macro_rules! groups {
    ($module:ident, $lease:ident) => {
        mod $module {
            use super::*;
            use shardid::dictionary::$module::Dictionary;
            use shardid::lease::$module::{$lease as Lease, LeaseOptions};
            use shardid::segment::$module::DenseIds;
            use shardid::serial::$module::{Serials, create_serial};

            pub fn dense(url: &str, schema: &str, down: &[(String, String)]) -> String {
                let policy = SizePolicy::new();
                let mut cases = Vec::new();
                for (case, u) in down {
                    cases.push((case.clone(), outcome(|| DenseIds::connect(u, "d", schema, policy)?.next_id())));
                    // `create_tag` of any URL: the core's rule picks this database's.
                    cases.push((format!("{case}-create"), outcome(|| shardid::segment::create_tag(u, "d", schema))));
                }
                let down = format!(
                    "{{{}}}",
                    cases.iter().map(|(c, o)| format!("{c:?}: {o}")).collect::<Vec<_>>().join(", ")
                );
                // Created by the test's Python on the other databases; again does nothing.
                shardid::segment::create_tag(url, "d", schema).expect("tag d created");
                let ids = DenseIds::connect(url, "d", schema, policy).expect("dense IDs");
                let mut five = [0; 5];
                ids.next_ids(&mut five).expect("5 IDs");
                let stats = ids.stats();
                ids.close();
                let closed = outcome(|| ids.next_id());
                let unknown = outcome(|| DenseIds::connect(url, "never_created", schema, policy)?.next_id());
                format!(
                    r#"{{"down": {down}, "closed": {closed}, "unknown": {unknown}, "stats": {{"fetches": {}, "remaining": {}}}}}"#,
                    stats.fetches, stats.remaining
                )
            }

            pub fn serials(url: &str, schema: &str, down: &[(String, String)]) -> String {
                let policy = SizePolicy::new();
                let mut cases = Vec::new();
                for (case, u) in down {
                    cases.push((case.clone(), outcome(|| Serials::connect(u, "c", FORMAT, "UTC", schema, policy))));
                    cases.push((format!("{case}-create"), outcome(|| create_serial(u, "c", FORMAT, "UTC", schema, 1))));
                }
                let down = format!(
                    "{{{}}}",
                    cases.iter().map(|(c, o)| format!("{c:?}: {o}")).collect::<Vec<_>>().join(", ")
                );
                // Registered by the test's Python on the other databases; again alike does nothing.
                create_serial(url, "c", FORMAT, "UTC", schema, 1).expect("tag c registered");
                let s = Serials::connect(url, "c", FORMAT, "UTC", schema, policy).expect("serials");
                s.next_serial().expect("a serial");
                let stats = s.stats();
                s.close();
                let closed = outcome(|| s.next_serial());
                let unknown = outcome(|| Serials::connect(url, "never_created", FORMAT, "UTC", schema, policy));
                format!(
                    r#"{{"down": {down}, "closed": {closed}, "unknown": {unknown}, "stats": {{"fetches": {}, "remaining": {}}}}}"#,
                    stats.fetches, stats.remaining
                )
            }

            pub fn dictionary(url: &str, schema: &str, down: &[(String, String)]) -> String {
                let down = each(down, |u| outcome(|| Dictionary::connect(&[u], "t", schema, 100)?.id("a")));
                let d = Dictionary::connect(&[url], "t", schema, 100).expect("a dictionary");
                d.ids(&["a", "b"]).expect("ids");
                d.id("a").expect("an id");
                let stats = d.stats();
                // No close(): a dictionary closes when dropped, so nothing can be called after.
                drop(d);
                let unknown = outcome(|| Dictionary::connect(&[url], "never_created", schema, 100)?.id("a"));
                format!(
                    r#"{{"down": {down}, "closed": {{"skipped": "no close()"}}, "unknown": {unknown}, "stats": {{"calls": {}}}}}"#,
                    stats.id_hits + stats.id_misses
                )
            }

            pub fn lease(url: &str, down: &[(String, String)]) -> String {
                let options = LeaseOptions::new().table("contract_rust");
                let down = each(down, |u| outcome(|| Lease::acquire(u, Layout::TWITTER, 0..4, &options)));
                let held = Lease::acquire(url, Layout::SONYFLAKE, 12..16, &options).expect("a lease");
                let before = generator_ids("SONYFLAKE", held.shard());
                for _ in 0..5 {
                    held.next_id().expect("an ID");
                }
                let ids = generator_ids("SONYFLAKE", held.shard()) - before;
                let stats = held.stats();
                held.close();
                let closed = outcome(|| held.next_id());
                format!(
                    r#"{{"down": {down}, "closed": {closed}, "unknown": null, "stats": {{"present": true, "ids": {ids}, "acquisitions": {}}}}}"#,
                    stats.acquisitions
                )
            }
        }
    };
}

/// What every SQLite client (and `create_tag`, `create_serial`) does with `url`, a URL no
/// driver takes: `INVALID_ARGUMENT` before any file is opened.
fn badurl(url: &str) -> String {
    use shardid::lease::sqlite::{LeaseOptions, SqliteLease};
    let policy = SizePolicy::new();
    let calls = [
        (
            "dense",
            outcome(|| shardid::segment::sqlite::DenseIds::connect(url, "d", "main", policy)),
        ),
        (
            "createTag",
            outcome(|| shardid::segment::sqlite::create_tag(url, "d", "main", 1)),
        ),
        (
            "createTagOfAnyUrl",
            outcome(|| shardid::segment::create_tag(url, "d", "main")),
        ),
        (
            "serials",
            outcome(|| {
                shardid::serial::sqlite::Serials::connect(url, "c", FORMAT, "UTC", "main", policy)
            }),
        ),
        (
            "createSerial",
            outcome(|| shardid::serial::sqlite::create_serial(url, "c", FORMAT, "UTC", "main", 1)),
        ),
        (
            "dictionary",
            outcome(|| shardid::dictionary::sqlite::Dictionary::connect(&[url], "t", "main", 100)),
        ),
        (
            "lease",
            outcome(|| SqliteLease::acquire(url, Layout::TWITTER, 0..4, &LeaseOptions::new())),
        ),
    ];
    let inner: Vec<String> = calls
        .iter()
        .map(|(call, o)| format!("{call:?}: {o}"))
        .collect();
    format!("{{{}}}", inner.join(", "))
}

groups!(postgres, PostgresLease);
groups!(mysql, MysqlLease);
groups!(sqlite, SqliteLease);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("badurl") {
        println!("{}", badurl(&args[1]));
        return;
    }
    if args.first().map(String::as_str) == Some("mysql-serials-ddl") {
        print!(
            "{}",
            shardid::sql::mysql::MysqlSerials::new(&args[1]).expect("a schema")
        );
        return;
    }
    let [database, system, url, schema, down @ ..] = args.as_slice() else {
        panic!("contract DATABASE SYSTEM URL SCHEMA [CASE=DOWN_URL ...]");
    };
    let down: Vec<(String, String)> = down
        .iter()
        .map(|d| {
            let (case, url) = d.split_once('=').expect("CASE=URL");
            (case.to_string(), url.to_string())
        })
        .collect();
    let out = match (database.as_str(), system.as_str()) {
        ("postgres" | "pgbouncer-tx", "dense") => postgres::dense(url, schema, &down),
        ("postgres" | "pgbouncer-tx", "serials") => postgres::serials(url, schema, &down),
        ("postgres" | "pgbouncer-tx", "dictionary") => postgres::dictionary(url, schema, &down),
        ("postgres" | "pgbouncer-tx", "lease") => postgres::lease(url, &down),
        ("mariadb", "dense") => mysql::dense(url, schema, &down),
        ("mariadb", "serials") => mysql::serials(url, schema, &down),
        ("mariadb", "dictionary") => mysql::dictionary(url, schema, &down),
        ("mariadb", "lease") => mysql::lease(url, &down),
        ("sqlite", "dense") => sqlite::dense(url, schema, &down),
        ("sqlite", "serials") => sqlite::serials(url, schema, &down),
        ("sqlite", "dictionary") => sqlite::dictionary(url, schema, &down),
        ("sqlite", "lease") => sqlite::lease(url, &down),
        other => panic!("unknown group {other:?}"),
    };
    println!("{out}");
}
