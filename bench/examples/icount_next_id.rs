//! Instructions per ID of `next_id()`, for callgrind: the process clock's path, the one every
//! binding calls per ID, each ID used (handed to `black_box`). A function of its own for
//! callgrind's `--toggle-collect`, in a program of its own: `bench/examples/icount.rs`'s scripted
//! runs call `next_id_at`, which the compiler inlines or not by its number of callers.
//!
//! Mostly the ticker's path, with the precise clock's checks (the 2nd ID of each millisecond and
//! every 1,024th) and the waits of a used-up unit mixed in by the time the run takes (under
//! callgrind, ~20 IDs a millisecond): its count moves by a few tenths of a percent between runs.
//!
//! ```sh
//! cargo build --release -p shardid-bench --example icount_next_id
//! valgrind --tool=callgrind --toggle-collect='icount_next_id::ticker_singles' \
//!     target/release/examples/icount_next_id
//! ```
use std::hint::black_box;

use shardid::{Generator, Layout};

/// IDs made by the run.
const IDS: u64 = 1 << 20;

#[inline(never)]
fn ticker_singles(g: &Generator) {
    for _ in 0..IDS {
        black_box(g.next_id().unwrap());
    }
}

fn main() {
    let g = Generator::new(Layout::TWITTER, 1).unwrap();
    ticker_singles(&g);
    println!("{IDS} IDs made one at a time with next_id()");
}
