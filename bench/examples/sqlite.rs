//! SQLite (issue 44): segment takes with 8 processes on one file, batches of 100 new dictionary
//! strings, and inserts keyed by dense IDs against SQLite's own `INTEGER PRIMARY KEY`, each
//! with its peers in the same run (BENCHMARKS.md, "SQLite (issue 44)").
//!
//! ```sh
//! cargo run --release -p shardid-bench --example sqlite -- all   # or disk | takes | dictionary | inserts
//! cargo run --release -p shardid-bench --example sqlite -- inserts-inside
//! ```
//!
//! A program, not a criterion bench: the targets are tails (p99 of each take, of each batch),
//! which criterion does not report, and the takes need 8 processes (this program runs copies of
//! itself). Every file is new, in a directory of the system's temporary directory (a local
//! disk: the figures include SQLite's fsyncs), removed at the end.
//!
//! - `takes`: each process opens the file as every client of shardid does
//!   ([`ConnectionSetup`]: WAL, a busy timeout, `synchronous = FULL`) and sends the core's take
//!   ([`SqliteSegments`]'s statement, as `shardid::segment::sqlite` sends it) for segments of
//!   10 IDs, as fast as it can for a few seconds, timing each take; 1 process alone, then 8 at
//!   once, then 8 with `synchronous = NORMAL` (not the product's setting: it says what the
//!   fsync per commit costs), then 8 with a busy handler that retries every 50 us instead of
//!   SQLite's own (not the product's either: it says what waiting for the lock costs). Every
//!   segment handed out is checked to overlap no other.
//! - `dictionary`: `shardid::dictionary::sqlite::Dictionary::ids` of 100 new strings, timed per
//!   batch.
//! - `inserts`: rows into a table `(id INTEGER PRIMARY KEY, payload TEXT)`: SQLite numbers them
//!   (the peer), or the key is `DenseIds::next_id()` (segments of 1,000, and the default
//!   `SizePolicy`'s, which grow with the rate); the same rows, the same transactions (100 rows
//!   each, or one row each in autocommit), in rounds whose order turns. A
//!   batch's keys are taken before its transaction; `inserts-inside` takes each inside, where
//!   the fetch of the next segment waits for the write lock the transaction holds.
//! - `disk`: the fsync under it all (4 KiB appended and `fdatasync`ed), for scale.
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::Connection;
use shardid::dictionary::sqlite::Dictionary;
use shardid::segment::SizePolicy;
use shardid::segment::sqlite::{DenseIds, create_tag};
use shardid::sql::Placeholders;
use shardid::sql::sqlite::{ConnectionSetup, DEFAULT_BUSY_TIMEOUT_MS, SqliteSegments};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// How long each process takes segments, per configuration.
const TAKE_SECONDS: u64 = 3;
/// The size of each segment taken: small, so that takes (not IDs) are what is measured.
const TAKE_SIZE: i64 = 10;
/// Batches of 100 new strings.
const DICTIONARY_BATCHES: usize = 500;
/// Rounds of inserts, each pattern's peer and shardid back to back.
const INSERT_ROUNDS: usize = 5;

/// A file's `sqlite:///` URL (an absolute path: four slashes in all).
fn url(path: &Path) -> String {
    format!("sqlite:///{}", path.display())
}

/// A connection set up as every client of shardid sets it up.
fn open(path: &Path) -> Result<Connection> {
    let conn = Connection::open(path)?;
    conn.execute_batch(&ConnectionSetup(DEFAULT_BUSY_TIMEOUT_MS).to_string())?;
    Ok(conn)
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// p50, p99 and the maximum of `samples` (sorted here), in microseconds.
fn tail(samples: &mut [Duration]) -> (f64, f64, f64) {
    samples.sort_unstable();
    let at = |per_cent: usize| micros(samples[(samples.len() - 1) * per_cent / 100]);
    (at(50), at(99), micros(samples[samples.len() - 1]))
}

/// One process's takes (`take-child PATH START_MS SYNCHRONOUS HANDLER`): waits for the common start,
/// takes for [`TAKE_SECONDS`], and prints `first count nanoseconds` per take.
fn take_child(path: &Path, start_ms: u128, synchronous: &str, handler: &str) -> Result<()> {
    let mut conn = open(path)?;
    conn.execute_batch(&format!("PRAGMA synchronous = {synchronous}"))?;
    if handler == "short" {
        // Instead of SQLite's own busy handler (the busy timeout's: sleeps of 1, 2, 5, 10, 15,
        // 20, 25, 25, 25, 50, 50, then 100 ms between tries): 50 us between tries, 5 s in all.
        conn.busy_handler(Some(|tries: i32| {
            std::thread::sleep(Duration::from_micros(50));
            tries < 100_000
        }))?;
    }
    let take = SqliteSegments::new("main")?
        .statements(Placeholders::Numbered)
        .take()
        .to_string();
    let mut statement = conn.prepare_cached(&take)?;
    let now_ms = || {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
    };
    while now_ms()? < start_ms {
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut out = Vec::with_capacity(1 << 20);
    let end = Instant::now() + Duration::from_secs(TAKE_SECONDS);
    while Instant::now() < end {
        let started = Instant::now();
        // Stepped to its end, as the core's driver does: the take is committed on return.
        let mut rows = statement.query((TAKE_SIZE, "bench"))?;
        let mut segment = None;
        while let Some(row) = rows.next()? {
            segment = Some((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?));
        }
        drop(rows);
        let took = started.elapsed();
        let (first, count) = segment.ok_or("a take returned no row")?;
        writeln!(out, "{first} {count} {}", took.as_nanos())?;
    }
    std::io::stdout().write_all(&out)?;
    Ok(())
}

/// `processes` copies of this program taking from one new file; prints the line of the table.
fn takes(dir: &Path, processes: usize, synchronous: &str, handler: &str) -> Result<()> {
    let path = dir.join(format!("takes-{processes}-{synchronous}-{handler}.db"));
    create_tag(&url(&path), "bench", "main", 1)?;
    let start_ms = SystemTime::now().duration_since(UNIX_EPOCH)?.as_millis() + 300;
    let children: Vec<_> = (0..processes)
        .map(|_| {
            Command::new(std::env::current_exe()?)
                .arg("take-child")
                .arg(&path)
                .arg(start_ms.to_string())
                .arg(synchronous)
                .arg(handler)
                .stdout(Stdio::piped())
                .spawn()
        })
        .collect::<std::io::Result<_>>()?;
    let mut latencies = Vec::new();
    let mut segments = Vec::new();
    for child in children {
        let output = child.wait_with_output()?;
        if !output.status.success() {
            return Err(format!("a taking process failed: {}", output.status).into());
        }
        for line in BufReader::new(&output.stdout[..]).lines() {
            let line = line?;
            let mut fields = line.split(' ').map(str::parse::<u64>);
            let (Some(first), Some(count), Some(ns)) =
                (fields.next(), fields.next(), fields.next())
            else {
                return Err(format!("a bad line: {line}").into());
            };
            segments.push((first?, count?));
            latencies.push(Duration::from_nanos(ns?));
        }
    }
    segments.sort_unstable();
    for pair in segments.windows(2) {
        if pair[0].0 + pair[0].1 > pair[1].0 {
            return Err(format!("overlapping segments: {pair:?}").into());
        }
    }
    let n = latencies.len();
    let (p50, p99, max) = tail(&mut latencies);
    #[allow(clippy::cast_precision_loss)] // a count of takes, far below 2^52
    let rate = n as f64 / TAKE_SECONDS as f64;
    println!(
        "takes, {processes} process(es), synchronous = {synchronous}, {handler} busy handler: {n} takes ({rate:.0}/s), \
         p50 {p50:.0} us, p99 {p99:.0} us, max {max:.0} us; segments overlapping: 0"
    );
    Ok(())
}

fn dictionary(dir: &Path) -> Result<()> {
    let path = dir.join("dictionary.db");
    let words = Dictionary::connect(&[url(&path)], "words", "main", 1_000)?;
    words.create()?;
    let mut latencies = Vec::with_capacity(DICTIONARY_BATCHES);
    for batch in 0..DICTIONARY_BATCHES {
        let values: Vec<String> = (0..100)
            .map(|i| format!("https://example.com/{batch}/{i}"))
            .collect();
        let started = Instant::now();
        let ids = words.ids(&values)?;
        latencies.push(started.elapsed());
        if ids
            .iter()
            .zip(u64::try_from(batch * 100)?..)
            .any(|(&id, n)| id != n)
        {
            return Err(format!("batch {batch}: not numbered densely: {ids:?}").into());
        }
    }
    let slow = latencies.iter().filter(|d| d.as_millis() > 5).count();
    let (p50, p99, max) = tail(&mut latencies);
    println!(
        "dictionary, {DICTIONARY_BATCHES} batches of 100 new strings: p50 {:.2} ms, p99 {:.2} ms, \
         max {:.2} ms ({slow} over 5 ms); IDs exactly 0..{}",
        p50 / 1e3,
        p99 / 1e3,
        max / 1e3,
        DICTIONARY_BATCHES * 100
    );
    Ok(())
}

/// Inserts `rows` rows in transactions of `batch` (1: autocommit) into `table`, keyed by
/// `ids` or numbered by SQLite; rows per second.
fn insert_round(
    conn: &Connection,
    table: &str,
    ids: Option<&DenseIds>,
    rows: usize,
    batch: usize,
    inside: bool,
) -> Result<f64> {
    let sql = if ids.is_some() {
        format!("INSERT INTO {table} (id, payload) VALUES (?1, ?2)")
    } else {
        format!("INSERT INTO {table} (payload) VALUES (?1)")
    };
    let mut insert = conn.prepare_cached(&sql)?;
    let payload = "a row of some forty bytes of payload text";
    let mut keys = vec![0; batch];
    let started = Instant::now();
    for _ in 0..rows / batch {
        // The batch's keys before its transaction: a fetch of the next segment needs the
        // file's write lock, which the transaction holds (`inserts-inside` shows what happens
        // otherwise).
        if let Some(ids) = ids
            && !inside
        {
            ids.next_ids(&mut keys)?;
        }
        if batch > 1 {
            conn.execute_batch("BEGIN IMMEDIATE")?;
        }
        for key in &mut keys {
            match ids {
                Some(ids) => {
                    if inside {
                        *key = ids.next_id()?;
                    }
                    insert.execute((key.cast_signed(), payload))?
                }
                None => insert.execute((payload,))?,
            };
        }
        if batch > 1 {
            conn.execute_batch("COMMIT")?;
        }
    }
    #[allow(clippy::cast_precision_loss)] // a count of rows, far below 2^52
    Ok(rows as f64 / started.elapsed().as_secs_f64())
}

/// `inside`: each key taken by `next_id()` inside the transaction, which holds the write lock
/// a fetch of the next segment needs.
fn inserts(dir: &Path, inside: bool) -> Result<()> {
    let path = dir.join("inserts.db");
    let conn = open(&path)?;
    for table in ["peer", "dense", "grown"] {
        conn.execute_batch(&format!(
            "CREATE TABLE {table} (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)"
        ))?;
    }
    let fixed = SizePolicy::new().bounds(1_000, 1_000);
    create_tag(&url(&path), "rows", "main", 1)?;
    let dense = DenseIds::connect(&url(&path), "rows", "main", fixed)?;
    create_tag(&url(&path), "grown", "main", 1)?;
    let grown = DenseIds::connect(&url(&path), "grown", "main", SizePolicy::new())?;
    // The peer, then shardid's keys from segments of 1,000, then from the default policy's
    // segments (1,000 at first, growing to last about a minute).
    let contenders = [
        ("peer", None),
        ("dense", Some(&dense)),
        ("grown", Some(&grown)),
    ];
    let patterns: &[_] = if inside {
        &[(
            20_000,
            100,
            "transactions of 100 rows, each key from next_id() inside",
        )]
    } else {
        &[
            (20_000, 100, "transactions of 100 rows"),
            (1_000, 1, "one row per transaction (autocommit)"),
        ]
    };
    for &(rows, batch, what) in patterns {
        let mut ratios = [Vec::new(), Vec::new()];
        let mut line = String::new();
        for round in 0..INSERT_ROUNDS {
            // Who goes first turns: a round's later inserts may find the WAL larger.
            let mut rates = [0.0; 3];
            for k in 0..3 {
                let i = (round + k) % 3;
                let (table, ids) = contenders[i];
                rates[i] = insert_round(&conn, table, ids, rows, batch, inside)?;
            }
            ratios[0].push(rates[1] / rates[0]);
            ratios[1].push(rates[2] / rates[0]);
            write!(line, " {:.0}/{:.0}/{:.0}", rates[0], rates[1], rates[2])?;
        }
        println!(
            "inserts, {what}, {rows} rows a round: rows/s INTEGER PRIMARY KEY / dense (1,000) / \
             dense (default policy) per round:{line}"
        );
        for (name, mut ratios) in ["segments of 1,000", "default policy"]
            .into_iter()
            .zip(ratios)
        {
            let each: Vec<_> = ratios.iter().map(|r| format!("{r:.2}")).collect();
            ratios.sort_by(f64::total_cmp);
            println!(
                "  {name} / INTEGER PRIMARY KEY: {}; median {:.2}",
                each.join(" "),
                ratios[ratios.len() / 2]
            );
        }
        for (name, ids) in [("segments of 1,000", &dense), ("default policy", &grown)] {
            let stats = ids.stats();
            println!(
                "  {name}, so far: {} segments fetched ({} failed), {} waits with both used \
                 up, slowest fetch {} ms, all fetches {} ms",
                stats.fetches,
                stats.failed_fetches,
                stats.empty_waits,
                stats.fetch_latency_max_ms,
                stats.fetch_latency_sum_ms
            );
        }
    }
    let lost = dense.close() + grown.close();
    let count = |table: &str| -> Result<i64> {
        Ok(conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))?)
    };
    let rows = count("peer")?;
    if count("dense")? != rows || count("grown")? != rows {
        return Err("the tables got different numbers of rows".into());
    }
    println!("inserts: {rows} rows in each table; numbers given back or lost at close: {lost}");
    Ok(())
}

/// The disk under the files: a write of 4 KiB and its `fdatasync`, what a commit in WAL mode
/// with `synchronous = FULL` adds at least.
fn disk(dir: &Path) -> Result<()> {
    let mut file = std::fs::File::create(dir.join("fsync"))?;
    let page = [7u8; 4096];
    let mut latencies = Vec::with_capacity(500);
    for _ in 0..500 {
        let started = Instant::now();
        file.write_all(&page)?;
        file.sync_data()?;
        latencies.push(started.elapsed());
    }
    let (p50, p99, max) = tail(&mut latencies);
    println!(
        "disk, 500 appends of 4 KiB + fdatasync: p50 {p50:.0} us, p99 {p99:.0} us, max {max:.0} us"
    );
    Ok(())
}

/// A directory of its own in the temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [command, path, start_ms, synchronous, handler] = &args[..]
        && command == "take-child"
    {
        return take_child(Path::new(path), start_ms.parse()?, synchronous, handler);
    }
    let what = args.first().map_or("all", String::as_str);
    let dir =
        TempDir(std::env::temp_dir().join(format!("shardid-sqlbench-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0)?;
    println!(
        "SQLite {}, files in {}",
        rusqlite::version(),
        dir.0.display()
    );
    if matches!(what, "all" | "disk") {
        disk(&dir.0)?;
    }
    if matches!(what, "all" | "takes") {
        takes(&dir.0, 1, "FULL", "sqlite")?;
        takes(&dir.0, 8, "FULL", "sqlite")?;
        takes(&dir.0, 8, "NORMAL", "sqlite")?;
        takes(&dir.0, 8, "FULL", "short")?;
    }
    if matches!(what, "all" | "dictionary") {
        dictionary(&dir.0)?;
    }
    if matches!(what, "all" | "inserts") {
        inserts(&dir.0, false)?;
    }
    if what == "inserts-inside"
        && let Err(e) = inserts(&dir.0, true)
    {
        println!("inserts with next_id() inside the transaction failed: {e}");
    }
    Ok(())
}
