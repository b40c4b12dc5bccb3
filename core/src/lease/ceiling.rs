//! The ceiling generator: never an ID above the ceiling its store has recorded.

use std::boxed::Box;
use std::fmt;
use std::sync::atomic::Ordering;

// The model checker's own under `cfg(loom)`, so it explores every interleaving of the
// "record before you exceed" rule (see the `loom_models` below).
#[cfg(loom)]
use loom::sync::{Mutex, atomic::AtomicU64};
#[cfg(not(loom))]
use std::sync::{Mutex, atomic::AtomicU64};

use super::{DatabaseFailure, Hold, LeaseError, LostLease, Tally};
use crate::{Error, Generator, Layout, Options};

/// Where a [`CeilingGenerator`] records its ceiling: a lock file here, a database row in a
/// binding's lease on PostgreSQL.
pub trait CeilingStore: Send + Sync + fmt::Debug {
    /// Records a ceiling of at least `at_least` time units (the unit of an ID about to be
    /// handed out), ideally `wanted` (a span ahead, so the next records are rarer), and
    /// returns the ceiling it recorded. Called before any ID above the previous ceiling is
    /// handed out; an error keeps that ID from being handed out.
    ///
    /// # Errors
    /// Whatever kept the ceiling from being recorded.
    fn store(&self, at_least: u64, wanted: u64) -> std::io::Result<u64>;

    /// Gives up the lease at once (a lock file's lock, a database session), so another
    /// process can take the shard; later calls to [`CeilingStore::store`] fail. The default
    /// does nothing: a store whose lease ends some other way.
    fn release(&self) {}
}

/// A generator that never hands out an ID above the ceiling its [`CeilingStore`] has
/// recorded: it records a new one (a span ahead) first. Started above a recorded ceiling, it
/// never repeats an ID issued under that ceiling. [`LeasedGenerator`](super::LeasedGenerator) is one on a lock file;
/// bindings build their database leases on it.
#[derive(Debug)]
pub struct CeilingGenerator {
    /// Its state is shared with the process's live figures ([`crate::stats::collect`]), which
    /// report its IDs as every generator's (`shardid_ids_total`) while it lives.
    generator: Generator<std::sync::Arc<crate::State>>,
    /// The generator's state, to count IDs drawn and not handed out as skipped.
    state: std::sync::Arc<crate::State>,
    /// The ceiling last recorded, in time units (0 once revoked, so every ID takes the slow
    /// path, which refuses).
    ceiling: AtomicU64,
    /// Set by [`CeilingGenerator::revoke`].
    revoked: std::sync::atomic::AtomicBool,
    /// How far ahead of the database's this host's clock was when a renewal stopped the lease
    /// ([`CeilingGenerator::revoke_clock_skew`]; 0: not so stopped).
    clock_ahead_ms: AtomicU64,
    /// How far ahead of an ID a new ceiling is recorded, in time units.
    span: u64,
    store: Box<dyn CeilingStore>,
    /// An expiring lease's hold: no ceiling is recorded past its deadline, and once it is
    /// lost ([`CeilingGenerator::revoke`]) nothing more is handed out.
    hold: Option<std::sync::Arc<Hold>>,
    /// Serialises recording, so the store sees increasing ceilings.
    recording: Mutex<()>,
    /// The lease's counters ([`CeilingGenerator::with_tally`]).
    tally: Option<std::sync::Arc<Tally>>,
}

impl CeilingGenerator {
    /// A generator for `shard` whose first ID is above `recorded` (the ceiling the shard's
    /// last holder recorded, if any).
    ///
    /// # Errors
    /// [`Error::ShardOutOfRange`].
    pub fn new(
        layout: Layout,
        shard: u64,
        options: Options,
        recorded: Option<u64>,
        store: Box<dyn CeilingStore>,
    ) -> Result<Self, Error> {
        let seq_bits = u32::from(layout.sequence_bits());
        // The next free slot: the first of the unit after the ceiling. A ceiling past the
        // layout's last time unit is none a lease wrote (a row altered by hand or by a
        // trigger): `(units + 1) << seq_bits` would wrap (2^63 - 1 to the first slots of the
        // epoch, IDs long handed out), so it is refused, as a time past the layout's end.
        let state = match recorded {
            None => 0,
            Some(units) if units <= layout.max_time_units() => (units + 1) << seq_bits,
            Some(units) => {
                return Err(Error::TimestampPastExpiry {
                    timestamp_ms: units
                        .saturating_mul(layout.unit_ms())
                        .saturating_add(layout.epoch_ms()),
                    expires_at_ms: layout.expires_at_ms(),
                });
            }
        };
        let state = std::sync::Arc::new(crate::State::starting_at(state));
        let generator =
            Generator::with_state(std::sync::Arc::clone(&state), layout, shard, options)?;
        crate::stats::register_generator(&state, &layout, shard);
        // 100 ms, or half the backwards tolerance if that is less, and at least one unit: a
        // successor that starts at once waits at most this long for the clock to pass the
        // ceiling, and the store is written at most once per span.
        let span_ms = (options.backwards_tolerance_ms / 2).min(100);
        Ok(Self {
            generator,
            state,
            ceiling: AtomicU64::new(recorded.unwrap_or(0)),
            revoked: std::sync::atomic::AtomicBool::new(false),
            clock_ahead_ms: AtomicU64::new(0),
            span: (span_ms / layout.unit_ms()).max(1),
            store,
            hold: None,
            recording: Mutex::new(()),
            tally: None,
        })
    }

    /// What this generator did ([`crate::stats::GeneratorStats`]): its IDs count from the
    /// ceiling it started above, not the slots below it.
    pub fn stats(&self) -> crate::stats::GeneratorStats {
        self.generator.stats()
    }

    /// The generator of an expiring lease with `hold`: it records no ceiling once the hold's
    /// deadline has passed, so a holder that was paused or cut off for longer than its lease
    /// stops on its own.
    #[must_use]
    pub fn with_hold(mut self, hold: std::sync::Arc<Hold>) -> Self {
        if let Some(tally) = &self.tally {
            hold.count_into(tally);
        }
        self.hold = Some(hold);
        self
    }

    /// The generator of a lease that counts into `tally` ([`crate::stats::LeaseStats`]): the
    /// lease has just taken this generator's shard (one acquisition), and from now on its
    /// ceiling writes, its hold's renewals and its loss are counted. Call it once per shard
    /// taken, with the lease object's one tally.
    #[must_use]
    pub fn with_tally(mut self, tally: std::sync::Arc<Tally>) -> Self {
        tally.acquired(self.shard());
        if let Some(hold) = &self.hold {
            hold.count_into(&tally);
        }
        self.tally = Some(tally);
        self
    }

    /// What the lease this generator runs on did ([`CeilingGenerator::with_tally`]'s counters;
    /// `None` without).
    pub fn lease_stats(&self) -> Option<crate::stats::LeaseStats> {
        self.tally.as_ref().map(|t| t.stats())
    }

    /// Stops the generator for good: the lease is lost (the heartbeat found it taken over or
    /// past its deadline). Every later call fails with [`LeaseError::Lost`], even for IDs
    /// below the recorded ceiling. Counts a loss if the lease was held; a lease closed by its
    /// holder calls [`CeilingGenerator::close`] instead.
    pub fn revoke(&self) {
        if let Some(hold) = &self.hold {
            hold.lose();
        }
        if let Some(tally) = &self.tally {
            tally.lost();
        }
        self.stop();
    }

    /// Stops the generator for good because a renewal found this host's clock `ahead_ms` ahead
    /// of the database's, more than a lease allows ([`crate::sql::LeaseProtocol::clock_ahead`]):
    /// as [`CeilingGenerator::revoke`], but every later call fails with
    /// [`LeaseError::ClockSkew`], which says what to fix.
    pub fn revoke_clock_skew(&self, ahead_ms: u64) {
        self.clock_ahead_ms
            .store(ahead_ms.max(1), Ordering::Release);
        self.revoke();
    }

    /// Stops the generator for good because its holder closes the lease: as
    /// [`CeilingGenerator::revoke`], but no loss is counted.
    pub fn close(&self) {
        if let Some(tally) = &self.tally {
            tally.closed();
        }
        if let Some(hold) = &self.hold {
            hold.end();
        }
        self.stop();
    }

    fn stop(&self) {
        // After any record in progress, so it cannot put its ceiling back.
        let _recording = self
            .recording
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.revoked.store(true, Ordering::Release);
        self.ceiling.store(0, Ordering::Release);
    }

    /// The shard.
    pub const fn shard(&self) -> u64 {
        self.generator.shard()
    }

    /// The layout.
    pub const fn layout(&self) -> Layout {
        self.generator.layout()
    }

    /// Releases the store's lease ([`CeilingStore::release`]).
    pub fn release(&self) {
        self.store.release();
    }

    /// Issues one ID now, as [`Generator::next_id`], after recording a new ceiling if the ID
    /// is above the current one.
    ///
    /// # Errors
    /// [`LeaseError::Id`] as [`Generator::next_id`]; [`LeaseError::Io`] when the ceiling
    /// cannot be recorded (the ID is then not handed out).
    #[inline]
    pub fn next_id(&self) -> Result<u64, LeaseError> {
        // The check inline, the recording out of line: the path of nearly every ID is the
        // plain generator's and one comparison.
        match self.generator.next_id() {
            Ok(id) if self.covers(id) => Ok(id),
            Ok(id) => self.record_or_drop(id, 1).map(|()| id),
            Err(e) => Err(LeaseError::Id(e)),
        }
    }

    /// Issues one ID as if the clock read `now_ms`, as [`Generator::next_id_at`].
    ///
    /// # Errors
    /// As [`CeilingGenerator::next_id`], and [`Error::SequenceExhausted`].
    #[inline]
    pub fn next_id_at(&self, now_ms: u64) -> Result<u64, LeaseError> {
        match self.generator.next_id_at(now_ms) {
            Ok(id) if self.covers(id) => Ok(id),
            Ok(id) => self.record_or_drop(id, 1).map(|()| id),
            Err(e) => Err(LeaseError::Id(e)),
        }
    }

    /// Fills `out` with IDs now, as [`Generator::next_ids`].
    ///
    /// # Errors
    /// As [`CeilingGenerator::next_id`]; on an error none of `out` may be used.
    pub fn next_ids(&self, out: &mut [u64]) -> Result<(), LeaseError> {
        self.generator.next_ids(out)?;
        if let Some(&last) = out.last()
            && !self.covers(last)
        {
            self.record_or_drop(last, u64::try_from(out.len()).unwrap_or(u64::MAX))?;
        }
        Ok(())
    }

    /// [`CeilingGenerator::record`] for the `drawn` IDs up to `id`; if it fails they are not
    /// handed out, and count as skipped rather than as IDs (`shardid_ids_total` counts what
    /// callers got).
    #[cold]
    fn record_or_drop(&self, id: u64, drawn: u64) -> Result<(), LeaseError> {
        let recorded = self.record(id);
        if recorded.is_err() {
            self.state.not_handed_out(drawn);
        }
        recorded
    }

    /// Draws the next ID from the generator, not yet handed out: hand it out only once
    /// [`CeilingGenerator::covers`] it, or [`CeilingGenerator::cover`] succeeded. A binding whose
    /// store needs a lock the caller may hold (Python's interpreter) draws and checks with the
    /// lock held, and releases it only to record: the path of nearly every ID stays the plain
    /// generator's.
    ///
    /// # Errors
    /// As [`Generator::next_id`].
    #[inline]
    pub fn draw(&self) -> Result<u64, Error> {
        self.generator.next_id()
    }

    /// Draws the next ID as if the clock read `now_ms`; see [`CeilingGenerator::draw`].
    ///
    /// # Errors
    /// As [`Generator::next_id_at`].
    pub fn draw_at(&self, now_ms: u64) -> Result<u64, Error> {
        self.generator.next_id_at(now_ms)
    }

    /// Fills `out` with drawn IDs; see [`CeilingGenerator::draw`]. Its last covers them all.
    ///
    /// # Errors
    /// As [`Generator::next_ids`].
    pub fn draw_many(&self, out: &mut [u64]) -> Result<(), Error> {
        self.generator.next_ids(out)
    }

    /// Whether the recorded ceiling already covers `id` (no store call needed).
    #[inline]
    pub fn covers(&self, id: u64) -> bool {
        id >> self.generator.layout().time_shift() <= self.ceiling.load(Ordering::Acquire)
    }

    /// Makes sure the ceiling covers `id`'s time unit before `id` is handed out, recording a
    /// new one if needed.
    ///
    /// # Errors
    /// [`LeaseError::Lost`], [`LeaseError::Database`] or [`LeaseError::Io`] when the ceiling
    /// cannot be recorded: `id` must not be handed out, and counts as skipped, not as an ID
    /// (one ID: a batch drawn with [`CeilingGenerator::draw_many`] and refused counts its
    /// others as IDs; [`CeilingGenerator::next_ids`] counts them all).
    #[inline]
    pub fn cover(&self, id: u64) -> Result<(), LeaseError> {
        if self.covers(id) {
            Ok(())
        } else {
            self.record_or_drop(id, 1)
        }
    }

    /// Records a ceiling that covers `id` (the recording lock held, the store called).
    #[cold]
    #[inline(never)]
    fn record(&self, id: u64) -> Result<(), LeaseError> {
        let units = id >> self.generator.layout().time_shift();
        // A panic while recording leaves at worst an older ceiling, which the next record
        // replaces: keep using the lock.
        let _recording = self
            .recording
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if units <= self.ceiling.load(Ordering::Acquire) {
            return Ok(());
        }
        let lost = LeaseError::Lost {
            shard: self.shard(),
        };
        if self.revoked.load(Ordering::Acquire) || self.hold.as_ref().is_some_and(|h| h.is_lost()) {
            return Err(match self.clock_ahead_ms.load(Ordering::Acquire) {
                0 => lost,
                ahead_ms => LeaseError::ClockSkew {
                    ahead_ms,
                    max_ms: crate::sql::failover::SKEW_MS,
                },
            });
        }
        let ceiling =
            self.store
                .store(units, units + self.span)
                .map_err(|e| match e.get_ref() {
                    Some(inner) if inner.is::<LostLease>() => {
                        if let Some(tally) = &self.tally {
                            tally.lost();
                        }
                        lost
                    }
                    Some(inner) if inner.is::<DatabaseFailure>() => {
                        match e
                            .into_inner()
                            .map(<dyn std::error::Error + Send + Sync>::downcast::<DatabaseFailure>)
                        {
                            Some(Ok(failure)) => LeaseError::Database(failure.0),
                            _ => LeaseError::Lost {
                                shard: self.shard(),
                            },
                        }
                    }
                    _ => LeaseError::Io(e),
                })?;
        if ceiling < units {
            return Err(LeaseError::Io(std::io::Error::other(
                "the ceiling store recorded less than it was asked to",
            )));
        }
        self.ceiling.store(ceiling, Ordering::Release);
        if let Some(tally) = &self.tally {
            tally.wrote_ceiling();
        }
        Ok(())
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::boxed::Box;

    use super::{CeilingGenerator, CeilingStore};
    use crate::{Error, Layout, Options};

    /// Records whatever it is asked.
    #[derive(Debug)]
    struct Store;

    impl CeilingStore for Store {
        fn store(&self, _at_least: u64, wanted: u64) -> std::io::Result<u64> {
            Ok(wanted)
        }
    }

    fn start(recorded: u64) -> Result<CeilingGenerator, Error> {
        CeilingGenerator::new(
            Layout::TWITTER,
            1,
            Options::new(),
            Some(recorded),
            Box::new(Store),
        )
    }

    /// A row's ceiling of 2^63 - 1 (or anything past the layout's last time unit) is refused:
    /// `(units + 1) << sequence_bits` wrapped it to the epoch's first slots (in a release
    /// build; a debug build panicked), and the generator handed out IDs of 2010 again.
    #[test]
    fn a_ceiling_past_the_layouts_time_is_refused_not_wrapped() {
        let last = Layout::TWITTER.max_time_units();
        for units in [i64::MAX as u64, u64::MAX, last + 1, 1 << 52] {
            match start(units) {
                Err(Error::TimestampPastExpiry { expires_at_ms, .. }) => {
                    assert_eq!(expires_at_ms, Layout::TWITTER.expires_at_ms());
                }
                other => panic!("a ceiling of {units} units: {other:?}"),
            }
        }
        // The last unit itself is a ceiling a lease can write: taken (it makes no more IDs).
        assert!(start(last).is_ok());
        let now = start(1_000)
            .expect("a ceiling in range")
            .next_id()
            .expect("an ID");
        assert!(Layout::TWITTER.decode(now).unwrap().timestamp_ms > 1_288_834_974_657 + 1_000);
    }

    /// A lease a renewal stopped because this host's clock ran too far ahead says so at every
    /// later call (`CLOCK_SKEW`), not `LEASE_LOST`: retaking cannot help until the clock is
    /// fixed.
    #[test]
    fn a_generator_stopped_for_clock_skew_says_so() {
        let g = start(1_000).unwrap();
        g.next_id().unwrap();
        g.revoke_clock_skew(2_500);
        for _ in 0..2 {
            match g.next_id() {
                Err(crate::lease::LeaseError::ClockSkew { ahead_ms, max_ms }) => {
                    assert_eq!((ahead_ms, max_ms), (2_500, 2_000));
                }
                other => panic!("{other:?}"),
            }
        }
        let lost = start(1_000).unwrap();
        lost.revoke();
        assert!(matches!(
            lost.next_id(),
            Err(crate::lease::LeaseError::Lost { shard: 1 })
        ));
    }
}

/// Loom models of "record before you exceed": over every interleaving (within loom's
/// preemption bound) of 2–3 threads, no ID is handed out above the ceiling the store has
/// recorded, including when the store fails. Run with `RUSTFLAGS="--cfg loom" cargo test -p
/// shardid --lib --release loom`.
#[cfg(all(test, loom))]
mod loom_models {
    use std::boxed::Box;
    use std::vec::Vec;

    use loom::sync::Arc;
    use loom::sync::atomic::{AtomicU64, Ordering};
    use loom::thread;

    use super::{CeilingGenerator, CeilingStore};
    use crate::Options;
    use crate::generator::loom_models::layout;

    /// A store that records into an atomic, and fails its `fail_at`-th call (0: never).
    #[derive(Debug)]
    struct Store {
        recorded: Arc<AtomicU64>,
        calls: AtomicU64,
        fail_at: u64,
    }

    impl CeilingStore for Store {
        fn store(&self, at_least: u64, wanted: u64) -> std::io::Result<u64> {
            assert!(wanted >= at_least);
            if self.calls.fetch_add(1, Ordering::SeqCst) + 1 == self.fail_at {
                return Err(std::io::Error::other("the store is down"));
            }
            self.recorded.fetch_max(wanted, Ordering::SeqCst);
            Ok(wanted)
        }
    }

    fn check(threads: usize, fail_at: u64) {
        let recorded = Arc::new(AtomicU64::new(0));
        let store = Store {
            recorded: Arc::clone(&recorded),
            calls: AtomicU64::new(0),
            fail_at,
        };
        // A tolerance of 2 ms makes the span 1 unit: a new ceiling every unit or two.
        let options = Options::new().backwards_tolerance_ms(2);
        let g =
            Arc::new(CeilingGenerator::new(layout(), 1, options, None, Box::new(store)).unwrap());
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (g, recorded) = (Arc::clone(&g), Arc::clone(&recorded));
                thread::spawn(move || {
                    let mut ids = Vec::new();
                    for now in [5 + t as u64, 7] {
                        if let Ok(id) = g.next_id_at(now) {
                            // Handed out: its unit must already be under a recorded ceiling.
                            let units = id >> layout().time_shift();
                            let ceiling = recorded.load(Ordering::SeqCst);
                            assert!(
                                units <= ceiling,
                                "ID in unit {units} above ceiling {ceiling}"
                            );
                            ids.push(id);
                        }
                    }
                    ids
                })
            })
            .collect();
        let mut all: Vec<u64> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "a duplicate ID");
    }

    #[test]
    fn loom_no_id_above_an_unrecorded_ceiling() {
        crate::generator::loom_models::model(|| check(2, 0));
    }

    #[test]
    fn loom_a_failing_store_hands_out_nothing_above_the_ceiling() {
        crate::generator::loom_models::model(|| check(2, 1));
        crate::generator::loom_models::model(|| check(2, 2));
    }

    #[test]
    fn loom_three_threads_record_in_turn() {
        crate::generator::loom_models::model(|| check(3, 0));
    }
}
