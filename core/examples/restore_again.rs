//! Rust's part of issue 54's checks after a restore (`tests/python/restore_checks.py`), run on the
//! restored database by the Rust clients of whichever database the URL names (each behind its
//! feature: the suites build it with theirs):
//!
//! - `created_after_backup`: the next day's serials, the tag made again and the topic made
//!   again. `restore_again URL WORDS_URL SCHEMA DICT_SCHEMA DAY_MS FORMAT N PREFIX` prints one
//!   JSON line: `{"serials": [...], "dense": [1, ...], "ids": {"PREFIX0": 7, ...}}`.
//! - `lease_created_after_backup`: a new holder of a shard whose row the backup lacks asks for
//!   IDs of the lost holder's time. `restore_again lease URL TABLE SHARD AT_MS N` prints
//!   `{"ids": [...]}`, or `{"refused": "CODE"}` when the generator refuses that time (behind the
//!   new row's ceiling, as it should be).

use shardid::segment::SizePolicy;

/// What one database's clients took: serials, dense IDs, and each string's ID.
type Taken = (Vec<String>, Vec<u64>, Vec<u64>);

macro_rules! take_with {
    ($db:ident, $a:expr) => {{
        let a: &Args = $a;
        let policy = SizePolicy::new().bounds(10, 10);
        let s = shardid::serial::$db::Serials::connect(
            &a.url, "rst", &a.format, "UTC", &a.schema, policy,
        )
        .expect("serials");
        let serials = (0..a.n)
            .map(|_| s.next_serial_at(a.day_ms).expect("a serial").to_string())
            .collect();
        s.close();
        shardid::segment::create_tag(&a.url, "fresh", &a.schema).expect("create_tag");
        let d = shardid::segment::$db::DenseIds::connect(&a.url, "fresh", &a.schema, policy)
            .expect("dense IDs");
        let dense = (0..a.n).map(|_| d.next_id().expect("an ID")).collect();
        d.close();
        let words = shardid::dictionary::$db::Dictionary::connect(
            &[&a.words_url],
            "fresh",
            &a.dict_schema,
            0,
        )
        .expect("dictionary");
        words.create().expect("create");
        let ids = words.ids(&a.values).expect("ids");
        (serials, dense, ids)
    }};
}

struct Args {
    url: String,
    words_url: String,
    schema: String,
    dict_schema: String,
    day_ms: u64,
    format: String,
    n: usize,
    values: Vec<String>,
}

fn main() {
    let given: Vec<String> = std::env::args().skip(1).collect();
    if given.first().map(String::as_str) == Some("lease") {
        lease_again(&given[1..]);
        return;
    }
    let [
        url,
        words_url,
        schema,
        dict_schema,
        day_ms,
        format,
        n,
        prefix,
    ] = given.as_slice()
    else {
        eprintln!("usage: restore_again URL WORDS_URL SCHEMA DICT_SCHEMA DAY_MS FORMAT N PREFIX");
        std::process::exit(2);
    };
    let n: usize = n.parse().expect("N");
    let args = Args {
        url: url.clone(),
        words_url: words_url.clone(),
        schema: schema.clone(),
        dict_schema: dict_schema.clone(),
        day_ms: day_ms.parse().expect("DAY_MS"),
        format: format.clone(),
        n,
        values: (0..n).map(|i| format!("{prefix}{i}")).collect(),
    };
    let (serials, dense, ids): Taken = take(&args);
    let quoted = |v: &[String]| {
        v.iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(",")
    };
    let dense = dense
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let ids = args
        .values
        .iter()
        .zip(&ids)
        .map(|(v, id)| format!("\"{v}\":{id}"))
        .collect::<Vec<_>>()
        .join(",");
    println!(
        "{{\"serials\":[{}],\"dense\":[{dense}],\"ids\":{{{ids}}}}}",
        quoted(&serials)
    );
}

/// Whether `url` names SQLite, or the MySQL family (else PostgreSQL).
fn family(url: &str) -> (bool, bool) {
    (
        url.starts_with("sqlite:"),
        url.starts_with("mysql:") || url.starts_with("mariadb:"),
    )
}

/// The clients of the database `url` names.
fn take(a: &Args) -> Taken {
    let url = a.url.as_str();
    let (is_sqlite, is_mysql) = family(url);
    #[cfg(feature = "sqlite")]
    if is_sqlite {
        return take_with!(sqlite, a);
    }
    #[cfg(feature = "mysql")]
    if is_mysql {
        return take_with!(mysql, a);
    }
    #[cfg(feature = "postgres")]
    if !is_sqlite && !is_mysql {
        return take_with!(postgres, a);
    }
    {
        let _ = (is_sqlite, is_mysql);
        eprintln!(
            "restore_again: this build has no client for {url} (build it with that database's feature)"
        );
        std::process::exit(2)
    }
}

/// One lease of `shard` (of `shard..shard + 1`) in table `table` by `$db`'s lease type, waiting
/// out a restored row's holder (`NO_FREE_SHARD`) for up to 30 s, and what it answers to `n` IDs
/// at `at_ms`: the IDs, or the code of the generator's refusal.
macro_rules! lease_with {
    ($db:ident :: $lease:ident, $url:expr, $table:expr, $shard:expr, $at_ms:expr, $n:expr) => {{
        use shardid::lease::LeaseError;
        let options = shardid::lease::$db::LeaseOptions::new()
            .table($table)
            .kind(shardid::sql::LeaseKind::Expiring { ttl_ms: 1_000 });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let held = loop {
            match shardid::lease::$db::$lease::acquire(
                $url,
                shardid::Layout::SONYFLAKE,
                $shard..$shard + 1,
                &options,
            ) {
                Ok(held) => break held,
                Err(LeaseError::NoFreeShard { .. }) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Err(e) => panic!("lease: {e}"),
            }
        };
        assert_eq!(held.shard(), $shard, "the shard leased");
        let ids: Result<Vec<u64>, LeaseError> = (0..$n).map(|_| held.next_id_at($at_ms)).collect();
        held.close();
        match ids {
            Ok(ids) => format!(
                "{{\"ids\":[{}]}}",
                ids.iter()
                    .map(|id| format!("\"{id}\""))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            Err(e @ LeaseError::Lost { .. }) => panic!("the new lease was lost: {e}"),
            Err(e) => format!("{{\"refused\":\"{}\"}}", e.kind().code()),
        }
    }};
}

/// The `lease URL TABLE SHARD AT_MS N` mode.
fn lease_again(given: &[String]) {
    let [url, table, shard, at_ms, n] = given else {
        eprintln!("usage: restore_again lease URL TABLE SHARD AT_MS N");
        std::process::exit(2);
    };
    let shard: u64 = shard.parse().expect("SHARD");
    let at_ms: u64 = at_ms.parse().expect("AT_MS");
    let n: usize = n.parse().expect("N");
    println!("{}", leased(url, table, shard, at_ms, n));
}

/// The lease of the database `url` names.
fn leased(url: &str, table: &str, shard: u64, at_ms: u64, n: usize) -> String {
    let (is_sqlite, is_mysql) = family(url);
    #[cfg(feature = "sqlite")]
    if is_sqlite {
        return lease_with!(sqlite::SqliteLease, url, table, shard, at_ms, n);
    }
    #[cfg(feature = "mysql")]
    if is_mysql {
        return lease_with!(mysql::MysqlLease, url, table, shard, at_ms, n);
    }
    #[cfg(feature = "postgres")]
    if !is_sqlite && !is_mysql {
        return lease_with!(postgres::PostgresLease, url, table, shard, at_ms, n);
    }
    {
        let _ = (is_sqlite, is_mysql, table, shard, at_ms, n);
        eprintln!(
            "restore_again: this build has no client for {url} (build it with that database's feature)"
        );
        std::process::exit(2)
    }
}
