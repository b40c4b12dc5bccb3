//! Instructions per ID, for callgrind: the machine is too noisy for a few percent by wall
//! time, an instruction count is not. `next_id_at` on a scripted clock (a unit's worth of IDs,
//! then the next unit, so every unit begins with a jump, as in a burst), and `next_ids_at`
//! batches of 4096 on the same clock; each in a function of its own for callgrind's
//! `--toggle-collect`:
//!
//! ```sh
//! cargo build --release -p shardid-bench --example icount
//! valgrind --tool=callgrind --toggle-collect='*scripted_singles*' target/release/examples/icount
//! ```
use std::hint::black_box;

use shardid::{Generator, Layout};

#[path = "common/scripted.rs"]
mod scripted;
use scripted::{IDS, scripted};

scripted!(scripted_singles, Generator);

#[inline(never)]
fn scripted_batches(g: &Generator) -> u64 {
    let mut out = vec![0u64; 4096];
    let mut now = 1_800_000_000_000u64;
    let mut last = 0;
    for _ in 0..IDS / 4096 {
        now += 1;
        let n = g.next_ids_at(black_box(now), &mut out).unwrap();
        last = out[n - 1];
    }
    last
}

fn main() {
    let g = Generator::new(Layout::TWITTER, 1).unwrap();
    let a = scripted_singles(&g);
    let b = scripted_batches(&g);
    assert!(b > a);
    println!("{IDS} IDs made one at a time and {IDS} in batches of 4096");
}
