//! The process clock behind `next_id()`: Unix milliseconds that never go backwards.
//!
//! `SystemTime` can be stepped back (NTP, an operator, a VM restore); an ID generator that
//! follows it either repeats time or has to refuse to run. This clock instead counts a
//! monotonic clock (`Instant`) from one process-wide anchor and adds the wall-clock offset
//! learned at the first call. Once a second it looks at the wall clock again and adopts it only
//! if it moved *forward* (after a suspend, or a correction ahead), so it tracks real time
//! without ever returning a smaller value than before.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How often the wall clock is consulted, in milliseconds of monotonic time.
const RESYNC_EVERY_MS: u64 = 1_000;

static BASE: OnceLock<Instant> = OnceLock::new();
/// Wall-clock milliseconds minus monotonic milliseconds since `BASE`; only ever increases.
static OFFSET_MS: AtomicU64 = AtomicU64::new(0);
/// Monotonic milliseconds at which the wall clock is read again.
static NEXT_RESYNC_MS: AtomicU64 = AtomicU64::new(0);

fn millis(d: Duration) -> u64 {
    d.as_secs()
        .saturating_mul(1_000)
        .saturating_add(u64::from(d.subsec_millis()))
}

/// The current time in Unix milliseconds, never smaller than a value returned before in this
/// process.
pub fn now_ms() -> u64 {
    let base = *BASE.get_or_init(Instant::now);
    let mono = millis(base.elapsed());
    if mono >= NEXT_RESYNC_MS.load(Ordering::Relaxed) {
        resync(mono);
    }
    mono + OFFSET_MS.load(Ordering::Relaxed)
}

#[cold]
fn resync(mono: u64) {
    // A wall clock before 1970 reads as 0 and is simply never adopted.
    let wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, millis);
    OFFSET_MS.fetch_max(wall.saturating_sub(mono), Ordering::Relaxed);
    NEXT_RESYNC_MS.store(mono + RESYNC_EVERY_MS, Ordering::Relaxed);
}

/// Waits until [`now_ms`] reads at least `target_ms`. Used for the at most one time unit a
/// generator waits when a unit's sequence is used up, so it spins politely instead of sleeping
/// (a sleep's granularity is coarser than the wait).
pub(crate) fn wait_until(target_ms: u64) {
    while now_ms() < target_ms {
        std::thread::yield_now();
    }
}
