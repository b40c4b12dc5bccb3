//! The counters equal what happened: scripted clocks that force a known number of waits,
//! borrowed units and steps back; a segment fetch that fails a known number of times;
//! dictionary hits and misses under 8 threads (no increment lost).
mod common;

use std::cell::Cell;
use std::sync::{Arc, Barrier};

use common::{T0, seg, tiny};
use shardid::segment::{Empty, Fetch, SegmentAllocator, SizePolicy};
use shardid::stats::{DictionaryStats, Family, GeneratorStats, SegmentStats};
use shardid::{Error, Generator, Options};

/// `tiny()` hands out 4 IDs per millisecond.
const PER_UNIT: u64 = 4;

#[test]
fn every_figure_has_one_row_in_the_table_in_field_order() {
    let names: Vec<_> = GeneratorStats::METRICS.iter().map(|m| m.name).collect();
    assert_eq!(
        names,
        [
            "ids",
            "waits",
            "borrowed_units",
            "clock_backwards",
            "clock_backwards_refused",
            "ticker_starts"
        ]
    );
    let mut g = GeneratorStats::default();
    g.waits = 7;
    assert_eq!(g.values()[1], 7);
    assert_eq!(GeneratorStats::from_values(g.values()), g);
    for family in Family::ALL {
        let mut seen = std::collections::HashSet::new();
        for m in family.metrics() {
            assert!(seen.insert(m.name), "{} twice in {}", m.name, family.name());
            assert!(!m.help.is_empty());
        }
    }
    assert_eq!(SegmentStats::LEN, Family::Segments.metrics().len());
    assert_eq!(DictionaryStats::LEN, Family::Dictionary.metrics().len());
    let ids = &GeneratorStats::METRICS[0];
    assert_eq!(
        Family::Generator.prometheus(ids).to_string(),
        "shardid_ids_total"
    );
    let last = SegmentStats::METRICS
        .iter()
        .find(|m| m.name == "fetch_latency_last_ms")
        .unwrap();
    assert_eq!(
        Family::Segments.prometheus(last).to_string(),
        "shardid_segment_fetch_latency_last_seconds"
    );
    assert_eq!(
        Family::Segments.opentelemetry(last).to_string(),
        "shardid.segment.fetch_latency_last"
    );
}

/// A clock stuck until the caller waits: every fifth call finds the unit used up and waits
/// once, for the next unit.
#[test]
fn waits_are_counted_once_per_call_that_waited() {
    const WAITS: u64 = 37;
    let g = Generator::new(tiny(), 1).unwrap();
    let now = Cell::new(T0);
    let mut waited_for = 0;
    for _ in 0..PER_UNIT * (WAITS + 1) {
        g.next_id_with(
            || now.get(),
            |at| {
                waited_for += 1;
                now.set(at);
            },
        )
        .unwrap();
    }
    assert_eq!(waited_for, WAITS);
    let s = g.stats();
    assert_eq!(s.ids, PER_UNIT * (WAITS + 1));
    assert_eq!(s.waits, WAITS);
    assert_eq!((s.borrowed_units, s.clock_backwards), (0, 0));
    assert_eq!(s.clock_backwards_refused, 0);

    // A batch across 5 units on a stuck clock waits 4 times, counted as one call that waited.
    let mut out = [0u64; 20];
    g.next_ids_with(&mut out, || now.get(), |at| now.set(at))
        .unwrap();
    let s = g.stats();
    assert_eq!(s.ids, PER_UNIT * (WAITS + 1) + 20);
    assert_eq!(s.waits, WAITS + 1);
}

/// Each round starts after an idle gap with a clock that stands still: 4 IDs of its unit, then
/// 2 units borrowed (8 IDs), then a refusal to wait for the next unit.
#[test]
fn borrowed_units_are_counted_once_each_singles_and_batches() {
    const ROUNDS: u64 = 25;
    let g = Generator::with_options(tiny(), 2, Options::new().max_borrow_units(2)).unwrap();
    for round in 0..ROUNDS {
        let now = T0 + 100 * round;
        for _ in 0..3 * PER_UNIT {
            g.next_id_at(now).unwrap();
        }
        assert!(matches!(
            g.next_id_at(now),
            Err(Error::SequenceExhausted { .. })
        ));
    }
    let s = g.stats();
    assert_eq!(s.ids, ROUNDS * 3 * PER_UNIT);
    assert_eq!(s.borrowed_units, ROUNDS * 2);
    assert_eq!(s.waits, 0, "next_id_at does not wait");
    assert_eq!(
        s.clock_backwards, 0,
        "running out is not the clock going back"
    );

    // A batch takes its unit and the two borrowed in one step: counted as two units too.
    let mut out = [0u64; 64];
    let n = g.next_ids_at(T0 + 100 * ROUNDS, &mut out).unwrap();
    assert_eq!(n as u64, 3 * PER_UNIT);
    let s = g.stats();
    assert_eq!(s.borrowed_units, ROUNDS * 2 + 2);
    assert_eq!(s.ids, (ROUNDS + 1) * 3 * PER_UNIT);
}

/// A batch that starts in unit 0 (the epoch) and runs into a borrowed unit: one unit
/// borrowed, no step back (the vectors' generator traces found the count's arithmetic
/// overflowing there).
#[test]
fn a_batch_from_the_epoch_into_a_borrowed_unit() {
    let g = Generator::with_options(tiny(), 4, Options::new().max_borrow_units(1)).unwrap();
    let mut out = [0u64; 8];
    assert_eq!(g.next_ids_at(tiny().epoch_ms(), &mut out).unwrap(), 8);
    let s = g.stats();
    assert_eq!((s.ids, s.borrowed_units, s.clock_backwards), (8, 1, 0));
}

/// K times: an ID at a new time, then one at a clock 5 ms behind it (within the tolerance,
/// continued from the last unit); then J clocks further behind than the tolerance, refused.
#[test]
fn clock_steps_back_are_counted_ridden_out_and_refused() {
    const K: u64 = 41;
    const J: u64 = 9;
    let g = Generator::new(tiny(), 3).unwrap();
    for k in 0..K {
        let now = T0 + 10_000 + 10 * k;
        g.next_id_at(now).unwrap();
        g.next_id_at(now - 5).unwrap();
    }
    let s = g.stats();
    assert_eq!(s.ids, 2 * K);
    assert_eq!(s.clock_backwards, K);
    assert_eq!(s.clock_backwards_refused, 0);
    assert_eq!(
        s.borrowed_units, 0,
        "continuing a begun unit borrows nothing"
    );
    for j in 0..J {
        let err = g.next_id_at(T0 + 10_000 - 2_000 - j).unwrap_err();
        assert!(matches!(err, Error::ClockMovedBackwards { .. }), "{err:?}");
    }
    let s = g.stats();
    assert_eq!(s.clock_backwards_refused, J);
    assert_eq!(
        (s.clock_backwards, s.ids),
        (K, 2 * K),
        "refusals issue nothing"
    );
}

/// 8 threads on one shared state (and one owned generator each run in parallel too): the
/// count of IDs is exact once they are done, though no ID is counted one by one.
#[test]
fn ids_are_counted_exactly_under_8_threads() {
    const THREADS: u64 = 8;
    const EACH: u64 = 20_000;
    let layout = shardid::Layout::TWITTER;
    let shard = 1001 % (1 << layout.shard_bits());
    let before = Generator::shared(layout, shard, Options::new())
        .unwrap()
        .stats()
        .ids;
    let barrier = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let g = Generator::shared(layout, shard, Options::new()).unwrap();
                barrier.wait();
                let mut out = [0u64; 7];
                let mut made = 0;
                while made < EACH {
                    if t % 2 == 0 {
                        g.next_id().unwrap();
                        made += 1;
                    } else {
                        let n = (EACH - made).min(7) as usize;
                        g.next_ids(&mut out[..n]).unwrap();
                        made += n as u64;
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = Generator::shared(layout, shard, Options::new())
        .unwrap()
        .stats();
    assert_eq!(s.ids - before, THREADS * EACH);
    assert!(s.ticker_starts >= 1, "a burst starts the ticker");
}

/// 8 threads race for the slots of one unit ahead of their clock: every call that got one is
/// counted once as a step back, though calls that lost a race counted and took it back.
#[test]
fn steps_back_are_counted_exactly_under_8_threads() {
    const EACH: u64 = 50_000;
    // 2^20 IDs per unit: room for every call in one unit.
    let layout = shardid::Layout::builder()
        .epoch_ms(T0 - 1_000)
        .bits(41, 2, 20)
        .build()
        .unwrap();
    let g = Arc::new(Generator::new(layout, 1).unwrap());
    let now = T0 + 10_000;
    g.next_id_at(now).unwrap();
    let barrier = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (g, barrier) = (Arc::clone(&g), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                for _ in 0..EACH {
                    g.next_id_at(now - 5).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = g.stats();
    assert_eq!(s.ids, 1 + 8 * EACH);
    assert_eq!(s.clock_backwards, 8 * EACH);
}

/// A state that starts above a recorded ceiling counts the slots below it as skipped, not as
/// IDs.
#[test]
fn a_state_started_above_a_ceiling_counts_only_its_own_ids() {
    // The first slot of the unit at T0 + 1 s (tiny()'s epoch is T0 - 1 s).
    let state = shardid::State::starting_at(2_000 * PER_UNIT);
    let g = Generator::with_state(&state, tiny(), 1, Options::new()).unwrap();
    assert_eq!(g.stats().ids, 0);
    g.next_id_at(T0 + 1_000).unwrap();
    g.next_id_at(T0 + 50_000).unwrap();
    assert_eq!(state.stats().ids, 2);
}

/// The fetch fails J times (each after a known latency by the driver's clock), then succeeds.
#[test]
fn failed_fetches_and_their_latency_are_counted() {
    const J: u64 = 6;
    let a = SegmentAllocator::new(SizePolicy::new());
    let mut now = 1_000u64;
    let mut latencies = Vec::new();
    for took in [0, 3, 7, 40, 600, 6_000] {
        assert!(matches!(a.next_id(now), Err(Empty::Fetch(Fetch { .. }))));
        now += took;
        a.fetch_failed(now);
        latencies.push(took);
        now = a.retry_at_ms();
    }
    assert!(matches!(a.next_id(now), Err(Empty::Fetch(Fetch { .. }))));
    now += 2;
    a.fill(seg(1, 10), now).unwrap();
    latencies.push(2);
    for _ in 0..3 {
        a.next_id(now).unwrap();
    }
    let s = a.stats();
    assert_eq!(s.failed_fetches, J);
    assert_eq!(s.fetches, 1);
    assert_eq!(s.empty_waits, J + 1, "every call that found nothing");
    assert_eq!(s.fetch_latency_last_ms, 2);
    assert_eq!(s.fetch_latency_max_ms, 6_000);
    assert_eq!(s.fetch_latency_sum_ms, latencies.iter().sum::<u64>());
    let le = |bound: u64| latencies.iter().filter(|&&l| l <= bound).count() as u64;
    assert_eq!(s.fetch_latency_le_1ms, le(1));
    assert_eq!(s.fetch_latency_le_5ms, le(5));
    assert_eq!(s.fetch_latency_le_10ms, le(10));
    assert_eq!(s.fetch_latency_le_50ms, le(50));
    assert_eq!(s.fetch_latency_le_100ms, le(100));
    assert_eq!(s.fetch_latency_le_500ms, le(500));
    assert_eq!(s.fetch_latency_le_1000ms, le(1_000));
    assert_eq!(s.fetch_latency_le_5000ms, le(5_000));
    assert_eq!(s.fetch_latency_le_inf, J + 1);
    assert_eq!(s.remaining, 7);
    assert_eq!(s.skipped, 0);

    // Closing without giving the 7 back makes 7 holes; a retry after a wait is not a second
    // empty wait.
    a.settle(a.unused().unwrap(), false);
    assert_eq!(a.stats().skipped, 7);
    for _ in 0..7 {
        a.next_id(now).unwrap();
    }
    assert!(a.retry_id_with(|| now).is_err());
    assert_eq!(a.stats().empty_waits, J + 1);
    assert_eq!(a.stats().remaining, 0);
}

/// 8 threads ask a cache for 100 strings (and 100 IDs), half of them cached, by single
/// lookups and by batches: every hit and miss is counted.
#[test]
fn dictionary_hits_and_misses_are_counted_exactly_under_8_threads() {
    const THREADS: u64 = 8;
    const ROUNDS: u64 = 2_000;
    let cache = Arc::new(shardid::dictionary::Cache::new(10_000));
    for i in 0..50u64 {
        cache.insert(&format!("v{i}"), i + 1);
    }
    let barrier = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let (cache, barrier) = (Arc::clone(&cache), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                for r in 0..ROUNDS {
                    let (a, b) = (r % 100, (r + 1) % 100);
                    cache.id(&format!("v{a}"));
                    cache.plan_ids(&[format!("v{a}"), format!("v{b}")]).unwrap();
                    cache.value(a + 1);
                    cache.plan_values(&[a + 1, b + 1]).unwrap();
                    cache.sent(r % 10 == 0);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let cached = |x: u64| u64::from(x < 50);
    let (mut single_hits, mut batch_hits) = (0, 0);
    for r in 0..ROUNDS {
        let (a, b) = (r % 100, (r + 1) % 100);
        single_hits += cached(a);
        batch_hits += cached(a) + cached(b);
    }
    let s = cache.stats();
    // A single lookup counts its hit; its miss is the batch's to count (the one that asks).
    assert_eq!(s.id_hits, THREADS * (single_hits + batch_hits));
    assert_eq!(s.id_misses, THREADS * (2 * ROUNDS - batch_hits));
    assert_eq!(s.value_hits, THREADS * (single_hits + batch_hits));
    assert_eq!(s.value_misses, THREADS * (2 * ROUNDS - batch_hits));
    assert_eq!(s.statements, THREADS * ROUNDS);
    assert_eq!(s.retries, THREADS * ROUNDS / 10);
}

/// What exporters read: every shared generator state by layout and shard, and the allocators
/// and dictionaries registered while they live.
#[test]
fn collect_reports_shared_generators_and_registered_objects_while_they_live() {
    use shardid::stats::{Sample, collect, register_dictionary, register_segments};
    let g = Generator::shared(shardid::Layout::SONYFLAKE, 777, Options::new()).unwrap();
    for _ in 0..5 {
        g.next_id().unwrap();
    }
    let allocator = Arc::new(SegmentAllocator::new(SizePolicy::new()));
    register_segments(&allocator, "seg", "orders");
    let cache = Arc::new(shardid::dictionary::Cache::new(10));
    register_dictionary(&cache, "dict", "tags");
    cache.sent(false);
    let find = |samples: &[Sample], family: Family, labels: &[&str]| {
        samples
            .iter()
            .find(|s| s.family == family && s.labels == labels)
            .map(|s| s.values.clone())
    };
    let samples = collect();
    let generator = find(&samples, Family::Generator, &["SONYFLAKE", "777"]).unwrap();
    assert_eq!(generator[0], 5, "ids");
    let segments = find(&samples, Family::Segments, &["seg", "orders"]).unwrap();
    assert_eq!(segments.len(), SegmentStats::LEN);
    let dictionary = find(&samples, Family::Dictionary, &["dict", "tags"]).unwrap();
    assert_eq!(dictionary[4], 1, "statements");
    drop(allocator);
    drop(cache);
    let samples = collect();
    assert!(find(&samples, Family::Segments, &["seg", "orders"]).is_none());
    assert!(find(&samples, Family::Dictionary, &["dict", "tags"]).is_none());
}

/// An object unregistered is no longer reported though it lives (Node's closed allocators
/// live on in its table), and only that one: another with the same labels still is.
#[test]
fn unregistered_objects_are_no_longer_reported_while_they_live() {
    use shardid::stats::{
        collect, register_dictionary, register_segments, unregister_dictionary, unregister_segments,
    };
    let policy = SizePolicy::new();
    let (a, b) = (
        Arc::new(SegmentAllocator::new(policy)),
        Arc::new(SegmentAllocator::new(policy)),
    );
    register_segments(&a, "unreg", "twice");
    register_segments(&b, "unreg", "twice");
    assert!(a.prime(0).is_some());
    a.fill(
        shardid::segment::Segment {
            first: 1,
            count: 7,
            stride: 1,
        },
        0,
    )
    .unwrap();
    let cache = Arc::new(shardid::dictionary::Cache::new(10));
    register_dictionary(&cache, "unreg", "topic");
    // Fetches (the first figure): a's one, added to b's none under the same labels.
    let fetches = |labels: &[&str]| {
        collect()
            .into_iter()
            .find(|s| s.family == Family::Segments && s.labels == labels)
            .map(|s| s.values[0])
    };
    let dictionary = || {
        collect()
            .iter()
            .any(|s| s.family == Family::Dictionary && s.labels == ["unreg", "topic"])
    };
    assert_eq!(fetches(&["unreg", "twice"]), Some(1));
    assert!(dictionary());
    unregister_segments(&a);
    assert_eq!(fetches(&["unreg", "twice"]), Some(0), "b is still reported");
    unregister_segments(&b);
    assert_eq!(fetches(&["unreg", "twice"]), None);
    unregister_dictionary(&cache);
    assert!(!dictionary());
    // Unregistering again, or what was never registered, is nothing.
    unregister_segments(&a);
    unregister_dictionary(&Arc::new(shardid::dictionary::Cache::new(1)));
}

/// The help of a duration names no unit: the exporters expose it in different ones (Prometheus
/// in seconds, OpenTelemetry in milliseconds), so a unit in the text would be false in one.
/// (Other texts may mention times: the ticker stops "after 256 ms".)
#[test]
fn help_texts_of_durations_state_no_unit() {
    for family in Family::ALL {
        for metric in family.metrics().iter().filter(|m| m.in_ms()) {
            let help = metric.help.to_lowercase();
            let words: Vec<&str> = help
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '\''))
                .filter(|w| !w.is_empty())
                .collect();
            for unit in [
                "ms",
                "s",
                "millisecond",
                "milliseconds",
                "second",
                "seconds",
            ] {
                assert!(
                    !words.contains(&unit),
                    "{}.{}: {:?} says {unit}",
                    family.name(),
                    metric.name,
                    metric.help
                );
            }
        }
    }
}
