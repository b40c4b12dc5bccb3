//! Business serial numbers on MySQL or MariaDB from Rust: `shardid::serial::mysql::Serials`,
//! run by `tests/mysql/test_rust.py` on a throwaway MariaDB.
//!
//!   ddl SCHEMA:         the registrations' DDL (after the segments' DDL of SCHEMA).
//!   run URL SCHEMA:     register, issue from threads across a scripted midnight, the errors;
//!                       prints one JSON line.
//!   take URL SCHEMA TAG FORMAT ZONE THREADS COUNT MS:
//!                       COUNT serials from each of THREADS threads, issued at MS (Unix ms), one a
//!                       line (beside other clients taking from the same tag).

use std::collections::HashSet;
use std::sync::Arc;

use shardid::segment::SizePolicy;
use shardid::serial::mysql::{Serials, SerialsError, create_serial};
use shardid::sql::mysql::MysqlSerials;

const FORMAT: &str = "MS-{yyyy}{MM}{dd}-{seq:6}";
const ZONE: &str = "Asia/Shanghai";
/// 2025-11-25 23:59:59 in Shanghai, and the next day's first second.
const BEFORE_MIDNIGHT: u64 = 1_764_086_399_000;
const AFTER_MIDNIGHT: u64 = BEFORE_MIDNIGHT + 1_000;

fn code<T>(result: Result<T, SerialsError>) -> String {
    result.map_or_else(|e| e.kind().code().to_string(), |_| "no error".into())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    match args[1].as_str() {
        "ddl" => print!("{}", MysqlSerials::new(&args[2])?),
        "run" => run(&args[2], &args[3])?,
        "take" => take(&args[2..])?,
        other => return Err(format!("unknown mode {other}").into()),
    }
    Ok(())
}

fn take(args: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let [url, schema, tag, format, zone, threads, count, at] = args else {
        return Err("take URL SCHEMA TAG FORMAT ZONE THREADS COUNT MS".into());
    };
    let (threads, count, at): (usize, usize, u64) = (threads.parse()?, count.parse()?, at.parse()?);
    // Small segments: many fetches, interleaved with the other clients'.
    let small = SizePolicy::new().bounds(10, 40);
    let serials = Arc::new(Serials::connect(url, tag, format, zone, schema, small)?);
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let serials = Arc::clone(&serials);
            std::thread::spawn(move || -> Result<Vec<String>, SerialsError> {
                (0..count)
                    .map(|_| serials.next_serial_at(at).map(|s| s.as_str().to_string()))
                    .collect()
            })
        })
        .collect();
    let mut got = Vec::new();
    for worker in workers {
        got.extend(worker.join().map_err(|_| "a thread panicked")??);
    }
    serials.close();
    println!("{}", got.join("\n"));
    Ok(())
}

fn run(url: &str, schema: &str) -> Result<(), Box<dyn std::error::Error>> {
    create_serial(url, "ms", FORMAT, ZONE, schema, 1)?;
    let again = code(create_serial(url, "ms", FORMAT, ZONE, schema, 1));
    let other_zone = code(create_serial(url, "ms", FORMAT, "UTC", schema, 1));
    let same_format = code(create_serial(url, "ms2", FORMAT, ZONE, schema, 1));
    let small = SizePolicy::new().bounds(50, 50);
    let serials = Arc::new(Serials::connect(url, "ms", FORMAT, ZONE, schema, small)?);
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let serials = Arc::clone(&serials);
            std::thread::spawn(move || -> Result<Vec<String>, SerialsError> {
                let mut got = Vec::new();
                for _ in 0..250 {
                    got.push(
                        serials
                            .next_serial_at(BEFORE_MIDNIGHT)?
                            .as_str()
                            .to_string(),
                    );
                }
                Ok(got)
            })
        })
        .collect();
    let mut before = Vec::new();
    for thread in threads {
        before.extend(thread.join().map_err(|_| "a thread panicked")??);
    }
    let after: Vec<String> = (0..3)
        .map(|_| {
            serials
                .next_serial_at(AFTER_MIDNIGHT)
                .map(|s| s.as_str().to_string())
        })
        .collect::<Result<_, _>>()?;
    let unique: HashSet<&String> = before.iter().chain(&after).collect();
    let numbers: Vec<u64> = before
        .iter()
        .map(|s| serials.parse(s).map(|p| p.number))
        .collect::<Result<_, _>>()?;
    let max = numbers.iter().max().copied().unwrap_or(0);
    serials.close();
    let closed = code(serials.next_serial());
    // A restart continues after what was handed out (the rest was given back).
    let restarted = Serials::connect(url, "ms", FORMAT, ZONE, schema, small)?;
    let next_day = restarted
        .next_serial_at(AFTER_MIDNIGHT)?
        .as_str()
        .to_string();
    restarted.close();
    let unknown = code(Serials::connect(
        url,
        "never_created",
        FORMAT,
        ZONE,
        schema,
        small,
    ));
    let mismatch = code(Serials::connect(url, "ms", FORMAT, "UTC", schema, small));
    let bad_url = code(Serials::connect(
        "postgresql://h/d",
        "ms",
        FORMAT,
        ZONE,
        schema,
        small,
    ));
    let down = code(Serials::connect(
        "mysql://root@127.0.0.1:1/x",
        "ms",
        FORMAT,
        ZONE,
        schema,
        small,
    ));
    println!(
        "{{\"count\": {}, \"unique\": {}, \"max\": {max}, \"after\": {after:?}, \"next_day\": {next_day:?}, \
         \"codes\": {:?}}}",
        before.len() + after.len(),
        unique.len(),
        [
            again,
            other_zone,
            same_format,
            closed,
            unknown,
            mismatch,
            bad_url,
            down
        ],
    );
    Ok(())
}
