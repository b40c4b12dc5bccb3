//! `fork()`: the at-fork hook `shardid/__init__.py` registers, and the refusal of a plain
//! generator used in a forked child (it holds its parent's shard).

use pyo3::prelude::*;
use shardid::ErrorKind;

use crate::errors::raise_kind;

/// Tells the core's clock that this process is a forked child; `shardid/__init__.py`
/// registers it with `os.register_at_fork`.
#[pyfunction]
pub(crate) fn _after_fork() {
    shardid::after_fork();
}

/// Raises `ForkedGeneratorError` when a handle made in generation `made_in` is used in a
/// forked child.
pub(crate) fn check_not_forked(py: Python<'_>, made_in: u64) -> PyResult<()> {
    if shardid::fork_generation() == made_in {
        return Ok(());
    }
    let kind = ErrorKind::ForkedGenerator;
    Err(raise_kind(py, kind, kind.template(), &[]))
}
