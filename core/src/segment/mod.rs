//! Dense IDs from database segments (号段: Leaf, Tinyid, TiDB's cached `AUTO_INCREMENT`,
//! Flickr's ticket servers): take a range of numbers from a database row in one statement,
//! hand them out from memory, and fetch the next range before the first runs out.
//!
//! [`SegmentAllocator`] is the allocator's whole logic, with no I/O: the driver (Python's
//! psycopg, Node's pg, Rust's `postgres`) asks it for IDs, and when it answers that a fetch is
//! due, runs the core's `take_segment` statement ([`crate::sql::Segments`]) and hands the row
//! back with [`SegmentAllocator::fill`]. So every language has the same behaviour, and tests
//! script it without a database.
//!
//! - Two segments: the current one, and the next, fetched once a tenth of the current one is
//!   used ([`SegmentAllocator::PREFETCH_AT`]), so the hot path never waits while the database
//!   answers in time.
//! - One fetch in flight at most: the call that makes one due is told so; every other caller
//!   finding both segments empty is told a fetch is already under way, and waits for it.
//! - A failed fetch re-arms: the next call that finds the next segment missing starts another,
//!   after a backoff (100 ms, doubling to 2 s) so a database that is down is not hammered.
//! - The segment size adapts ([`SizePolicy`]): doubled when a segment lasted less than half the
//!   target lifetime, halved when it lasted more than twice, within `min..=max`; the database
//!   row remembers the size used, so a restart starts at it.
//! - IDs from one allocator increase: segments are taken in order and used in order.
//!
//! The hot path is lock-free: one load and one compare-and-swap of a state word holding the
//! current segment's generation and position, like the time-sortable [`crate::Generator`].
//! Each slot records the generation its segment is for, so a slot is the next segment only
//! when it holds the next generation's: a flag cleared after the switch left a window in which
//! a used-up segment still looked ready, and was handed out a second time.

use core::sync::atomic::Ordering;

// The model checker's own under `cfg(loom)`, so it explores the interleavings of the
// allocator's own code (see the `loom_models` below).
#[cfg(not(loom))]
use core::sync::atomic::{AtomicBool, AtomicU64};
#[cfg(loom)]
use loom::sync::atomic::{AtomicBool, AtomicU64};

/// The atomics that only size segments and space out retries (the last size and fill time,
/// the failures): never the model checker's. They decide no ID and publish nothing (a stale
/// one means one segment sized or one retry timed from an older fill), and loom branching on
/// each of their loads doubled the models' time.
type Stat = core::sync::atomic::AtomicU64;

/// `fn` items that are `const` in a normal build and not under `cfg(loom)`, whose atomics
/// cannot be made in a constant: one body for both.
macro_rules! const_unless_loom {
    ($(#[$meta:meta])* $vis:vis fn $($rest:tt)*) => {
        #[cfg(not(loom))]
        $(#[$meta])* $vis const fn $($rest)*
        #[cfg(loom)]
        $(#[$meta])* $vis fn $($rest)*
    };
}

#[cfg(any(
    feature = "postgres",
    feature = "mysql",
    feature = "sqlite",
    feature = "redis"
))]
pub(crate) mod driver;
#[cfg(feature = "mysql")]
pub mod mysql;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "sql")]
pub mod protocol;
#[cfg(feature = "sqlite")]
pub mod sqlite;
#[cfg(feature = "tokio-postgres")]
pub mod tokio_postgres;
#[cfg(any(
    feature = "postgres",
    feature = "mysql",
    feature = "sqlite",
    feature = "redis"
))]
pub use driver::create_any as create_tag;

/// A range of dense IDs: `first`, `first + stride`, ... (`count` of them). `stride` is the
/// number of ticket servers (1 for one database): server `i` of `n` hands out only numbers
/// `≡ i (mod n)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Segment {
    /// The first ID.
    pub first: u64,
    /// How many IDs.
    pub count: u64,
    /// The distance between two IDs.
    pub stride: u64,
}

impl Segment {
    /// One past the last ID: where the next segment of the same server starts.
    pub const fn end(&self) -> u64 {
        self.first + self.count * self.stride
    }
}

/// How large segments are: sized so one lasts about `target_ms`, within `min..=max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct SizePolicy {
    /// The smallest segment taken.
    pub min: u64,
    /// The largest segment taken.
    pub max: u64,
    /// How long a segment should last, in milliseconds.
    pub target_ms: u64,
}

impl SizePolicy {
    /// 1,000 to 1,000,000 IDs per segment, each lasting about a minute.
    pub const fn new() -> Self {
        Self {
            min: 1_000,
            max: 1_000_000,
            target_ms: 60_000,
        }
    }
    /// Sets the bounds.
    #[must_use]
    pub const fn bounds(mut self, min: u64, max: u64) -> Self {
        self.min = min;
        self.max = max;
        self
    }
    /// Sets the target lifetime.
    #[must_use]
    pub const fn target_ms(mut self, ms: u64) -> Self {
        self.target_ms = ms;
        self
    }
}

impl Default for SizePolicy {
    fn default() -> Self {
        Self::new()
    }
}

/// What the driver must do besides using the IDs it got: fetch a segment of `size` IDs
/// (`take_segment(tag, size)`), then [`SegmentAllocator::fill`] or
/// [`SegmentAllocator::fetch_failed`]. `size` 0 asks for the size the tag's row remembers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a fetch that is due and never made leaves the allocator empty"]
pub struct Fetch {
    /// How many IDs to ask for (0: the size the database remembers for the tag).
    pub size: u64,
}

/// Both segments are used up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Empty {
    /// This caller must fetch (and then retry).
    Fetch(Fetch),
    /// A fetch is under way: wait for it (bounded), then retry.
    Wait,
}

/// Why [`SegmentAllocator::fill`] refused a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FillError {
    /// No fetch was due: a segment nobody asked for (a driver bug).
    NotFetching,
    /// The segment is empty, has a zero stride, overflows `u64`, or holds more IDs than one
    /// segment can (2^40 - 1).
    Invalid,
}

/// Bits of the state word holding the position in the current segment; the rest hold the
/// generation (counting segments used, modulo 2^24), whose low bit is the current slot.
const POSITION_BITS: u32 = 40;
const POSITION_MASK: u64 = (1 << POSITION_BITS) - 1;
const GENERATION_MASK: u64 = u64::MAX >> POSITION_BITS;
/// A slot's generation before its first fill: no generation's.
const NO_GENERATION: u64 = u64::MAX;

/// The generation of a state word.
const fn generation_of(state: u64) -> u64 {
    state >> POSITION_BITS
}

/// The generation after `generation`.
const fn after(generation: u64) -> u64 {
    generation.wrapping_add(1) & GENERATION_MASK
}

#[derive(Debug)]
struct Slot {
    first: AtomicU64,
    count: AtomicU64,
    stride: AtomicU64,
    /// The position at which the next segment is fetched ([`SegmentAllocator::PREFETCH_AT`]).
    threshold: AtomicU64,
    /// The generation this slot's segment is for, stored (`Release`) after the numbers above:
    /// the slot is the next segment when this is the generation after the current one. Never
    /// cleared, so there is no moment when a used-up segment looks ready: it holds an older
    /// generation's number until it is filled again.
    generation: AtomicU64,
}

impl Slot {
    const_unless_loom! {
        fn new() -> Self {
            Self {
                first: AtomicU64::new(0),
                count: AtomicU64::new(0),
                stride: AtomicU64::new(1),
                threshold: AtomicU64::new(1),
                generation: AtomicU64::new(NO_GENERATION),
            }
        }
    }
}

/// The allocator of one tag: see the [module](self) docs.
///
/// `Sync`: share it between threads. Time is an argument (`now_ms`), for the size policy only.
#[derive(Debug)]
pub struct SegmentAllocator {
    /// `generation << 40 | position`: the current slot is `generation & 1`.
    state: AtomicU64,
    slots: [Slot; 2],
    /// A fetch is due or under way.
    fetching: AtomicBool,
    policy: SizePolicy,
    /// The size of the last segment filled (0: none yet) and when it was filled.
    last_size: Stat,
    last_fill_ms: Stat,
    /// Fetches failed in a row, and when the next may start (Unix ms).
    failures: Stat,
    retry_at_ms: Stat,
    /// What it did ([`SegmentAllocator::stats`]).
    counters: Counters,
}

/// The allocator's counters: plain atomics, bumped where a fetch starts or ends and where a
/// caller finds both segments used up, never on the path of an ID.
#[derive(Debug)]
struct Counters {
    fetches: Stat,
    failed_fetches: Stat,
    /// When the fetch under way started (Unix ms, the driver's clock).
    started_ms: Stat,
    last_ms: Stat,
    max_ms: Stat,
    /// Fetches per bucket of [`crate::stats::FETCH_LATENCY_BOUNDS_MS`] (not cumulative).
    buckets: [Stat; 9],
    sum_ms: Stat,
    empty_waits: Stat,
    skipped: Stat,
}

impl Counters {
    const fn new() -> Self {
        Self {
            fetches: Stat::new(0),
            failed_fetches: Stat::new(0),
            started_ms: Stat::new(0),
            last_ms: Stat::new(0),
            max_ms: Stat::new(0),
            buckets: [const { Stat::new(0) }; 9],
            sum_ms: Stat::new(0),
            empty_waits: Stat::new(0),
            skipped: Stat::new(0),
        }
    }

    /// A fetch ended at `now_ms`: times it.
    fn ended(&self, now_ms: u64) {
        let took = now_ms.saturating_sub(self.started_ms.load(Ordering::Relaxed));
        self.last_ms.store(took, Ordering::Relaxed);
        self.max_ms.fetch_max(took, Ordering::Relaxed);
        self.sum_ms.fetch_add(took, Ordering::Relaxed);
        let bucket = crate::stats::FETCH_LATENCY_BOUNDS_MS
            .iter()
            .position(|&le| took <= le)
            .unwrap_or(8);
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
    }
}

/// One step of taking IDs: how many were taken from the current segment, or why none were.
enum Step {
    Took {
        first: u64,
        stride: u64,
        n: u64,
        prefetch: bool,
    },
    Switched,
    Empty,
}

impl SegmentAllocator {
    /// The share of a segment, in thousandths, used before the next one is fetched: a tenth.
    pub const PREFETCH_AT: u64 = 100;

    const_unless_loom! {
        /// An empty allocator: its first call asks for a fetch.
        pub fn new(policy: SizePolicy) -> Self {
            Self {
                state: AtomicU64::new(0),
                slots: [Slot::new(), Slot::new()],
                fetching: AtomicBool::new(false),
                policy,
                last_size: Stat::new(0),
                last_fill_ms: Stat::new(0),
                failures: Stat::new(0),
                retry_at_ms: Stat::new(0),
                counters: Counters::new(),
            }
        }
    }

    /// What the allocator did: fetches and their latency (from when a fetch was due to its
    /// [`SegmentAllocator::fill`] or [`SegmentAllocator::fetch_failed`], by the driver's
    /// clock), calls that found both segments used up, numbers skipped, what is left of the
    /// current segment (see [`crate::stats::SegmentStats`]).
    pub fn stats(&self) -> crate::stats::SegmentStats {
        let c = &self.counters;
        let load = |s: &Stat| s.load(Ordering::Relaxed);
        let mut le = [0u64; 9];
        let mut running = 0u64;
        for (total, bucket) in le.iter_mut().zip(&c.buckets) {
            running += load(bucket);
            *total = running;
        }
        let state = self.state.load(Ordering::Acquire);
        let count = self
            .slot(generation_of(state))
            .count
            .load(Ordering::Relaxed);
        crate::stats::SegmentStats {
            fetches: load(&c.fetches),
            failed_fetches: load(&c.failed_fetches),
            fetch_latency_last_ms: load(&c.last_ms),
            fetch_latency_max_ms: load(&c.max_ms),
            fetch_latency_le_1ms: le[0],
            fetch_latency_le_5ms: le[1],
            fetch_latency_le_10ms: le[2],
            fetch_latency_le_50ms: le[3],
            fetch_latency_le_100ms: le[4],
            fetch_latency_le_500ms: le[5],
            fetch_latency_le_1000ms: le[6],
            fetch_latency_le_5000ms: le[7],
            fetch_latency_le_inf: le[8],
            fetch_latency_sum_ms: load(&c.sum_ms),
            empty_waits: load(&c.empty_waits),
            skipped: load(&c.skipped),
            remaining: count.saturating_sub(state & POSITION_MASK),
        }
    }

    /// What was left when the allocator closed ([`SegmentAllocator::unused`]) was given back
    /// (`returned`) or not: counts the numbers skipped, the holes this allocator made.
    pub fn settle(&self, unused: Unused, returned: bool) {
        let skipped = unused.lost + if returned { 0 } else { unused.count };
        self.counters.skipped.fetch_add(skipped, Ordering::Relaxed);
    }

    /// The slot holding `generation`'s segment.
    fn slot(&self, generation: u64) -> &Slot {
        &self.slots[(generation & 1) as usize]
    }

    /// Whether the segment after the one of `state` has arrived (`Acquire`: its numbers are
    /// visible once this says so).
    fn next_ready(&self, state: u64) -> bool {
        let next = after(generation_of(state));
        self.slot(next).generation.load(Ordering::Acquire) == next
    }

    /// The longest wait between two failed fetches.
    pub const MAX_BACKOFF_MS: u64 = 2_000;

    /// The size policy.
    pub const fn policy(&self) -> SizePolicy {
        self.policy
    }

    /// Takes up to `want(state)` IDs from the current segment (`state`: the state word the
    /// taking would replace, unique to this taking), or moves to the next one.
    #[inline]
    fn step(&self, want: impl Fn(u64) -> u64) -> Step {
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            let slot = self.slot(generation_of(state));
            let position = state & POSITION_MASK;
            // The slot's numbers, read after the state and before the exchange: they were
            // published before the switch to this generation (which the state's load
            // follows), and the slot is refilled only after a switch away from it, which
            // would make the exchange fail. Read after the exchange, they could already be the
            // next refill's.
            let count = slot.count.load(Ordering::Relaxed);
            let first = slot.first.load(Ordering::Relaxed);
            let stride = slot.stride.load(Ordering::Relaxed);
            let threshold = slot.threshold.load(Ordering::Relaxed);
            if position < count {
                let n = want(state).clamp(1, count - position);
                match self.state.compare_exchange_weak(
                    state,
                    state + n,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => {
                        let prefetch = position + n >= threshold;
                        return Step::Took {
                            first: first + position * stride,
                            stride,
                            n,
                            prefetch,
                        };
                    }
                    Err(now) => {
                        state = now;
                        continue;
                    }
                }
            }
            // The current segment is used up: move to the next, if it has arrived. The old
            // slot is then free for the next fetch: it holds an older generation than the
            // next one, which is all that marks it as not ready.
            if !self.next_ready(state) {
                return Step::Empty;
            }
            let moved = after(generation_of(state)) << POSITION_BITS;
            match self
                .state
                .compare_exchange(state, moved, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Step::Switched,
                Err(now) => state = now,
            }
        }
    }

    /// The fetch to make now, if none is due or under way and the next segment is missing.
    /// The clock is read only then.
    fn due(&self, now: &impl Fn() -> u64) -> Option<Fetch> {
        if self.next_ready(self.state.load(Ordering::Acquire))
            || self.fetching.load(Ordering::Relaxed)
        {
            return None;
        }
        let now_ms = now();
        if now_ms < self.retry_at_ms.load(Ordering::Relaxed) {
            return None;
        }
        if self
            .fetching
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return None;
        }
        // Checked again now that this caller owns the fetch: another fetch may have filled
        // the next segment between the first check and the exchange, and a second fill would
        // overwrite it (while threads may already be taking from it). With the fetch owned,
        // nothing else fills, so the state cannot move past a missing next segment until
        // this fetch's fill.
        if self.next_ready(self.state.load(Ordering::Acquire)) {
            self.fetching.store(false, Ordering::Release);
            return None;
        }
        self.counters.started_ms.store(now_ms, Ordering::Relaxed);
        Some(Fetch {
            size: self.next_size(now_ms),
        })
    }

    /// The size of the next segment by the policy, then sized to the target lifetime from how
    /// long the last one lasted. The first: 0 (the size the tag's row remembers, 1,000 on a new
    /// row) for a client with the default bounds, so a restarted process goes on at the size
    /// its tag grew to; a client with bounds of its own asks for 1,000 within them, since the
    /// row remembers other clients' sizes and a new row's 1,000 too (a serial period is a new
    /// row every day: processes bounded to 3 each took 1,000 at midnight, and the day's
    /// numbers had holes of about 1,000 where they overlapped).
    fn next_size(&self, now_ms: u64) -> u64 {
        let p = self.policy;
        let last = self.last_size.load(Ordering::Relaxed);
        if last == 0 {
            let default = SizePolicy::new();
            return if (p.min, p.max) == (default.min, default.max) {
                0
            } else {
                default.min.clamp(p.min.max(1), p.max.max(p.min).max(1))
            };
        }
        let lasted = now_ms.saturating_sub(self.last_fill_ms.load(Ordering::Relaxed));
        let size = if lasted < p.target_ms / 2 {
            last.saturating_mul(2)
        } else if lasted > p.target_ms.saturating_mul(2) {
            last / 2
        } else {
            last
        };
        size.clamp(p.min.max(1), p.max.max(p.min).max(1))
    }

    /// One ID, and the fetch to start if one is now due (it happens once, to one caller).
    ///
    /// # Errors
    /// [`Empty`] when both segments are used up: [`Empty::Fetch`] tells this caller to fetch,
    /// [`Empty::Wait`] that a fetch is under way.
    #[inline]
    pub fn next_id(&self, now_ms: u64) -> Result<(u64, Option<Fetch>), Empty> {
        self.next_id_with(|| now_ms)
    }

    /// As [`SegmentAllocator::next_id`], reading the clock (`now`, Unix ms) only when a fetch
    /// may be due: the hot path of a driver that has a clock to read.
    ///
    /// # Errors
    /// As [`SegmentAllocator::next_id`].
    #[inline]
    pub fn next_id_with(&self, now: impl Fn() -> u64) -> Result<(u64, Option<Fetch>), Empty> {
        self.take_one(now, true)
    }

    /// As [`SegmentAllocator::next_id_with`], for a caller that already found both segments
    /// used up and tries again after waiting: its call was counted among the
    /// [`empty_waits`](crate::stats::SegmentStats::empty_waits) once.
    ///
    /// # Errors
    /// As [`SegmentAllocator::next_id`].
    pub fn retry_id_with(&self, now: impl Fn() -> u64) -> Result<(u64, Option<Fetch>), Empty> {
        self.take_one(now, false)
    }

    #[inline]
    fn take_one(
        &self,
        now: impl Fn() -> u64,
        count_empty: bool,
    ) -> Result<(u64, Option<Fetch>), Empty> {
        loop {
            match self.step(|_| 1) {
                Step::Took {
                    first, prefetch, ..
                } => {
                    let fetch = if prefetch { self.due(&now) } else { None };
                    return Ok((first, fetch));
                }
                Step::Switched => {}
                Step::Empty => {
                    if count_empty {
                        self.count_empty();
                    }
                    return Err(self.empty(&now));
                }
            }
        }
    }

    /// As [`SegmentAllocator::next_id_with`], but each call takes `gap(nonce)` numbers (at
    /// least 1; fewer at a segment's end) and hands out the last of them: the numbers skipped
    /// are holes. `nonce` is unique to the taking (the position it replaces), for a keyed
    /// random gap: the volume hiding of serial numbers (Leaf PR #118's random step).
    ///
    /// # Errors
    /// As [`SegmentAllocator::next_id`].
    #[inline]
    pub fn next_id_spaced(
        &self,
        gap: impl Fn(u64) -> u64,
        now: impl Fn() -> u64,
    ) -> Result<(u64, Option<Fetch>), Empty> {
        loop {
            match self.step(&gap) {
                Step::Took {
                    first,
                    stride,
                    n,
                    prefetch,
                } => {
                    let fetch = if prefetch { self.due(&now) } else { None };
                    return Ok((first + (n - 1) * stride, fetch));
                }
                Step::Switched => {}
                Step::Empty => {
                    self.count_empty();
                    return Err(self.empty(&now));
                }
            }
        }
    }

    #[cold]
    fn count_empty(&self) {
        self.counters.empty_waits.fetch_add(1, Ordering::Relaxed);
    }

    /// Fills `out` with IDs as far as the segments go; returns how many were written (fewer
    /// than `out.len()` only when both segments ran out) and the fetch to start, if due.
    pub fn next_ids(&self, out: &mut [u64], now_ms: u64) -> (usize, Option<Fetch>) {
        self.next_ids_with(out, || now_ms)
    }

    /// As [`SegmentAllocator::next_ids`], reading the clock only when a fetch may be due.
    pub fn next_ids_with(&self, out: &mut [u64], now: impl Fn() -> u64) -> (usize, Option<Fetch>) {
        self.take_many(out, now, true)
    }

    /// As [`SegmentAllocator::next_ids_with`], for the rest of a batch that already found both
    /// segments used up (see [`SegmentAllocator::retry_id_with`]).
    pub fn retry_ids_with(&self, out: &mut [u64], now: impl Fn() -> u64) -> (usize, Option<Fetch>) {
        self.take_many(out, now, false)
    }

    fn take_many(
        &self,
        out: &mut [u64],
        now: impl Fn() -> u64,
        count_empty: bool,
    ) -> (usize, Option<Fetch>) {
        let mut written = 0;
        let mut fetch = None;
        while written < out.len() {
            match self.step(|_| (out.len() - written) as u64) {
                Step::Took {
                    first,
                    stride,
                    n,
                    prefetch,
                } => {
                    let n = usize::try_from(n).unwrap_or(usize::MAX);
                    let mut id = first;
                    for slot in &mut out[written..written + n] {
                        *slot = id;
                        id = id.wrapping_add(stride);
                    }
                    written += n;
                    if prefetch && fetch.is_none() {
                        fetch = self.due(&now);
                    }
                }
                Step::Switched => {}
                Step::Empty => {
                    if count_empty {
                        self.count_empty();
                    }
                    if let (None, Empty::Fetch(f)) = (fetch, self.empty(&now)) {
                        fetch = Some(f);
                    }
                    break;
                }
            }
        }
        (written, fetch)
    }

    fn empty(&self, now: &impl Fn() -> u64) -> Empty {
        match self.due(now) {
            Some(fetch) => Empty::Fetch(fetch),
            None => Empty::Wait,
        }
    }

    /// Hands the allocator the segment a fetch returned (the next one to use).
    ///
    /// # Errors
    /// [`FillError`]: no fetch was due, or the segment is not usable.
    pub fn fill(&self, segment: Segment, now_ms: u64) -> Result<(), FillError> {
        if !self.fetching.load(Ordering::Acquire) {
            return Err(FillError::NotFetching);
        }
        if segment.count == 0
            || segment.count > POSITION_MASK
            || segment.stride == 0
            || segment
                .count
                .checked_mul(segment.stride)
                .and_then(|span| span.checked_add(segment.first))
                .is_none()
        {
            return Err(FillError::Invalid);
        }
        // The state stays in this generation until the slot below is marked: the state only
        // moves to a next segment that has arrived, and this fetch is the only one.
        let generation = after(generation_of(self.state.load(Ordering::Acquire)));
        let next = self.slot(generation);
        next.first.store(segment.first, Ordering::Relaxed);
        next.count.store(segment.count, Ordering::Relaxed);
        next.stride.store(segment.stride, Ordering::Relaxed);
        let threshold = (segment.count * Self::PREFETCH_AT).div_ceil(1000).max(1);
        next.threshold.store(threshold, Ordering::Relaxed);
        next.generation.store(generation, Ordering::Release);
        self.last_size.store(segment.count, Ordering::Relaxed);
        self.last_fill_ms.store(now_ms, Ordering::Relaxed);
        self.failures.store(0, Ordering::Relaxed);
        self.retry_at_ms.store(0, Ordering::Relaxed);
        self.counters.fetches.fetch_add(1, Ordering::Relaxed);
        self.counters.ended(now_ms);
        self.fetching.store(false, Ordering::Release);
        Ok(())
    }

    /// The fetch failed at `now_ms` (the database is down, the tag unknown): the first call
    /// after a backoff (100 ms, doubling with each failure in a row, at most
    /// [`SegmentAllocator::MAX_BACKOFF_MS`]) that finds the next segment missing starts another.
    /// Callers finding both segments empty meanwhile are told to wait.
    pub fn fetch_failed(&self, now_ms: u64) {
        let failures = self.failures.fetch_add(1, Ordering::Relaxed).min(5);
        let backoff = (100u64 << failures).min(Self::MAX_BACKOFF_MS);
        self.retry_at_ms
            .store(now_ms.saturating_add(backoff), Ordering::Relaxed);
        self.counters.failed_fetches.fetch_add(1, Ordering::Relaxed);
        self.counters.ended(now_ms);
        self.fetching.store(false, Ordering::Release);
    }

    /// When the next fetch may start after failures (Unix ms; 0: at once).
    pub fn retry_at_ms(&self) -> u64 {
        self.retry_at_ms.load(Ordering::Relaxed)
    }

    /// The fetch to start now if the next segment is missing and no fetch is due or under way:
    /// to fill an allocator before its first ID (a driver's start-up) or ahead of a burst.
    pub fn prime(&self, now_ms: u64) -> Option<Fetch> {
        self.due(&|| now_ms)
    }

    /// Forgets every segment, the fetch due and the failures, as a new allocator would (the
    /// size policy stays): for a forked child, whose copy of the parent's segments must never be
    /// used. Only when no other thread can use the allocator (in a forked child, the forking
    /// thread alone runs).
    pub fn reset(&self) {
        self.state.store(0, Ordering::Relaxed);
        for slot in &self.slots {
            slot.count.store(0, Ordering::Relaxed);
            slot.generation.store(NO_GENERATION, Ordering::Relaxed);
        }
        self.fetching.store(false, Ordering::Relaxed);
        self.last_size.store(0, Ordering::Relaxed);
        self.failures.store(0, Ordering::Relaxed);
        self.retry_at_ms.store(0, Ordering::Release);
    }

    /// Whether a fetch is due or under way.
    pub fn fetching(&self) -> bool {
        self.fetching.load(Ordering::Acquire)
    }

    /// What is left unused, to give back on a clean close: the first unused ID and the end of
    /// the last segment taken, when what is left is one run of this server's numbers (the
    /// current segment's rest, followed by the next segment if it starts where the current one
    /// ends); then `UPDATE ... SET next = first_unused WHERE next = end` returns it, unless
    /// another allocator took a segment since. Also the count of IDs left, which are lost if
    /// they cannot be returned. `None` when nothing is left.
    ///
    /// Call it when no other thread takes IDs any more.
    pub fn unused(&self) -> Option<Unused> {
        let state = self.state.load(Ordering::Acquire);
        let current = self.segment_of(generation_of(state));
        let position = (state & POSITION_MASK).min(current.count);
        let next = self
            .next_ready(state)
            .then(|| self.segment_of(after(generation_of(state))));
        let rest = current.count - position;
        let rest_first = current.first + position * current.stride;
        match next {
            Some(next) if rest == 0 || next.first == current.end() => Some(Unused {
                first: if rest == 0 { next.first } else { rest_first },
                end: next.end(),
                count: rest + next.count,
                stride: current.stride,
                lost: 0,
            }),
            // The next segment does not follow the current one: only the last one (the next)
            // can be given back; the current one's rest is lost.
            Some(next) => Some(Unused {
                first: next.first,
                end: next.end(),
                count: next.count,
                stride: next.stride,
                lost: rest,
            }),
            None if rest > 0 => Some(Unused {
                first: rest_first,
                end: current.end(),
                count: rest,
                stride: current.stride,
                lost: 0,
            }),
            None => None,
        }
    }

    fn segment_of(&self, generation: u64) -> Segment {
        let slot = self.slot(generation);
        Segment {
            first: slot.first.load(Ordering::Relaxed),
            count: slot.count.load(Ordering::Relaxed),
            stride: slot.stride.load(Ordering::Relaxed),
        }
    }
}

/// The IDs an allocator has taken and not handed out: see [`SegmentAllocator::unused`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unused {
    /// The first unused ID.
    pub first: u64,
    /// One past the last ID of the last segment taken.
    pub end: u64,
    /// How many IDs are left from `first` on (giving back covers exactly these when it
    /// succeeds).
    pub count: u64,
    /// The distance between two IDs.
    pub stride: u64,
    /// IDs left that cannot be given back (the rest of a segment another allocator's segment
    /// follows): holes whatever happens.
    pub lost: u64,
}

/// Loom models of the allocator's own code (its atomics are loom's under `cfg(loom)`): every
/// interleaving (within loom's preemption bound) of 2 threads taking IDs from segments of 1–2
/// IDs, fetching synchronously when told to, as a driver does. Each model ends with the
/// accounting of a database's view: no ID twice, each thread's IDs increasing, and every ID the
/// table handed out either handed out by the allocator or still in it ([`SegmentAllocator::unused`]),
/// so a fill that overwrote a segment which had arrived shows as IDs gone. Run with
/// `RUSTFLAGS="--cfg loom" cargo test -p shardid --lib --release loom`.
#[cfg(all(test, loom))]
mod loom_models {
    use alloc::vec::Vec;
    // The database is outside the model: its row is updated by one statement at a time, so a
    // plain atomic (which loom does not interleave; its threads take turns on one OS thread)
    // stands for it exactly.
    use core::sync::atomic::{AtomicU64 as Row, Ordering};

    use loom::sync::Arc;
    use loom::thread;

    use super::{Empty, Segment, SegmentAllocator, SizePolicy};

    /// Every interleaving with at most 2 preemptions: each race these models look for needs
    /// one (a thread stopped inside a switch or a fetch decision while the other runs on), and
    /// a third multiplies the time by 10 (the first model: 10 s at 2, 150 s at 3).
    fn model(f: impl Fn() + Sync + Send + 'static) {
        crate::generator::loom_models::bounded(2, f);
    }

    /// The tag's row: `take_segment` hands out `size` IDs from `next` on.
    struct Table {
        next: Row,
        size: u64,
    }

    impl Table {
        fn new(size: u64) -> Self {
            Self {
                next: Row::new(1),
                size,
            }
        }

        /// A segment of the asked size (0: the row's remembered size, the same here).
        fn take(&self, asked: u64) -> Segment {
            let count = if asked == 0 { self.size } else { asked };
            Segment {
                first: self.next.fetch_add(count, Ordering::SeqCst),
                count,
                stride: 1,
            }
        }

        fn fetch_into(&self, a: &SegmentAllocator, asked: u64) {
            a.fill(self.take(asked), 0)
                .expect("a fetch the allocator asked for is filled");
        }
    }

    /// An allocator of `size`-ID segments, and its table.
    fn allocator(size: u64) -> (SegmentAllocator, Table) {
        (
            SegmentAllocator::new(SizePolicy::new().bounds(size, size)),
            Table::new(size),
        )
    }

    /// One ID, making the fetch it is told to; `None` after `tries` calls that got none
    /// (told to wait while another thread fetches).
    fn take(a: &SegmentAllocator, table: &Table, tries: usize) -> Option<u64> {
        for _ in 0..tries {
            match a.next_id(0) {
                Ok((id, fetch)) => {
                    if let Some(fetch) = fetch {
                        table.fetch_into(a, fetch.size);
                    }
                    return Some(id);
                }
                Err(Empty::Fetch(fetch)) => table.fetch_into(a, fetch.size),
                Err(Empty::Wait) => thread::yield_now(),
            }
        }
        None
    }

    /// Runs `work` on 2 threads over one allocator and table (after `taken`, the IDs handed
    /// out before); checks what they got.
    fn run(
        a: SegmentAllocator,
        table: Table,
        taken: Vec<u64>,
        work: fn(usize, &SegmentAllocator, &Table) -> Vec<u64>,
    ) {
        let shared = Arc::new((a, table));
        let handles: Vec<_> = (0..2)
            .map(|t| {
                let shared = Arc::clone(&shared);
                thread::spawn(move || work(t, &shared.0, &shared.1))
            })
            .collect();
        let got: Vec<Vec<u64>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let mut all: Vec<u64> = got.iter().flatten().copied().chain(taken).collect();
        all.sort_unstable();
        let n = all.len();
        all.dedup();
        assert_eq!(all.len(), n, "an ID handed out twice: {got:?}");
        for ids in &got {
            assert!(
                ids.windows(2).all(|w| w[0] < w[1]),
                "not increasing: {ids:?}"
            );
        }
        let (a, table) = &*shared;
        assert!(!a.fetching(), "a fetch left unfilled");
        let dispensed = table.next.load(Ordering::SeqCst) - 1;
        assert!(all.iter().all(|&id| (1..=dispensed).contains(&id)));
        let left = a.unused().map_or(0, |u| u.count + u.lost);
        assert_eq!(
            n as u64 + left,
            dispensed,
            "IDs gone: {n} handed out and {left} left of {dispensed} taken from the table"
        );
    }

    /// A switch never lands on a used segment: segments of 1 ID, the current one used up and
    /// the next one arrived, so the threads' first calls race to switch, and every ID taken
    /// uses a segment up. A thread stopped right after its switch must not leave the old slot
    /// looking ready (da2cccf: it did, and the other thread used up the new segment and
    /// switched back onto the old one, handing its ID out again).
    #[test]
    fn loom_a_switch_never_lands_on_a_used_segment() {
        model(|| {
            let (a, table) = allocator(1);
            let mut taken = Vec::new();
            let fetch = a.prime(0).unwrap();
            table.fetch_into(&a, fetch.size);
            // Takes 1 and fetches the next segment (2) at once: 1 ID is past the threshold.
            taken.push(take(&a, &table, 1).unwrap());
            run(a, table, taken, |t, a, table| {
                (0..=t).filter_map(|_| take(a, table, 3)).collect()
            });
        });
    }

    /// One fetch at a time, and none overwriting a segment that arrived: segments of 2 IDs, the
    /// first one arrived, so each thread's ID is past the prefetch threshold and both look for
    /// a fetch to make. A thread that decided to fetch while the other's fetch was made and
    /// filled must not fetch again (5f3911a: its fill overwrote the segment that had arrived).
    #[test]
    fn loom_a_fetch_that_arrived_is_never_overwritten() {
        model(|| {
            let (a, table) = allocator(2);
            let fetch = a.prime(0).unwrap();
            table.fetch_into(&a, fetch.size);
            run(a, table, Vec::new(), |_, a, table| {
                take(a, table, 3).into_iter().collect()
            });
        });
    }

    /// A batch and a single ID on an empty allocator (`next_ids`, segments of 2 IDs): one
    /// thread asks for 2 IDs at once, the other for 1; both find nothing and race to make the
    /// first fetch, and one is told to wait.
    #[test]
    fn loom_a_batch_and_a_single_on_an_empty_allocator() {
        model(|| {
            let (a, table) = allocator(2);
            run(a, table, Vec::new(), |t, a, table| {
                let mut got = Vec::new();
                let want = if t == 0 { 2 } else { 1 };
                for _ in 0..3 {
                    if got.len() == want {
                        break;
                    }
                    let mut out = [0; 2];
                    let (n, fetch) = a.next_ids(&mut out[..want - got.len()], 0);
                    got.extend_from_slice(&out[..n]);
                    match fetch {
                        Some(fetch) => table.fetch_into(a, fetch.size),
                        None if n == 0 => thread::yield_now(),
                        None => {}
                    }
                }
                got
            });
        });
    }
}
