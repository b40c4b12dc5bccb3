//! Rust's part of issue 54's check after a restore (`restore_checks.created_after_backup` in
//! tests/python): on the restored database, the next day's serials, the tag made again and the
//! topic made again, taken by the Rust clients of whichever database the URL names (each behind
//! its feature: the suites build it with theirs).
//!
//! `restore_again URL WORDS_URL SCHEMA DICT_SCHEMA DAY_MS FORMAT N PREFIX` prints one JSON line:
//! `{"serials": [...], "dense": [1, ...], "ids": {"PREFIX0": 7, ...}}`.

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

/// The clients of the database `url` names.
fn take(a: &Args) -> Taken {
    let url = a.url.as_str();
    if url.starts_with("sqlite:") {
        #[cfg(feature = "sqlite")]
        return take_with!(sqlite, a);
    } else if url.starts_with("mysql:") || url.starts_with("mariadb:") {
        #[cfg(feature = "mysql")]
        return take_with!(mysql, a);
    } else {
        #[cfg(feature = "postgres")]
        return take_with!(postgres, a);
    }
    #[allow(unreachable_code)]
    {
        eprintln!(
            "restore_again: this build has no client for {url} (build it with that database's feature)"
        );
        std::process::exit(2)
    }
}
