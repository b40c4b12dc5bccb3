//! `shardid status`: the core's statements, rows and report (`shardid::sql::status`), run by
//! `status.js` on pg, mysql2 or better-sqlite3. Nothing is computed here.

// napi hands over owned arguments.
#![allow(clippy::needless_pass_by_value)]

use napi::{Env, Result};
use napi_derive::napi;
use shardid::cli::StatusRun as Run;
use shardid::sql::status::Row;

use crate::cli::CliOutput;
use crate::errors::{Class, guard, invalid_argument};

fn output(out: shardid::cli::Output) -> CliOutput {
    CliOutput {
        stdout: out.stdout,
        stderr: out.stderr,
        code: out.code,
    }
}

/// The (stdout, stderr, exit status) of `shardid status ...` with arguments it refuses, or
/// `null` when they are fine (then `StatusRun.fromArgs`).
#[napi]
pub fn cli_status_usage(env: &Env, args: Vec<String>) -> Result<Option<CliOutput>> {
    guard(env, || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Ok(shardid::cli::status(&args).err().map(output))
    })
}

/// A run of `shardid status` (`shardid::cli::StatusRun`): `next()` a statement, `feed(rows)`
/// its rows as text cells, then `output()` (the command line's) or `reportJson()`.
#[napi]
pub struct StatusRun {
    inner: Run,
}

#[napi]
impl StatusRun {
    /// A run on a connection the caller has, of `family` (`'postgres'`, `'mysql'` or
    /// `'sqlite'`; `url` only names the database in errors), or when `family` is `null` on the
    /// database `url` names (the core's rule: `StatusRun::on_connection`). A schema `null` is
    /// the family's default (the lease table's: as a lease finds it). `INVALID_ARGUMENT`
    /// for what the core refuses.
    #[napi(constructor)]
    #[allow(clippy::too_many_arguments)] // the API's options, passed through
    pub fn new(
        env: &Env,
        family: Option<String>,
        url: String,
        table: String,
        lease_schema: Option<String>,
        segments_schema: Option<String>,
        dictionary_schema: Option<String>,
        layout_index: u32,
    ) -> Result<Self> {
        guard(env, || {
            let layout = crate::layout::layout(env, layout_index)?;
            Run::on_connection(
                family.as_deref(),
                &url,
                &table,
                lease_schema.as_deref(),
                segments_schema.as_deref(),
                dictionary_schema.as_deref(),
                layout,
            )
            .map(|inner| Self { inner })
            .map_err(|(argument, reason)| invalid_argument(env, Class::Range, argument, &reason))
        })
    }

    /// The run of `shardid status ...`'s arguments (checked by `cliStatusUsage` first).
    #[napi(factory)]
    pub fn from_args(env: &Env, args: Vec<String>) -> Result<Self> {
        guard(env, || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            shardid::cli::status(&args)
                .map(|inner| Self { inner })
                .map_err(|out| invalid_argument(env, Class::Range, "args", out.stderr.trim_end()))
        })
    }

    /// The URL the command line was given.
    #[napi(getter)]
    pub fn url(&self, env: &Env) -> Result<String> {
        guard(env, || Ok(self.inner.url().into()))
    }

    /// `'postgres'`, `'mysql'` or `'sqlite'`: which driver runs the statements.
    #[napi(getter)]
    pub fn family(&self, env: &Env) -> Result<&'static str> {
        guard(env, || Ok(self.inner.family().family_name()))
    }

    /// The file of a `sqlite:` URL, opened read-only (for writing under `restored`); `null` for
    /// the other databases.
    #[napi(getter)]
    pub fn sqlite_path(&self, env: &Env) -> Result<Option<String>> {
        guard(env, || Ok(self.inner.sqlite_path().map(Into::into)))
    }

    /// Whether this is `shardid restored`, which marks rows (a SQLite file is opened for writing).
    #[napi(getter)]
    pub fn marks_restored(&self, env: &Env) -> Result<bool> {
        guard(env, || Ok(self.inner.marks_restored()))
    }

    /// The next statement, or `null` when done.
    #[napi]
    pub fn next(&self, env: &Env) -> Result<Option<String>> {
        guard(env, || Ok(self.inner.next()))
    }

    /// The rows of the last statement, as text or `null` cells.
    #[napi]
    pub fn feed(&mut self, env: &Env, rows: Vec<Row>) -> Result<()> {
        guard(env, || {
            self.inner
                .feed(&rows)
                .map_err(|why| invalid_argument(env, Class::Range, "rows", &why))
        })
    }

    /// The command line's output.
    #[napi]
    pub fn output(&self, env: &Env) -> Result<CliOutput> {
        guard(env, || Ok(output(self.inner.output())))
    }

    /// The output when the database could not be read: `why`, exit status 2.
    #[napi]
    pub fn failed(&self, env: &Env, why: String) -> Result<CliOutput> {
        guard(env, || Ok(output(self.inner.failed(&why))))
    }

    /// The report as text.
    #[napi]
    pub fn report_text(&self, env: &Env) -> Result<String> {
        guard(env, || Ok(self.inner.report_text()))
    }

    /// The report as JSON (schema version 1).
    #[napi]
    pub fn report_json(&self, env: &Env) -> Result<String> {
        guard(env, || Ok(self.inner.report_json()))
    }
}
