//! The `shardid` command line: the core's (`shardid::cli`), handed the arguments and standard
//! input by `shardid/__main__.py`.

// pyo3 converts a Python list and str into owned arguments.
#![allow(clippy::needless_pass_by_value)]

use pyo3::prelude::*;

/// Runs the command line on `args`; returns (stdout, stderr, exit status).
#[pyfunction]
#[pyo3(signature = (args, stdin=None))]
pub(crate) fn _cli_run(
    py: Python<'_>,
    args: Vec<String>,
    stdin: Option<String>,
) -> (String, String, i32) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // `new` may wait for the next millisecond: let other threads run meanwhile.
    let out = py.detach(|| shardid::cli::run(&args, stdin.as_deref()));
    (out.stdout, out.stderr, out.code)
}

/// Whether `_cli_run(args)` reads standard input (`decode` without IDs).
#[pyfunction]
pub(crate) fn _cli_wants_stdin(args: Vec<String>) -> bool {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    shardid::cli::wants_stdin(&args)
}
