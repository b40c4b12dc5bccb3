//! Instructions per leased ID, for callgrind (as `icount.rs` for the plain generator): a
//! `CeilingGenerator`, the generator every lease builds on, over a store that records any
//! ceiling at once, so the count is the per-ID path (the ceiling's check) and not the store.
//!
//! ```sh
//! cargo build --release -p shardid-bench --example icount_lease
//! valgrind --tool=callgrind --toggle-collect='*scripted_leased*' target/release/examples/icount_lease
//! ```
use std::hint::black_box;

use shardid::lease::{CeilingGenerator, CeilingStore};
use shardid::{Layout, Options};

/// IDs made by the run.
const IDS: u64 = 1 << 20;

/// A store that records whatever is wanted, at once.
#[derive(Debug)]
struct Free;

impl CeilingStore for Free {
    fn store(&self, _at_least: u64, wanted: u64) -> std::io::Result<u64> {
        Ok(wanted)
    }
}

#[inline(never)]
fn scripted_leased(g: &CeilingGenerator) -> u64 {
    let mut last = 0;
    let mut now = 1_700_000_000_000u64;
    for i in 0..IDS {
        // 4096 IDs per unit of the Twitter layout: the next unit after a unit's worth.
        if i % 4096 == 0 {
            now += 1;
        }
        last = g.next_id_at(black_box(now)).unwrap();
    }
    last
}

fn main() {
    let g = CeilingGenerator::new(Layout::TWITTER, 1, Options::default(), None, Box::new(Free))
        .unwrap();
    let last = scripted_leased(&g);
    assert!(last > 0);
    println!("{IDS} leased IDs made one at a time");
}
