//! Generation and decoding, shardid against its Rust peers, in one run.
//!
//! - `burst`: ns per ID below the layout's cap: each timed run makes 1024 IDs right after a
//!   millisecond boundary, so no generator ever has to wait for the next millisecond; also
//!   shardid on a shard leased from lock files (`shardid::lease`) and from a database (its
//!   ceiling generator with an expiring lease's hold).
//! - `sustained`: flat out, waiting included: time per ID at the cap is 1 ms / 4096 for the
//!   Twitter layout (244 ns); the report's throughput is IDs/s against that cap.
//! - `threads`: 2 threads sharing one generator, burst and sustained.
//! - `decode`: one ID into its parts.
use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ferroid::generator::AtomicSnowflakeGenerator;
use ferroid::id::SnowflakeTwitterId;
use ferroid::time::{MonotonicClock, TWITTER_EPOCH};
use shardid::{Generator, Layout};
use shardid_bench::{BURST, burst, next_millisecond};

fn bench_burst(c: &mut Criterion) {
    let mut group = c.benchmark_group("burst");
    group.throughput(Throughput::Elements(1));
    let shardid = Generator::new(Layout::TWITTER, 1).unwrap();
    group.bench_function("shardid", |b| {
        b.iter_custom(|n| burst(n, || shardid.next_id().unwrap()));
    });
    // The same on a leased shard: the lease adds a ceiling check per ID and a lock-file
    // write every 100 ms (both timed here).
    let dir = std::env::temp_dir().join(format!("shardid-bench-lease-{}", std::process::id()));
    let leased = shardid::lease::LeasedGenerator::acquire(
        &dir,
        0..1,
        Layout::TWITTER,
        shardid::Options::new(),
    )
    .unwrap();
    group.bench_function("shardid-leased", |b| {
        b.iter_custom(|n| burst(n, || leased.next_id().unwrap()));
    });
    // A database lease's generator (`shardid::lease::postgres`, Python's and Node's
    // `PostgresLease`): the ceiling check per ID, an expiring lease's hold, and a ceiling
    // "written" to memory every 100 ms (the database's round trip is not timed here).
    let ceiling = database_lease();
    group.bench_function("shardid-db-lease", |b| {
        b.iter_custom(|n| burst(n, || ceiling.next_id().unwrap()));
    });
    let snowflaked = snowflaked::sync::Generator::new(1);
    group.bench_function("snowflaked", |b| {
        b.iter_custom(|n| burst(n, || snowflaked.generate()));
    });
    let mut rs = snowflake::SnowflakeIdGenerator::new(0, 1);
    group.bench_function("rs-snowflake", |b| {
        b.iter_custom(|n| burst(n, || rs.real_time_generate().cast_unsigned()));
    });
    let ferroid: AtomicSnowflakeGenerator<SnowflakeTwitterId, MonotonicClock<1>> =
        AtomicSnowflakeGenerator::new(1, MonotonicClock::with_epoch(TWITTER_EPOCH));
    group.bench_function("ferroid", |b| {
        b.iter_custom(|n| burst(n, || ferroid.next_id(|_| std::thread::yield_now()).to_raw()));
    });
    group.bench_function("uuid-now_v7", |b| {
        b.iter_custom(|n| burst(n, || uuid::Uuid::now_v7().as_u64_pair().0));
    });
    group.finish();
    drop(leased);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A ceiling store that records in memory, renewing an expiring lease's hold as a database's
/// ceiling write does.
#[derive(Debug)]
struct Memory(std::sync::Arc<shardid::lease::Hold>);

impl shardid::lease::CeilingStore for Memory {
    fn store(&self, _at_least: u64, wanted: u64) -> std::io::Result<u64> {
        let sent = self
            .0
            .sending()
            .ok_or_else(|| std::io::Error::other("lost"))?;
        self.0.renewed(sent);
        Ok(wanted)
    }
}

fn database_lease() -> shardid::lease::CeilingGenerator {
    let hold = std::sync::Arc::new(shardid::lease::Hold::new(
        10_000,
        shardid::lease::monotonic_ms(),
    ));
    shardid::lease::CeilingGenerator::new(
        Layout::TWITTER,
        3,
        shardid::Options::new(),
        None,
        Box::new(Memory(std::sync::Arc::clone(&hold))),
    )
    .unwrap()
    .with_hold(hold)
}

/// Flat out for `iters` IDs, waiting included: at the cap, 1 ms / 4096 per Twitter-layout ID.
fn bench_sustained(c: &mut Criterion) {
    let mut group = c.benchmark_group("sustained");
    group.throughput(Throughput::Elements(1));
    group.sample_size(20);
    let shardid = Generator::new(Layout::TWITTER, 2).unwrap();
    group.bench_function("shardid", |b| b.iter(|| shardid.next_id().unwrap()));
    group.bench_function("shardid-batch", |b| {
        let mut buf = vec![0u64; 4096];
        b.iter_custom(|n| {
            let start = Instant::now();
            let mut left = n;
            while left > 0 {
                let k = usize::try_from(left.min(4096)).unwrap();
                shardid.next_ids(&mut buf[..k]).unwrap();
                left -= k as u64;
            }
            start.elapsed()
        });
    });
    let snowflaked = snowflaked::sync::Generator::new(2);
    group.bench_function("snowflaked", |b| b.iter(|| snowflaked.generate::<u64>()));
    let ferroid: AtomicSnowflakeGenerator<SnowflakeTwitterId, MonotonicClock<1>> =
        AtomicSnowflakeGenerator::new(2, MonotonicClock::with_epoch(TWITTER_EPOCH));
    group.bench_function("ferroid", |b| {
        b.iter(|| ferroid.next_id(|_| std::thread::yield_now()).to_raw());
    });
    group.finish();
}

/// Two threads sharing one generator, `iters` IDs each. In burst mode both threads make
/// `BURST / 2` IDs right after the same millisecond boundary (the pair stays below the cap and
/// really contends); in sustained mode they run flat out. Reports the time per ID of the pair.
fn two_threads<G: Sync>(
    iters: u64,
    g: &G,
    make: impl Fn(&G) -> u64 + Sync,
    burst_mode: bool,
) -> Duration {
    let barrier = Barrier::new(2);
    let run = |leader: bool| {
        let mut total = Duration::ZERO;
        let mut left = iters;
        let chunk = if burst_mode { BURST / 2 } else { iters.max(1) };
        while left > 0 {
            let n = left.min(chunk);
            if burst_mode && leader {
                next_millisecond();
            }
            barrier.wait();
            let start = Instant::now();
            for _ in 0..n {
                black_box(make(g));
            }
            total += start.elapsed();
            left -= n;
        }
        total
    };
    let (a, b) = std::thread::scope(|s| {
        let other = s.spawn(|| run(false));
        (run(true), other.join().unwrap())
    });
    a.max(b) / 2
}

fn bench_threads(c: &mut Criterion) {
    let mut group = c.benchmark_group("two_threads");
    group.throughput(Throughput::Elements(1));
    group.sample_size(20);
    let shardid = Generator::new(Layout::TWITTER, 3).unwrap();
    let snowflaked = snowflaked::sync::Generator::new(3);
    for (mode, burst_mode) in [("burst", true), ("sustained", false)] {
        group.bench_function(format!("shardid-{mode}"), |b| {
            b.iter_custom(|n| two_threads(n, &shardid, |g| g.next_id().unwrap(), burst_mode));
        });
        group.bench_function(format!("snowflaked-{mode}"), |b| {
            b.iter_custom(|n| {
                two_threads(
                    n,
                    &snowflaked,
                    snowflaked::sync::Generator::generate,
                    burst_mode,
                )
            });
        });
    }
    group.finish();
}

fn bench_decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode");
    group.throughput(Throughput::Elements(1));
    let id = 1_050_118_621_198_921_728u64;
    group.bench_function("shardid", |b| {
        b.iter(|| {
            let p = Layout::TWITTER.decode(black_box(id)).unwrap();
            p.timestamp_ms ^ p.shard ^ p.sequence
        });
    });
    group.bench_function("snowflaked", |b| {
        use snowflaked::Snowflake;
        b.iter(|| {
            let id = black_box(id);
            id.timestamp() ^ id.instance() ^ id.sequence()
        });
    });
    group.finish();
}

criterion_group!(
    benches,
    bench_burst,
    bench_sustained,
    bench_threads,
    bench_decode
);
criterion_main!(benches);
