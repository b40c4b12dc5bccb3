//! Business serial numbers from Rust: `shardid::serial::postgres::Serials` on a server that
//! holds the segments' DDL. `tests/postgres/test_serials.py` runs the modes below beside Python
//! and Node on the same server; each prints one JSON line.
//!
//! ```sh
//! cargo run -p shardid --features serial,postgres --example serials -- ddl seg
//! cargo run -p shardid --features serial,postgres --example serials -- \
//!     create "host=127.0.0.1 user=app dbname=app" seg orders 'ORD-{yyyy}{MM}{dd}-{seq:6}' Asia/Shanghai
//! cargo run -p shardid --features serial,postgres --example serials -- \
//!     next "host=127.0.0.1 user=app dbname=app" seg orders 'ORD-{yyyy}{MM}{dd}-{seq:6}' Asia/Shanghai 5
//! ```
//!
//! - `run DSN SCHEMA TAG FORMAT ZONE THREADS SCRIPT_START_MS REAL_START_MS DURATION_MS SPEED
//!   OFFSET_MS OUT`: from the wall clock's `REAL_START_MS` (`-`: print `ready` once connected
//!   and read it from stdin) for `DURATION_MS`, `THREADS` threads
//!   issue serials as fast as they can on a scripted clock, `SCRIPT_START_MS + (now -
//!   REAL_START_MS) * SPEED + OFFSET_MS` (every process given the same starts crosses the
//!   scripted midnight at the same moment; `OFFSET_MS` skews this one's clock), one serial a
//!   line into `OUT`.
//! - `bench DSN SCHEMA LANG FORMAT ZONE CALLS`: ns per call of `DenseIds::next_id` (tag
//!   `dense_LANG`), `Serials::next_serial` (tag `ser_LANG`) and `SerialFormat::parse`, median
//!   of 5 rounds (`bench/serials/bench.py` runs it, on tags that remember big segments).
//! - `closed DSN SCHEMA TAG FORMAT ZONE`: a serial, `close()`, then the error of another.
//! - `render ZONE FORMAT NUMBER UNIX_MS` prints a serial; `parse ZONE FORMAT SERIAL` its number
//!   and period, or the error's code and message.

use std::io::Write;
use std::sync::Arc;

use shardid::segment::SizePolicy;
use shardid::serial::SerialFormat;
use shardid::serial::postgres::{Serials, SerialsError, create_serial};
use shardid::sql::Segments;

#[path = "common/wall_ms.rs"]
mod wall_ms;
use wall_ms::wall_ms;

fn code(e: &SerialsError) -> String {
    format!(
        r#"{{"code": "{}", "message": {:?}}}"#,
        e.kind().code(),
        e.to_string()
    )
}

#[allow(clippy::too_many_lines)] // one match arm per mode
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map_or("", String::as_str);
    let num = |i: usize| arg(i).parse::<u64>().expect("a number");
    match arg(0) {
        "ddl" => print!("{}", Segments::new(arg(1)).expect("a schema")),
        "create" => {
            let max_gap = if args.len() > 6 {
                u32::try_from(num(6)).unwrap()
            } else {
                1
            };
            match create_serial(arg(1), arg(3), arg(4), arg(5), arg(2), max_gap) {
                Ok(()) => println!(r#"{{"created": true}}"#),
                Err(e) => println!("{}", code(&e)),
            }
        }
        "next" => {
            let serials =
                Serials::connect(arg(1), arg(3), arg(4), arg(5), arg(2), SizePolicy::new());
            match serials {
                Ok(s) => {
                    let got: Vec<String> = (0..num(6))
                        .map(|_| s.next_serial().expect("a serial").to_string())
                        .collect();
                    let skipped = s.close();
                    println!(r#"{{"serials": {got:?}, "skipped": {skipped}}}"#);
                }
                Err(e) => println!("{}", code(&e)),
            }
        }
        "closed" => {
            let s = Serials::connect(arg(1), arg(3), arg(4), arg(5), arg(2), SizePolicy::new())
                .expect("connected");
            s.next_serial().expect("a serial");
            s.close();
            match s.next_serial() {
                Ok(serial) => println!(r#"{{"serial": "{serial}"}}"#),
                Err(e) => println!("{}", code(&e)),
            }
        }
        "run" => {
            let s = Arc::new(
                Serials::connect(
                    arg(1),
                    arg(3),
                    arg(4),
                    arg(5),
                    arg(2),
                    SizePolicy::new().bounds(20, 2_000).target_ms(200),
                )
                .expect("connected"),
            );
            let threads = num(6);
            let (script, duration, speed) = (num(7), num(9), num(10));
            // `-`: say so once connected, and read the start from stdin (every process of a
            // test is ready before the clock starts).
            let real = if arg(8) == "-" {
                println!("ready");
                std::io::stdout().flush().unwrap();
                let mut line = String::new();
                std::io::stdin().read_line(&mut line).unwrap();
                line.trim().parse().expect("a start")
            } else {
                num(8)
            };
            let offset: i64 = arg(11).parse().expect("an offset");
            while wall_ms() < real {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    let s = Arc::clone(&s);
                    std::thread::spawn(move || {
                        let mut got = Vec::new();
                        loop {
                            let elapsed = wall_ms().saturating_sub(real);
                            if elapsed >= duration {
                                return got;
                            }
                            let ms = (script + elapsed * speed).saturating_add_signed(offset);
                            got.push(s.next_serial_at(ms).expect("a serial").to_string());
                        }
                    })
                })
                .collect();
            let mut out = Vec::new();
            let mut count = 0;
            for h in handles {
                for serial in h.join().expect("joined") {
                    writeln!(out, "{serial}").unwrap();
                    count += 1;
                }
            }
            std::fs::write(arg(12), out).expect("written");
            let skipped = s.close();
            println!(r#"{{"count": {count}, "skipped": {skipped}}}"#);
        }
        "bench" => bench(arg(1), arg(2), arg(3), arg(4), arg(5), num(6)),
        "render" => {
            match SerialFormat::new(arg(2), arg(1)).and_then(|f| f.render(num(3), num(4))) {
                Ok(serial) => println!(r#"{{"serial": {:?}}}"#, serial.as_str()),
                Err(e) => println!(
                    r#"{{"code": "{}", "message": {:?}}}"#,
                    e.kind().code(),
                    e.to_string()
                ),
            }
        }
        "parse" => match SerialFormat::new(arg(2), arg(1)).and_then(|f| f.parse(arg(3))) {
            Ok(p) => println!(r#"{{"number": {}, "period": "{}"}}"#, p.number, p.period),
            Err(e) => println!(
                r#"{{"code": "{}", "message": {:?}}}"#,
                e.kind().code(),
                e.to_string()
            ),
        },
        other => {
            eprintln!("unknown mode {other:?}: ddl, create, next, run, render, parse");
            std::process::exit(2);
        }
    }
}

fn bench(dsn: &str, schema: &str, lang: &str, format: &str, zone: &str, calls: u64) {
    use shardid::segment::postgres::DenseIds;
    use std::hint::black_box;
    use std::time::Instant;

    let big = SizePolicy::new().bounds(4_000_000, 4_000_000);
    let dense = DenseIds::connect(dsn, &format!("dense_{lang}"), schema, big).expect("dense");
    let serials =
        Serials::connect(dsn, &format!("ser_{lang}"), format, zone, schema, big).expect("serials");
    let sample = serials.next_serial().expect("a serial").to_string();
    let f = SerialFormat::new(format, zone).expect("a format");
    let time = |f: &dyn Fn()| {
        let start = Instant::now();
        for _ in 0..calls {
            f();
        }
        #[allow(clippy::cast_precision_loss)] // a report
        let ns = start.elapsed().as_nanos() as f64 / calls as f64;
        ns
    };
    let mut rounds: [Vec<f64>; 3] = Default::default();
    for _ in 0..5 {
        rounds[0].push(time(&|| {
            black_box(dense.next_id().expect("an ID"));
        }));
        rounds[1].push(time(&|| {
            black_box(serials.next_serial().expect("a serial"));
        }));
        rounds[2].push(time(&|| {
            black_box(f.parse(black_box(&sample)).expect("parsed"));
        }));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let [d, s, p] = rounds.each_mut().map(median);
    println!("\nRust: ns per call (median of 5 rounds of {calls})");
    println!("  Rust DenseIds::next_id()               {d:8.1}");
    println!("  Rust Serials::next_serial()            {s:8.1}");
    println!("  Rust SerialFormat::parse()             {p:8.1}");
    println!("  next_serial / next_id = {:.2} (at most 3)", s / d);
    println!("  parse / next_id       = {:.2} (at most 3)", p / d);
    serials.close();
    dense.close();
}
