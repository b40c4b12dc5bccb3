//! The per-ID loop the instruction counts measure, written once for every generator type
//! (`icount`, `icount_lease`, `icount_shared`): 2^20 IDs of `next_id_at` on a scripted clock,
//! 4096 IDs per unit of the Twitter layout (the next unit after a unit's worth, so every unit
//! begins with a jump, as in a burst). Included with `#[path]`: each example keeps its own
//! function name for callgrind's `--toggle-collect`.

/// IDs made by each run.
pub const IDS: u64 = 1 << 20;

/// `fn $name(g: &$generator) -> u64`: the loop, `#[inline(never)]`, returning the last ID.
macro_rules! scripted {
    ($name:ident, $generator:ty) => {
        #[inline(never)]
        fn $name(g: &$generator) -> u64 {
            let mut last = 0;
            let mut now = 1_700_000_000_000u64;
            for i in 0..IDS {
                if i % 4096 == 0 {
                    now += 1;
                }
                last = g.next_id_at(std::hint::black_box(now)).unwrap();
            }
            last
        }
    };
}
pub(crate) use scripted;
