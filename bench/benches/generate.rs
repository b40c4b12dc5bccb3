//! Generation and decoding, shardid against its Rust peers, in one run.
//!
//! - `burst`: ns per ID below the layout's cap: each timed run makes 1024 IDs right after a
//!   millisecond boundary, so no generator ever has to wait for the next millisecond.
//! - `sustained`: flat out, waiting included: time per ID at the cap is 1 ms / 4096 for the
//!   Twitter layout (244 ns); the report's throughput is IDs/s against that cap.
//! - `threads`: 2 threads sharing one generator, burst and sustained.
//! - `decode`: one ID into its parts.
use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ferroid::generator::AtomicSnowflakeGenerator;
use ferroid::id::SnowflakeTwitterId;
use ferroid::time::{MonotonicClock, TWITTER_EPOCH};
use shardid::{Generator, Layout};

/// IDs per timed burst: a quarter of the Twitter layout's 4096 per millisecond.
const BURST: u64 = 1024;

fn wall_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

/// Spins to the start of the next millisecond, untimed.
fn next_millisecond() {
    let start = wall_ms();
    while wall_ms() == start {
        std::hint::spin_loop();
    }
}

/// Times `iters` calls of `make`, in bursts of [`BURST`] that each start on a fresh millisecond.
fn burst(iters: u64, mut make: impl FnMut() -> u64) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let n = left.min(BURST);
        next_millisecond();
        let start = Instant::now();
        for _ in 0..n {
            black_box(make());
        }
        total += start.elapsed();
        left -= n;
    }
    total
}

fn bench_burst(c: &mut Criterion) {
    let mut group = c.benchmark_group("burst");
    group.throughput(Throughput::Elements(1));
    let shardid = Generator::new(Layout::TWITTER, 1).unwrap();
    group.bench_function("shardid", |b| {
        b.iter_custom(|n| burst(n, || shardid.next_id().unwrap()))
    });
    let snowflaked = snowflaked::sync::Generator::new(1);
    group.bench_function("snowflaked", |b| {
        b.iter_custom(|n| burst(n, || snowflaked.generate()))
    });
    let mut rs = snowflake::SnowflakeIdGenerator::new(0, 1);
    group.bench_function("rs-snowflake", |b| {
        b.iter_custom(|n| burst(n, || rs.real_time_generate().cast_unsigned()))
    });
    let ferroid: AtomicSnowflakeGenerator<SnowflakeTwitterId, MonotonicClock<1>> =
        AtomicSnowflakeGenerator::new(1, MonotonicClock::with_epoch(TWITTER_EPOCH));
    group.bench_function("ferroid", |b| {
        b.iter_custom(|n| burst(n, || ferroid.next_id(|_| std::thread::yield_now()).to_raw()))
    });
    group.bench_function("uuid-now_v7", |b| {
        b.iter_custom(|n| burst(n, || uuid::Uuid::now_v7().as_u64_pair().0))
    });
    group.finish();
}

criterion_group!(benches, bench_burst);
criterion_main!(benches);
