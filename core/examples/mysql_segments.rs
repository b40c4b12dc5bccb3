//! The Rust client of dense IDs from segments on MySQL and MariaDB, driven by
//! `tests/mysql/test_rust.py` against its throwaway server: `mysql_segments <url> <mode>`;
//! prints one JSON line.
//!   order:   IDs from `next_id` / `next_ids` increase and are dense across segments; `close()`
//!            gives the rest back, so a new client continues at the next number.
//!   errors:  the kinds of a tag never created, a bad tag, schema and URL, a server that is down.
//!   threads: 8 threads x 20,000 IDs on one client: no duplicate.
//!   many:    `mysql_segments <url> many <tag> <file> <n>`: n IDs of tag in schema `seg_mixed`,
//!            appended to file as little-endian i64s (for the test's mix of processes).
//!   kind:    the error kind of connecting (a server that is not MySQL).
//!   first <schema> <tag>: the first ID of a new client (segments of 100).
use std::io::Write;

use shardid::segment::SizePolicy;
use shardid::segment::mysql::{DenseIds, SegmentError};

#[path = "common/segments.rs"]
mod common;

fn code<T>(result: Result<T, SegmentError>) -> String {
    result.map_or_else(|e| e.kind().code().to_string(), |_| "no error".into())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (url, mode) = (&args[1], args[2].as_str());
    let small = SizePolicy::new().bounds(100, 100);
    match mode {
        "order" => println!(
            "{}",
            common::order(
                || DenseIds::connect(url, "r_order", "seg_rust", small),
                false
            )?
        ),
        "errors" => {
            let codes = [
                code(DenseIds::connect(url, "never_created", "seg_rust", small)),
                code(DenseIds::connect(url, "", "seg_rust", small)),
                code(DenseIds::connect(url, "a", "Seg", small)),
                code(DenseIds::connect(
                    "mysql://h:99999/x",
                    "a",
                    "seg_rust",
                    small,
                )),
                code(DenseIds::connect(
                    "mysql://root@127.0.0.1:1/x",
                    "a",
                    "seg_rust",
                    small,
                )),
            ];
            println!("{{\"codes\": {codes:?}}}");
        }
        "threads" => {
            let ids = DenseIds::connect(url, "r_threads", "seg_rust", small)?;
            println!("{}", common::threads(ids)?);
        }
        "many" => {
            let (tag, file, n) = (&args[3], &args[4], args[5].parse::<usize>()?);
            let ids = DenseIds::connect(
                url,
                tag,
                "seg_mixed",
                SizePolicy::new().bounds(20, 500).target_ms(100),
            )?;
            let mut got = vec![0u64; n];
            ids.next_ids(&mut got)?;
            ids.close();
            let bytes: Vec<u8> = got.iter().flat_map(|id| id.to_le_bytes()).collect();
            std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(file)?
                .write_all(&bytes)?;
            println!("{{\"count\": {n}}}");
        }
        "kind" => {
            let started = std::time::Instant::now();
            let kind = code(DenseIds::connect(url, "a", "seg_rust", small));
            println!(
                "{{\"code\": \"{kind}\", \"fast\": {}}}",
                started.elapsed().as_secs() < 10
            );
        }
        "first" => {
            let ids =
                DenseIds::connect(url, &args[4], &args[3], SizePolicy::new().bounds(100, 100))?;
            println!("{{\"first\": {}}}", ids.next_id()?);
            ids.close();
        }
        other => return Err(format!("unknown mode {other}").into()),
    }
    Ok(())
}
