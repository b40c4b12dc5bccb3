//! The Rust client of shard leases in MySQL and MariaDB (`shardid::lease::mysql`), driven by
//! `tests/mysql/test_lease.py` against its throwaway server (and Galera cluster):
//! `mysql_lease <url> <mode> [args]`; prints one JSON line.
//!   probe <table> <out> <seconds> <count> <first> <end> [session]: leases from first..end,
//!            makes <count> IDs over <seconds>, writes them and the shard (8 bytes each,
//!            little endian) to <out>.
//!   hold <table> <out> <ttl>: leases shard 0 of 0..1 and appends IDs to <out> until its lease
//!            is lost (it then writes <out>.lost and exits), or it is killed.
//!   bad:     the codes of a bad table, an empty range, a range past the layout's shards, a bad
//!            URL.
//!   session <table>: the code of a session lease (UNSUPPORTED on a Galera node).
use shardid::Layout;
use shardid::lease::mysql::{LeaseOptions, MysqlLease};
use shardid::sql::LeaseKind;

/// The lease the shared modes take.
type Lease = MysqlLease;

#[path = "common/lease.rs"]
mod common;
use common::code;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (url, mode) = (&args[1], args[2].as_str());
    match mode {
        "probe" => probe(url, &args[3..])?,
        "hold" => common::hold(url, &args[3..])?,
        "bad" => {
            let options = LeaseOptions::new();
            let table = code(MysqlLease::acquire(
                url,
                Layout::TWITTER,
                0..1,
                &LeaseOptions::new().table("Bad; DROP"),
            ));
            let empty = code(MysqlLease::acquire(url, Layout::TWITTER, 3..3, &options));
            let past = code(MysqlLease::acquire(url, Layout::TWITTER, 0..1025, &options));
            let url = code(MysqlLease::acquire(
                "mysql://root@[::1/db",
                Layout::TWITTER,
                0..1,
                &options,
            ));
            println!(
                "{{\"table\": \"{table}\", \"empty\": \"{empty}\", \"past\": \"{past}\", \"url\": \"{url}\"}}"
            );
        }
        "session" => {
            let result = MysqlLease::acquire(
                url,
                Layout::TWITTER,
                0..4,
                &LeaseOptions::new().table(&args[3]).kind(LeaseKind::Session),
            );
            let message = result
                .as_ref()
                .map_or_else(ToString::to_string, |_| String::new());
            println!(
                "{{\"code\": \"{}\", \"message\": {message:?}}}",
                code(result)
            );
        }
        other => return Err(format!("unknown mode {other}").into()),
    }
    Ok(())
}

/// The `probe` mode: `<table> <out> <seconds> <count> <first> <end> [session]`.
fn probe(url: &str, args: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let (table, out) = (&args[0], &args[1]);
    let seconds: f64 = args[2].parse()?;
    let count: usize = args[3].parse()?;
    let (first, end): (u64, u64) = (args[4].parse()?, args[5].parse()?);
    let kind = if args.get(6).map(String::as_str) == Some("session") {
        LeaseKind::Session
    } else {
        LeaseKind::DEFAULT
    };
    let lease = MysqlLease::acquire(
        url,
        Layout::INSTAGRAM,
        first..end,
        &LeaseOptions::new().table(table).kind(kind),
    )?;
    common::probe(&lease, out, seconds, count)?;
    Ok(())
}
