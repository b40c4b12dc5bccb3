//! What a database lease did, counted ([`crate::stats::LeaseStats`]).

use std::sync::Arc;

// The model checker's under `cfg(loom)`: a loss found by several threads at once is counted
// once (see `loom_models` below).
#[cfg(loom)]
use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::Layout;
use crate::stats::LeaseStats;

/// The counters of one lease object of a binding, across every shard it takes (after a loss
/// with `retake`, or in a forked child, it takes another): made once per lease object, and
/// handed to each [`super::CeilingGenerator`] it runs ([`super::CeilingGenerator::with_tally`]),
/// which passes it to its [`super::Hold`]. Only the core bumps them: a binding makes the tally
/// and reads [`Tally::stats`].
///
/// Plain `fetch_add`s on the slow paths (a claim, a renewal, a ceiling write, a loss): the
/// path of an ID below the recorded ceiling touches none of them.
#[derive(Debug, Default)]
pub struct Tally {
    acquisitions: AtomicU64,
    renewals: AtomicU64,
    ceiling_writes: AtomicU64,
    late_renewals: AtomicU64,
    losses: AtomicU64,
    held: AtomicBool,
    /// Closed by its holder (and not taken again since): no longer reported to exporters.
    closed: AtomicBool,
    /// The shard held, or held last (`u64::MAX`: none taken yet).
    shard: AtomicU64,
}

impl Tally {
    /// The counters of a new lease of `layout` in `table`, reported to exporters
    /// ([`crate::stats::collect`], family [`crate::stats::Family::Lease`]) while they live,
    /// once the lease has taken a shard.
    pub fn new(layout: &Layout, table: &str) -> Arc<Self> {
        let tally = Arc::new(Self {
            shard: AtomicU64::new(u64::MAX),
            ..Self::default()
        });
        crate::stats::register_lease(&tally, layout, table);
        tally
    }

    /// What the lease did so far.
    pub fn stats(&self) -> LeaseStats {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        LeaseStats {
            acquisitions: load(&self.acquisitions),
            renewals: load(&self.renewals),
            ceiling_writes: load(&self.ceiling_writes),
            late_renewals: load(&self.late_renewals),
            losses: load(&self.losses),
            held: u64::from(self.held.load(Ordering::Acquire)),
        }
    }

    /// Whether exporters report the lease: it took a shard, and was not closed since (a lease
    /// closed is reported no more, as one dropped: a binding's closed lease object may live on).
    pub fn reported(&self) -> bool {
        self.shard().is_some() && !self.closed.load(Ordering::Acquire)
    }

    /// The shard the lease holds or held last; `None` before it took one.
    pub fn shard(&self) -> Option<u64> {
        match self.shard.load(Ordering::Acquire) {
            u64::MAX => None,
            shard => Some(shard),
        }
    }

    /// The lease took `shard`.
    pub(super) fn acquired(&self, shard: u64) {
        self.shard.store(shard, Ordering::Release);
        self.acquisitions.fetch_add(1, Ordering::Relaxed);
        self.held.store(true, Ordering::Release);
        self.closed.store(false, Ordering::Release);
    }

    /// A renewal (or a ceiling write, which renews) came back kept; `late`: see
    /// [`crate::sql::Tenure::late_after_ms`].
    pub(super) fn renewed(&self, late: bool) {
        self.renewals.fetch_add(1, Ordering::Relaxed);
        if late {
            self.late_renewals.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A ceiling was recorded.
    pub(super) fn wrote_ceiling(&self) {
        self.ceiling_writes.fetch_add(1, Ordering::Relaxed);
    }

    /// The lease is lost: one loss, if it was held (the first of the several places that find
    /// out counts it).
    pub(super) fn lost(&self) {
        if self.held.swap(false, Ordering::AcqRel) {
            self.losses.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The lease was closed: no longer held, no loss, and no longer reported to exporters
    /// (until it takes a shard again: a lease that retakes closes the shard it lost first).
    pub(super) fn closed(&self) {
        self.held.store(false, Ordering::Release);
        self.closed.store(true, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::Tally;

    #[test]
    fn a_loss_counts_once_and_a_close_never() {
        let t = Tally::default();
        t.acquired(3);
        t.lost();
        t.lost();
        assert_eq!((t.stats().losses, t.stats().held), (1, 0));
        t.acquired(4);
        t.closed();
        t.lost();
        let s = t.stats();
        assert_eq!((s.acquisitions, s.losses, s.held), (2, 1, 0));
        assert_eq!(t.shard(), Some(4));
    }
}

/// Loom models of counting a loss once: the heartbeat, a ceiling write and a revoke may all
/// find the lease lost at the same moment, and a close may race them; over every interleaving
/// one loss is counted (none when the close came first), and the lease ends not held. Run with
/// `RUSTFLAGS="--cfg loom" cargo test -p shardid --lib --release loom`.
#[cfg(all(test, loom))]
mod loom_models {
    use loom::sync::Arc;
    use loom::thread;

    use super::Tally;

    #[test]
    fn loom_a_loss_found_by_three_threads_is_counted_once() {
        crate::generator::loom_models::model(|| {
            let t = Arc::new(Tally::default());
            t.acquired(1);
            let handles: std::vec::Vec<_> = (0..2)
                .map(|_| {
                    let t = Arc::clone(&t);
                    thread::spawn(move || t.lost())
                })
                .collect();
            t.lost();
            for h in handles {
                h.join().unwrap();
            }
            let s = t.stats();
            assert_eq!((s.losses, s.held), (1, 0));
        });
    }

    #[test]
    fn loom_a_close_racing_a_loss_counts_at_most_one() {
        crate::generator::loom_models::model(|| {
            let t = Arc::new(Tally::default());
            t.acquired(1);
            let lost = {
                let t = Arc::clone(&t);
                thread::spawn(move || t.lost())
            };
            t.closed();
            lost.join().unwrap();
            let s = t.stats();
            assert!(s.losses <= 1);
            assert_eq!(s.held, 0);
        });
    }
}
