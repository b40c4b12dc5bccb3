//! `shardid status`: the core's statements, rows and report (`shardid::sql::status`), run by
//! `status.js` on pg, mysql2 or better-sqlite3. Nothing is computed here.

// napi hands over owned arguments.
#![allow(clippy::needless_pass_by_value)]

use napi::{Env, Result};
use napi_derive::napi;
use shardid::cli::StatusRun as Run;
use shardid::sql::Dialect;
use shardid::sql::SqlError;
use shardid::sql::status::{Row, StatusReader, default_schemas};

use crate::cli::CliOutput;
use crate::errors::{Class, guard, invalid_argument};

fn output(out: shardid::cli::Output) -> CliOutput {
    CliOutput {
        stdout: out.stdout,
        stderr: out.stderr,
        code: out.code,
    }
}

fn name_error(env: &Env, e: &SqlError) -> napi::Error {
    let (argument, reason) = match e {
        SqlError::TableName { reason } => ("table", *reason),
        SqlError::SchemaName { reason } => ("schema", *reason),
        _ => ("schema", "is not a valid name"),
    };
    invalid_argument(
        env,
        Class::Range,
        argument,
        &format!("is not a valid name: {reason}"),
    )
}

/// The core's reader, a schema `None` being the family's default.
/// The run on a connection to `url` of `family` (both constructors, once the family is known):
/// the tables in `table` and the schemas given, a schema `None` the family's default.
fn on_connection(
    env: &Env,
    url: &str,
    family: Dialect,
    table: &str,
    segments_schema: Option<&str>,
    dictionary_schema: Option<&str>,
    layout_index: u32,
) -> Result<StatusRun> {
    let layout = crate::layout::layout(env, layout_index)?;
    let (segments, dictionary) = default_schemas(family);
    StatusReader::new(
        family,
        table,
        segments_schema.unwrap_or(segments),
        dictionary_schema.unwrap_or(dictionary),
        layout,
    )
    .map(|reader| StatusRun {
        inner: Run::new(url, reader),
    })
    .map_err(|e| name_error(env, &e))
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
    /// A run on a connection the caller has: `family` `'postgres'`, `'mysql'` or `'sqlite'`;
    /// `url` only names the database in errors. A schema `null` is the family's default (`seg`
    /// and `dict`; `main` on SQLite).
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        family: String,
        url: String,
        table: String,
        segments_schema: Option<String>,
        dictionary_schema: Option<String>,
        layout_index: u32,
    ) -> Result<Self> {
        guard(env, || {
            let family = match family.as_str() {
                "postgres" => Dialect::Postgres,
                "mysql" => Dialect::Mysql,
                "sqlite" => Dialect::Sqlite,
                _ => {
                    return Err(invalid_argument(
                        env,
                        Class::Range,
                        "family",
                        "is postgres, mysql or sqlite",
                    ));
                }
            };
            on_connection(
                env,
                &url,
                family,
                &table,
                segments_schema.as_deref(),
                dictionary_schema.as_deref(),
                layout_index,
            )
        })
    }

    /// A run on a connection to `url`, the family read from its scheme by the core
    /// (`Dialect::of_url`, the one rule of every client and the command line); another scheme,
    /// or a `sqlite:` URL that names no file, is `INVALID_ARGUMENT`.
    #[napi(factory)]
    pub fn for_url(
        env: &Env,
        url: String,
        table: String,
        segments_schema: Option<String>,
        dictionary_schema: Option<String>,
        layout_index: u32,
    ) -> Result<Self> {
        guard(env, || {
            let family = shardid::cli::status_family(&url)
                .map_err(|why| invalid_argument(env, Class::Range, "database", &why))?;
            on_connection(
                env,
                &url,
                family,
                &table,
                segments_schema.as_deref(),
                dictionary_schema.as_deref(),
                layout_index,
            )
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
