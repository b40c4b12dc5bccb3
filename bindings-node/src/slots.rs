//! Process-wide tables of layouts and generators, addressed by small integers.
//!
//! The JS classes (`shardid.js`) hold an index and pass it to plain native functions: a
//! napi-rs class method pays for unwrapping and checking its receiver on every call (~60 ns
//! here), more than the work itself. Entries are never removed — like the core's registry,
//! which a generator's state lives in anyway — and equal entries share one index (`index_of`),
//! so a process holds one entry per distinct layout or generator configuration; objects that
//! are each their own (allocators, leases) get one each (`push`).

use std::sync::{Mutex, OnceLock};

/// How many distinct entries a table holds.
pub(crate) const CAPACITY: usize = 4096;

/// An append-only table with lock-free reads.
pub(crate) struct Slots<T: 'static> {
    slots: [OnceLock<T>; CAPACITY],
    /// Serialises registration (and its search for an equal entry).
    len: Mutex<usize>,
}

impl<T: 'static> Slots<T> {
    pub(crate) const fn new() -> Self {
        Self {
            slots: [const { OnceLock::new() }; CAPACITY],
            len: Mutex::new(0),
        }
    }

    /// The index of the entry `same` finds equal to `value`, adding `value` if there is none;
    /// `None` when full.
    fn insert(&self, value: T, same: impl Fn(&T, &T) -> bool) -> Option<u32> {
        let mut len = self
            .len
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let found = self.slots[..*len]
            .iter()
            .position(|slot| slot.get().is_some_and(|entry| same(entry, &value)));
        let index = match found {
            Some(index) => index,
            None if *len < CAPACITY => {
                let _ = self.slots[*len].set(value);
                *len += 1;
                *len - 1
            }
            None => return None,
        };
        u32::try_from(index).ok()
    }

    /// Adds `value`, an entry equal to no other (an allocator, a lease: each call makes one),
    /// and gives its index; `None` when full.
    pub(crate) fn push(&self, value: T) -> Option<u32> {
        self.insert(value, |_, _| false)
    }

    /// The entry at `index`, if there is one.
    #[inline]
    pub(crate) fn get(&self, index: u32) -> Option<&T> {
        self.slots.get(index as usize)?.get()
    }
}

impl<T: PartialEq> Slots<T> {
    /// The index of an entry equal to `value`, adding it if there is none; `None` when full.
    pub(crate) fn index_of(&self, value: T) -> Option<u32> {
        self.insert(value, PartialEq::eq)
    }
}

/// The error of a full table: `INVALID_ARGUMENT` on `argument` (the JS name of what was made)
/// with `reason`.
pub(crate) fn full(env: &napi::Env, argument: &str, reason: &str) -> napi::Error {
    crate::errors::invalid_argument(env, crate::errors::Class::Range, argument, reason)
}
