//! Timing helpers shared by the benchmarks.
use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// IDs per timed burst: a quarter of the Twitter layout's 4096 per millisecond.
pub const BURST: u64 = 1024;

fn wall_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis()
}

/// Spins to the start of the next millisecond, untimed.
pub fn next_millisecond() {
    let start = wall_ms();
    while wall_ms() == start {
        std::hint::spin_loop();
    }
}

/// Times `iters` calls of `make`, in bursts of [`BURST`] that each start on a fresh
/// millisecond, so no generator ever has to wait for the next one.
pub fn burst(iters: u64, make: impl FnMut() -> u64) -> Duration {
    burst_of(iters, BURST, make)
}

/// Times `iters` calls of `make`, `per_ms` calls after each millisecond boundary (1 when
/// each call makes a whole batch of IDs).
pub fn burst_of(iters: u64, per_ms: u64, mut make: impl FnMut() -> u64) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let n = left.min(per_ms);
        next_millisecond();
        let start = Instant::now();
        for _ in 0..n {
            black_box(make());
        }
        total += start.elapsed();
        left -= n;
    }
    total
}
