//! The WebAssembly module behind `shardid` in browsers and edge runtimes (wasm-bindgen).
//!
//! It exports the same plain functions as the Node addon (`bindings-node/src`), so the same
//! `api.js` gives both their `Layout` and `Generator` classes and the same JS suite tests
//! both. Arguments are checked here: `bigint`s through a checked conversion (wasm-bindgen
//! would wrap an out-of-range `bigint` passed as `u64`), decimal strings, safe-integer
//! numbers, `Date`s for times. Errors carry the same `err.code`s as the Node addon.
//!
//! The generator's clock is `performance.now()` anchored to `Date.now()` by the core's
//! [`shardid::Anchor`]; std's clock panics on `wasm32-unknown-unknown`.

// Every export throws a JS error with a stable `err.code` (see `args.rs` and the README); a
// `# Errors` section on each would repeat that.
#![allow(clippy::missing_errors_doc)]

mod args;
mod generator;
mod layout;

use wasm_bindgen::prelude::*;

pub use generator::*;
pub use layout::*;

/// The module's version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").into()
}

/// Whether generators in different workers share state: no, every instance of the module
/// (one per worker or page) has its own memory. Give each its own shard.
#[wasm_bindgen(js_name = threadsShareState)]
pub fn threads_share_state() -> bool {
    false
}
