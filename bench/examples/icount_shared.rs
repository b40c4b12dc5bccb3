//! Instructions per ID of a generator on the registry's state ([`Generator::shared`], a
//! `&'static State`: every binding's handle), for callgrind, against `icount.rs`'s
//! `scripted_singles` on an owned state (`Generator::new`): the same loop, `next_id_at` on a
//! scripted clock (a unit's worth of IDs, then the next unit). A program of its own, its one
//! caller of `next_id_at`, as in `icount.rs`: the compiler inlines it or not by its callers.
//!
//! ```sh
//! cargo build --release -p shardid-bench --example icount --example icount_shared
//! valgrind --tool=callgrind --toggle-collect='*scripted_singles*' target/release/examples/icount
//! valgrind --tool=callgrind --toggle-collect='*scripted_shared*' target/release/examples/icount_shared
//! ```
use std::hint::black_box;

use shardid::{Generator, Layout, Options, State};

/// IDs made by the run.
const IDS: u64 = 1 << 20;

#[inline(never)]
fn scripted_shared(g: &Generator<&'static State>) -> u64 {
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
    let g = Generator::shared(Layout::TWITTER, 1, Options::default()).unwrap();
    let last = scripted_shared(&g);
    assert!(last > 0);
    println!("{IDS} IDs made one at a time on the registry's state");
}
