//! Process-wide tables of layouts and generators, addressed by small integers, and the objects
//! the JS side owns (leases, allocators, serials).
//!
//! The JS classes (`shardid.js`) hold an index and pass it to plain native functions: a
//! napi-rs class method pays for unwrapping and checking its receiver on every call (~60 ns
//! here), more than the work itself. Entries are never removed — like the core's registry,
//! which a generator's state lives in anyway — and equal entries share one index (`index_of`),
//! so a process holds one entry per distinct layout or generator configuration (at most
//! [`CAPACITY`]).
//!
//! Objects that are each their own (a lease, an allocator, a lease's counters) are not in a
//! table: each is a napi `External` the JS object holds ([`own`], read back with [`owned`]),
//! freed by V8 when that object is collected. A table of them never freed a slot, so a process
//! that opened and closed 4,096 of them could open no more (issue 60).

use std::sync::{Mutex, OnceLock};

use napi::bindgen_prelude::{External, JsValue, Unknown};

/// How many distinct entries a table holds.
pub(crate) const CAPACITY: usize = 4096;

/// `value` as a napi `External` for the JS side to hold: the object lives as long as the JS
/// value does, whatever it was made for, and V8 drops it (its `Drop` runs) once collected.
pub(crate) fn own<T: 'static>(value: T) -> External<T> {
    External::new(value)
}

/// The object of type `T` that `handle` (an `External` made by [`own`]) holds; `None` for any
/// other value (a number, an object, `undefined`).
pub(crate) fn owned<'a, T: 'static>(env: &napi::Env, handle: &Unknown<'a>) -> Option<&'a T> {
    let mut data = std::ptr::null_mut();
    // SAFETY: `handle` is a live value of this env; napi refuses a value that is not an External
    // (`napi_invalid_arg`) and writes nothing then.
    let status =
        unsafe { napi::sys::napi_get_value_external(env.raw(), handle.raw(), &raw mut data) };
    if status != napi::sys::Status::napi_ok || data.is_null() {
        return None;
    }
    // SAFETY: every External this addon makes is napi-rs's `External<U>` (`own`), whose first
    // field is `U`'s `TypeId` (`repr(C)`); `inner_from_raw` compares it with `T`'s and gives
    // `None` for another type. The JS side passes only the handles it got from this addon (they
    // are private fields of its objects). The object lives while `handle` does: the JS value is
    // an argument of the running call, so V8 cannot collect it before the call returns.
    unsafe { External::<T>::inner_from_raw(data) }
}

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
