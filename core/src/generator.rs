//! The lock-free ID generator.
//!
//! The whole state of a generator is one `u64`: the *next free slot* `time_units << sequence_bits
//! | sequence`. Issuing an ID is a compare-and-swap of that word from `slot` to `slot + 1`,
//! where `slot = max(state, now_units << sequence_bits)`. Because the sequence sits in the low
//! bits, `slot + 1` after the last sequence of a unit *is* the first slot of the next unit: a
//! burst flows into the next time unit without a gap, and whether it may do so yet (wait, or
//! borrow) is a check on the slot's time against the clock. Every slot is handed out once, by
//! construction, however many threads share the word.
//!
//! Time is an argument ([`Generator::next_id_at`]), so tests in every language script clocks
//! that stand still, jump back or run out; [`Generator::next_id`] (feature `std`) reads the
//! process's monotonic-anchored clock on top.

use core::borrow::Borrow;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::layout::mask;
#[cfg(feature = "counters")]
use crate::stats::GeneratorStats;
use crate::{Error, Layout};

/// What the generator needs from its state: the word's two operations, and the count of slots
/// its jumps skipped, from which the count of IDs follows. Implemented by [`State`], and under
/// `cfg(loom)` by the models' state of loom's atomics, so the model checker runs the
/// generator's own code (`claim_on`, `next_id_at_on`) over every interleaving of 2–3 threads.
#[cfg_attr(not(feature = "counters"), allow(dead_code))]
trait Word {
    fn load(&self) -> u64;
    /// A compare-and-swap whose success is `Release`: a reader that loads the word with
    /// `Acquire` ([`Word::load_acquire`]) sees every skip counted before a jump it sees.
    fn compare_exchange_weak(&self, current: u64, new: u64) -> Result<u64, u64>;
    /// The word is about to jump over `slots` slots (counted before the compare-and-swap, so
    /// no reader sees the jump without them).
    fn skip(&self, slots: u64);
    /// The jump did not happen (the compare-and-swap failed).
    fn unskip(&self, slots: u64);
    fn load_acquire(&self) -> u64;
    fn skipped(&self) -> u64;
}

/// The count of IDs a state has handed out: its word less the slots skipped. Never more than
/// the true count (a skip is counted before its jump, and a failed jump's skip is counted
/// until it is taken back), equal to it once no call is in flight.
#[cfg(any(feature = "counters", loom))]
fn ids_on(cell: &impl Word) -> u64 {
    let word = cell.load_acquire();
    word.saturating_sub(cell.skipped())
}

/// A generator's state: the word every ID is drawn from, and what the generator counted
/// ([`Generator::stats`]).
///
/// The word holds the *next free slot*; IDs are never counted one by one (an atomic add per ID
/// would cost a burst as much again as its compare-and-swap). Instead the word's jumps are:
/// a slot taken only ever moves the word up by the IDs it hands out, except when a new time
/// unit begins after an idle time (or the state starts above a ceiling), where it jumps over
/// the unused slots in between. Those are counted, once per jump and so at most once per time
/// unit, and IDs handed out are the word less them. The other counters are bumped on paths
/// that already wait or fail.
///
/// 64-byte aligned: the word shares its cache line with the counters only, which the paths
/// that write them (a jump, a wait, an error) own already or seldom take. Without `counters`
/// (the WebAssembly module), the state is the word alone, as it was before the counters.
#[derive(Debug, Default)]
#[cfg_attr(feature = "counters", repr(align(64)))]
pub struct State {
    word: AtomicU64,
    #[cfg(feature = "counters")]
    skipped: AtomicU64,
    /// The most IDs reported yet: reports never go back, even in the moment between a skip
    /// counted and its jump.
    #[cfg(feature = "counters")]
    reported: AtomicU64,
    #[cfg(feature = "counters")]
    waits: AtomicU64,
    #[cfg(feature = "counters")]
    borrowed_units: AtomicU64,
    #[cfg(feature = "counters")]
    clock_backwards: AtomicU64,
    #[cfg(feature = "counters")]
    clock_backwards_refused: AtomicU64,
}

impl State {
    /// `slots` drawn from this state were not handed out (a lease that could not record the
    /// ceiling above them): they count as skipped, not as IDs.
    #[cfg(feature = "lease")]
    pub(crate) fn not_handed_out(&self, slots: u64) {
        self.skip(slots);
    }

    /// A new state: no ID handed out yet.
    pub const fn new() -> Self {
        Self::starting_at(0)
    }

    /// A state whose next free slot is `slot` (`time_units << sequence_bits | sequence`): the
    /// slots below it count as skipped, not as IDs. A generator above a recorded ceiling
    /// starts so.
    pub const fn starting_at(slot: u64) -> Self {
        Self {
            word: AtomicU64::new(slot),
            #[cfg(feature = "counters")]
            skipped: AtomicU64::new(slot),
            #[cfg(feature = "counters")]
            reported: AtomicU64::new(0),
            #[cfg(feature = "counters")]
            waits: AtomicU64::new(0),
            #[cfg(feature = "counters")]
            borrowed_units: AtomicU64::new(0),
            #[cfg(feature = "counters")]
            clock_backwards: AtomicU64::new(0),
            #[cfg(feature = "counters")]
            clock_backwards_refused: AtomicU64::new(0),
        }
    }

    /// What every generator on this state did: see [`GeneratorStats`].
    #[cfg(feature = "counters")]
    pub fn stats(&self) -> GeneratorStats {
        let counted = ids_on(self);
        let ids = self
            .reported
            .fetch_max(counted, Ordering::Relaxed)
            .max(counted);
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        GeneratorStats {
            ids,
            waits: load(&self.waits),
            borrowed_units: load(&self.borrowed_units),
            clock_backwards: load(&self.clock_backwards),
            clock_backwards_refused: load(&self.clock_backwards_refused),
            #[cfg(feature = "std")]
            ticker_starts: crate::clock::ticker_starts(),
            #[cfg(not(feature = "std"))]
            ticker_starts: 0,
        }
    }

    #[cfg(feature = "counters")]
    fn bump(counter: &AtomicU64, by: u64, add: bool) {
        if add {
            counter.fetch_add(by, Ordering::Relaxed);
        } else {
            counter.fetch_sub(by, Ordering::Relaxed);
        }
    }
}

// Relaxed is enough for the compare-and-swap's own job: every read-modify-write of one atomic
// word sees the words in one total order, and that order alone is what keeps slots unique.
// Its success is `Release` only for the count of IDs (see `Word`); on x86 the instruction is
// the same.
impl Word for State {
    #[inline]
    fn load(&self) -> u64 {
        self.word.load(Ordering::Relaxed)
    }

    #[inline]
    fn compare_exchange_weak(&self, current: u64, new: u64) -> Result<u64, u64> {
        self.word
            .compare_exchange_weak(current, new, Ordering::Release, Ordering::Relaxed)
    }

    #[inline]
    fn skip(&self, slots: u64) {
        #[cfg(feature = "counters")]
        self.skipped.fetch_add(slots, Ordering::Relaxed);
        #[cfg(not(feature = "counters"))]
        let _ = slots;
    }

    #[inline]
    fn unskip(&self, slots: u64) {
        #[cfg(feature = "counters")]
        self.skipped.fetch_sub(slots, Ordering::Relaxed);
        #[cfg(not(feature = "counters"))]
        let _ = slots;
    }

    fn load_acquire(&self) -> u64 {
        self.word.load(Ordering::Acquire)
    }

    #[cfg(feature = "counters")]
    fn skipped(&self) -> u64 {
        self.skipped.load(Ordering::Relaxed)
    }

    #[cfg(not(feature = "counters"))]
    fn skipped(&self) -> u64 {
        0
    }
}

/// The one place slots are handed out: takes `admit(slot)` slots starting at
/// `slot = max(state, floor)` with a single compare-and-swap, retrying when another thread got
/// there first, and returns `(slot, count)`. `admit` sees each candidate slot and returns how
/// many to take (at least 1), or why none may be taken; when the compare-and-swap then fails,
/// `retract(slot, count)` takes back whatever `admit` counted (off the per-ID path: only a
/// lost race comes there).
///
/// A slot above the state (a new time unit after an idle time) jumps over the slots in
/// between: they are counted as skipped before the compare-and-swap, and taken back when it
/// fails. With counters, that is [`claim_jump`]'s, out of line: the loop here takes only slots
/// at the word (`floor <= state`), and its one test for a jump is the comparison the plain
/// loop made for `max(state, floor)` anyway, a branch where that was a conditional move. The
/// per-ID path so gains no instruction for the count of IDs (`skip != 0` tested after the
/// `max` cost 2 a call, 4 % of `next_id_at`, issue 33).
#[inline]
fn claim_on<E>(
    cell: &impl Word,
    floor: u64,
    mut admit: impl FnMut(u64) -> Result<u64, E>,
    mut retract: impl FnMut(u64, u64),
) -> Result<(u64, u64), E> {
    let mut current = cell.load();
    loop {
        #[cfg(any(feature = "counters", loom))]
        let slot = if current < floor {
            // `admit` and `retract` are moved: `move` closures of values, built only here.
            return claim_jump(cell, floor, current, admit, retract);
        } else {
            current
        };
        // Without counters, the plain compare-and-swap loop (the WebAssembly module's: its
        // size is the budget there).
        #[cfg(not(any(feature = "counters", loom)))]
        let slot = current.max(floor);
        let count = admit(slot)?;
        match cell.compare_exchange_weak(current, slot + count) {
            Ok(_) => return Ok((slot, count)),
            Err(actual) => {
                #[cfg(any(feature = "counters", loom))]
                retract(slot, count);
                #[cfg(not(any(feature = "counters", loom)))]
                let _ = &mut retract;
                current = actual;
            }
        }
    }
}

/// [`claim_on`] from a word below `floor`: the first slot jumps over the ones in between,
/// which are counted as skipped before the compare-and-swap (so a reader never sees the jump
/// without them) and taken back when it fails. Cold and out of line: at most one call a time
/// unit comes here, and its code and registers stay out of the per-ID loop.
#[cfg(any(feature = "counters", loom))]
#[cold]
#[inline(never)]
fn claim_jump<E>(
    cell: &impl Word,
    floor: u64,
    mut current: u64,
    mut admit: impl FnMut(u64) -> Result<u64, E>,
    mut retract: impl FnMut(u64, u64),
) -> Result<(u64, u64), E> {
    loop {
        let slot = current.max(floor);
        let count = admit(slot)?;
        let skip = slot - current;
        if skip != 0 {
            cell.skip(skip);
        }
        match cell.compare_exchange_weak(current, slot + count) {
            Ok(_) => return Ok((slot, count)),
            Err(actual) => {
                if skip != 0 {
                    cell.unskip(skip);
                }
                retract(slot, count);
                current = actual;
            }
        }
    }
}

/// How often [`Generator::next_id`] checks the ticker's time against the precise clock: at
/// the 2nd ID of every time unit (sequence 1) and every `TICK_CHECK_EVERY` IDs after it
/// (sequences 1025, 2049, ...).
///
/// A tick can only be stale, never ahead, and a stale tick can only date IDs early: it never
/// causes a duplicate, which the state word alone rules out. The check bounds how many IDs a
/// stopped ticker (a forked child without [`crate::after_fork`], a starved thread) can date
/// by its old time: at most `TICK_CHECK_EVERY - 1`, after which the check repairs or replaces
/// the ticker (`core/tests/stale_tick.rs` stops one and counts). The schedule used to be the 1st, 2nd,
/// 4th, ... ID after a unit's first: ten clock reads (~23 ns each here) in a burst of 1024
/// IDs, 10 % of its cost, checks that came a few nanoseconds apart and found nothing new;
/// and up to 2047 IDs between its last two.
#[cfg(feature = "std")]
const TICK_CHECK_EVERY: u64 = 1024;

/// How far, by default, the clock may read behind the last issued ID before
/// [`Generator::next_id_at`] fails with [`Error::ClockMovedBackwards`]: 1 second.
///
/// Within the tolerance the generator keeps issuing from the last issued time unit, which can
/// never repeat an ID. [`Generator::next_id`] reads a monotonic clock and is never behind;
/// the tolerance matters for scripted clocks and for state carried across restarts.
pub const DEFAULT_BACKWARDS_TOLERANCE_MS: u64 = 1_000;

/// A generator's policy for clocks that move back and sequences that run out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[must_use]
pub struct Options {
    /// How far the clock may read behind the last issued ID before it is an error.
    pub backwards_tolerance_ms: u64,
    /// How many time units ahead of the clock a generator may run when a unit's sequence is
    /// used up. 0 (the default) means "wait for the next unit".
    pub max_borrow_units: u64,
}

impl Options {
    /// The defaults: [`DEFAULT_BACKWARDS_TOLERANCE_MS`], no borrowing.
    pub const fn new() -> Self {
        Self {
            backwards_tolerance_ms: DEFAULT_BACKWARDS_TOLERANCE_MS,
            max_borrow_units: 0,
        }
    }
    /// Sets [`Options::backwards_tolerance_ms`].
    pub const fn backwards_tolerance_ms(mut self, ms: u64) -> Self {
        self.backwards_tolerance_ms = ms;
        self
    }
    /// Sets [`Options::max_borrow_units`].
    pub const fn max_borrow_units(mut self, units: u64) -> Self {
        self.max_borrow_units = units;
        self
    }
}

impl Default for Options {
    fn default() -> Self {
        Self::new()
    }
}

/// Makes unique, strictly increasing IDs for one shard of a layout.
///
/// `Sync` and lock-free: share one generator between threads (by reference or in an `Arc`).
/// `S` is where the [`State`] lives: owned by default, or a `&'static State` for the handles
/// [`Generator::shared`] hands out, which share one state per (layout, shard).
#[derive(Debug)]
pub struct Generator<S: Borrow<State> = State> {
    state: S,
    layout: Layout,
    shard: u64,
    options: Options,
    /// `shard << shard_shift`, OR-ed into every ID.
    shard_bits: u64,
    /// The last usable time unit: the layout's, or one less when the state word would
    /// overflow (a shardless, unsigned 64-bit layout).
    max_units: u64,
    /// The layout's numbers the per-ID path uses, worked out once here rather than on every
    /// ID (a layout known only at run time, as in every binding, cannot fold them away).
    seq_bits: u32,
    /// `mask(seq_bits)`: the sequence of a state slot.
    seq_mask: u64,
    /// Where the time and sequence fields start in an ID.
    time_shift: u32,
    seq_shift: u32,
    /// How many units ahead of the ticker's a slot may be and still be continued on the
    /// ticker's path: `backwards_tolerance_ms / unit_ms`, within which [`Generator::check`]
    /// passes any slot that continues a unit already begun.
    #[cfg(feature = "std")]
    tick_ahead_units: u64,
    /// `sequence & TICK_CHECK_EVERY - 1` of a slot is `slot & tick_check_mask`.
    #[cfg(feature = "std")]
    tick_check_mask: u64,
    /// The largest `now_ms - epoch_ms` (wrapping) the ticker's path takes: one comparison
    /// for both "before the epoch" (which wraps to a huge number) and "past `max_units`".
    #[cfg(feature = "std")]
    tick_max_elapsed_ms: u64,
}

impl Generator {
    /// A generator for `shard` with the default [`Options`].
    ///
    /// Two generators made this way for the same shard do not know of each other; behind
    /// `std`, [`Generator::shared`] gives every handle for one (layout, shard) one state.
    ///
    /// # Errors
    /// [`Error::ShardOutOfRange`].
    pub const fn new(layout: Layout, shard: u64) -> Result<Self, Error> {
        Self::with_options(layout, shard, Options::new())
    }

    /// A generator for `shard` with explicit [`Options`].
    ///
    /// # Errors
    /// [`Error::ShardOutOfRange`].
    pub const fn with_options(layout: Layout, shard: u64, options: Options) -> Result<Self, Error> {
        Self::with_state(State::new(), layout, shard, options)
    }
}

impl<S: Borrow<State>> Generator<S> {
    /// A generator whose state lives in `state` ([`State::new`] for a new one).
    ///
    /// Generators on one state word never issue the same ID, whatever their options: this is
    /// how [`Generator::shared`] (with `std`) gives every handle for a (layout, shard) one state,
    /// and how a binding without `std` does the same. Every generator for one shard of one
    /// [`Layout::id_space`] must use the same word; two words for it can repeat IDs.
    ///
    /// # Errors
    /// [`Error::ShardOutOfRange`].
    pub const fn with_state(
        state: S,
        layout: Layout,
        shard: u64,
        options: Options,
    ) -> Result<Self, Error> {
        if shard > layout.max_shard() {
            // `state` has no const destructor to run; forget is what dropping it would do.
            core::mem::forget(state);
            return Err(Error::ShardOutOfRange {
                shard,
                max: layout.max_shard(),
            });
        }
        let state_bits = layout.time_bits() as u32 + layout.sequence_bits() as u32;
        let max_units = if state_bits >= 64 {
            layout.max_time_units() - 1
        } else {
            layout.max_time_units()
        };
        Ok(Self {
            state,
            layout,
            shard,
            options,
            shard_bits: shard << layout.shard_shift(),
            max_units,
            seq_bits: layout.sequence_bits() as u32,
            seq_mask: mask(layout.sequence_bits() as u32),
            time_shift: layout.time_shift(),
            seq_shift: layout.sequence_shift(),
            #[cfg(feature = "std")]
            tick_ahead_units: options.backwards_tolerance_ms / layout.unit_ms(),
            #[cfg(feature = "std")]
            tick_check_mask: mask(layout.sequence_bits() as u32) & (TICK_CHECK_EVERY - 1),
            #[cfg(feature = "std")]
            tick_max_elapsed_ms: (max_units + 1).saturating_mul(layout.unit_ms()) - 1,
        })
    }

    /// The layout this generator makes IDs for.
    pub const fn layout(&self) -> Layout {
        self.layout
    }
    /// The shard this generator makes IDs for.
    pub const fn shard(&self) -> u64 {
        self.shard
    }
    /// The generator's options.
    pub const fn options(&self) -> Options {
        self.options
    }

    fn cell(&self) -> &State {
        self.state.borrow()
    }

    /// What every generator on this one's state did: IDs made, calls that waited, units
    /// borrowed, clock steps back (see [`GeneratorStats`]). All are exact once no call is in
    /// flight; `ids` is never more than the IDs handed out. A call ahead of the clock counts
    /// its unit or step back before its compare-and-swap and takes it back if another thread
    /// took the slot, so a reading in that moment may be one ahead (it keeps the per-ID path
    /// to the plain generator's instructions).
    #[cfg(feature = "counters")]
    pub fn stats(&self) -> GeneratorStats {
        self.cell().stats()
    }

    /// Counts what a claim of `count` slots from `slot` at `now_units` did ahead of the
    /// clock: units it began there (borrowed), and whether the clock was behind the last ID by
    /// more than the units it may borrow (a step back, ridden out within the tolerance). Off
    /// the per-ID path: only a claim that ends ahead of the clock comes here (a batch may
    /// start in the clock's unit, even in unit 0). `add`: count it, or take back what was
    /// counted.
    #[cfg(feature = "counters")]
    #[cold]
    #[inline(never)]
    fn count_ahead(&self, slot: u64, count: u64, now_units: u64, add: bool) {
        let state = self.cell();
        let seq_bits = self.seq_bits;
        // The units begun by this claim: those whose first slot is in it.
        let first_begun = (slot >> seq_bits) + u64::from(slot & self.seq_mask != 0);
        let last = (slot + count - 1) >> seq_bits;
        let from = first_begun.max(now_units + 1);
        if last >= from {
            State::bump(&state.borrowed_units, last - from + 1, add);
        }
        // The last ID before the claim, when its first slot is ahead of the clock: the slot
        // before it (in the unit before, if the slot begins a unit).
        let units = slot >> seq_bits;
        let fresh_unit = slot & self.seq_mask == 0;
        if units > now_units
            && units - u64::from(fresh_unit)
                > now_units.saturating_add(self.options.max_borrow_units)
        {
            State::bump(&state.clock_backwards, 1, add);
        }
    }

    /// Without `counters`, nothing: the build where code size is the budget (the WebAssembly
    /// module) compiles none of the counting, and its state is the word alone.
    #[cfg(not(feature = "counters"))]
    #[inline]
    #[allow(clippy::unused_self)] // the same signature as with `counters`
    fn count_ahead(&self, _slot: u64, _count: u64, _now_units: u64, _add: bool) {}

    /// Counts why a call at `now_units` was refused, and returns the error.
    #[cfg(feature = "counters")]
    #[cold]
    #[inline(never)]
    fn count_refusal(&self, error: Error, now_units: u64) -> Error {
        let state = self.cell();
        match error {
            Error::ClockMovedBackwards { .. } => {
                State::bump(&state.clock_backwards_refused, 1, true);
            }
            // Told to wait for more than the next unit: the clock is behind the last ID.
            Error::SequenceExhausted { retry_at_ms }
                if retry_at_ms > self.layout.unit_start_ms(now_units + 1) =>
            {
                State::bump(&state.clock_backwards, 1, true);
            }
            _ => {}
        }
        error
    }

    #[cfg(not(feature = "counters"))]
    #[inline]
    #[allow(clippy::unused_self)] // the same signature as with `counters`
    fn count_refusal(&self, error: Error, _now_units: u64) -> Error {
        error
    }

    /// Counts a call that waited for the next time unit.
    #[cfg(feature = "counters")]
    #[cold]
    #[inline(never)]
    fn count_wait(&self) {
        State::bump(&self.cell().waits, 1, true);
    }

    #[cfg(not(feature = "counters"))]
    #[inline]
    #[allow(clippy::unused_self)] // the same signature as with `counters`
    fn count_wait(&self) {}

    /// The ID for a state slot.
    #[inline]
    fn id(&self, slot: u64) -> u64 {
        let units = slot >> self.seq_bits;
        let sequence = slot & self.seq_mask;
        (units << self.time_shift) | self.shard_bits | (sequence << self.seq_shift)
    }

    /// The clock's time unit, checked against the epoch and the generator's last unit.
    #[inline]
    fn now_units(&self, now_ms: u64) -> Result<u64, Error> {
        // `time_units` would also check the layout's expiry; `max_units` bounds it already,
        // and one comparison less counts on the per-ID path of a layout known only at run
        // time (every binding's).
        let Some(elapsed) = now_ms.checked_sub(self.layout.epoch_ms()) else {
            return Err(Error::TimestampBeforeEpoch {
                timestamp_ms: now_ms,
                epoch_ms: self.layout.epoch_ms(),
            });
        };
        let units = match self.layout.unit_ms() {
            1 => elapsed,
            unit_ms => elapsed / unit_ms,
        };
        if units > self.max_units {
            return Err(self.expired(now_ms));
        }
        Ok(units)
    }

    fn expired(&self, timestamp_ms: u64) -> Error {
        Error::TimestampPastExpiry {
            timestamp_ms,
            expires_at_ms: self.layout.unit_start_ms(self.max_units + 1) - 1,
        }
    }

    /// May `slot` be issued when the clock reads `now_ms` (unit `now_units`)? A single slot
    /// (`single`) ahead of the clock that may be issued is counted here, in the branch that
    /// only slots ahead of the clock take (and taken back by `claim_on`'s `retract` if the
    /// slot is lost to another thread): the per-ID path tests nothing more.
    #[inline]
    fn check(&self, slot: u64, now_units: u64, now_ms: u64, single: bool) -> Result<(), Error> {
        // The generator's own copy of the sequence's width: 2-3 instructions an ID fewer than
        // the layout's on a state behind a pointer in the counted builds (the loop keeps it in
        // a register); the layout's keeps the WebAssembly module byte for byte what it was.
        #[cfg(feature = "counters")]
        let seq_bits = self.seq_bits;
        #[cfg(not(feature = "counters"))]
        let seq_bits = u32::from(self.layout.sequence_bits());
        if slot >> seq_bits <= now_units {
            return Ok(());
        }
        self.check_ahead(slot, now_units, now_ms, single)
    }

    /// [`Generator::check`] for a slot ahead of the clock's unit: out of line, so the
    /// compiler has nothing of it to work out before the per-ID loop. Inlined, its values
    /// (the sequence mask, the borrow's end, the unit's length) were hoisted out of
    /// `claim_on`'s loop and computed, and spilled, on every call when the state is behind a
    /// pointer (`Generator::shared`'s, a lease's): a leased ID cost 91 instructions under
    /// callgrind, 58 since (BENCHMARKS.md, "Leased generators counted"). Without `counters` (the
    /// WebAssembly module, where size is the budget) it is inlined as before.
    #[cfg_attr(feature = "counters", cold, inline(never))]
    #[cfg_attr(not(feature = "counters"), inline)]
    fn check_ahead(
        &self,
        slot: u64,
        now_units: u64,
        now_ms: u64,
        single: bool,
    ) -> Result<(), Error> {
        let seq_bits = u32::from(self.layout.sequence_bits());
        let units = slot >> seq_bits;
        if units > self.max_units {
            return Err(self.expired(self.layout.unit_start_ms(units)));
        }
        let borrow = self.options.max_borrow_units;
        // A slot with sequence 0 ahead of the clock is a unit entered by running out of the
        // previous one; the last issued ID then sits in the unit before it.
        let fresh_unit = slot & mask(seq_bits) == 0;
        let last_units = units - u64::from(fresh_unit);
        if last_units > now_units.saturating_add(borrow) {
            let behind_ms = self.layout.unit_start_ms(last_units) - now_ms;
            if behind_ms > self.options.backwards_tolerance_ms {
                return Err(Error::ClockMovedBackwards {
                    behind_ms,
                    tolerance_ms: self.options.backwards_tolerance_ms,
                });
            }
        }
        if fresh_unit && units > now_units.saturating_add(borrow) {
            return Err(Error::SequenceExhausted {
                retry_at_ms: self.layout.unit_start_ms(units - borrow),
            });
        }
        if single {
            self.count_ahead(slot, 1, now_units, true);
        }
        Ok(())
    }

    /// Issues one ID as if the clock read `now_ms` (Unix milliseconds).
    ///
    /// Deterministic: the result depends only on the generator's state and `now_ms`. IDs from
    /// one generator strictly increase, whatever `now_ms` does.
    ///
    /// # Errors
    /// - [`Error::SequenceExhausted`]: this unit (and every unit it may borrow) is used up;
    ///   nothing was issued, retry at `retry_at_ms`.
    /// - [`Error::ClockMovedBackwards`]: `now_ms` is further behind the last issued ID than
    ///   the tolerance.
    /// - [`Error::TimestampBeforeEpoch`], [`Error::TimestampPastExpiry`].
    pub fn next_id_at(&self, now_ms: u64) -> Result<u64, Error> {
        self.next_id_at_on(self.cell(), now_ms)
    }

    /// [`Generator::next_id_at`] on the state word `cell`: the generator's own, or a model
    /// checker's (`cfg(loom)`).
    #[inline]
    fn next_id_at_on(&self, cell: &impl Word, now_ms: u64) -> Result<u64, Error> {
        let now_units = self.now_units(now_ms)?;
        let floor = now_units << self.layout.sequence_bits();
        match claim_on(
            cell,
            floor,
            move |slot| self.check(slot, now_units, now_ms, true).map(|()| 1),
            move |slot, _| {
                if slot >> self.seq_bits > now_units {
                    self.count_ahead(slot, 1, now_units, false);
                }
            },
        ) {
            Ok((slot, _)) => Ok(self.id(slot)),
            Err(e) => Err(self.count_refusal(e, now_units)),
        }
    }

    /// Fills the front of `out` with IDs as if the clock read `now_ms`, in one atomic step,
    /// and returns how many it wrote: every ID left in the current time unit and in the units
    /// the generator may borrow, up to `out.len()`.
    ///
    /// # Errors
    /// As [`Generator::next_id_at`], when not even one ID can be issued; `out` is untouched.
    pub fn next_ids_at(&self, now_ms: u64, out: &mut [u64]) -> Result<usize, Error> {
        self.next_ids_at_on(self.cell(), now_ms, out)
    }

    /// [`Generator::next_ids_at`] on the state word `cell` (see [`Generator::next_id_at_on`]).
    #[inline]
    fn next_ids_at_on(
        &self,
        cell: &impl Word,
        now_ms: u64,
        out: &mut [u64],
    ) -> Result<usize, Error> {
        if out.is_empty() {
            return Ok(0);
        }
        let seq_bits = u32::from(self.layout.sequence_bits());
        let now_units = self.now_units(now_ms)?;
        let floor = now_units << seq_bits;
        let wanted = out.len() as u64;
        let claimed = claim_on(
            cell,
            floor,
            move |slot| {
                self.check(slot, now_units, now_ms, false)?;
                // The slot's own unit may always be finished; later units only within the borrow.
                let unit_end = ((slot >> seq_bits) + 1) << seq_bits;
                let last_borrowed = now_units.saturating_add(self.options.max_borrow_units);
                let borrow_end = (last_borrowed.min(self.max_units) + 1) << seq_bits;
                Ok(unit_end.max(borrow_end).saturating_sub(slot).min(wanted))
            },
            |_, _| {},
        );
        let (start, count) = claimed.map_err(|e| self.count_refusal(e, now_units))?;
        if (start + count - 1) >> seq_bits > now_units {
            self.count_ahead(start, count, now_units, true);
        }
        for (offset, out) in (0..count).zip(out.iter_mut()) {
            *out = self.id(start + offset);
        }
        // `count <= out.len()`, which is a usize.
        Ok(usize::try_from(count).unwrap_or(out.len()))
    }

    /// How far the last issued ID's time unit is ahead of `now_ms`, in milliseconds: non-zero
    /// after borrowing future units, or after the clock moved back within the tolerance.
    pub fn drift_ms(&self, now_ms: u64) -> u64 {
        let seq_bits = u32::from(self.layout.sequence_bits());
        let next = self.cell().word.load(Ordering::Relaxed);
        if next == 0 {
            return 0; // nothing issued yet
        }
        let last_start = self.layout.unit_start_ms((next - 1) >> seq_bits);
        let now_start = match self.layout.time_units(now_ms) {
            Ok(units) => self.layout.unit_start_ms(units),
            Err(_) => now_ms,
        };
        last_start.saturating_sub(now_start)
    }
}

impl<S: Borrow<State>> Generator<S> {
    /// Issues one ID at the time `clock()` reads (Unix ms); when the time unit is used up,
    /// calls `wait_until(retry_at_ms)` and tries again. For callers that bring their own clock
    /// and way of waiting (the WebAssembly binding: `performance.now()`, a spin); `std`'s
    /// [`Generator::next_id`] is this with the process clock, plus a faster path for bursts.
    ///
    /// # Errors
    /// As [`Generator::next_id_at`], except [`Error::SequenceExhausted`], which is waited out.
    pub fn next_id_with(
        &self,
        mut clock: impl FnMut() -> u64,
        mut wait_until: impl FnMut(u64),
    ) -> Result<u64, Error> {
        let mut waited = false;
        loop {
            match self.next_id_at(clock()) {
                Err(Error::SequenceExhausted { retry_at_ms }) => {
                    if !waited {
                        waited = true;
                        self.count_wait();
                    }
                    wait_until(retry_at_ms);
                }
                result => return result,
            }
        }
    }

    /// Fills all of `out` with IDs at the times `clock()` reads, one atomic step per time
    /// unit, calling `wait_until(retry_at_ms)` whenever a unit is used up.
    ///
    /// # Errors
    /// As [`Generator::next_id_with`]. IDs already written to `out` before an error were
    /// issued and will not be issued again.
    pub fn next_ids_with(
        &self,
        out: &mut [u64],
        mut clock: impl FnMut() -> u64,
        mut wait_until: impl FnMut(u64),
    ) -> Result<(), Error> {
        let mut filled = 0;
        let mut waited = false;
        while filled < out.len() {
            match self.next_ids_at(clock(), &mut out[filled..]) {
                Ok(n) => filled += n,
                Err(Error::SequenceExhausted { retry_at_ms }) => {
                    if !waited {
                        waited = true;
                        self.count_wait();
                    }
                    wait_until(retry_at_ms);
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

#[cfg(feature = "std")]
impl<S: Borrow<State>> Generator<S> {
    /// Issues one ID now, reading the process's clock ([`crate::now_ms`]), and waits for the
    /// next time unit when this one is used up (at most one unit: 1 ms, 10 ms for Sonyflake).
    ///
    /// # Errors
    /// [`Error::ClockMovedBackwards`] (only when the state is ahead of the clock by more than
    /// the tolerance, e.g. after [`Generator::next_id_at`] with a future time), and
    /// [`Error::TimestampPastExpiry`].
    #[inline]
    pub fn next_id(&self) -> Result<u64, Error> {
        if let Some(id) = crate::clock::ticker_ms().and_then(|tick| self.next_id_by_tick(tick)) {
            return Ok(id);
        }
        self.next_id_precise()
    }

    /// [`Generator::next_id`] on the precise clock: out of line, so the ticker's path above
    /// inlines into the caller as a few instructions around one compare-and-swap, without
    /// this loop's registers and calls.
    #[inline(never)]
    fn next_id_precise(&self) -> Result<u64, Error> {
        let mut waited = false;
        loop {
            let now = crate::now_ms();
            match self.next_id_at(now) {
                Err(Error::SequenceExhausted { retry_at_ms }) => {
                    if !waited {
                        waited = true;
                        self.count_wait();
                    }
                    crate::clock::check_ticker(now);
                    crate::clock::wait_until(retry_at_ms);
                }
                Ok(id) => {
                    if (id >> self.seq_shift) & self.seq_mask > 0 {
                        // A second ID in one unit: a burst, which the ticker makes cheaper.
                        crate::clock::check_ticker(now);
                    }
                    return Ok(id);
                }
                result => return result,
            }
        }
    }

    /// The fast path of [`Generator::next_id`]: issues an ID at the ticker's time when that
    /// is plainly safe, and otherwise returns `None` for the precise path to decide: when the
    /// slot would open a unit ahead of the tick (used up, borrowed, or a stale tick), when it
    /// is further ahead than the tolerance, when [`Generator::next_id_at`] would refuse the
    /// tick, and at the ID where the precise clock checks the tick ([`TICK_CHECK_EVERY`]).
    #[inline]
    fn next_id_by_tick(&self, tick_ms: u64) -> Option<u64> {
        let elapsed = tick_ms.wrapping_sub(self.layout.epoch_ms());
        if elapsed > self.tick_max_elapsed_ms {
            return None; // before the epoch or past the end: the precise path's error
        }
        let now_units = match self.layout.unit_ms() {
            1 => elapsed,
            unit_ms => elapsed / unit_ms,
        };
        let floor = now_units << self.seq_bits;
        // The first slot of the next unit: `max_units` keeps it within 64 bits.
        let next_floor = floor + (1 << self.seq_bits);
        // No call in this loop but `claim_jump`'s (with counters: a unit begun after an idle
        // time), which leaves it: a call the loop came back from would make the values it
        // keeps live spill to the stack, and a store before the compare-and-swap (which waits
        // for every earlier store to drain) cost 10 % of a burst. The closures are `move`, so
        // their values are stored for `claim_jump` on its path only. Whatever the loop does
        // not pass, the precise path decides.
        let claimed: Result<_, ()> = claim_on(
            self.cell(),
            floor,
            move |slot| {
                // `slot >= floor`: in the tick's unit or ahead of it.
                if slot & self.tick_check_mask == 1 {
                    return Err(()); // the precise clock checks the tick at this ID
                }
                if slot < next_floor {
                    return Ok(1); // in the tick's unit
                }
                // Ahead of it (the ticker lags the clock by its wake-up latency, so a burst across
                // a millisecond continues a unit the precise clock began): a slot that continues
                // a begun unit within the tolerance, which `check` would pass. A fresh unit ahead
                // of the tick is the precise path's to open.
                let ahead = (slot >> self.seq_bits) - now_units;
                if slot & self.seq_mask != 0 && ahead <= self.tick_ahead_units {
                    Ok(1)
                } else {
                    Err(())
                }
            },
            |_, _| {},
        );
        claimed.ok().map(|(slot, _)| self.id(slot))
    }

    /// Fills all of `out` with IDs now, one atomic step per time unit, waiting for the next
    /// unit whenever one is used up.
    ///
    /// # Errors
    /// As [`Generator::next_id`]. IDs already written to `out` before an error were issued and
    /// will not be issued again.
    pub fn next_ids(&self, out: &mut [u64]) -> Result<(), Error> {
        self.next_ids_with(out, crate::now_ms, crate::clock::wait_until)
    }
}

/// Loom models of the state word: every interleaving (within loom's preemption bound) of 2–3
/// threads issuing IDs through the generator's own `claim_on` / `next_id_at_on`, on a layout
/// with 2 sequence bits so units run out within a few IDs. Run with
/// `RUSTFLAGS="--cfg loom" cargo test -p shardid --lib --release loom`.
#[cfg(all(test, loom))]
pub(crate) mod loom_models {
    use alloc::vec::Vec;

    use core::sync::atomic::Ordering;

    use loom::sync::Arc;
    use loom::sync::atomic::AtomicU64;
    use loom::thread;

    use super::{Generator, Options, Word, ids_on};
    use crate::{Error, Layout};

    /// A generator state of loom's atomics: the word and the count of slots skipped, the two
    /// that the count of IDs is derived from.
    #[derive(Debug, Default)]
    pub(crate) struct LoomWord {
        word: AtomicU64,
        skipped: AtomicU64,
    }

    impl LoomWord {
        pub(crate) fn new(slot: u64) -> Self {
            Self {
                word: AtomicU64::new(slot),
                skipped: AtomicU64::new(slot),
            }
        }
    }

    impl Word for LoomWord {
        fn load(&self) -> u64 {
            self.word.load(Ordering::Relaxed)
        }

        fn compare_exchange_weak(&self, current: u64, new: u64) -> Result<u64, u64> {
            self.word
                .compare_exchange_weak(current, new, Ordering::Release, Ordering::Relaxed)
        }

        fn skip(&self, slots: u64) {
            self.skipped.fetch_add(slots, Ordering::Relaxed);
        }

        fn unskip(&self, slots: u64) {
            self.skipped.fetch_sub(slots, Ordering::Relaxed);
        }

        fn load_acquire(&self) -> u64 {
            self.word.load(Ordering::Acquire)
        }

        fn skipped(&self) -> u64 {
            self.skipped.load(Ordering::Relaxed)
        }
    }

    /// Every interleaving with at most 3 preemptions (loom's advice: bugs rarely need more,
    /// and the count of interleavings explodes past it).
    pub(crate) fn model(f: impl Fn() + Sync + Send + 'static) {
        bounded(3, f);
    }

    /// Every interleaving with at most `preemptions` preemptions.
    pub(crate) fn bounded(preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(preemptions);
        builder.check(f);
    }

    /// 4 IDs per 1 ms unit, 2 shard bits, epoch 0: units run out within a few IDs.
    pub(crate) fn layout() -> Layout {
        Layout::builder()
            .epoch_ms(0)
            .unit_ms(1)
            .bits(20, 2, 2)
            .build()
            .unwrap()
    }

    /// What one thread got: its IDs in order, and its errors.
    type Got = (Vec<u64>, Vec<Error>);

    /// Runs `work(thread index, generator, word)` on `threads` threads over one shared word;
    /// returns what each got.
    fn run(
        threads: usize,
        options: Options,
        work: fn(usize, &Generator, &LoomWord) -> Got,
    ) -> Vec<Got> {
        let generator = Arc::new(Generator::with_options(layout(), 1, options).unwrap());
        let state = Arc::new(LoomWord::new(0));
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (generator, state) = (Arc::clone(&generator), Arc::clone(&state));
                thread::spawn(move || work(t, &generator, &state))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    }

    /// No ID twice across threads; each thread's IDs strictly increase; each is this shard's.
    fn assert_unique(got: &[Got]) -> Vec<u64> {
        let mut all: Vec<u64> = Vec::new();
        for (ids, _) in got {
            assert!(
                ids.windows(2).all(|w| w[0] < w[1]),
                "not increasing: {ids:?}"
            );
            for &id in ids {
                assert_eq!(layout().decode(id).unwrap().shard, 1);
            }
            all.extend(ids);
        }
        all.sort_unstable();
        let n = all.len();
        all.dedup();
        assert_eq!(all.len(), n, "a duplicate ID");
        all
    }

    fn one_at(g: &Generator, w: &LoomWord, now: u64, got: &mut Got) {
        match g.next_id_at_on(w, now) {
            Ok(id) => got.0.push(id),
            Err(e) => got.1.push(e),
        }
    }

    /// A clock that stands still: 3 threads ask for 6 IDs of one 4-ID unit. Exactly 4 are
    /// issued, all in that unit; the other 2 calls are told to retry at the next unit.
    #[test]
    fn loom_a_standing_clock_runs_out_without_a_duplicate() {
        model(|| {
            let got = run(3, Options::new(), |_, g, w| {
                let mut got = (Vec::new(), Vec::new());
                one_at(g, w, 7, &mut got);
                one_at(g, w, 7, &mut got);
                got
            });
            let all = assert_unique(&got);
            assert_eq!(all.len(), 4);
            assert!(
                all.iter()
                    .all(|&id| layout().decode(id).unwrap().timestamp_ms == 7)
            );
            for (_, errors) in &got {
                for e in errors {
                    assert_eq!(*e, Error::SequenceExhausted { retry_at_ms: 8 });
                }
            }
        });
    }

    /// Batches and single IDs together, the clock moving on and back (within the tolerance),
    /// and borrowing one unit ahead: still no duplicate, and no ID beyond the borrowed unit.
    #[test]
    fn loom_batches_singles_and_a_moving_clock() {
        model(|| {
            let options = Options::new().max_borrow_units(1);
            let got = run(2, options, |t, g, w| {
                let mut got = (Vec::new(), Vec::new());
                if t == 0 {
                    let mut out = [0; 3];
                    match g.next_ids_at_on(w, 7, &mut out) {
                        Ok(n) => got.0.extend_from_slice(&out[..n]),
                        Err(e) => got.1.push(e),
                    }
                    one_at(g, w, 6, &mut got); // the clock steps back 1 ms
                } else {
                    one_at(g, w, 8, &mut got);
                    one_at(g, w, 7, &mut got);
                    one_at(g, w, 7, &mut got);
                }
                got
            });
            let all = assert_unique(&got);
            // Units 7, 8 and (borrowed from 8) 9: at most 12 slots, never a unit past 9.
            assert!(all.iter().all(|&id| {
                let ms = layout().decode(id).unwrap().timestamp_ms;
                (7..=9).contains(&ms)
            }));
            for (_, errors) in &got {
                for e in errors {
                    assert!(matches!(e, Error::SequenceExhausted { .. }), "{e:?}");
                }
            }
        });
    }

    /// A clock past the layout's end: every thread gets `TimestampPastExpiry`, and nothing
    /// is issued (the word never moves).
    #[test]
    fn loom_an_expired_clock_issues_nothing() {
        model(|| {
            let got = run(2, Options::new(), |_, g, w| {
                let mut got = (Vec::new(), Vec::new());
                one_at(g, w, layout().expires_at_ms() + 1, &mut got);
                got
            });
            for (ids, errors) in &got {
                assert!(ids.is_empty());
                assert!(matches!(errors[..], [Error::TimestampPastExpiry { .. }]));
            }
        });
    }

    /// The count of IDs while threads issue them: a reader never sees more IDs than were
    /// handed out (a jump's skip is counted before its compare-and-swap), even in the moment
    /// between a skip and its jump, or after a failed jump; and once the threads are done, it
    /// sees exactly as many. Seen to fail with the skip counted after a successful
    /// compare-and-swap instead of before it (a reader saw the jump, not its skip: 4 IDs
    /// counted as 7).
    #[test]
    fn loom_the_count_of_ids_is_never_ahead_and_ends_exact() {
        bounded(2, || {
            let generator = Arc::new(Generator::new(layout(), 1).unwrap());
            let state = Arc::new(LoomWord::new(0));
            let issued = Arc::new(AtomicU64::new(0));
            let workers: Vec<_> = (0..2)
                .map(|t| {
                    let (g, w, issued) = (
                        Arc::clone(&generator),
                        Arc::clone(&state),
                        Arc::clone(&issued),
                    );
                    thread::spawn(move || {
                        // Two units, each begun by a jump from an idle state; the second
                        // thread races the first into both.
                        for now in [5 + t as u64, 9] {
                            if g.next_id_at_on(&*w, now).is_ok() {
                                issued.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                    })
                })
                .collect();
            let reader = {
                let (w, issued) = (Arc::clone(&state), Arc::clone(&issued));
                thread::spawn(move || {
                    for _ in 0..2 {
                        let counted = ids_on(&*w);
                        // Counted IDs were handed out; `issued` is bumped after, so read it
                        // after the count and allow the calls in flight (at most 2).
                        let handed_out = issued.load(Ordering::SeqCst) + 2;
                        assert!(
                            counted <= handed_out,
                            "{counted} IDs counted, at most {handed_out} handed out"
                        );
                    }
                })
            };
            for w in workers {
                w.join().unwrap();
            }
            reader.join().unwrap();
            assert_eq!(ids_on(&*state), issued.load(Ordering::SeqCst));
        });
    }
}
