//! Instructions per ID of `next_id()` on the registry's state ([`Generator::shared`], every
//! binding's handle), for callgrind, against `icount_next_id.rs` on an owned state
//! (`Generator::new`): the same loop, in a program of its own for the same reason.
//!
//! ```sh
//! cargo build --release -p shardid-bench --example icount_next_id --example icount_next_id_shared
//! valgrind --tool=callgrind --toggle-collect='icount_next_id::ticker_singles' \
//!     target/release/examples/icount_next_id
//! valgrind --tool=callgrind --toggle-collect='icount_next_id_shared::ticker_singles' \
//!     target/release/examples/icount_next_id_shared
//! ```
use std::hint::black_box;

use shardid::{Generator, Layout, Options, State};

/// IDs made by the run.
const IDS: u64 = 1 << 20;

#[inline(never)]
fn ticker_singles(g: &Generator<&'static State>) {
    for _ in 0..IDS {
        black_box(g.next_id().unwrap());
    }
}

fn main() {
    let g = Generator::shared(Layout::TWITTER, 1, Options::default()).unwrap();
    ticker_singles(&g);
    println!("{IDS} IDs made one at a time with next_id() on the registry's state");
}
