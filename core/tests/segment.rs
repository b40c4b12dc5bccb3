//! The segment allocator, scripted without a database: the order of IDs, prefetching, one
//! fetch in flight, failed fetches, adaptive sizes, strides, giving the tail back, and threads.
mod common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use common::seg;
use shardid::segment::{Empty, Fetch, FillError, Segment, SegmentAllocator, SizePolicy, Unused};

#[test]
fn the_first_call_fetches_once_and_ids_flow_across_segments_in_order() {
    let a = SegmentAllocator::new(SizePolicy::new());
    assert_eq!(a.next_id(0), Err(Empty::Fetch(Fetch { size: 0 })));
    assert_eq!(a.next_id(0), Err(Empty::Wait), "one fetch in flight");
    a.fill(seg(1, 10), 0).unwrap();
    // The first ID used a tenth of the segment: the next fetch is due, once.
    let (id, fetch) = a.next_id(0).unwrap();
    assert_eq!((id, fetch.is_some()), (1, true));
    for want in 2..=10 {
        assert_eq!(a.next_id(0).unwrap(), (want, None));
    }
    assert_eq!(a.next_id(0), Err(Empty::Wait));
    a.fill(seg(11, 10), 0).unwrap();
    let (id, fetch) = a.next_id(0).unwrap();
    assert_eq!(id, 11);
    assert!(fetch.is_some(), "the next one is due again");
}

#[test]
fn priming_fetches_before_the_first_id() {
    let a = SegmentAllocator::new(SizePolicy::new());
    assert_eq!(a.prime(0), Some(Fetch { size: 0 }));
    assert_eq!(a.prime(0), None, "one fetch at a time");
    a.fill(seg(7, 3), 0).unwrap();
    assert_eq!(a.prime(0), None, "the next segment is there");
    assert_eq!(a.next_id(0).unwrap().0, 7);
}

#[test]
fn a_failed_fetch_re_arms_and_an_unasked_fill_is_refused() {
    let a = SegmentAllocator::new(SizePolicy::new());
    assert_eq!(a.fill(seg(1, 5), 0), Err(FillError::NotFetching));
    assert!(matches!(a.next_id(0), Err(Empty::Fetch(_))));
    a.fetch_failed(1_000);
    // Within the backoff, callers wait; after it, the next caller fetches again.
    assert_eq!(a.next_id(1_050), Err(Empty::Wait));
    assert!(matches!(a.next_id(1_100), Err(Empty::Fetch(_))), "re-armed");
    a.fetch_failed(2_000);
    assert_eq!(a.retry_at_ms(), 2_200, "the backoff doubles");
    for _ in 0..10 {
        let _ = a.next_id(u64::MAX / 2);
        a.fetch_failed(10_000);
    }
    assert_eq!(a.retry_at_ms(), 10_000 + SegmentAllocator::MAX_BACKOFF_MS);
    assert!(matches!(a.next_id(20_000), Err(Empty::Fetch(_))));
    for bad in [
        seg(1, 0),
        Segment {
            first: 1,
            count: 5,
            stride: 0,
        },
        seg(u64::MAX - 2, 5),
        seg(0, 1 << 40),
    ] {
        assert_eq!(a.fill(bad, 0), Err(FillError::Invalid), "{bad:?}");
    }
    a.fill(seg(100, 5), 0).unwrap();
    assert_eq!(a.next_id(0).unwrap().0, 100);
}

#[test]
fn strided_segments_give_one_servers_numbers() {
    // Server 1 of 3: 1, 4, 7, ...
    let a = SegmentAllocator::new(SizePolicy::new());
    let _ = a.next_id(0);
    a.fill(
        Segment {
            first: 1,
            count: 4,
            stride: 3,
        },
        0,
    )
    .unwrap();
    let mut ids = [0; 6];
    let (written, fetch) = a.next_ids(&mut ids, 0);
    assert_eq!(written, 4);
    assert_eq!(&ids[..4], [1, 4, 7, 10]);
    assert!(fetch.is_some());
}

#[test]
fn sizes_follow_the_target_lifetime_within_the_bounds() {
    let policy = SizePolicy::new().bounds(100, 800).target_ms(1_000);
    let a = SegmentAllocator::new(policy);
    let next_fetch = |now: u64| loop {
        match a.next_id(now) {
            Ok((_, Some(f))) | Err(Empty::Fetch(f)) => return f.size,
            Ok(_) => {}
            Err(Empty::Wait) => panic!("nothing in flight"),
        }
    };
    assert_eq!(
        next_fetch(0),
        800,
        "bounds of its own: the first asks for 1,000 within them, not the remembered size"
    );
    a.fill(seg(1, 200), 0).unwrap();
    assert_eq!(next_fetch(100), 400, "lasted 100 ms of 1000: doubled");
    a.fill(seg(201, 400), 100).unwrap();
    assert_eq!(next_fetch(200), 800, "doubled, at the maximum");
    a.fill(seg(601, 800), 200).unwrap();
    assert_eq!(next_fetch(300), 800, "the maximum holds");
    a.fill(seg(1401, 800), 300).unwrap();
    assert_eq!(next_fetch(10_000), 400, "lasted far longer: halved");
    a.fill(seg(2201, 400), 10_000).unwrap();
    assert_eq!(next_fetch(11_000), 400, "on target: kept");
}

#[test]
fn the_first_segment_is_the_remembered_size_only_with_the_default_bounds() {
    let first = |policy: SizePolicy| match SegmentAllocator::new(policy).next_id(0) {
        Err(Empty::Fetch(f)) => f.size,
        other => panic!("{other:?}"),
    };
    assert_eq!(first(SizePolicy::new()), 0, "the row's remembered size");
    assert_eq!(
        first(SizePolicy::new().target_ms(5)),
        0,
        "the bounds are the defaults"
    );
    assert_eq!(first(SizePolicy::new().bounds(1, 3)), 3);
    assert_eq!(first(SizePolicy::new().bounds(10, 40)), 40);
    assert_eq!(first(SizePolicy::new().bounds(5_000, 2_000_000)), 5_000);
    assert_eq!(first(SizePolicy::new().bounds(1, 1_000_000)), 1_000);
}

#[test]
fn batches_take_across_segments_and_stop_when_both_are_used() {
    let a = SegmentAllocator::new(SizePolicy::new());
    let _ = a.next_id(0);
    a.fill(seg(1, 3), 0).unwrap();
    let mut ids = [0; 2];
    let (_, fetch) = a.next_ids(&mut ids, 0);
    assert!(fetch.is_some());
    a.fill(seg(4, 3), 0).unwrap();
    let mut more = [0; 10];
    let (written, fetch) = a.next_ids(&mut more, 0);
    assert_eq!(&more[..written], [3, 4, 5, 6]);
    assert!(fetch.is_some(), "the next fetch is due");
}

#[test]
fn the_unused_tail_is_one_run_when_the_next_segment_follows() {
    let a = SegmentAllocator::new(SizePolicy::new());
    assert_eq!(a.unused(), None);
    let _ = a.next_id(0);
    a.fill(seg(1, 10), 0).unwrap();
    for _ in 0..3 {
        let _ = a.next_id(0).unwrap();
    }
    assert_eq!(
        a.unused(),
        Some(Unused {
            first: 4,
            end: 11,
            count: 7,
            stride: 1,
            lost: 0
        })
    );
    // The prefetched segment follows: the rest and it are one run.
    a.fill(seg(11, 10), 0).unwrap();
    assert_eq!(
        a.unused(),
        Some(Unused {
            first: 4,
            end: 21,
            count: 17,
            stride: 1,
            lost: 0
        })
    );
    // Another allocator took 21..31: the next segment does not follow; only it comes back.
    let b = SegmentAllocator::new(SizePolicy::new());
    let _ = b.next_id(0);
    b.fill(seg(1, 10), 0).unwrap();
    let _ = b.next_id(0);
    b.fill(seg(31, 10), 0).unwrap();
    assert_eq!(
        b.unused(),
        Some(Unused {
            first: 31,
            end: 41,
            count: 10,
            stride: 1,
            lost: 9
        })
    );
}

/// A database stand-in: hands out consecutive segments from one counter.
struct Table {
    next: AtomicU64,
    fetches: AtomicUsize,
}

impl Table {
    fn take(&self, size: u64) -> Segment {
        let size = if size == 0 { 500 } else { size };
        self.fetches.fetch_add(1, Ordering::Relaxed);
        Segment {
            first: self.next.fetch_add(size, Ordering::Relaxed),
            count: size,
            stride: 1,
        }
    }
}

/// Takes one ID, fetching synchronously when told to (as a driver would, asynchronously).
fn take(a: &SegmentAllocator, table: &Table) -> u64 {
    loop {
        match a.next_id(0) {
            Ok((id, fetch)) => {
                if let Some(f) = fetch {
                    a.fill(table.take(f.size), 0).unwrap();
                }
                return id;
            }
            Err(Empty::Fetch(f)) => a.fill(table.take(f.size), 0).unwrap(),
            Err(Empty::Wait) => std::thread::yield_now(),
        }
    }
}

#[test]
fn threads_never_get_the_same_id_and_each_thread_sees_them_increase() {
    let a = Arc::new(SegmentAllocator::new(
        SizePolicy::new().bounds(64, 4096).target_ms(1),
    ));
    let table = Arc::new(Table {
        next: AtomicU64::new(1),
        fetches: AtomicUsize::new(0),
    });
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (a, table) = (a.clone(), table.clone());
            std::thread::spawn(move || {
                let ids: Vec<u64> = (0..50_000).map(|_| take(&a, &table)).collect();
                assert!(ids.windows(2).all(|w| w[0] < w[1]), "increasing per caller");
                ids
            })
        })
        .collect();
    let mut all = HashSet::new();
    for t in threads {
        for id in t.join().unwrap() {
            assert!(all.insert(id), "duplicate {id}");
        }
    }
    assert_eq!(all.len(), 400_000);
    // Every ID came from a segment the table handed out.
    assert!(
        all.iter()
            .all(|&id| id >= 1 && id < table.next.load(Ordering::Relaxed))
    );
}

#[test]
fn a_burst_on_an_empty_allocator_makes_one_fetch() {
    let a = Arc::new(SegmentAllocator::new(SizePolicy::new()));
    let barrier = Arc::new(Barrier::new(64));
    let threads: Vec<_> = (0..64)
        .map(|_| {
            let (a, barrier) = (a.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                a.next_id(0)
            })
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let fetches = results
        .iter()
        .filter(|r| matches!(r, Err(Empty::Fetch(_))))
        .count();
    assert_eq!(fetches, 1);
    assert!(results.iter().all(Result::is_err));
}

#[test]
fn a_reset_allocator_forgets_its_segments() {
    let a = SegmentAllocator::new(SizePolicy::new());
    let _ = a.next_id(0);
    a.fill(seg(1, 10), 0).unwrap();
    assert_eq!(a.next_id(0).unwrap().0, 1);
    a.reset();
    // As new: nothing to hand out, the first fetch asks for the remembered size.
    assert_eq!(a.next_id(0), Err(Empty::Fetch(Fetch { size: 0 })));
    assert_eq!(a.unused(), None);
    a.fill(seg(500, 10), 0).unwrap();
    assert_eq!(a.next_id(0).unwrap().0, 500);
}

/// Tiny segments, more threads than cores, each thread fetching synchronously when told to:
/// a switch to the next segment every 2 IDs, so a thread preempted anywhere inside a switch is
/// overtaken by the others. CI once saw a whole segment handed out twice through the Rust
/// `postgres` driver (159,800 unique of 160,000): a thread that had switched segments and not
/// yet marked the old one used let another thread switch back onto it.
#[test]
fn tiny_segments_under_preemption_never_repeat_an_id() {
    const THREADS: usize = 8;
    const EACH: usize = 100_000;
    let a = Arc::new(SegmentAllocator::new(SizePolicy::new().bounds(2, 2)));
    let table = Arc::new(Table {
        next: AtomicU64::new(1),
        fetches: AtomicUsize::new(0),
    });
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let (a, table) = (a.clone(), table.clone());
            std::thread::spawn(move || (0..EACH).map(|_| take(&a, &table)).collect::<Vec<_>>())
        })
        .collect();
    let mut all = HashSet::new();
    let mut repeated = 0;
    for t in threads {
        for id in t.join().unwrap() {
            repeated += usize::from(!all.insert(id));
        }
    }
    assert_eq!(repeated, 0, "IDs handed out twice");
    assert_eq!(all.len(), THREADS * EACH);
}

/// A fetch made and filled by another caller while this one is deciding to fetch (here inside
/// its clock read, between its first look at the next segment and taking the fetch): this
/// caller must not fetch too, or its fill would overwrite the segment that just arrived.
#[test]
fn a_fetch_that_lands_while_another_caller_decides_is_not_made_twice() {
    let a = SegmentAllocator::new(SizePolicy::new().bounds(10, 10));
    assert_eq!(a.next_id(0), Err(Empty::Fetch(Fetch { size: 10 })));
    a.fill(seg(1, 10), 0).unwrap();
    let other_fetched = std::cell::Cell::new(false);
    // The first ID reaches the prefetch threshold: the call looks for a fetch to make.
    let got = a.next_id_with(|| {
        if let Some(fetch) = a.prime(0) {
            other_fetched.set(true);
            assert_eq!(fetch, Fetch { size: 10 });
            a.fill(seg(11, 10), 0).unwrap();
        }
        0
    });
    assert!(
        other_fetched.get(),
        "the other caller's fetch ran inside the decision"
    );
    assert_eq!(got, Ok((1, None)));
    assert!(!a.fetching());
    // The segment that arrived is used, whole, after the current one.
    let rest: Vec<u64> = (0..19).map(|_| a.next_id(0).unwrap().0).collect();
    assert_eq!(rest, (2..=20).collect::<Vec<_>>());
}
