//! One state per (layout, shard) per process.
//!
//! Two handles for the same shard in one process — two Python objects, two Node
//! `worker_threads`, two C handles, two JavaScript `Generator`s over one WebAssembly instance —
//! must not each start from an empty state, or both would issue the same IDs in the same
//! millisecond. A [`Registry`] hands every handle for a (layout, shard) the same state word.
//! States are never freed: a state dropped and made anew would forget which IDs of the current
//! millisecond were already issued. That costs 8 bytes per shard a process ever uses.
//!
//! [`Registry`] needs only `alloc`: the WebAssembly module keeps one per instance. With `std`,
//! [`Generator::shared`] uses the process's one registry behind a mutex.

use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::Layout;
use crate::generator::State;
#[cfg(feature = "std")]
use crate::{Error, Generator, Options};

/// The generator states of one process (or one WebAssembly instance), one per ID space and
/// shard.
#[derive(Debug, Default)]
pub struct Registry {
    /// The layout first asked for (what exporters label its figures with) and the shard,
    /// looked up by the layout's ID space (everything about a layout but whether it is signed,
    /// which only bounds the space and does not change which IDs collide). The ID space is
    /// not stored beside the layout: a second `Layout` per entry cost the WebAssembly module
    /// ~70 bytes of code, and it is one field of the layout.
    states: Vec<(Layout, u64, &'static State)>,
}

impl Registry {
    /// An empty registry.
    pub const fn new() -> Self {
        Self { states: Vec::new() }
    }

    /// The state for (`layout`, `shard`): the one handed out before for the same ID space and
    /// shard, or a new one (never freed). Give it to
    /// [`Generator::with_state`](crate::Generator::with_state).
    pub fn state(&mut self, layout: Layout, shard: u64) -> &'static State {
        let space = layout.id_space();
        if let Some((_, _, state)) = self
            .states
            .iter()
            .find(|(l, s, _)| l.id_space() == space && *s == shard)
        {
            return state;
        }
        let state: &'static State = Box::leak(Box::new(State::new()));
        self.states.push((layout, shard, state));
        state
    }

    /// Every state handed out, with the layout it was first asked for and its shard.
    pub fn states(&self) -> impl Iterator<Item = (Layout, u64, &'static State)> + '_ {
        self.states.iter().copied()
    }
}

#[cfg(feature = "std")]
static STATES: std::sync::Mutex<Registry> = std::sync::Mutex::new(Registry::new());

/// Every generator state of this process ([`Generator::shared`]'s), with its layout and shard.
#[cfg(feature = "std")]
pub(crate) fn shared_states() -> Vec<(Layout, u64, &'static State)> {
    STATES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .states()
        .collect()
}

#[cfg(feature = "std")]
impl Generator<&'static State> {
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
        // A panic while holding the lock cannot leave the Vec inconsistent: keep using it.
        let state = STATES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .state(layout, shard);
        Generator::with_state(state, layout, shard, options)
    }
}

/// Loom model: handles made for the first time at once, on several threads, get one state
/// word per ID space and shard. Run with `RUSTFLAGS="--cfg loom" cargo test -p shardid --lib
/// --release loom`.
#[cfg(all(test, loom))]
mod loom_models {
    use alloc::vec::Vec;

    use loom::sync::{Arc, Mutex};
    use loom::thread;

    use super::Registry;
    use crate::Layout;

    #[test]
    fn loom_first_uses_at_once_share_one_state() {
        crate::generator::loom_models::model(|| {
            let registry = Arc::new(Mutex::new(Registry::new()));
            // (layout, shard) per thread: two for one shard, one for the same shard of the same
            // ID space but unsigned, one for another shard.
            let unsigned_twitter = Layout::builder()
                .epoch_ms(Layout::TWITTER.epoch_ms())
                .bits(41, 10, 12)
                .signed(false)
                .build()
                .unwrap();
            let wanted = [
                (Layout::TWITTER, 1),
                (Layout::TWITTER, 1),
                (unsigned_twitter, 1),
                (Layout::TWITTER, 2),
            ];
            let handles: Vec<_> = wanted
                .iter()
                .map(|&(layout, shard)| {
                    let registry = Arc::clone(&registry);
                    thread::spawn(move || {
                        let state = registry.lock().unwrap().state(layout, shard);
                        core::ptr::from_ref::<crate::State>(state) as usize
                    })
                })
                .collect();
            let got: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            assert_eq!(got[0], got[1], "one shard, two states");
            assert_eq!(got[0], got[2], "signedness split one ID space");
            assert_ne!(got[0], got[3], "two shards, one state");
        });
    }
}
