//! The `shardid` command line: the core's (`shardid::cli`), handed the arguments and standard
//! input by `cli.js` (`npx shardid`).

use napi::{Env, Result};
use napi_derive::napi;

use crate::errors::guard;

/// What a run of the command line printed, and its exit status.
#[napi(object)]
pub struct CliOutput {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

/// Runs the command line on `args` (without the program name).
#[napi]
pub fn cli_run(env: &Env, args: Vec<String>, stdin: Option<String>) -> Result<CliOutput> {
    guard(env, || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = shardid::cli::run(&args, stdin.as_deref());
        Ok(CliOutput {
            stdout: out.stdout,
            stderr: out.stderr,
            code: out.code,
        })
    })
}

/// Whether `cliRun(args)` reads standard input (`decode` without IDs).
#[napi]
pub fn cli_wants_stdin(env: &Env, args: Vec<String>) -> Result<bool> {
    guard(env, || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Ok(shardid::cli::wants_stdin(&args))
    })
}
