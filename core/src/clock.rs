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
/// by a burst, and it stops by itself after [`IDLE_TICKS`] ticks with none. A process making one
/// ID now and then never starts it and reads the precise clock.
///
/// The published time is trusted for a new time unit and for most IDs within one; at the
/// 1st, 2nd, 4th, 8th, ... ID of a unit after its first, the generator reads the precise clock
/// instead and hands the reading to [`check_ticker`], which helps a ticker that has fallen
/// behind (a starved thread) and replaces one that is not this process's. A stale tick can only
/// date IDs early; it can never cause a duplicate, which the generator's state rules out alone.
///
/// `fork()` copies the published time but not the thread. A child must call [`after_fork`]
/// (bindings call it from their at-fork hooks); otherwise its IDs keep the time
/// of the fork until a check above or a used-up unit sends it to the precise clock. Rust code
/// rarely meets this: after `fork()` in a process with threads, only `exec` is safe anyway.
mod ticker {
    use super::{AtomicU64, Duration, Ordering, now_ms};
    use std::sync::atomic::AtomicBool;

    /// The last published time, or 0 when there is no running ticker.
    pub(super) static TICK_MS: AtomicU64 = AtomicU64::new(0);
    /// Whether a ticker thread is running (or being started).
    pub(super) static RUNNING: AtomicBool = AtomicBool::new(false);
    /// Set by bursts, cleared by the ticker: a ticker that sees it clear for a while stops.
    pub(super) static WANTED: AtomicBool = AtomicBool::new(false);
    /// The process that started the running ticker: a different one means we are a forked
    /// child whose ticker thread did not come along.
    pub(super) static OWNER_PID: AtomicU64 = AtomicU64::new(0);

    /// Ticks without a burst before the ticker stops.
    pub(super) const IDLE_TICKS: u32 = 256;

    pub(super) fn start() {
        if RUNNING.swap(true, Ordering::AcqRel) {
            return;
        }
        OWNER_PID.store(u64::from(std::process::id()), Ordering::Relaxed);
        let spawned = std::thread::Builder::new()
            .name("shardid-clock".into())
            .spawn(run);
        if spawned.is_err() {
            // No threads here (or none left): stay on the precise clock. RUNNING stays set so
            // bursts do not retry the spawn on every call.
            TICK_MS.store(0, Ordering::Relaxed);
        }
    }

    fn run() {
        let mut idle = 0;
        loop {
            TICK_MS.fetch_max(now_ms(), Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(1));
            if WANTED.swap(false, Ordering::Relaxed) {
                idle = 0;
            } else {
                idle += 1;
                if idle >= IDLE_TICKS {
                    TICK_MS.store(0, Ordering::Relaxed);
                    RUNNING.store(false, Ordering::Release);
                    return;
                }
            }
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

/// Called by a generator in a burst with a precise reading of [`now_ms`]: keeps the ticker
/// running (or starts it) and repairs it when it lags.
#[cold]
pub(crate) fn check_ticker(precise_ms: u64) {
    if !ticker::WANTED.load(Ordering::Relaxed) {
        ticker::WANTED.store(true, Ordering::Relaxed);
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
/// survive the fork, so the next burst starts a new one. Bindings call this from their
/// at-fork hooks (Python's `os.register_at_fork`, `pthread_atfork` in C). Without it the
/// clock notices at its next check against the precise clock.
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
