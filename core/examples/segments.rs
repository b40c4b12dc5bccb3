//! The Rust client of dense IDs from segments, driven by `tests/postgres/test_segments.py`
//! against its throwaway server: `segments <connection string> <mode>`; prints one JSON line.
//!   order:   IDs from `next_id` / `next_ids` increase and are dense across segments; `close()`
//!            gives the rest back, so a new client continues at the next number.
//!   unknown: a tag never created is `UNKNOWN_TAG`.
//!   threads: 8 threads x 20,000 IDs on one client: no duplicate.
//!   demo:    7 IDs of tag `orders` in schema `seg` (examples/postgres/segments.py), then close.
//!   next SCHEMA TAG: one ID, or the error's code, message and ms (`tests/postgres/test_contract.py`).

use shardid::segment::SizePolicy;
use shardid::segment::postgres::{DenseIds, SegmentError};

#[path = "common/segments.rs"]
mod common;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (config, mode) = (&args[1], args[2].as_str());
    let small = SizePolicy::new().bounds(100, 100);
    match mode {
        "order" => println!(
            "{}",
            common::order(
                || DenseIds::connect(config, "r_order", "seg_rust", small),
                true
            )?
        ),
        "unknown" => {
            let code = DenseIds::connect(config, "never_created", "seg_rust", small)
                .map_or_else(|e| e.kind().code().to_string(), |_| "no error".into());
            println!("{{\"code\": \"{code}\"}}");
        }
        "threads" => {
            let ids = DenseIds::connect(config, "r_threads", "seg_rust", small)?;
            println!("{}", common::threads(ids)?);
        }
        "demo" => {
            let orders =
                DenseIds::connect(config, "orders", "seg", SizePolicy::new().bounds(5, 5))?;
            let ids: Vec<u64> = (0..7).map(|_| orders.next_id()).collect::<Result<_, _>>()?;
            orders.close();
            println!("{ids:?}");
        }
        "next" => {
            let started = std::time::Instant::now();
            match DenseIds::connect(config, &args[4], &args[3], small).and_then(|ids| ids.next_id())
            {
                Ok(id) => println!("{{\"id\": {id}}}"),
                Err(e) => println!(
                    "{{\"code\": \"{}\", \"message\": {:?}, \"ms\": {}}}",
                    e.kind().code(),
                    e.to_string(),
                    started.elapsed().as_millis()
                ),
            }
        }
        other => return Err(format!("unknown mode {other}").into()),
    }
    Ok(())
}
