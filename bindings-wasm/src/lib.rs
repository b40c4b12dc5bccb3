//! The WebAssembly module behind `shardid` in browsers and edge runtimes (wasm-bindgen).
//!
//! The module exports numbers-only functions (`raw`); `js/backend.js` checks the JS arguments
//! (a `bigint` passed as `u64` would wrap silently), turns statuses into errors with the
//! same `err.code`s as the Node addon, and offers the same functions as the Node addon, so
//! the same `api.js` gives both their `Layout` and `Generator` classes and the same JS suite
//! tests both.
//!
//! The generator's clock is `performance.now()` anchored to `Date.now()` by the core's
//! [`shardid::Anchor`]; std's clock panics on `wasm32-unknown-unknown`.

// `no_std` in the module itself; the host build (clippy, `cargo test --workspace`) keeps std.
#![cfg_attr(target_arch = "wasm32", no_std)]
// Every export throws a JS error with a stable `err.code` (see `args.rs` and the README); a
// `# Errors` section on each would repeat that.
#![allow(clippy::missing_errors_doc)]

/// A small free-list allocator instead of std's dlmalloc: the module is downloaded by every
/// page that uses it, and allocations here are few and short (argument strings, batches).
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: lol_alloc::AssumeSingleThreaded<lol_alloc::FreeListAllocator> =
    // SAFETY: wasm32-unknown-unknown without the atomics feature runs one thread per module
    // instance (workers get their own instance and memory).
    unsafe { lol_alloc::AssumeSingleThreaded::new(lol_alloc::FreeListAllocator::new()) };

extern crate alloc;

/// A panic is a bug here (every input is checked): trap instead of formatting a message,
/// which would pull Rust's formatting machinery into the module.
#[cfg(target_arch = "wasm32")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    core::arch::wasm32::unreachable()
}

/// A value only ever used from the one thread of a module instance.
pub(crate) struct Local<T>(pub(crate) core::cell::RefCell<T>);

// SAFETY: wasm32-unknown-unknown without the atomics feature runs one thread per module
// instance; workers get their own instance and memory, so `Local`s are never shared.
unsafe impl<T> Sync for Local<T> {}

mod raw;

use wasm_bindgen::prelude::*;

/// The module's version.
#[wasm_bindgen]
pub fn version() -> alloc::string::String {
    env!("CARGO_PKG_VERSION").into()
}
