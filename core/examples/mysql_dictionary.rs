//! The Rust client of the string ↔ ID dictionary on MySQL and MariaDB, driven by
//! `tests/mysql/test_rust.py` against its throwaway server: `mysql_dictionary <url> <mode>`;
//! prints one JSON line.
//!   contract: ids / id / lookup / value / values on topic `mixed` of schema `dict_rust`,
//!             after Python assigned its strings; strings MySQL's collations would fold.
//!   bad:      every bad input's kind.
//!   threads:  8 threads writing overlapping batches of shared strings: one ID each, and the
//!             cache agrees with the server.
//!   big:      one batch of 45,000 new strings (more than a prepared statement's placeholders).
//!   kind:     the error kind of connecting (a server that is not MySQL).
//!   id <schema> <topic> <value>: the ID of one string.
use std::collections::HashMap;
use std::sync::Arc;

use shardid::dictionary::mysql::{Dictionary, DictionaryError};

#[path = "common/dictionary.rs"]
mod common;
use common::kind;

#[allow(clippy::too_many_lines)] // one mode per arm, read top to bottom
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (url, mode) = (args[1].as_str(), args[2].as_str());
    match mode {
        "contract" => {
            let words = Dictionary::connect(&[url], "mixed", "dict_rust", 1000)?;
            let ids = words.ids(&[
                "from rust",
                "from python",
                "from rust",
                "From Rust",
                "from rust ",
            ])?;
            let lookup = words.lookup(&["from rust", "never"])?;
            let values = words.values(&[1, 0, 99])?;
            let none = Dictionary::connect(&[url], "mixed", "dict_rust", 0)?;
            let again = none.ids(&["from rust", "From Rust"])?;
            println!(
                "{{\"ids\": {ids:?}, \"lookup\": [{}, {}], \"values\": [{:?}, {:?}, {}], \"again\": {again:?}}}",
                lookup[0].unwrap_or(u64::MAX),
                lookup[1].map_or("null".into(), |v| v.to_string()),
                values[0].as_deref().unwrap_or("?"),
                values[1].as_deref().unwrap_or("?"),
                values[2]
                    .as_deref()
                    .map_or("null".into(), |v| format!("{v:?}")),
            );
        }
        "bad" => {
            let words = Dictionary::connect(&[url], "mixed", "dict_rust", 1000)?;
            let many = vec!["a"; shardid::dictionary::MAX_BATCH + 1];
            let codes = [
                kind(words.id("")),
                kind(words.id("a\0b")),
                kind(words.lookup(&many)),
                kind(words.value(u64::MAX)),
                kind(Dictionary::connect(&[url], "nope", "dict_rust", 10).and_then(|d| d.id("a"))),
                kind(Dictionary::connect(&[url], "", "dict_rust", 10)),
                kind(Dictionary::connect(&[url], "t", "x; DROP TABLE y", 10)),
                kind(Dictionary::connect(
                    &["mysql://h:0/x"],
                    "t",
                    "dict_rust",
                    10,
                )),
                kind(Dictionary::connect(&[url], "gone", "dict_rust", 0).and_then(|d| d.id("new"))),
            ];
            println!("{{\"codes\": {codes:?}}}");
        }
        "threads" => {
            let words = Arc::new(Dictionary::connect(&[url], "threads", "dict_rust", 100)?);
            let mut pairs: HashMap<String, u64> = HashMap::new();
            let mut agree = true;
            for (value, id) in common::threads(&words, 50, 40, 600)? {
                agree &= *pairs.entry(value).or_insert(id) == id;
            }
            let mut ids: Vec<u64> = pairs.values().copied().collect();
            ids.sort_unstable();
            let dense = ids.iter().enumerate().all(|(i, &id)| id == i as u64);
            println!(
                "{{\"strings\": {}, \"agree\": {agree}, \"dense\": {dense}}}",
                pairs.len()
            );
        }
        "big" => {
            let words = Dictionary::connect(&[url], "big", "dict_rust", 0)?;
            let values: Vec<String> = (0..45_000).map(|i| format!("v{i}")).collect();
            let ids = words.ids(&values)?;
            let back = words.values(&ids)?;
            let same = back
                .iter()
                .zip(&values)
                .all(|(b, v)| b.as_deref() == Some(v.as_str()));
            let dense = ids.iter().enumerate().all(|(i, &id)| id == i as u64);
            println!(
                "{{\"count\": {}, \"dense\": {dense}, \"same\": {same}}}",
                ids.len()
            );
        }
        "kind" => {
            let started = std::time::Instant::now();
            let code = kind(Dictionary::connect(&[url], "t", "dict_rust", 10));
            println!(
                "{{\"code\": \"{code}\", \"fast\": {}}}",
                started.elapsed().as_secs() < 10
            );
        }
        "id" => {
            let words = Dictionary::connect(&[url], &args[4], &args[3], 0)?;
            println!("{{\"id\": {}}}", words.id(&args[5])?);
        }
        other => return Err(format!("unknown mode {other}").into()),
    }
    Ok(())
}
