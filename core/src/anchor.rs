//! Wall-clock time that never goes backwards, from two clock readings the caller supplies.
//!
//! The wall clock (`SystemTime`, JavaScript's `Date.now()`) can be stepped back by NTP, an
//! operator or a VM restore; a monotonic clock (`Instant`, `performance.now()`) cannot, but
//! counts from an arbitrary start. An [`Anchor`] adds to the monotonic reading the offset
//! between the two, learned at the first reading and adopted again once a second *only if it
//! grew* (after a suspend, or a correction ahead). So it tracks real time and never returns a
//! smaller value than before. No clock is read here: `std`'s [`crate::now_ms`] feeds it
//! `Instant` and `SystemTime`, the WebAssembly binding `performance.now()` and `Date.now()`.

use core::sync::atomic::{AtomicU64, Ordering};

/// How often the wall clock is consulted, in milliseconds of monotonic time.
pub const RESYNC_EVERY_MS: u64 = 1_000;

/// Turns monotonic readings into Unix milliseconds that never decrease.
#[derive(Debug, Default)]
pub struct Anchor {
    /// Wall-clock ms minus monotonic ms; only ever increases.
    offset_ms: AtomicU64,
    /// Monotonic ms at which the wall clock is read again (0: at the first reading).
    next_resync_ms: AtomicU64,
}

impl Anchor {
    /// An anchor that learns its offset at the first reading.
    pub const fn new() -> Self {
        Self {
            offset_ms: AtomicU64::new(0),
            next_resync_ms: AtomicU64::new(0),
        }
    }

    /// Unix milliseconds for the monotonic reading `mono_ms`; `wall_ms` reads the wall clock
    /// (Unix ms) and is called only at the first reading and once per [`RESYNC_EVERY_MS`].
    ///
    /// Never smaller than a value returned before, as long as `mono_ms` never decreases.
    #[inline]
    pub fn now_ms(&self, mono_ms: u64, wall_ms: impl FnOnce() -> u64) -> u64 {
        if mono_ms >= self.next_resync_ms.load(Ordering::Relaxed) {
            self.resync(mono_ms, wall_ms());
        }
        mono_ms.saturating_add(self.offset_ms.load(Ordering::Relaxed))
    }

    #[cold]
    fn resync(&self, mono_ms: u64, wall_ms: u64) {
        self.offset_ms
            .fetch_max(wall_ms.saturating_sub(mono_ms), Ordering::Relaxed);
        self.next_resync_ms
            .store(mono_ms.saturating_add(RESYNC_EVERY_MS), Ordering::Relaxed);
    }
}
