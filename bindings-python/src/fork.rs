//! `fork()`: the refusal of a handle used in a forked child (it holds its parent's shard).
//!
//! The child is told by the `pthread_atfork` handler the module registers when imported
//! (`shardid_fork::register`), which every `fork()` runs: Python's `os.register_at_fork` hooks
//! are skipped by a fork in C (uWSGI's prefork, `ctypes`' `libc.fork()`).

use pyo3::prelude::*;
use shardid::ErrorKind;

use crate::errors::raise_kind;

/// Raises `ForkedGeneratorError` when a handle made in generation `made_in` is used in a
/// forked child.
pub(crate) fn check_not_forked(py: Python<'_>, made_in: u64) -> PyResult<()> {
    if shardid::fork_generation() == made_in {
        return Ok(());
    }
    let kind = ErrorKind::ForkedGenerator;
    Err(raise_kind(py, kind, kind.template(), &[]))
}
