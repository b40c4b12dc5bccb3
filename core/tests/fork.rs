//! The ticker keeps bursts cheap without dating IDs far from the clock, and a forked child that
//! calls `after_fork()` (the bindings' at-fork hooks do) dates its IDs by the real clock and
//! starts its own ticker. Its own test binary: `fork()`
//! in a process with other test threads running is best avoided.
mod child;

use shardid::{Generator, Layout, now_ms};

fn burst(g: &Generator) {
    for _ in 0..20_000 {
        g.next_id().unwrap();
    }
}

/// Makes IDs at a low rate and checks each is dated within `slack_ms` of the precise clock.
fn low_rate_ids_are_dated_by_the_clock(g: &Generator, slack_ms: u64) -> Result<(), String> {
    for i in 0..5 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let id = g.next_id().unwrap();
        let dated = Layout::TWITTER.decode(id).unwrap().timestamp_ms;
        let now = now_ms();
        if !(now.saturating_sub(slack_ms)..=now).contains(&dated) {
            return Err(format!("ID {i} dated {dated}, clock {now}"));
        }
    }
    Ok(())
}

#[test]
fn ticker_and_fork() {
    let g = Generator::new(Layout::TWITTER, 1).unwrap();
    burst(&g); // starts the ticker thread
    // Under heavy load a sleeping ticker can wake late; the bound is the scheduler's, not ours.
    low_rate_ids_are_dated_by_the_clock(&g, 50).unwrap();
    burst(&g);

    child::in_child(|| {
        // What the bindings' at-fork hooks do: the child has no ticker thread.
        shardid::after_fork();
        low_rate_ids_are_dated_by_the_clock(&g, 50).and_then(|()| {
            burst(&g); // a new ticker in the child
            low_rate_ids_are_dated_by_the_clock(&g, 50)
        })
    });
}
