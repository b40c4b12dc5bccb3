//! Instructions per ID of `next_id_at`, every ID used, for callgrind: `bench/examples/icount.rs`'s
//! scripted singles keep only the last ID, which lets the compiler sink the ID's assembly out
//! of the loop or not by the way the rest of the loop is laid out (the build before the
//! counters did, the build after did not: 11 instructions a call that are no part of either's
//! cost to a caller). Here every ID goes to `black_box`, as a caller uses each. In a program of
//! its own: `next_id_at` is inlined or not by its number of callers.
//!
//! ```sh
//! cargo build --release -p shardid-bench --example icount_each
//! valgrind --tool=callgrind --toggle-collect='icount_each::scripted_singles_each' \
//!     target/release/examples/icount_each
//! ```
use std::hint::black_box;

use shardid::{Generator, Layout};

/// IDs made by the run.
const IDS: u64 = 1 << 20;

/// `next_id_at` on a scripted clock: 4096 IDs per unit of the Twitter layout, then the next
/// unit, so every unit begins with a jump, as in a burst.
#[inline(never)]
fn scripted_singles_each(g: &Generator) {
    let mut now = 1_750_000_000_000u64;
    for i in 0..IDS {
        if i % 4096 == 0 {
            now += 1;
        }
        black_box(g.next_id_at(black_box(now)).unwrap());
    }
}

fn main() {
    let g = Generator::new(Layout::TWITTER, 1).unwrap();
    scripted_singles_each(&g);
    println!("{IDS} IDs made one at a time with next_id_at, each used");
}
