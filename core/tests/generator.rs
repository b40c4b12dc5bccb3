//! The generator under scripted clocks, exhaustion, borrowing, expiry, threads and handles.
#[cfg(feature = "std")]
use std::{collections::HashSet, sync::Arc};

mod common;

use common::{T0, tiny};
use shardid::{Error, Generator, Layout, Options};

#[test]
fn clock_standing_still_counts_the_sequence_up() {
    let g = Generator::new(Layout::TWITTER, 7).unwrap();
    let ids: Vec<u64> = (0..5).map(|_| g.next_id_at(T0).unwrap()).collect();
    for (seq, id) in ids.iter().enumerate() {
        let parts = Layout::TWITTER.decode(*id).unwrap();
        assert_eq!(
            (parts.timestamp_ms, parts.shard, parts.sequence),
            (T0, 7, seq as u64)
        );
    }
}

#[test]
fn a_new_time_unit_restarts_the_sequence() {
    let g = Generator::new(Layout::TWITTER, 7).unwrap();
    g.next_id_at(T0).unwrap();
    g.next_id_at(T0).unwrap();
    let parts = Layout::TWITTER
        .decode(g.next_id_at(T0 + 1).unwrap())
        .unwrap();
    assert_eq!((parts.timestamp_ms, parts.sequence), (T0 + 1, 0));
}

#[test]
fn exhaustion_says_when_to_retry_and_issues_nothing() {
    let g = Generator::new(tiny(), 1).unwrap();
    for _ in 0..4 {
        g.next_id_at(T0).unwrap();
    }
    assert_eq!(
        g.next_id_at(T0),
        Err(Error::SequenceExhausted {
            retry_at_ms: T0 + 1
        })
    );
    assert_eq!(
        g.next_id_at(T0),
        Err(Error::SequenceExhausted {
            retry_at_ms: T0 + 1
        })
    );
    // Nothing was consumed by the failed calls: the next unit starts at sequence 0.
    let parts = tiny().decode(g.next_id_at(T0 + 1).unwrap()).unwrap();
    assert_eq!((parts.timestamp_ms, parts.sequence), (T0 + 1, 0));
}

#[test]
fn borrowing_runs_ahead_a_bounded_number_of_units_and_reports_drift() {
    let g = Generator::with_options(tiny(), 1, Options::new().max_borrow_units(2)).unwrap();
    let ids: Vec<u64> = (0..12).map(|_| g.next_id_at(T0).unwrap()).collect();
    let last = tiny().decode(ids[11]).unwrap();
    assert_eq!((last.timestamp_ms, last.sequence), (T0 + 2, 3));
    assert_eq!(g.drift_ms(T0), 2);
    assert_eq!(
        g.next_id_at(T0),
        Err(Error::SequenceExhausted {
            retry_at_ms: T0 + 1
        })
    );
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    // Once the clock catches up the drift is gone.
    assert!(g.next_id_at(T0 + 3).is_ok());
    assert_eq!(g.drift_ms(T0 + 3), 0);
}

#[test]
fn clock_back_within_tolerance_continues_from_the_last_unit() {
    let g = Generator::with_options(Layout::TWITTER, 1, Options::new().backwards_tolerance_ms(5))
        .unwrap();
    let a = g.next_id_at(T0 + 10).unwrap();
    let b = g.next_id_at(T0 + 5).unwrap();
    assert_eq!(b, a + 1, "same unit, next sequence");
    assert_eq!(
        g.next_id_at(T0 + 4),
        Err(Error::ClockMovedBackwards {
            behind_ms: 6,
            tolerance_ms: 5
        })
    );
    assert!(g.next_id_at(T0 + 11).unwrap() > b);
}

#[test]
fn clock_back_beyond_tolerance_after_exhaustion_is_a_clock_error_not_a_long_wait() {
    let g = Generator::with_options(tiny(), 1, Options::new().backwards_tolerance_ms(0)).unwrap();
    for _ in 0..4 {
        g.next_id_at(T0).unwrap();
    }
    assert_eq!(
        g.next_id_at(T0 - 500),
        Err(Error::ClockMovedBackwards {
            behind_ms: 500,
            tolerance_ms: 0
        })
    );
}

#[test]
fn before_epoch_and_past_expiry_are_errors_never_wrapped_ids() {
    let l = Layout::INSTAGRAM;
    let g = Generator::new(l, 1).unwrap();
    assert!(matches!(
        g.next_id_at(0),
        Err(Error::TimestampBeforeEpoch { .. })
    ));
    assert!(matches!(
        g.next_id_at(l.expires_at_ms() + 1),
        Err(Error::TimestampPastExpiry { .. })
    ));
    // The very last unit can be used to its end, and then the layout is over.
    for seq in 0..1024 {
        let id = g.next_id_at(l.expires_at_ms()).unwrap();
        assert_eq!(l.decode(id).unwrap().sequence, seq);
        assert!(id.cast_signed() > 0);
    }
    assert!(matches!(
        g.next_id_at(l.expires_at_ms()),
        Err(Error::TimestampPastExpiry { .. })
    ));
}

/// The generator computes its time unit itself (a fast path for 1 ms units): at every edge
/// it must agree with the layout, for millisecond and 10 ms layouts, and for a shardless
/// unsigned 64-bit layout whose generator stops one unit before the layout does.
#[test]
fn the_generators_time_units_agree_with_the_layout_at_every_edge() {
    let shardless = Layout::builder()
        .epoch_ms(T0)
        .bits(52, 0, 12)
        .signed(false)
        .build()
        .unwrap();
    for l in [Layout::TWITTER, Layout::SONYFLAKE, tiny(), shardless] {
        let g = Generator::new(l, 0).unwrap();
        assert_eq!(
            g.next_id_at(l.epoch_ms() - 1),
            Err(Error::TimestampBeforeEpoch {
                timestamp_ms: l.epoch_ms() - 1,
                epoch_ms: l.epoch_ms()
            }),
            "{l:?}"
        );
        for offset in [0, 1, l.unit_ms() - 1, l.unit_ms(), 7 * l.unit_ms() + 3] {
            let now = l.epoch_ms() + offset;
            let id = Generator::new(l, 0).unwrap().next_id_at(now).unwrap();
            let start = now - (now - l.epoch_ms()) % l.unit_ms();
            assert_eq!(
                l.decode(id).unwrap().timestamp_ms,
                start,
                "{l:?} at +{offset}"
            );
            assert!(id >= l.min_id_at(now).unwrap() && id <= l.max_id_at(now).unwrap());
        }
        let past = g.next_id_at(l.expires_at_ms() + 1).unwrap_err();
        assert!(
            matches!(past, Error::TimestampPastExpiry { .. }),
            "{l:?}: {past:?}"
        );
        let last = Generator::new(l, 0).unwrap().next_id_at(l.expires_at_ms());
        match last {
            Ok(id) => assert_eq!(
                l.decode(id).unwrap().timestamp_ms + l.unit_ms() - 1,
                l.expires_at_ms()
            ),
            // The shardless unsigned 64-bit layout's generator cannot use the last unit (its
            // state word would overflow); it says so instead of wrapping.
            Err(e) => {
                assert_eq!(l, shardless, "{e:?}");
                assert!(
                    matches!(e, Error::TimestampPastExpiry { expires_at_ms, .. } if expires_at_ms < l.expires_at_ms())
                );
            }
        }
    }
}

#[test]
fn shard_out_of_range_is_rejected() {
    assert_eq!(
        Generator::new(Layout::TWITTER, 1024).err(),
        Some(Error::ShardOutOfRange {
            shard: 1024,
            max: 1023
        })
    );
}

#[test]
fn batch_takes_the_rest_of_the_unit_in_one_step() {
    let g = Generator::new(tiny(), 2).unwrap();
    g.next_id_at(T0).unwrap();
    let mut out = [0u64; 10];
    assert_eq!(g.next_ids_at(T0, &mut out), Ok(3));
    let seqs: Vec<u64> = out[..3]
        .iter()
        .map(|&id| tiny().decode(id).unwrap().sequence)
        .collect();
    assert_eq!(seqs, [1, 2, 3]);
    assert_eq!(out[3..], [0; 7], "only the written prefix is touched");
    assert_eq!(
        g.next_ids_at(T0, &mut out),
        Err(Error::SequenceExhausted {
            retry_at_ms: T0 + 1
        })
    );
    assert_eq!(g.next_ids_at(T0 + 1, &mut out[..2]), Ok(2));
    assert_eq!(g.next_ids_at(T0, &mut []), Ok(0));
}

#[test]
fn batch_with_borrowing_spans_units() {
    let g = Generator::with_options(tiny(), 2, Options::new().max_borrow_units(1)).unwrap();
    let mut out = [0u64; 10];
    assert_eq!(g.next_ids_at(T0, &mut out), Ok(8));
    assert!(
        out[..8]
            .windows(2)
            .all(|w| w[1] == w[0] + 1 || tiny().decode(w[1]).unwrap().sequence == 0)
    );
}

#[test]
#[cfg(feature = "std")]
fn threads_sharing_one_generator_never_duplicate() {
    const THREADS: usize = 4;
    const PER_THREAD: usize = 500_000;
    let g = Arc::new(Generator::new(Layout::TWITTER, 9).unwrap());
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let g = Arc::clone(&g);
            std::thread::spawn(move || {
                let ids: Vec<u64> = (0..PER_THREAD).map(|_| g.next_id().unwrap()).collect();
                assert!(
                    ids.windows(2).all(|w| w[0] < w[1]),
                    "strictly increasing per thread"
                );
                ids
            })
        })
        .collect();
    let mut seen = HashSet::with_capacity(THREADS * PER_THREAD);
    for h in handles {
        for id in h.join().unwrap() {
            assert!(seen.insert(id), "duplicate {id}");
        }
    }
    assert_eq!(seen.len(), THREADS * PER_THREAD);
}

#[test]
#[cfg(feature = "std")]
fn threads_mixing_single_and_batch_calls_never_duplicate() {
    let g = Arc::new(Generator::new(Layout::INSTAGRAM, 1).unwrap());
    let single = {
        let g = Arc::clone(&g);
        std::thread::spawn(move || {
            (0..300_000)
                .map(|_| g.next_id().unwrap())
                .collect::<Vec<_>>()
        })
    };
    let batch = {
        let g = Arc::clone(&g);
        std::thread::spawn(move || {
            let mut out = vec![0u64; 300_000];
            for chunk in out.chunks_mut(777) {
                g.next_ids(chunk).unwrap();
            }
            out
        })
    };
    let mut seen = HashSet::new();
    for id in single
        .join()
        .unwrap()
        .into_iter()
        .chain(batch.join().unwrap())
    {
        assert!(seen.insert(id), "duplicate {id}");
    }
}

#[test]
#[cfg(feature = "std")]
fn shared_handles_for_one_shard_share_one_state() {
    let layout = Layout::builder()
        .epoch_ms(T0 - 5)
        .bits(41, 10, 12)
        .build()
        .unwrap();
    let first = Generator::shared(layout, 4, Options::new()).unwrap();
    let second = Generator::shared(layout, 4, Options::new()).unwrap();
    let other_shard = Generator::shared(layout, 5, Options::new()).unwrap();
    let x = first.next_id_at(T0).unwrap();
    let y = second.next_id_at(T0).unwrap();
    assert_eq!(
        y,
        x + 1,
        "the second handle continues the first one's sequence"
    );
    let z = other_shard.next_id_at(T0).unwrap();
    assert_eq!(
        layout.decode(z).unwrap().sequence,
        0,
        "another shard has its own state"
    );
    // Handles made on different threads share it too.
    let from_thread = std::thread::spawn(move || {
        Generator::shared(layout, 4, Options::new())
            .unwrap()
            .next_id_at(T0)
            .unwrap()
    });
    assert_eq!(from_thread.join().unwrap(), y + 1);
    assert_eq!(
        Generator::shared(layout, 1024, Options::new()).err(),
        Some(Error::ShardOutOfRange {
            shard: 1024,
            max: 1023
        })
    );
}

#[test]
#[cfg(feature = "std")]
fn the_process_clock_never_goes_backwards() {
    let mut last = shardid::now_ms();
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    assert!(
        u128::from(last).abs_diff(wall) < 1_000,
        "anchored to the wall clock"
    );
    for _ in 0..1_000_000 {
        let now = shardid::now_ms();
        assert!(now >= last);
        last = now;
    }
}

/// The clock-injected forms wait out a used-up unit through the caller's `wait_until` (and
/// only then), and fail on everything else without waiting: a scripted clock tries them.
#[test]
fn next_id_with_waits_through_the_callers_clock_and_nothing_else() {
    use std::cell::Cell;
    let l = tiny(); // 4 IDs per ms, epoch T0 - 1 s
    let g = Generator::new(l, 1).unwrap();
    let now = Cell::new(T0);
    let waits = Cell::new(Vec::new());
    let clock = || now.get();
    let wait = |until: u64| {
        let mut w = waits.take();
        w.push(until);
        waits.set(w);
        now.set(until);
    };
    let ids: Vec<u64> = (0..5)
        .map(|_| g.next_id_with(clock, wait).unwrap())
        .collect();
    assert_eq!(waits.take(), vec![T0 + 1], "one wait, for the next unit");
    let parts: Vec<_> = ids.iter().map(|&id| l.decode(id).unwrap()).collect();
    assert_eq!(parts[4].timestamp_ms, T0 + 1);
    assert_eq!(parts[4].sequence, 0);

    // A batch of 10 spans three units (3 left in T0+1, 4, then 3): it waits twice.
    let mut batch = [0u64; 10];
    g.next_ids_with(&mut batch, clock, wait).unwrap();
    assert_eq!(waits.take(), vec![T0 + 2, T0 + 3]);
    assert!(batch[0] > ids[4] && batch.windows(2).all(|w| w[1] > w[0]));

    // A clock far behind, or before the epoch, is an error at once, never a wait.
    let other = Generator::new(Layout::TWITTER, 9).unwrap();
    now.set(T0 + 10_000);
    other.next_id_with(clock, wait).unwrap();
    now.set(T0);
    assert!(matches!(
        other.next_id_with(clock, wait),
        Err(Error::ClockMovedBackwards {
            behind_ms: 10_000,
            ..
        })
    ));
    now.set(l.epoch_ms() - 1);
    assert!(matches!(
        g.next_id_with(clock, wait),
        Err(Error::TimestampBeforeEpoch { .. })
    ));
    now.set(l.expires_at_ms() + 1);
    assert!(matches!(
        g.next_ids_with(&mut batch, clock, wait),
        Err(Error::TimestampPastExpiry { .. })
    ));
    assert!(waits.take().is_empty());
}

/// `with_state` is how a binding without `std` shares one state: generators with different
/// options, and for the signed and unsigned forms of one layout, on one word never collide.
#[test]
fn generators_on_one_state_word_share_it_across_options_and_signedness() {
    let signed = tiny();
    let unsigned = Layout::builder()
        .epoch_ms(signed.epoch_ms())
        .bits(41, 10, 2)
        .signed(false)
        .build()
        .unwrap();
    assert_ne!(signed, unsigned);
    assert_eq!(signed.id_space(), unsigned.id_space());
    let word = shardid::State::new();
    let a = Generator::with_state(&word, signed, 3, Options::new()).unwrap();
    let b = Generator::with_state(&word, unsigned, 3, Options::new().max_borrow_units(1)).unwrap();
    let ids = [
        a.next_id_at(T0).unwrap(),
        b.next_id_at(T0).unwrap(),
        a.next_id_at(T0).unwrap(),
    ];
    let sequences: Vec<u64> = ids
        .iter()
        .map(|&id| signed.decode(id).unwrap().sequence)
        .collect();
    assert_eq!(sequences, [0, 1, 2]);
}
