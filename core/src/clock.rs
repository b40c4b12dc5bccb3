//! The process clock behind `next_id()`: Unix milliseconds that never go backwards.
//!
//! `SystemTime` can be stepped back (NTP, an operator, a VM restore); an ID generator that
//! follows it either repeats time or has to refuse to run. This clock instead counts a
//! monotonic clock (`Instant`) from one process-wide base, anchored to the wall clock by an
//! [`Anchor`] (which adopts the wall clock again once a second, only if it moved forward).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::Anchor;

static BASE: OnceLock<Instant> = OnceLock::new();
static ANCHOR: Anchor = Anchor::new();

fn millis(d: Duration) -> u64 {
    d.as_secs()
        .saturating_mul(1_000)
        .saturating_add(u64::from(d.subsec_millis()))
}

/// The current time in Unix milliseconds, never smaller than a value returned before in this
/// process: `Instant` anchored to `SystemTime` by an [`Anchor`].
pub fn now_ms() -> u64 {
    let base = *BASE.get_or_init(Instant::now);
    ANCHOR.now_ms(millis(base.elapsed()), || {
        // A wall clock before 1970 reads as 0 and is simply never adopted.
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, millis)
    })
}

/// Waits until [`now_ms`] reads at least `target_ms`: the at most one time unit a generator
/// waits when a unit's sequence is used up. Sleeps through all but the last millisecond, then
/// spins: a sleep or a yield can oversleep by a scheduler slice, which would cost throughput
/// at the cap.
pub(crate) fn wait_until(target_ms: u64) {
    loop {
        let now = now_ms();
        if now >= target_ms {
            return;
        }
        if target_ms - now > 1 {
            std::thread::sleep(Duration::from_millis(target_ms - now - 1));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// The ticker: a background thread that publishes [`now_ms`] about once a millisecond, so a
/// generator in a burst reads the time with one relaxed load instead of a clock call.
///
/// It exists only while a process makes IDs in bursts (several per millisecond): it is started
/// by a burst, and it stops by itself after `IDLE_MS` (256 ms) with none. A process making one
/// ID now and then never starts it and reads the precise clock. It wakes just after each
/// millisecond of the clock, so the tick lags the clock by the scheduler's wake-up latency.
///
/// The published time is trusted for a new time unit and for most IDs within one; at the 2nd
/// ID of a unit and every 1024th after it (1025th, 2049th, ...), the generator reads the
/// precise clock instead and hands the reading to [`check_ticker`], which helps a ticker that
/// has fallen behind (a starved thread) and replaces one that is not this process's. A stale
/// tick can only date IDs early, at most 1023 of them before a check; it can never cause a
/// duplicate, which the generator's state rules out alone.
///
/// `fork()` copies the published time but not the thread. A child must call [`after_fork`]
/// (bindings call it from their at-fork hooks); otherwise its IDs keep the time
/// of the fork until a check above or a used-up unit sends it to the precise clock. Rust code
/// rarely meets this: after `fork()` in a process with threads, only `exec` is safe anyway.
mod ticker {
    use super::{AtomicU64, BASE, Duration, Instant, Ordering, now_ms};
    use std::sync::atomic::AtomicBool;

    /// A static on a cache line of its own (128 bytes: x86 fetches lines in adjacent pairs).
    /// Every `next_id()` in a burst reads [`TICK_MS`], which the ticker writes once a tick:
    /// one miss a millisecond for the reading core, which anything else the ticker or the
    /// generators write on that line would add to.
    #[repr(align(128))]
    pub(super) struct OwnLine<T>(T);

    impl<T> core::ops::Deref for OwnLine<T> {
        type Target = T;
        fn deref(&self) -> &T {
            &self.0
        }
    }

    /// The last published time, or 0 when there is no running ticker.
    pub(super) static TICK_MS: OwnLine<AtomicU64> = OwnLine(AtomicU64::new(0));
    /// Whether a ticker thread is running (or being started).
    pub(super) static RUNNING: AtomicBool = AtomicBool::new(false);
    /// When a burst last asked for the ticker ([`now_ms`]): a ticker that sees no burst for
    /// [`IDLE_MS`] stops. Written at most every [`WANT_EVERY_MS`] and only read by the ticker,
    /// so it costs neither side a cache miss per tick, as a flag set by bursts and cleared
    /// by the ticker every tick would.
    pub(super) static WANTED_MS: OwnLine<AtomicU64> = OwnLine(AtomicU64::new(0));
    /// The process that started the running ticker: a different one means we are a forked
    /// child whose ticker thread did not come along.
    pub(super) static OWNER_PID: AtomicU64 = AtomicU64::new(0);

    /// How many ticker threads this process started ([`super::ticker_starts`]).
    pub(super) static STARTS: AtomicU64 = AtomicU64::new(0);

    /// Milliseconds without a burst before the ticker stops.
    pub(super) const IDLE_MS: u64 = 256;
    /// How often, at most, bursts record that they still want the ticker.
    pub(super) const WANT_EVERY_MS: u64 = 32;

    pub(super) fn start() {
        if RUNNING.swap(true, Ordering::AcqRel) {
            return;
        }
        OWNER_PID.store(u64::from(std::process::id()), Ordering::Relaxed);
        let spawned = std::thread::Builder::new()
            .name("shardid-clock".into())
            .spawn(run);
        if spawned.is_ok() {
            STARTS.fetch_add(1, Ordering::Relaxed);
        } else {
            // No threads here (or none left): stay on the precise clock. RUNNING stays set so
            // bursts do not retry the spawn on every call.
            TICK_MS.store(0, Ordering::Relaxed);
        }
    }

    fn run() {
        let base = *BASE.get_or_init(Instant::now);
        loop {
            let now = now_ms();
            if now.saturating_sub(WANTED_MS.load(Ordering::Relaxed)) > IDLE_MS {
                TICK_MS.store(0, Ordering::Relaxed);
                RUNNING.store(false, Ordering::Release);
                return;
            }
            TICK_MS.fetch_max(now, Ordering::Relaxed);
            // Wake just after the clock's next millisecond (`now_ms` counts whole milliseconds
            // from `base`), not a millisecond from now: the tick then lags the clock by the
            // scheduler's wake-up latency instead of up to a whole tick, and a plain
            // `sleep(1 ms)` would drift by that latency every tick and skip milliseconds.
            let into_ms = base.elapsed().subsec_nanos() % 1_000_000;
            std::thread::sleep(Duration::from_nanos(u64::from(1_000_000 - into_ms)));
        }
    }
}

/// The ticker's last published time, if a ticker is running: see the `ticker` module.
#[inline]
pub(crate) fn ticker_ms() -> Option<u64> {
    match ticker::TICK_MS.load(Ordering::Relaxed) {
        0 => None,
        tick => Some(tick),
    }
}

/// The last precise reading of [`burst_now_ms`], to tell a burst (two in one millisecond).
#[cfg(feature = "serial")]
static LAST_PRECISE_MS: AtomicU64 = AtomicU64::new(0);

/// The time as a caller making many things a millisecond reads it (serial numbers): the
/// ticker's when one runs (one relaxed load), else the precise [`now_ms`], which starts the
/// ticker when two readings fall in one millisecond. A caller in a burst calls
/// [`refresh_ticker`] now and then (every 1,024 serials) to keep it running and repair its lag:
/// between two refreshes a starved ticker dates things early, never late.
#[cfg(feature = "serial")]
#[inline]
pub(crate) fn burst_now_ms() -> u64 {
    match ticker_ms() {
        Some(tick) => tick,
        None => precise_burst_ms(),
    }
}

#[cfg(feature = "serial")]
#[cold]
fn precise_burst_ms() -> u64 {
    let precise = now_ms();
    if LAST_PRECISE_MS.swap(precise, Ordering::Relaxed) == precise {
        check_ticker(precise);
    }
    precise
}

/// A precise reading for a ticker in use by [`burst_now_ms`]: keeps it running, repairs it.
#[cfg(feature = "serial")]
#[cold]
pub(crate) fn refresh_ticker() {
    check_ticker(now_ms());
}

/// How many times this process started a ticker thread: once per run of bursts, after 256 ms
/// without one (every generator's [`crate::stats::GeneratorStats::ticker_starts`]).
pub(crate) fn ticker_starts() -> u64 {
    ticker::STARTS.load(Ordering::Relaxed)
}

/// Called by a generator in a burst with a precise reading of [`now_ms`]: keeps the ticker
/// running (or starts it) and repairs it when it lags.
#[cold]
pub(crate) fn check_ticker(precise_ms: u64) {
    if precise_ms >= ticker::WANTED_MS.load(Ordering::Relaxed) + ticker::WANT_EVERY_MS {
        ticker::WANTED_MS.store(precise_ms, Ordering::Relaxed);
    }
    let tick = ticker::TICK_MS.load(Ordering::Relaxed);
    if tick == 0 {
        ticker::start();
    } else if precise_ms > tick + 2 {
        // Behind by more than a tick. A starved ticker is helped along; a ticker that is not
        // ours (we are a forked child) is replaced.
        ticker::TICK_MS.fetch_max(precise_ms, Ordering::Relaxed);
        if ticker::OWNER_PID.load(Ordering::Relaxed) != u64::from(std::process::id()) {
            after_fork();
        }
    }
}

/// Tells the clock that this process is a child made by `fork()`: the ticker thread did not
/// survive the fork, so the next burst starts a new one. The C library and the Python module
/// call this from the `pthread_atfork` child handler of the `shardid-fork` crate, which every
/// `fork()` runs, Python's hooks or not (this crate forbids the `unsafe` that takes). Without
/// it the clock notices at its next check against the precise clock.
///
/// It also tells leased generators ([`crate::lease::LeasedGenerator`]) that this is a new
/// process, which then takes a shard of its own instead of issuing its parent's IDs.
pub fn after_fork() {
    ticker::TICK_MS.store(0, Ordering::Relaxed);
    ticker::RUNNING.store(false, Ordering::Release);
    FORK_GENERATION.fetch_add(1, Ordering::AcqRel);
}

/// How many times [`after_fork`] ran in this process and its ancestors: a value different
/// from the one a handle saw means the handle came from a parent process.
static FORK_GENERATION: AtomicU64 = AtomicU64::new(0);

/// The current fork generation (see [`after_fork`]).
pub fn fork_generation() -> u64 {
    FORK_GENERATION.load(Ordering::Acquire)
}
