//! The Rust client of shard leases in PostgreSQL (`shardid::lease::postgres`), driven by
//! `tests/postgres/test_lease_pooled.py` against its throwaway server and `PgBouncer`:
//! `lease <connection string> <mode> [args]`; prints one JSON line.
//!   probe <table> <out> <seconds> <count>: the 4-process probe: leases from 0..4, makes
//!            <count> IDs over <seconds>, writes them and the shard (8 bytes each, little
//!            endian) to <out>.
//!   takenover: another holder's claim changes the row's token: IDs continue within the
//!            recorded ceiling, then `LEASE_LOST` for good.
//!   hold <table> <out> <ttl>: leases shard 0 of 0..1 and appends IDs to <out> until its lease
//!            is lost (it then writes <out>.lost and exits), or it is killed.
//!   stats <table>: leases shard 0 of 0..1 with a time to live of 600 ms, makes IDs for 0.6 s,
//!            idles 0.7 s, closes, and prints `stats()` in the table's order
//!            (`tests/postgres/test_lease_stats.py` compares them with the server's log).
//!   bad:     the codes of a bad table, an empty range, a bad time to live.
//!   take <table> [schema]: leases shard 0 of 0..1 of <table> (in <schema>), closes it, and
//!            prints the error's code (`no error`) and message (`tests/postgres/test_lease_owner.py`,
//!            `test_lease_skew.py`).
use std::time::{Duration, Instant};

use shardid::Layout;
use shardid::lease::postgres::{LeaseOptions, PostgresLease};
use shardid::sql::LeaseKind;

/// The lease the shared modes take.
type Lease = PostgresLease;

#[path = "common/lease.rs"]
mod common;
use common::code;

const T0: u64 = 1_700_000_000_000;

/// `stats <table>`: see the module's docs.
fn stats(config: &str, table: &str) -> Result<(), Box<dyn std::error::Error>> {
    let options = LeaseOptions::new()
        .table(table)
        .kind(LeaseKind::Expiring { ttl_ms: 600 });
    let lease = PostgresLease::acquire(config, Layout::TWITTER, 0..1, &options)?;
    let end = Instant::now() + Duration::from_millis(600);
    let mut batch = [0u64; 100];
    while Instant::now() < end {
        lease.next_ids(&mut batch)?;
    }
    std::thread::sleep(Duration::from_millis(700));
    lease.close();
    println!("{:?}", lease.stats().values());
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (config, mode) = (&args[1], args[2].as_str());
    match mode {
        "probe" => {
            let (table, out) = (&args[3], &args[4]);
            let seconds: f64 = args[5].parse()?;
            let count: usize = args[6].parse()?;
            let lease = PostgresLease::acquire(
                config,
                Layout::INSTAGRAM,
                0..4,
                &LeaseOptions::new().table(table),
            )?;
            common::probe(&lease, out, seconds, count)?;
        }
        "stats" => stats(config, &args[3])?,
        "takenover" => {
            let lease = PostgresLease::acquire(
                config,
                Layout::TWITTER,
                0..1,
                &LeaseOptions::new().table("rust_taken_over"),
            )?;
            lease.next_id_at(T0)?;
            let mut admin = postgres::Client::connect(config, postgres::NoTls)?;
            admin.simple_query("UPDATE rust_taken_over SET token = 'someone else'")?;
            let within = code(lease.next_id_at(T0 + 50));
            let past = code(lease.next_id_at(T0 + 1000));
            let again = code(lease.next_id_at(T0 + 10));
            println!(
                "{{\"within\": \"{within}\", \"past\": \"{past}\", \"again\": \"{again}\", \"held\": {}}}",
                lease.is_held()
            );
        }
        "hold" => common::hold(config, &args[3..])?,
        "take" => {
            let mut options = LeaseOptions::new().table(&args[3]);
            if let Some(schema) = args.get(4) {
                options = options.schema(schema);
            }
            let taken = PostgresLease::acquire(config, Layout::TWITTER, 0..1, &options);
            let message = taken.as_ref().err().map(ToString::to_string);
            if let Ok(lease) = &taken {
                lease.next_id()?;
                lease.close();
            }
            println!(
                "{{\"code\": \"{}\", \"message\": {:?}}}",
                code(taken),
                message.unwrap_or_default()
            );
        }
        "bad" => {
            let table = code(PostgresLease::acquire(
                config,
                Layout::TWITTER,
                0..1,
                &LeaseOptions::new().table("Bad; DROP"),
            ));
            let empty = code(PostgresLease::acquire(
                config,
                Layout::TWITTER,
                3..3,
                &LeaseOptions::new(),
            ));
            let ttl =
                LeaseKind::parse("expiring", 5).map_or_else(|e| e.to_string(), |_| "ok".into());
            println!("{{\"table\": \"{table}\", \"empty\": \"{empty}\", \"ttl\": \"{ttl}\"}}");
        }
        other => return Err(format!("unknown mode {other}").into()),
    }
    Ok(())
}
