//! A lease's counters equal what happened, counted by the core (`Hold`, `CeilingGenerator`):
//! ceiling writes and renewals under 8 threads (no increment lost), one loss however many
//! threads find out, a close that is no loss, a late renewal, and the exporters' view.
mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

use common::{T0, tiny};
use shardid::Options;
use shardid::lease::{CeilingGenerator, CeilingStore, Hold, LostLease, Tally, monotonic_ms};
use shardid::stats::{Family, LeaseStats, collect};

/// Records whatever it is asked, counting its successful writes; refuses (the row lost its
/// token) once `lost` is set.
#[derive(Debug, Default)]
struct Store {
    writes: Arc<AtomicU64>,
    lost: Arc<std::sync::atomic::AtomicBool>,
}

impl CeilingStore for Store {
    fn store(&self, _at_least: u64, wanted: u64) -> std::io::Result<u64> {
        if self.lost.load(Ordering::SeqCst) {
            return Err(std::io::Error::other(LostLease));
        }
        self.writes.fetch_add(1, Ordering::SeqCst);
        Ok(wanted)
    }
}

fn generator(tally: &Arc<Tally>, shard: u64, hold: Option<Arc<Hold>>) -> (CeilingGenerator, Store) {
    let store = Store::default();
    let handle = Store {
        writes: Arc::clone(&store.writes),
        lost: Arc::clone(&store.lost),
    };
    // A tolerance of 2 ms makes the span one unit: a ceiling write every other millisecond.
    let options = Options::new().backwards_tolerance_ms(2);
    let mut g = CeilingGenerator::new(tiny(), shard, options, None, Box::new(store))
        .unwrap()
        .with_tally(Arc::clone(tally));
    if let Some(hold) = hold {
        g = g.with_hold(hold);
    }
    (g, handle)
}

#[test]
fn ceiling_writes_and_renewals_under_8_threads_are_all_counted() {
    let tally = Tally::new(&tiny(), "t8");
    let hold = Arc::new(Hold::new(3_600_000, monotonic_ms()));
    let (g, store) = generator(&tally, 5, Some(Arc::clone(&hold)));
    let g = Arc::new(g);
    let barrier = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let (g, hold, barrier) = (Arc::clone(&g), Arc::clone(&hold), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                for i in 0..500u64 {
                    // Each thread's own times, so the ceiling moves often and the writes race.
                    let _ = g.next_id_at(T0 + i * 8 + t);
                    let sent = hold.sending().unwrap();
                    hold.renewed(sent);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = tally.stats();
    let writes = store.writes.load(Ordering::SeqCst);
    assert!(
        writes > 100,
        "only {writes} ceiling writes: the test raced nothing"
    );
    assert_eq!(s.ceiling_writes, writes);
    assert_eq!(s.renewals, 8 * 500);
    assert_eq!(
        (s.acquisitions, s.late_renewals, s.losses, s.held),
        (1, 0, 0, 1)
    );
}

#[test]
fn a_loss_found_by_8_threads_counts_once_and_a_close_counts_none() {
    let tally = Tally::new(&tiny(), "loss");
    let (g, store) = generator(&tally, 6, None);
    g.next_id_at(T0).unwrap();
    store.lost.store(true, Ordering::SeqCst);
    let g = Arc::new(g);
    let barrier = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let (g, barrier) = (Arc::clone(&g), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                // Above the ceiling: each asks the store, which refuses; then the heartbeat's
                // revoke.
                assert!(g.next_id_at(T0 + 100 + t).is_err());
                g.revoke();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = tally.stats();
    assert_eq!(
        (s.acquisitions, s.ceiling_writes, s.losses, s.held),
        (1, 1, 1, 0)
    );
    // The lease takes another shard (`retake`) and is then closed: no second loss.
    let (g2, _) = generator(&tally, 7, Some(Arc::new(Hold::new(10_000, monotonic_ms()))));
    assert_eq!(tally.stats().held, 1);
    g2.close();
    g2.revoke();
    let s = tally.stats();
    assert_eq!((s.acquisitions, s.losses, s.held), (2, 1, 0));
    assert_eq!(tally.shard(), Some(7));
}

#[test]
fn a_renewal_back_after_two_thirds_of_the_ttl_is_late_and_a_deadline_is_a_loss() {
    let tally = Tally::new(&tiny(), "late");
    let ttl = 3_000;
    let start = monotonic_ms();
    let hold = Arc::new(Hold::new(ttl, start));
    let (_g, _) = generator(&tally, 8, Some(Arc::clone(&hold)));
    // A renewal sent at once and back at once: not late.
    hold.renewed(hold.sending().unwrap());
    // One sent now but back only after two thirds of the time to live (2,000 ms) and before
    // the deadline (2,400 ms): late.
    let sent = hold.sending().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2_150));
    hold.renewed(sent);
    let s = tally.stats();
    assert_eq!(
        (s.renewals, s.late_renewals, s.losses, s.held),
        (2, 1, 0, 1)
    );
    // Its deadline passes with no renewal: the heartbeat's wait finds it lost.
    let hold = Arc::new(Hold::new(300, monotonic_ms()));
    let tally2 = Tally::new(&tiny(), "late");
    let (_g2, _) = generator(&tally2, 9, Some(Arc::clone(&hold)));
    std::thread::sleep(std::time::Duration::from_millis(260));
    assert_eq!(hold.wait_ms(), None);
    assert!(hold.is_lost());
    assert_eq!(hold.sending(), None);
    let s = tally2.stats();
    assert_eq!((s.losses, s.held), (1, 0));
}

#[test]
fn exporters_see_a_lease_under_its_layout_shard_and_table_once_it_took_one() {
    let tally = Tally::new(&tiny(), "exported");
    let find = || {
        collect()
            .into_iter()
            .find(|s| s.family == Family::Lease && s.labels[2] == "exported")
    };
    assert!(find().is_none(), "a lease that took no shard yet");
    let (g, _) = generator(&tally, 11, None);
    g.next_id_at(T0).unwrap();
    let sample = find().unwrap();
    let label = shardid::stats::layout_label(&tiny());
    assert_eq!(sample.labels, [label.as_str(), "11", "exported"]);
    assert_eq!(
        LeaseStats::from_values(sample.values.try_into().unwrap()),
        tally.stats()
    );
    assert_eq!(tally.stats().ceiling_writes, 1);
    let names: Vec<_> = Family::Lease
        .metrics()
        .iter()
        .map(|m| Family::Lease.prometheus(m).to_string())
        .collect();
    assert_eq!(
        names,
        [
            "shardid_lease_acquisitions_total",
            "shardid_lease_renewals_total",
            "shardid_lease_ceiling_writes_total",
            "shardid_lease_late_renewals_total",
            "shardid_lease_losses_total",
            "shardid_lease_held"
        ]
    );
    g.close();
    assert!(find().is_none(), "a closed lease");
    drop(g);
    let (g, _) = generator(&tally, 12, None);
    assert_eq!(
        find().unwrap().labels[1],
        "12",
        "taken again: reported again"
    );
    drop(g);
    drop(tally);
    assert!(find().is_none(), "a dropped lease");
}

/// A leased generator's IDs are IDs of the process: the exporters' generator family
/// (`shardid_ids_total`) counts them as it counts the registry's generators, under the
/// layout and the shard held, while the generator lives.
#[test]
fn exporters_count_a_leased_generators_ids_with_every_generators() {
    let label = shardid::stats::layout_label(&tiny());
    let ids = |shard: &str| {
        collect()
            .into_iter()
            .find(|s| s.family == Family::Generator && s.labels == [label.as_str(), shard])
            .map(|s| s.values[0])
    };
    let tally = Tally::new(&tiny(), "counted");
    let (g, store) = generator(&tally, 13, None);
    for ms in 0..8 {
        g.next_id_at(T0 + ms).unwrap();
    }
    assert_eq!(g.stats().ids, 8);
    assert_eq!(
        ids("13"),
        Some(8),
        "the leased generator's IDs, as shardid_ids_total"
    );
    // IDs drawn and refused (no ceiling could be recorded above them) were never handed out:
    // skipped, not counted.
    store.lost.store(true, Ordering::SeqCst);
    assert!(g.next_id_at(T0 + 1_000).is_err());
    let mut batch = [0u64; 5];
    assert!(g.next_ids(&mut batch).is_err());
    assert_eq!(g.stats().ids, 8);
    assert_eq!(ids("13"), Some(8));
    drop(g);
    assert_eq!(ids("13"), None, "a dropped generator is no longer reported");
}
