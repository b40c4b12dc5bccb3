//! Public IDs (`shardid::PublicIds`): encode and decode one ID, per encoding, against the
//! `sqids` crate on the same IDs (Sqids encodes without hiding: it is no keyed permutation,
//! but it is the short-ID library users compare with).
//!
//! The IDs are 1,024 consecutive Instagram-layout IDs of one millisecond, as a service makes
//! them; each timed call takes the next.
//!
//! `public_ids_cpu` times the same calls by the thread's CPU time instead of the wall clock
//! (1,024 calls per reading), Sqids' included: on a shared machine, time the thread spends descheduled is then
//! not counted, which the wall clock counts as the calls' own. `layout-decode` (one `Layout::decode` of the same
//! IDs) is the reference the bindings' targets are ratios to.
use std::hint::black_box;

use criterion::{Bencher, Criterion, Throughput, criterion_group, criterion_main};
use shardid::{Encoding, Layout, PublicIds};

const KEY: &[u8; 16] = b"benchmark key 16";

fn ids() -> Vec<u64> {
    let first = Layout::INSTAGRAM.compose(1_700_000_000_000, 5, 0).unwrap();
    (first..first + 1024).collect()
}

/// The thread's CPU time, in nanoseconds.
fn thread_cpu_ns() -> u128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; CLOCK_THREAD_CPUTIME_ID exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut ts) };
    u128::try_from(ts.tv_sec).unwrap_or(0) * 1_000_000_000 + u128::try_from(ts.tv_nsec).unwrap_or(0)
}

/// `iters` calls of `f(i)` (`i` cycling over 0..1024), timed by the thread's CPU time.
fn cpu_time(iters: u64, mut f: impl FnMut(usize)) -> std::time::Duration {
    let mut spent = 0u128;
    let mut left = iters;
    while left > 0 {
        let n = left.min(1024);
        let start = thread_cpu_ns();
        for i in 0..n {
            f(usize::try_from(i).unwrap_or(0));
        }
        spent += thread_cpu_ns() - start;
        left -= n;
    }
    std::time::Duration::from_nanos(u64::try_from(spent).unwrap_or(u64::MAX))
}

/// The clock a group's calls are timed by.
#[derive(Clone, Copy)]
enum Clock {
    Wall,
    ThreadCpu,
}

/// Times `f(i)`, `i` cycling over 0..1024, by `clock`.
fn time_calls<O>(b: &mut Bencher<'_>, clock: Clock, mut f: impl FnMut(usize) -> O) {
    match clock {
        Clock::Wall => {
            let mut i = 0;
            b.iter(|| {
                i = (i + 1) & 1023;
                f(i)
            });
        }
        Clock::ThreadCpu => b.iter_custom(|n| {
            cpu_time(n, |i| {
                black_box(f(i));
            })
        }),
    }
}

/// Every operation of the file's comment, under one clock.
fn bench_group(c: &mut Criterion, name: &str, clock: Clock) {
    let ids = ids();
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(1));
    // The reference: one decode of the same IDs (the bindings' targets are ratios to theirs).
    group.bench_function("layout-decode", |b| {
        time_calls(b, clock, |i| {
            Layout::INSTAGRAM.decode(black_box(ids[i])).unwrap()
        });
    });
    for encoding in Encoding::ALL {
        let public = PublicIds::new(KEY, 0, "note", encoding).unwrap();
        let texts: Vec<String> = ids
            .iter()
            .map(|&id| public.encode(id).unwrap().to_string())
            .collect();
        group.bench_function(format!("shardid-encode-{}", encoding.name()), |b| {
            time_calls(b, clock, |i| public.encode(black_box(ids[i])).unwrap());
        });
        group.bench_function(format!("shardid-decode-{}", encoding.name()), |b| {
            time_calls(b, clock, |i| public.decode(black_box(&texts[i])).unwrap());
        });
    }
    // Sqids' default alphabet (base62) and minimum length; it returns a String.
    let sqids = sqids::Sqids::default();
    let texts: Vec<String> = ids.iter().map(|&id| sqids.encode(&[id]).unwrap()).collect();
    group.bench_function("sqids-encode", |b| {
        time_calls(b, clock, |i| sqids.encode(&[black_box(ids[i])]).unwrap());
    });
    group.bench_function("sqids-decode", |b| {
        time_calls(b, clock, |i| sqids.decode(black_box(&texts[i])));
    });
    group.finish();
}

fn bench_public_ids(c: &mut Criterion) {
    bench_group(c, "public_ids", Clock::Wall);
}

fn bench_public_ids_cpu(c: &mut Criterion) {
    bench_group(c, "public_ids_cpu", Clock::ThreadCpu);
}

criterion_group!(benches, bench_public_ids, bench_public_ids_cpu);
criterion_main!(benches);
