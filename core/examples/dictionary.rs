//! The Rust client of the string ↔ ID dictionary, driven by `tests/postgres/test_dictionary.py`
//! against its throwaway server: `dictionary <connection string> <mode>`; prints one JSON line.
//!   contract: ids / id / lookup / value / values on topic `mixed` of schema `dict_rust`,
//!             after Python assigned its strings.
//!   stats:    on topic `counted` of schema `dict_rust`, the calls of Python's cache test
//!             (`ids`, `id`, `lookup`, `values`), then `stats()` in the table's order.
//!   bad:      every bad input's kind.
//!   threads:  8 threads writing overlapping batches of shared strings: one ID each, and the
//!             cache agrees with the server.
//!   demo:     the strings of argument 3.. on topic `demo` of schema `dict` (examples/postgres/dictionary.py).
//!
//! `dictionary ddl <schema>` prints the DDL instead (`| psql -1 -f -`), as
//! `python -m shardid.sql --dictionary --schema <schema>` does.
use std::collections::HashMap;
use std::sync::Arc;

use shardid::dictionary::postgres::{Dictionary, DictionaryError};

#[path = "common/dictionary.rs"]
mod common;
use common::kind;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        return Err(
            "usage: dictionary <connection string> <mode> | dictionary ddl <schema>".into(),
        );
    }
    if args[1] == "ddl" {
        print!("{}", shardid::sql::Dictionary::new(&args[2])?);
        return Ok(());
    }
    let (config, mode) = (args[1].as_str(), args[2].as_str());
    match mode {
        "contract" => {
            let words = Dictionary::connect(&[config], "mixed", "dict_rust", 1000)?;
            let ids = words.ids(&["from rust", "from python", "from rust"])?;
            let id = words.id("from python")?;
            let lookup = words.lookup(&["from rust", "never"])?;
            let value = words.value(0)?;
            let values = words.values(&[1, 0, 99])?;
            println!(
                "{{\"ids\": {ids:?}, \"id\": {id}, \"lookup\": [{}, {}], \"value\": {:?}, \"values\": [{:?}, {:?}, {}], \"cached\": {}}}",
                lookup[0].unwrap_or(u64::MAX),
                lookup[1].map_or("null".into(), |v| v.to_string()),
                value.as_deref().unwrap_or("?"),
                values[0].as_deref().unwrap_or("?"),
                values[1].as_deref().unwrap_or("?"),
                values[2]
                    .as_deref()
                    .map_or("null".into(), |v| format!("{v:?}")),
                words.cache().len(),
            );
        }
        "stats" => {
            let words = Dictionary::connect(&[config], "counted", "dict_rust", 1000)?;
            words.ids(&["b", "a", "b"])?;
            words.id("c")?;
            words.lookup(&["a", "never"])?;
            words.values(&[2, 0, 77])?;
            println!("{:?}", words.stats().values());
        }
        "bad" => {
            let words = Dictionary::connect(&[config], "mixed", "dict_rust", 1000)?;
            let many = vec!["a"; shardid::dictionary::MAX_BATCH + 1];
            let codes = [
                kind(words.id("")),
                kind(words.id("a\0b")),
                kind(words.id(&"x".repeat(2049))),
                kind(words.lookup(&many)),
                kind(words.value(u64::MAX)),
                kind(
                    Dictionary::connect(&[config], "nope", "dict_rust", 10).and_then(|d| d.id("a")),
                ),
                kind(Dictionary::connect(&[config], "", "dict_rust", 10)),
                kind(Dictionary::connect(&[config], "t", "x; DROP TABLE y", 10)),
                kind(Dictionary::connect::<&str>(&[], "t", "dict_rust", 10)),
                kind(
                    Dictionary::connect(&[config], "gone", "dict_rust", 0)
                        .and_then(|d| d.id("new")),
                ),
            ];
            println!("{{\"codes\": {codes:?}}}");
        }
        "threads" => threads(config)?,
        "demo" => {
            let words = Dictionary::connect(&[config], "demo", "dict", 1000)?;
            let values: Vec<&str> = args[3..].iter().map(String::as_str).collect();
            let ids = words.ids(&values)?;
            for (value, id) in values.iter().zip(ids) {
                println!("  rust:   {value:<22} -> {id}");
            }
        }
        other => return Err(format!("unknown mode {other}").into()),
    }
    Ok(())
}

/// 8 threads writing overlapping batches of shared strings on one client.
fn threads(config: &str) -> Result<(), Box<dyn std::error::Error>> {
    let words = Arc::new(Dictionary::connect(
        &[config],
        "shared",
        "dict_rust",
        100_000,
    )?);
    let mut seen: HashMap<String, u64> = HashMap::new();
    let mut conflicts = 0;
    for (value, id) in common::threads(&words, 100, 20, 1500)? {
        if *seen.entry(value).or_insert(id) != id {
            conflicts += 1;
        }
    }
    // The cache against the server, from a client with no cache.
    let fresh = Dictionary::connect(&[config], "shared", "dict_rust", 0)?;
    let values: Vec<&str> = seen.keys().map(String::as_str).collect();
    let server = fresh.lookup(&values)?;
    let disagree = values
        .iter()
        .zip(&server)
        .filter(|(v, id)| {
            **id != Some(seen[**v]) || words.cache().id(v).is_some_and(|c| Some(c) != **id)
        })
        .count();
    println!(
        "{{\"strings\": {}, \"conflicts\": {conflicts}, \"disagree\": {disagree}, \"max\": {}}}",
        seen.len(),
        seen.values().max().copied().unwrap_or(0)
    );
    Ok(())
}
