//! Instructions per leased ID, for callgrind (as `icount.rs` for the plain generator): a
//! `CeilingGenerator`, the generator every lease builds on, over a store that records any
//! ceiling at once, so the count is the per-ID path (the ceiling's check) and not the store.
//!
//! ```sh
//! cargo build --release -p shardid-bench --example icount_lease
//! valgrind --tool=callgrind --toggle-collect='*scripted_leased*' target/release/examples/icount_lease
//! ```

use shardid::lease::{CeilingGenerator, CeilingStore};
use shardid::{Layout, Options};

#[path = "common/scripted.rs"]
mod scripted;
use scripted::{IDS, scripted};

/// A store that records whatever is wanted, at once.
#[derive(Debug)]
struct Free;

impl CeilingStore for Free {
    fn store(&self, _at_least: u64, wanted: u64) -> std::io::Result<u64> {
        Ok(wanted)
    }
}

scripted!(scripted_leased, CeilingGenerator);

fn main() {
    let g = CeilingGenerator::new(Layout::TWITTER, 1, Options::default(), None, Box::new(Free))
        .unwrap();
    let last = scripted_leased(&g);
    assert!(last > 0);
    println!("{IDS} leased IDs made one at a time");
}
