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

use shardid::{Generator, Layout, Options, State};

#[path = "common/scripted.rs"]
mod scripted;
use scripted::{IDS, scripted};

scripted!(scripted_shared, Generator<&'static State>);

fn main() {
    let g = Generator::shared(Layout::TWITTER, 1, Options::default()).unwrap();
    let last = scripted_shared(&g);
    assert!(last > 0);
    println!("{IDS} IDs made one at a time on the registry's state");
}
