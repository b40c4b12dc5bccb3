//! One state per (layout, shard) per process.
//!
//! Two handles for the same shard in one process — two Python objects, two Node
//! `worker_threads`, two C handles — must not each start from an empty state, or both would
//! issue the same IDs in the same millisecond. The registry hands every handle for a
//! (layout, shard) the same state word. States are never freed: a state dropped and made anew
//! would forget which IDs of the current millisecond were already issued. That costs 8 bytes
//! per shard a process ever uses.

use std::sync::Mutex;
use std::sync::atomic::AtomicU64;
use std::vec::Vec;

use crate::{Error, Generator, Layout, Options};

/// The ID space a state belongs to: everything about a layout but whether it is signed, which
/// only bounds the space and does not change which IDs collide.
type Key = (Layout, u64);

static STATES: Mutex<Vec<(Key, &'static AtomicU64)>> = Mutex::new(Vec::new());

fn state_for(layout: Layout, shard: u64) -> &'static AtomicU64 {
    let key: Key = (layout.id_space(), shard);
    // A panic while holding the lock cannot leave the Vec inconsistent: keep using it.
    let mut states = STATES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, state)) = states.iter().find(|(k, _)| *k == key) {
        return state;
    }
    let state: &'static AtomicU64 = std::boxed::Box::leak(std::boxed::Box::new(AtomicU64::new(0)));
    states.push((key, state));
    state
}

impl Generator<&'static AtomicU64> {
    /// A handle on this process's one generator state for (`layout`, `shard`).
    ///
    /// Every handle for the same layout and shard shares the state, so handles made in
    /// different places (threads, binding objects) never issue the same ID. Each handle keeps
    /// its own [`Options`]. This is how the bindings construct generators.
    ///
    /// The state does not survive `fork()` as a shared thing: a forked child holds a copy.
    ///
    /// # Errors
    /// [`Error::ShardOutOfRange`].
    pub fn shared(layout: Layout, shard: u64, options: Options) -> Result<Self, Error> {
        if shard > layout.max_shard() {
            return Err(Error::ShardOutOfRange {
                shard,
                max: layout.max_shard(),
            });
        }
        Generator::with_state(state_for(layout, shard), layout, shard, options)
    }
}
