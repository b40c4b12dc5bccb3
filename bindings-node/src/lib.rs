//! The native addon behind the `shardid` npm package (napi-rs).
//!
//! A thin adapter: checked argument conversions (`args`), the core's errors as JS errors with
//! a stable `code` (`errors`), and plain functions over process-wide tables of layouts and
//! generators (`slots`), which `shardid.js` wraps in the `Layout` and `Generator` classes.
//! IDs leave as `bigint` (or decimal strings); they enter as `bigint`, decimal strings or
//! safe-integer numbers. Every export's body runs inside [`errors::guard`]: a panic is a thrown
//! error with `code` `PANIC`, never an abort of Node.

// `&Env` is how napi-rs hands out the environment, even though it is one pointer.
#![allow(clippy::trivially_copy_pass_by_ref)]
// napi-rs converts JS strings into owned `String` arguments.
#![allow(clippy::needless_pass_by_value)]
// napi-derive emits no exports in test builds, which leaves the helpers unused there.
#![cfg_attr(test, allow(dead_code))]
// Every export throws a JS error with a stable `err.code` (see `errors.rs` and the README); a
// `# Errors` section on each would repeat that.
#![allow(clippy::missing_errors_doc)]

mod args;
mod cli;
mod dictionary;
mod errors;
mod generator;
mod instance;
mod layout;
mod lease;
mod mysql;
mod ordinal;
mod postgres;
mod public;
mod redis;
mod segment;
mod serial;
mod slots;
mod sqlite;
mod stats;
mod status;
mod step;
mod uuid;

use napi::{Env, Result};
use napi_derive::napi;

use crate::errors::guard;

/// The process's clock as the generators read it: Unix ms from a monotonic clock anchored to
/// the wall clock (it never moves back).
#[napi]
pub fn now_ms(env: &Env) -> Result<f64> {
    guard(env, || Ok(layout::number(shardid::now_ms())))
}

/// The version of the native addon.
#[napi]
pub fn version(env: &Env) -> Result<&'static str> {
    guard(env, || Ok(env!("CARGO_PKG_VERSION")))
}

/// Whether generators in different `worker_threads` share state: yes, the addon is loaded
/// once per process. (Each instance of the WebAssembly module has its own memory.)
#[napi]
pub fn threads_share_state(env: &Env) -> Result<bool> {
    guard(env, || Ok(true))
}

/// Panics inside the boundary, on purpose: only in builds with the `panic-probe` feature,
/// which the JS tests make to check that a panic reaches JavaScript as `code` `PANIC`.
///
/// # Panics
/// Always, inside [`guard`], which turns the panic into the thrown error.
#[cfg(feature = "panic-probe")]
#[napi]
pub fn panic_probe(env: &Env) -> Result<()> {
    guard(env, || panic!("panic_probe: a panic on purpose"))
}
