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
use std::io::Write;
use std::time::{Duration, Instant};

use shardid::Layout;
use shardid::lease::mysql::{LeaseOptions, MysqlLease};
use shardid::sql::LeaseKind;

fn code<T>(result: Result<T, shardid::lease::LeaseError>) -> String {
    result.map_or_else(|e| e.kind().code().to_string(), |_| "no error".into())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (url, mode) = (&args[1], args[2].as_str());
    match mode {
        "probe" => probe(url, &args[3..])?,
        "hold" => {
            let (table, out) = (&args[3], &args[4]);
            let ttl_ms: u64 = args[5].parse()?;
            let lease = MysqlLease::acquire(
                url,
                Layout::TWITTER,
                0..1,
                &LeaseOptions::new()
                    .table(table)
                    .kind(LeaseKind::Expiring { ttl_ms }),
            )?;
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(out)?;
            let mut ids = [0u64; 1000];
            loop {
                match lease.next_ids(&mut ids) {
                    Ok(()) => {
                        let bytes: Vec<u8> = ids.iter().flat_map(|id| id.to_le_bytes()).collect();
                        file.write_all(&bytes)?;
                    }
                    Err(e) if e.kind() == shardid::ErrorKind::LeaseLost => {
                        std::fs::write(format!("{out}.lost"), e.to_string())?;
                        break;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
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
    let start = Instant::now();
    let mut bytes = Vec::with_capacity(8 * (count + 1));
    for i in 0..count {
        bytes.extend_from_slice(&lease.next_id()?.to_le_bytes());
        if i % 1000 == 999 {
            #[allow(clippy::cast_precision_loss)]
            let due = Duration::from_secs_f64(seconds * i as f64 / count as f64);
            if let Some(wait) = due.checked_sub(start.elapsed()) {
                std::thread::sleep(wait);
            }
        }
    }
    bytes.extend_from_slice(&lease.shard().to_le_bytes());
    std::fs::write(out, bytes)?;
    lease.close();
    println!("{{\"shard\": {}}}", lease.shard());
    Ok(())
}
