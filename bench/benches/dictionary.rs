//! The dictionary's client-side cache (`shardid::dictionary::Cache`): what a cached
//! `Dictionary::id` / `value` costs in Rust (the client adds one `Option` check), against a
//! plain `std::collections::HashMap` lookup of the same strings (no bound, no lock) for scale.
//!
//! - `hit`: one cached string → ID, over 10,000 strings of 20-odd bytes;
//! - `value`: one cached ID → string;
//! - `batch100`: `plan_ids` of 100 cached strings, per string;
//! - `threads`: 2 threads looking up at once, per lookup.
use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shardid::dictionary::Cache;

fn strings() -> Vec<String> {
    (0..10_000)
        .map(|i| format!("https://example.com/{i}"))
        .collect()
}

fn bench(c: &mut Criterion) {
    let values = strings();
    let cache = Cache::new(100_000);
    let mut map: HashMap<String, u64> = HashMap::new();
    for (i, v) in values.iter().enumerate() {
        cache.insert(v, i as u64);
        map.insert(v.clone(), i as u64);
    }
    let mut group = c.benchmark_group("dictionary");
    group.throughput(Throughput::Elements(1));
    let mut i = 0;
    group.bench_function("hit/shardid-cache", |b| {
        b.iter(|| {
            i = (i + 7919) % values.len();
            black_box(cache.id(black_box(&values[i])))
        });
    });
    group.bench_function("hit/std-hashmap", |b| {
        b.iter(|| {
            i = (i + 7919) % values.len();
            black_box(map.get(black_box(values[i].as_str())).copied())
        });
    });
    group.bench_function("value/shardid-cache", |b| {
        b.iter(|| {
            i = (i + 7919) % values.len();
            black_box(cache.value(black_box(i as u64)))
        });
    });
    let batches: Vec<&[String]> = values.chunks(100).collect();
    group.throughput(Throughput::Elements(100));
    group.bench_function("batch100/shardid-cache", |b| {
        b.iter(|| {
            i = (i + 1) % batches.len();
            black_box(cache.plan_ids(black_box(batches[i])).ok())
        });
    });
    group.throughput(Throughput::Elements(1));
    group.bench_function("threads2/shardid-cache", |b| {
        b.iter_custom(|n| {
            let barrier = Barrier::new(2);
            let per = n.div_ceil(2);
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..2)
                    .map(|t| {
                        let (cache, values, barrier) = (&cache, &values, &barrier);
                        s.spawn(move || {
                            barrier.wait();
                            let start = Instant::now();
                            let mut k = t * 5000;
                            for _ in 0..per {
                                k = (k + 7919) % values.len();
                                black_box(cache.id(&values[k]));
                            }
                            start.elapsed()
                        })
                    })
                    .collect();
                let total: Duration = handles
                    .into_iter()
                    .map(|h| h.join().unwrap())
                    .max()
                    .unwrap();
                total
            })
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
