//! How many IDs a stopped ticker can date by its old time: at most `TICK_CHECK_EVERY - 1`
//! (1023) of a unit, after which the precise clock's check replaces the ticker.
//!
//! The stopped ticker is a forked child's that did not call `after_fork()` (the bindings'
//! at-fork hooks do; Rust code must): the child inherits the last published time and no
//! thread that would move it on. The parent leaves its state deep in a unit (sequence 2100 to
//! 2199), where the checks at the 1st, 2nd, 4th, ... ID that this schedule replaced would
//! have let the child date ~1900 IDs by the old tick before the next one (4096).
//!
//! Its own test binary: `fork()` in a process with other test threads running is best
//! avoided.
mod child;

use shardid::{Generator, Layout, now_ms};

/// How far before the child's burst an ID must be dated to count as dated by the old tick.
/// The child sleeps 4 times this long first.
const STALE_MS: u64 = 25;

#[test]
fn a_stopped_ticker_dates_at_most_1023_ids() {
    let layout = Layout::TWITTER;
    let g = Generator::new(layout, 1).unwrap();
    for _ in 0..20_000 {
        g.next_id().unwrap(); // starts the ticker
    }
    // Leave the state at a sequence in 2100..2200 of a unit (of 4096): a burst at the cap
    // passes it in every unit. The old schedule's next check was then at 4096, this one's
    // at 3073.
    while !(2100..2200).contains(&layout.decode(g.next_id().unwrap()).unwrap().sequence) {}

    child::in_child(|| {
        // No `after_fork()`: the child's ticker is the parent's last published time.
        std::thread::sleep(std::time::Duration::from_millis(4 * STALE_MS));
        let start = now_ms();
        let ids: Vec<u64> = (0..5_000).map(|_| g.next_id().unwrap()).collect();
        let end = now_ms();
        let dated: Vec<u64> = ids
            .iter()
            .map(|&id| layout.decode(id).unwrap().timestamp_ms)
            .collect();
        let stale = dated.iter().filter(|&&t| t + STALE_MS < start).count();
        let first_fresh = dated.iter().position(|&t| t + STALE_MS >= start);
        if stale == 0 {
            // The scenario did not happen (the ticker was not stopped): not a pass.
            Err(format!(
                "no ID dated by the stopped ticker: {:?}",
                &dated[..3]
            ))
        } else if stale > 1023 {
            Err(format!(
                "{stale} IDs dated by the stopped ticker, at most 1023 expected"
            ))
        } else if first_fresh != Some(stale) {
            Err(format!(
                "stale IDs after fresh ones: first fresh at {first_fresh:?}, {stale} stale"
            ))
        } else if dated[stale..]
            .iter()
            .any(|&t| t + STALE_MS < start || t > end)
        {
            Err("an ID after the check is not dated by the clock".to_owned())
        } else if !ids.windows(2).all(|w| w[0] < w[1]) {
            Err("IDs not increasing".to_owned())
        } else {
            eprintln!("child: {stale} IDs dated by the stopped ticker, then the clock's");
            Ok(())
        }
    });
}
