//! The allocator of one serial tag: each period's numbers from a segment allocator of its own
//! (a tag per period, `orders@2026-11-25`), switched at the period's boundary without a lock.
//!
//! Two slots, each a [`SegmentAllocator`] with a state word `period << 32 | phase << 30 |
//! users`: the current period's slot and the previous one's, which is given back and freed
//! once nobody uses it. A caller enters a slot by adding 1 to its users and reading, in the
//! same atomic step, which period and phase the slot is in; it takes a number only when the
//! slot is live for the caller's period, and leaves by subtracting 1. The slot's other states
//! change only by compare-and-swap on the same word, so "nobody is inside" and "nobody can
//! enter" are decided at once: a slot is reset (for the next period) only when it holds no
//! user, and nobody enters a slot that is not live.
//!
//! Periods of one allocator only move forward: a caller whose time is in a period before the
//! current one (a thread that read the clock just before midnight and got here after another
//! thread started the new day, or a time given to `next_at` that is behind) is issued at the
//! first instant of the current period — its serial shows that instant, and counts in that
//! period. So a process never reopens a period it has left, and the old period's unused
//! numbers can be given back as soon as its last user is gone.

use alloc::string::String;
use core::sync::atomic::Ordering;
#[cfg(not(loom))]
use core::sync::atomic::{AtomicBool, AtomicU64};
#[cfg(loom)]
use loom::sync::atomic::{AtomicBool, AtomicU64};

use super::{Period, Reset, Serial, SerialError, SerialFormat};
use crate::segment::{Empty, FillError, Segment, SegmentAllocator, SizePolicy, Unused};

const USERS_MASK: u64 = (1 << 30) - 1;
const PHASE_SHIFT: u32 = 30;
const PHASE_MASK: u64 = 3 << PHASE_SHIFT;

/// No period: free for the next one.
const FREE: u64 = 0;
/// Serving its period.
const LIVE: u64 = 1 << PHASE_SHIFT;
/// Its period is over: nobody new enters; its rest is given back once the last user left and
/// no fetch is in flight.
const RETIRING: u64 = 2 << PHASE_SHIFT;
/// Held by one thread that sets it up for a period, or empties it.
const CLAIMED: u64 = 3 << PHASE_SHIFT;

const fn period_of(word: u64) -> u32 {
    (word >> 32) as u32
}

const fn phase_of(word: u64) -> u64 {
    word & PHASE_MASK
}

const fn users_of(word: u64) -> u64 {
    word & USERS_MASK
}

const fn word(period: u32, phase: u64) -> u64 {
    (period as u64) << 32 | phase
}

/// `current`: which slot serves which period (0: none yet).
const CURRENT_SET: u64 = 1 << 63;

const fn current_word(period: u32, slot: usize) -> u64 {
    CURRENT_SET | (period as u64) << 1 | slot as u64
}

/// The slot of a `current` value and its period.
#[allow(clippy::cast_possible_truncation)] // 32 bits of period, 1 of slot
const fn decode_current(value: u64) -> (u32, usize) {
    (((value & !CURRENT_SET) >> 1) as u32, (value & 1) as usize)
}

/// How often a thread finding the other slot busy (being set up by another thread, or not
/// yet emptied) re-checks before it is told to wait (in the loom build, at once: the model's
/// driver yields).
#[cfg(not(loom))]
const SPINS: u32 = 1_000;
#[cfg(loom)]
const SPINS: u32 = 0;

#[derive(Debug)]
struct Slot {
    word: AtomicU64,
    allocator: SegmentAllocator,
    /// The first instant of the slot's period (Unix ms), written before the slot goes live.
    start_ms: AtomicU64,
    /// A number past the format's width was taken in this period: nothing more is.
    exhausted: AtomicBool,
}

impl Slot {
    fn new(policy: SizePolicy) -> Self {
        Self {
            word: AtomicU64::new(FREE),
            allocator: SegmentAllocator::new(policy),
            start_ms: AtomicU64::new(0),
            exhausted: AtomicBool::new(false),
        }
    }

    /// Enters the slot if it serves `period` (live, or also retiring with `retiring`).
    #[inline]
    fn enter(&self, period: u32, retiring: bool) -> bool {
        let seen = self.word.fetch_add(1, Ordering::AcqRel);
        let phase = phase_of(seen);
        if period_of(seen) == period && (phase == LIVE || (retiring && phase == RETIRING)) {
            return true;
        }
        self.leave();
        false
    }

    #[inline]
    fn leave(&self) {
        self.word.fetch_sub(1, Ordering::Release);
    }

    /// Moves the slot from `from` to `to` (phase and period), keeping its users, if it is in
    /// `from`.
    fn change(&self, from: u64, to: u64) -> bool {
        self.word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                (w & !USERS_MASK == from).then_some(to | users_of(w))
            })
            .is_ok()
    }
}

/// Volume hiding: the numbers of a period increase by a random step of 1 to `max_gap` (Leaf
/// PR #118), so consecutive serials do not tell how many were issued between them.
///
/// What it does not hide: the numbers still increase, so their order and (over many serials)
/// the average rate are visible — with the step's mean known (`(1 + max_gap) / 2`), a count is
/// estimated from two serials to within the step's spread; the period's first serial is
/// still small; and the width of `{seq:N}` must hold `max_gap` times the period's volume. The
/// step is a keyed hash of the position (splitmix64), not a cryptographic generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VolumeHiding {
    /// The largest step (1: none, dense numbers).
    pub max_gap: u64,
    /// The key of the steps: random, per process (the driver's `os.urandom`, `crypto`, ...).
    pub key: u64,
}

impl VolumeHiding {
    /// No hiding: dense numbers.
    pub const NONE: Self = Self { max_gap: 1, key: 0 };

    /// Steps of 1 to `max_gap` (1: none) with a key of this process, from std's randomly
    /// keyed hasher (no other source of randomness needed).
    #[cfg(feature = "std")]
    pub fn random(max_gap: u64) -> Self {
        use core::hash::BuildHasher;
        Self {
            max_gap: max_gap.max(1),
            key: std::hash::RandomState::new().hash_one(crate::now_ms()),
        }
    }

    /// One step of 1 to `max_gap` (0 and 1: 1), drawn afresh, with the distribution and
    /// bounds of the allocator's steps: for a take that keeps no allocator between serials
    /// (Django's serial inside SQLite's transaction takes `step` numbers and issues the last).
    #[cfg(feature = "std")]
    #[must_use]
    pub fn draw_step(max_gap: u64) -> u64 {
        Self::random(max_gap).gap(0)
    }

    #[inline]
    fn gap(&self, nonce: u64) -> u64 {
        if self.max_gap <= 1 {
            return 1;
        }
        let mut z = nonce ^ self.key;
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        1 + z % self.max_gap
    }
}

/// A fetch the driver must make: `take_serial_segment(tag, period, size)`, then
/// [`SerialAllocator::fill`] (or [`SerialAllocator::fetch_failed`]) with this value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a fetch that is due and never made leaves the period without numbers"]
pub struct PeriodFetch {
    /// The period whose numbers to take: its tag is `period.tag(base)`, its suffix
    /// `period.to_string()`.
    pub period: Period,
    /// How many numbers to ask for (0: the size the period's row remembers).
    pub size: u64,
    slot: usize,
}

impl PeriodFetch {
    /// The fetch as one number (`period id << 1 | slot`, below 2^33: exact in a JavaScript
    /// number), for a driver that keeps it outside Rust; [`SerialAllocator::fetch_of`] makes
    /// it again.
    pub const fn token(&self) -> u64 {
        (self.period.id() as u64) << 1 | self.slot as u64
    }
}

/// A serial issued: its text, number, and the instant and period it was issued at.
#[derive(Clone, Copy, Debug)]
pub struct Issued {
    /// The serial.
    pub serial: Serial,
    /// Its number.
    pub number: u64,
    /// The [`Period::id`] of the period it counts in (see [`Issued::period`]).
    pub period_id: u32,
    reset: Reset,
    /// The instant its fields show (Unix ms): the time asked for, or the first instant of the
    /// current period for a caller whose time is behind it.
    pub unix_ms: u64,
    /// A fetch the driver must start now (once, to one caller).
    pub fetch: Option<PeriodFetch>,
    /// A previous period is waiting to be given back: call [`SerialAllocator::retire`].
    pub retire: bool,
}

impl Issued {
    /// The period it counts in.
    pub const fn period(&self) -> Period {
        Period::from_id(self.reset, self.period_id)
    }
}

/// Why no serial was issued now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Blocked {
    /// This caller must make the fetch, then call again.
    Fetch(PeriodFetch),
    /// A fetch is under way, or another thread is switching periods: wait a little (for the
    /// fetch: at most the driver's wait), then call again.
    Wait,
    /// The previous period must be given back before the next one can start (this caller
    /// emptied it): give it back, then call again.
    Retire(Retired),
    /// The format refuses the time, or the period's numbers are past the width.
    Error(SerialError),
}

/// A period whose unused numbers the driver gives back
/// (`give_back(period.tag(base), first, end)`); if it cannot, `unused.count` numbers are lost,
/// and `unused.lost` are lost in any case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retired {
    /// The period.
    pub period: Period,
    /// What was left.
    pub unused: Unused,
}

/// Why [`SerialAllocator::fill`] refused a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SerialFillError {
    /// The period is no longer the slot's: the driver gives the segment back itself.
    Stale,
    /// The segment allocator refused it.
    Segment(FillError),
}

/// The serial numbers of one tag in one process: two slots, each a [`SegmentAllocator`] for one
/// period; a caller enters a slot by adding 1 to its users and reading its period and phase
/// in one atomic step, so a slot is emptied (its rest given back) or set up for the next period
/// only when nobody is inside it; periods only move forward. `Sync`: share
/// it between threads.
#[derive(Debug)]
pub struct SerialAllocator {
    format: SerialFormat,
    tag: String,
    slots: [Slot; 2],
    current: AtomicU64,
    /// A slot is retiring: its rest waits to be given back.
    retire_due: AtomicBool,
    hiding: VolumeHiding,
}

impl SerialAllocator {
    /// An allocator for the serials of `tag` (the base tag: periods are `tag@2026-11-25`) in
    /// `format`, with each period's segments sized by `policy`.
    pub fn new(format: SerialFormat, tag: &str, policy: SizePolicy, hiding: VolumeHiding) -> Self {
        Self {
            format,
            tag: tag.into(),
            slots: [Slot::new(policy), Slot::new(policy)],
            current: AtomicU64::new(0),
            retire_due: AtomicBool::new(false),
            hiding,
        }
    }

    /// The format.
    pub const fn format(&self) -> &SerialFormat {
        &self.format
    }

    /// A period's rest (a retired period's, a closed allocator's, or a segment fetched for a
    /// period given up meanwhile) was given back (`returned`) or not: counts the numbers
    /// skipped, the holes this allocator made, as [`SegmentAllocator::settle`] does. Every
    /// driver calls it once per rest, so that [`Self::stats`] (and the exporters) count them.
    pub fn settle(&self, unused: Unused, returned: bool) {
        // Either slot: their counters last from period to period, and `stats` adds them up.
        self.slots[0].allocator.settle(unused, returned);
    }

    /// What the allocator did, over every period (its two slots' segment allocators, which
    /// keep their counters from period to period): fetches and their latency, calls that
    /// waited, the numbers skipped ([`Self::settle`]), as
    /// [`SegmentStats`](crate::stats::SegmentStats) add them up; the last fetch's latency and
    /// what is left of the segment are the current period's.
    pub fn stats(&self) -> crate::stats::SegmentStats {
        use crate::stats::{Kind, SegmentStats};
        let cur = self.current.load(Ordering::Acquire);
        let slot = if cur == 0 { 0 } else { decode_current(cur).1 };
        let current = self.slots[slot].allocator.stats().values();
        let other = self.slots[1 - slot].allocator.stats().values();
        let mut values = current;
        for ((value, metric), theirs) in values.iter_mut().zip(SegmentStats::METRICS).zip(other) {
            *value = match metric.kind {
                Kind::Counter | Kind::Bucket { .. } | Kind::Sum { .. } => {
                    value.saturating_add(theirs)
                }
                Kind::GaugeMax if metric.name == "fetch_latency_max_ms" => (*value).max(theirs),
                // The current period's: its last fetch, what is left of its segment.
                _ => *value,
            };
        }
        SegmentStats::from_values(values)
    }

    /// The base tag.
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// The volume hiding.
    pub const fn hiding(&self) -> VolumeHiding {
        self.hiding
    }

    /// The next serial at `unix_ms` (`now`: the clock, read only when a fetch may be due, for
    /// the segments' size policy).
    ///
    /// # Errors
    /// [`Blocked`]: what the driver must do before calling again, or the error to report.
    #[inline]
    pub fn next_at(&self, unix_ms: u64, now: impl Fn() -> u64) -> Result<Issued, Blocked> {
        let (mut fields, mut id) = self.format.fields_at(unix_ms).map_err(Blocked::Error)?;
        let mut at = unix_ms;
        let mut spins = 0;
        loop {
            let cur = self.current.load(Ordering::Acquire);
            let current = (cur != 0).then(|| decode_current(cur));
            let switched = match current {
                Some((cp, cs)) => match id.cmp(&cp) {
                    core::cmp::Ordering::Equal => {
                        let slot = &self.slots[cs];
                        if slot.enter(cp, false) {
                            let taken = self.take(slot, cs, id, fields, at, &now);
                            slot.leave();
                            return taken;
                        }
                        Err(Blocked::Wait) // the slot moved on meanwhile
                    }
                    core::cmp::Ordering::Less => {
                        // Behind the current period: issued at its first instant.
                        at = self.slots[cs].start_ms.load(Ordering::Acquire).max(unix_ms);
                        (fields, id) = self.format.fields_at(at).map_err(Blocked::Error)?;
                        if id == cp {
                            continue;
                        }
                        Err(Blocked::Wait) // the slot moved on meanwhile
                    }
                    core::cmp::Ordering::Greater => {
                        self.switch(Period::from_id(self.format.reset, id), current)
                    }
                },
                None => self.switch(Period::from_id(self.format.reset, id), None),
            };
            match switched {
                Ok(()) => continue,
                Err(Blocked::Wait) => {}
                Err(other) => return Err(other),
            }
            spins += 1;
            if spins > SPINS {
                return Err(Blocked::Wait);
            }
            core::hint::spin_loop();
        }
    }

    /// The next serial, issued now: as [`SerialAllocator::next_at`] on the process clock
    /// (`std`), read as a burst reads it — the clock's ticker when it runs (a serial can then
    /// be dated up to the ticker's lag early, as the generator's IDs are, never late; the
    /// clock is read precisely at every 1,024th number to keep the ticker on time).
    ///
    /// # Errors
    /// As [`SerialAllocator::next_at`].
    #[cfg(feature = "std")]
    #[inline]
    pub fn next_now(&self) -> Result<Issued, Blocked> {
        let issued = self.next_at(crate::clock::burst_now_ms(), crate::now_ms);
        if let Ok(i) = &issued
            && (i.number & 1023) < self.hiding.max_gap
        {
            crate::clock::refresh_ticker();
        }
        issued
    }

    /// Takes a number from `slot`, which the caller entered for period `id`, and writes it
    /// into `fields` (the serial's text at `at`, zeros for the number).
    #[inline]
    fn take(
        &self,
        slot: &Slot,
        index: usize,
        id: u32,
        mut fields: Serial,
        at: u64,
        now: &impl Fn() -> u64,
    ) -> Result<Issued, Blocked> {
        let period = || Period::from_id(self.format.reset, id);
        if slot.exhausted.load(Ordering::Relaxed) {
            return Err(Blocked::Error(self.overflow(period())));
        }
        let fetch = |size| PeriodFetch {
            period: period(),
            size,
            slot: index,
        };
        let hiding = self.hiding;
        match slot
            .allocator
            .next_id_spaced(|nonce| hiding.gap(nonce), now)
        {
            Ok((number, due)) if number <= self.format.max => {
                self.format.finish(&mut fields, number);
                Ok(Issued {
                    serial: fields,
                    number,
                    period_id: id,
                    reset: self.format.reset,
                    unix_ms: at,
                    fetch: due.map(|f| fetch(f.size)),
                    retire: self.retire_due.load(Ordering::Relaxed),
                })
            }
            Ok((_, due)) => {
                slot.exhausted.store(true, Ordering::Relaxed);
                if due.is_some() {
                    // Nobody makes it: no number of this period is handed out any more.
                    slot.allocator.fetch_failed(now());
                }
                Err(Blocked::Error(self.overflow(period())))
            }
            Err(Empty::Fetch(f)) => Err(Blocked::Fetch(fetch(f.size))),
            Err(Empty::Wait) => Err(Blocked::Wait),
        }
    }

    fn overflow(&self, period: Period) -> SerialError {
        SerialError::Overflow {
            tag: period.tag(&self.tag),
            max: self.format.max,
        }
    }

    /// Sets up the slot that is not `current`'s for `period`, and makes it current.
    fn switch(&self, period: Period, current: Option<(u32, usize)>) -> Result<(), Blocked> {
        let target = current.map_or(0, |(_, slot)| 1 - slot);
        let slot = &self.slots[target];
        let seen = slot.word.load(Ordering::Acquire);
        match phase_of(seen) {
            FREE if users_of(seen) == 0 => {
                if slot
                    .word
                    .compare_exchange(
                        seen,
                        word(period.id(), CLAIMED),
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    )
                    .is_err()
                {
                    return Err(Blocked::Wait);
                }
            }
            RETIRING => {
                return match self.retire_slot(target) {
                    Ok(Some(retired)) => Err(Blocked::Retire(retired)),
                    // Emptied with nothing to give back (the caller retries at once), or busy.
                    Ok(None) | Err(()) => Err(Blocked::Wait),
                };
            }
            // Being set up or emptied by another thread, or entered for a moment by one that
            // is about to leave.
            _ => return Err(Blocked::Wait),
        }
        // This thread holds the slot: nobody is inside it, nobody enters it.
        slot.allocator.reset();
        slot.exhausted.store(false, Ordering::Relaxed);
        slot.start_ms
            .store(self.format.period_start_ms(period), Ordering::Relaxed);
        slot.change(word(period.id(), CLAIMED), word(period.id(), LIVE));
        // Published only over the value this thread saw: a thread that read `current` before
        // another switch must not move the periods back.
        let seen = current.map_or(0, |(p, s)| current_word(p, s));
        if self
            .current
            .compare_exchange(
                seen,
                current_word(period.id(), target),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            slot.change(word(period.id(), LIVE), word(period.id(), FREE));
            return Err(Blocked::Wait);
        }
        if let Some((old, old_slot)) = current
            && self.slots[old_slot].change(word(old, LIVE), word(old, RETIRING))
        {
            self.retire_due.store(true, Ordering::Release);
        }
        Ok(())
    }

    /// Empties a retiring slot if nobody is inside it and no fetch for it is in flight:
    /// `Ok` with the period to give back (`None`: nothing was left), `Err` when it cannot be
    /// emptied now.
    fn retire_slot(&self, index: usize) -> Result<Option<Retired>, ()> {
        let slot = &self.slots[index];
        let seen = slot.word.load(Ordering::Acquire);
        // A fetch in flight fills later (a fill may enter a retiring slot): retire after it.
        // Checked before the slot is held, not after: a fill finding the slot held would be
        // refused, and the fetch would then stay in flight for ever. Nothing starts a fetch
        // in a retiring slot (nobody takes numbers there), so none can start in between.
        if phase_of(seen) != RETIRING || users_of(seen) != 0 || slot.allocator.fetching() {
            return Err(());
        }
        let period = period_of(seen);
        slot.word
            .compare_exchange(
                seen,
                word(period, CLAIMED),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .map_err(|_| ())?;
        let unused = slot.allocator.unused();
        slot.allocator.reset();
        slot.change(word(period, CLAIMED), word(period, FREE));
        Ok(unused.map(|unused| Retired {
            period: Period::from_id(self.format.reset, period),
            unused,
        }))
    }

    /// The previous period to give back, if it is ready (nobody inside, no fetch in flight):
    /// call it when [`Issued::retire`] says one is due. `None`: nothing to give back now (a
    /// later [`Issued::retire`] says so again if the period could not be emptied yet).
    pub fn retire(&self) -> Option<Retired> {
        if !self.retire_due.swap(false, Ordering::AcqRel) {
            return None;
        }
        let mut found = None;
        for i in 0..2 {
            if let Ok(Some(retired)) = self.retire_slot(i) {
                found = Some(retired);
                break;
            }
        }
        // Still one waiting (busy, or a second one): say so again.
        if self
            .slots
            .iter()
            .any(|s| phase_of(s.word.load(Ordering::Acquire)) == RETIRING)
        {
            self.retire_due.store(true, Ordering::Release);
        }
        found
    }

    /// The fetch of a [`PeriodFetch::token`] (with the size it asked for). A token that is
    /// no fetch of this allocator's makes a fetch that [`SerialAllocator::fill`] refuses as
    /// stale.
    #[allow(clippy::cast_possible_truncation)] // 32 bits of period, 1 of slot
    pub fn fetch_of(&self, token: u64, size: u64) -> PeriodFetch {
        PeriodFetch {
            period: Period::from_id(self.format.reset, (token >> 1) as u32),
            size,
            slot: (token & 1) as usize,
        }
    }

    /// Hands the allocator the segment that `fetch` returned.
    ///
    /// # Errors
    /// [`SerialFillError::Stale`] when the period is no longer the slot's (the driver gives
    /// the segment back itself), or the segment allocator's refusal.
    pub fn fill(
        &self,
        fetch: PeriodFetch,
        segment: Segment,
        now_ms: u64,
    ) -> Result<(), SerialFillError> {
        let slot = &self.slots[fetch.slot];
        if !slot.enter(fetch.period.id(), true) {
            return Err(SerialFillError::Stale);
        }
        let filled = slot.allocator.fill(segment, now_ms);
        slot.leave();
        filled.map_err(SerialFillError::Segment)
    }

    /// The fetch failed: a later call retries after a backoff.
    pub fn fetch_failed(&self, fetch: PeriodFetch, now_ms: u64) {
        let slot = &self.slots[fetch.slot];
        if slot.enter(fetch.period.id(), true) {
            slot.allocator.fetch_failed(now_ms);
            slot.leave();
        }
    }

    /// Whether a fetch is due or under way in any period.
    pub fn fetching(&self) -> bool {
        self.slots.iter().any(|s| s.allocator.fetching())
    }

    /// Every period's unused numbers, to give back on a clean close (the current one and a
    /// previous one not given back yet), and the allocator emptied. Call it when no other
    /// thread takes serials any more.
    pub fn close(&self) -> [Option<Retired>; 2] {
        self.current.store(0, Ordering::Release);
        self.retire_due.store(false, Ordering::Release);
        let mut out = [None, None];
        for (i, slot) in self.slots.iter().enumerate() {
            let seen = slot.word.load(Ordering::Acquire);
            if matches!(phase_of(seen), LIVE | RETIRING) {
                let period = Period::from_id(self.format.reset, period_of(seen));
                out[i] = slot
                    .allocator
                    .unused()
                    .map(|unused| Retired { period, unused });
            }
            slot.allocator.reset();
            slot.word.store(FREE, Ordering::Release);
        }
        out
    }

    /// Forgets every period and segment, as a new allocator would: for a forked child, whose
    /// copy of the parent's segments must never be used. Only when no other thread can use
    /// the allocator.
    pub fn reset(&self) {
        self.current.store(0, Ordering::Release);
        self.retire_due.store(false, Ordering::Release);
        for slot in &self.slots {
            slot.allocator.reset();
            slot.exhausted.store(false, Ordering::Relaxed);
            slot.word.store(FREE, Ordering::Release);
        }
    }

    /// The period the allocator issues in now, if any.
    pub fn current_period(&self) -> Option<Period> {
        let cur = self.current.load(Ordering::Acquire);
        (cur != 0).then(|| Period::from_id(self.format.reset, decode_current(cur).0))
    }

    /// The reset of the format.
    pub const fn reset_kind(&self) -> Reset {
        self.format.reset
    }
}

/// Loom models of the period switch: every interleaving (preemption bound 2) of threads
/// issuing in one period while another starts the next one and gives the old one back, with
/// the segment allocators' own atomics modelled too. An in-memory database does what
/// `take_serial_segment` and `give_back` do. Run with
/// `RUSTFLAGS="--cfg loom" cargo test -p shardid --lib --release --features serial loom`.
#[cfg(all(test, loom))]
mod loom_models {
    use alloc::collections::BTreeMap;
    use alloc::string::{String, ToString};
    use alloc::vec::Vec;

    use loom::sync::{Arc, Mutex};
    use loom::thread;

    use super::{Blocked, PeriodFetch, Retired, SerialAllocator, SerialFillError, VolumeHiding};
    use crate::segment::{Segment, SizePolicy};
    use crate::serial::SerialFormat;

    /// Every interleaving with at most `bound` preemptions: the segment allocators' atomics
    /// make each step long, and 3 took minutes a model.
    fn model_with(bound: usize, f: impl Fn() + Sync + Send + 'static) {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(bound);
        builder.check(f);
    }

    fn model(f: impl Fn() + Sync + Send + 'static) {
        model_with(2, f);
    }

    /// 2026-11-25T00:00Z, and a day.
    const DAY0: u64 = 1_795_564_800_000;
    const DAY: u64 = 86_400_000;

    /// The rows of period tags: the next number of each; a new tag starts at 1.
    type Db = Arc<Mutex<BTreeMap<String, u64>>>;

    fn allocator() -> SerialAllocator {
        let format = SerialFormat::new("{yyyy}{MM}{dd}-{seq:2}", "UTC").unwrap();
        SerialAllocator::new(
            format,
            "t",
            SizePolicy::new().bounds(2, 2),
            VolumeHiding::NONE,
        )
    }

    fn fill(a: &SerialAllocator, db: &Db, fetch: PeriodFetch) {
        let tag = fetch.period.tag(a.tag());
        let segment = {
            let mut rows = db.lock().unwrap();
            let next = rows.entry(tag.clone()).or_insert(1);
            let first = *next;
            *next += 2;
            Segment {
                first,
                count: 2,
                stride: 1,
            }
        };
        if let Err(SerialFillError::Stale) = a.fill(fetch, segment, 0) {
            give_back(db, &tag, segment.first, segment.end());
        }
    }

    fn give_back(db: &Db, tag: &str, first: u64, end: u64) {
        let mut rows = db.lock().unwrap();
        if rows.get(tag) == Some(&end) {
            rows.insert(tag.into(), first);
        }
    }

    fn retired(a: &SerialAllocator, db: &Db, r: Retired) {
        give_back(db, &r.period.tag(a.tag()), r.unused.first, r.unused.end);
    }

    /// Issues one serial at `ms`, doing what the core says; returns its text.
    fn issue(a: &SerialAllocator, db: &Db, ms: u64) -> String {
        loop {
            match a.next_at(ms, || 0) {
                Ok(issued) => {
                    if let Some(fetch) = issued.fetch {
                        fill(a, db, fetch);
                    }
                    if issued.retire
                        && let Some(r) = a.retire()
                    {
                        retired(a, db, r);
                    }
                    return issued.serial.to_string();
                }
                Err(Blocked::Fetch(fetch)) => fill(a, db, fetch),
                Err(Blocked::Retire(r)) => retired(a, db, r),
                Err(Blocked::Wait) => thread::yield_now(),
                Err(Blocked::Error(e)) => panic!("{e}"),
            }
        }
    }

    fn assert_unique(mut serials: Vec<String>) {
        let n = serials.len();
        serials.sort();
        serials.dedup();
        assert_eq!(serials.len(), n, "a serial twice: {serials:?}");
    }

    /// Process A has a thread in day 0 while another starts day 1 and gives day 0's rest
    /// back; process B then issues in day 0 (a clock behind A's), from the numbers given
    /// back. No serial twice: a number A hands out is never in the rest it gives back.
    #[test]
    fn loom_a_period_is_given_back_only_once_nobody_is_inside() {
        model(|| {
            let db: Db = Arc::new(Mutex::new(BTreeMap::new()));
            let a = Arc::new(allocator());
            let mut serials = alloc::vec![issue(&a, &db, DAY0)];
            let inside = {
                let (a, db) = (Arc::clone(&a), Arc::clone(&db));
                thread::spawn(move || issue(&a, &db, DAY0 + 1))
            };
            let next_day = {
                let (a, db) = (Arc::clone(&a), Arc::clone(&db));
                thread::spawn(move || issue(&a, &db, DAY0 + DAY))
            };
            serials.push(inside.join().unwrap());
            serials.push(next_day.join().unwrap());
            // What day 0 has left is given back by now (or still held by A: then B's numbers
            // come after it).
            if let Some(r) = a.retire() {
                retired(&a, &db, r);
            }
            let b = allocator();
            serials.push(issue(&b, &db, DAY0 + 2));
            serials.push(issue(&b, &db, DAY0 + 3));
            assert_unique(serials);
        });
    }

    /// A thread that read the current period, then stalled while another thread moved two
    /// periods on (day 1, then day 3, giving each old one back), must not publish its own
    /// period (day 2) over the newer one: periods only move forward.
    #[test]
    fn loom_a_stalled_switch_does_not_move_periods_back() {
        // One preemption is all the stall needs (the stalled thread is preempted once, right
        // after it read the current period; the other runs to its end): 2 took ~100 s.
        model_with(1, || {
            let db: Db = Arc::new(Mutex::new(BTreeMap::new()));
            let a = Arc::new(allocator());
            let mut serials = alloc::vec![issue(&a, &db, DAY0)];
            let stalled = {
                let (a, db) = (Arc::clone(&a), Arc::clone(&db));
                thread::spawn(move || issue(&a, &db, DAY0 + 2 * DAY))
            };
            let mover = {
                let (a, db) = (Arc::clone(&a), Arc::clone(&db));
                thread::spawn(move || {
                    let one = issue(&a, &db, DAY0 + DAY);
                    let three = issue(&a, &db, DAY0 + 3 * DAY);
                    [one, three]
                })
            };
            serials.push(stalled.join().unwrap());
            serials.extend(mover.join().unwrap());
            assert_eq!(
                a.current_period().map(|p| p.to_string()),
                Some("2026-11-28".to_string()),
                "{serials:?}"
            );
            assert_unique(serials);
        });
    }

    /// Two threads start days 1 and 2 at once from day 0: periods only move forward, both
    /// are issued (no thread waits for ever), and no serial repeats.
    #[test]
    fn loom_two_switches_at_once_move_forward() {
        model(|| {
            let db: Db = Arc::new(Mutex::new(BTreeMap::new()));
            let a = Arc::new(allocator());
            let mut serials = alloc::vec![issue(&a, &db, DAY0)];
            let handles: Vec<_> = [DAY0 + DAY, DAY0 + 2 * DAY]
                .into_iter()
                .map(|ms| {
                    let (a, db) = (Arc::clone(&a), Arc::clone(&db));
                    thread::spawn(move || issue(&a, &db, ms))
                })
                .collect();
            for h in handles {
                serials.push(h.join().unwrap());
            }
            assert_eq!(
                a.current_period().map(|p| p.to_string()),
                Some("2026-11-27".to_string())
            );
            assert_unique(serials);
        });
    }
}

#[cfg(all(test, feature = "std", not(loom)))]
mod tests {
    use super::VolumeHiding;

    /// A step drawn alone (Django's in-transaction serial): 1 without hiding, else within
    /// `1..=max_gap`, every value reached, and the mean the allocator's steps have,
    /// `(1 + max_gap) / 2` (4,000 draws of 1..=4: the mean's spread is 0.018, so ±0.2 never
    /// fails by chance).
    #[test]
    fn a_step_drawn_alone_is_uniform_in_one_to_max_gap() {
        assert_eq!(VolumeHiding::draw_step(0), 1);
        assert_eq!(VolumeHiding::draw_step(1), 1);
        let draws: std::vec::Vec<u64> = (0..4_000).map(|_| VolumeHiding::draw_step(4)).collect();
        assert!(draws.iter().all(|d| (1..=4).contains(d)), "{draws:?}");
        for value in 1..=4 {
            assert!(draws.contains(&value), "{value} never drawn");
        }
        #[allow(clippy::cast_precision_loss)] // small counts
        let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
        assert!((mean - 2.5).abs() < 0.2, "mean {mean}");
        let big = VolumeHiding::draw_step(u64::MAX);
        assert!(big >= 1);
    }
}
