//! Prints the PostgreSQL DDL for a preset layout, a shard and a schema:
//!
//! ```text
//! cargo run -p shardid --example postgres -- instagram 5 insta5 | psql -1 -f -
//! ```
//!
//! (`python -m shardid.sql` does the same from the Python package.)

use std::process::ExitCode;

use shardid::Layout;
use shardid::sql::Postgres;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [layout, shard, schema] = args.as_slice() else {
        eprintln!("usage: postgres <instagram|twitter|discord|sonyflake> <shard> <schema>");
        return ExitCode::from(2);
    };
    let layout = match layout.as_str() {
        "instagram" => Layout::INSTAGRAM,
        "twitter" => Layout::TWITTER,
        "discord" => Layout::DISCORD,
        "sonyflake" => Layout::SONYFLAKE,
        other => {
            eprintln!("unknown layout {other:?}: instagram, twitter, discord or sonyflake");
            return ExitCode::from(2);
        }
    };
    let Some(shard) = shardid::parse_decimal(shard.as_bytes()) else {
        eprintln!("the shard must be a non-negative integer, not {shard:?}");
        return ExitCode::from(2);
    };
    match Postgres::new(layout, shard, schema) {
        Ok(ddl) => {
            print!("{ddl}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}
