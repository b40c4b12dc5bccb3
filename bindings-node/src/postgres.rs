//! The core's protocol for taking a PostgreSQL shard lease (`shardid::sql::Acquire`), for
//! `postgres.js` to run with `pg`: `next()` gives the statement to execute (or `null` once the
//! lease is taken), `feed()` the first column of its first row. The steps, statements and
//! parameters are the core's; the driver only executes them.

use napi::bindgen_prelude::{JsValue, Unknown};
use napi::{Env, Result, ValueType};
use napi_derive::napi;
use shardid::args::Arg;
use shardid::sql::{EmptyShards, Fed, LeaseDriver, Next, Placeholders, SqlError, Value};

use crate::args::{type_of, u64_arg};
use crate::errors::{Class, Field, guard, invalid_argument, throw_kind};
use crate::layout::layout;

/// A statement to execute: its text (`$n` placeholders), its parameters as text, and the
/// SQLSTATEs that are not errors for it.
#[napi(object)]
pub struct LeaseStatement {
    pub text: String,
    pub values: Vec<String>,
    pub tolerate: Vec<String>,
}

/// The lease once taken: the shard, and the ceiling its last holder recorded (a decimal
/// string), if any.
#[napi(object)]
pub struct LeaseTaken {
    pub shard: u32,
    pub recorded: Option<String>,
}

/// See the module docs.
#[napi]
pub struct PostgresLeaseProtocol {
    driver: LeaseDriver,
}

/// `INVALID_ARGUMENT` for a table name or a range of shards the core refused.
fn table_error(env: &Env, e: &SqlError) -> napi::Error {
    if let SqlError::EmptyShards { first, end } = *e {
        let reason = EmptyShards { first, end }.to_string();
        return invalid_argument(env, Class::Range, "shards", &reason);
    }
    let reason = match e {
        SqlError::TableName { reason } => reason,
        _ => "is not a valid name",
    };
    invalid_argument(
        env,
        Class::Range,
        "table",
        &format!("is not a valid name: {reason}"),
    )
}

fn statement(sql: String, values: &[Value<'_>], tolerate: &[&str]) -> LeaseStatement {
    LeaseStatement {
        text: sql,
        values: values
            .iter()
            .map(|value| match value {
                Value::Text(text) => (*text).to_owned(),
                Value::Int(n) => n.to_string(),
            })
            .collect(),
        tolerate: tolerate.iter().map(|s| (*s).to_owned()).collect(),
    }
}

#[napi]
impl PostgresLeaseProtocol {
    /// Takes the first free shard of `first..end` on `table` for the layout at `layout_index`.
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        layout_index: u32,
        table: String,
        first: Unknown<'_>,
        end: Unknown<'_>,
        holder: String,
    ) -> Result<Self> {
        guard(env, || {
            let layout = layout(env, layout_index)?;
            let first = u64_arg(env, &first, "shards[0]", Arg::Shard)?;
            let end = u64_arg(env, &end, "shards[1]", Arg::Other)?;
            let driver =
                LeaseDriver::new(layout, &table, Placeholders::Numbered, first, end, &holder)
                    .map_err(|e| table_error(env, &e))?;
            Ok(Self { driver })
        })
    }

    /// The statement to execute next, or `null` once the lease is taken (see `taken`); throws
    /// `NO_FREE_SHARD` when every shard is held.
    #[napi]
    pub fn next(&self, env: &Env) -> Result<Option<LeaseStatement>> {
        guard(env, || match self.driver.next() {
            Next::Run {
                sql,
                params,
                tolerate,
            } => Ok(Some(statement(sql, &params, tolerate))),
            Next::Taken { .. } => Ok(None),
            Next::NoFreeShard {
                first,
                end,
                held_in,
            } => Err(throw_kind(
                env,
                shardid::ErrorKind::NoFreeShard,
                &[
                    ("first", Field::Int(first)),
                    ("end", Field::Int(end)),
                    ("held_in", Field::Text(&held_in)),
                ],
            )),
        })
    }

    /// Feeds the first column of the first row the last statement returned (`null`: no row).
    #[napi]
    pub fn feed(&mut self, env: &Env, value: Option<Unknown<'_>>) -> Result<()> {
        guard(env, || {
            let fed = match value {
                None => Fed::Nothing,
                Some(v) => match type_of(env, v.raw()) {
                    ValueType::Undefined | ValueType::Null => Fed::Nothing,
                    // SAFETY: `v` is a boolean of this env.
                    ValueType::Boolean => Fed::Bool(unsafe { v.cast::<bool>() }?),
                    // int8 columns arrive as decimal strings from `pg`.
                    _ => Fed::Int(u64_arg(env, &v, "value", Arg::Id)?),
                },
            };
            self.driver.feed(fed);
            Ok(())
        })
    }

    /// The lease once taken, else `null`.
    #[napi(getter)]
    pub fn taken(&self, env: &Env) -> Result<Option<LeaseTaken>> {
        guard(env, || {
            Ok(match self.driver.next() {
                Next::Taken { shard, recorded } => Some(LeaseTaken {
                    shard: u32::try_from(shard).unwrap_or(u32::MAX),
                    recorded: recorded.map(|units| units.to_string()),
                }),
                _ => None,
            })
        })
    }

    /// The statement that records a ceiling of `units` for `shard`, only while this session
    /// holds its lock (one row updated; none: the lease is lost).
    #[napi]
    pub fn record(
        &self,
        env: &Env,
        shard: Unknown<'_>,
        units: Unknown<'_>,
    ) -> Result<LeaseStatement> {
        guard(env, || {
            let shard = u64_arg(env, &shard, "shard", Arg::Shard)?;
            let units = u64_arg(env, &units, "units", Arg::Other)?;
            let (sql, params) = self.driver.record(shard, units);
            Ok(statement(sql, &params, &[]))
        })
    }
}

/// The DDL of `<schema>.next_id()` and the decoding functions for a layout and shard (the
/// core's `shardid::sql::Postgres`), for `ddl()` of `shardid/postgres`.
#[napi]
pub fn postgres_ddl(
    env: &Env,
    layout_index: u32,
    shard: Unknown<'_>,
    schema: String,
    backwards_tolerance_ms: Option<Unknown<'_>>,
    max_borrow_units: Option<Unknown<'_>>,
) -> Result<String> {
    guard(env, || {
        let layout = layout(env, layout_index)?;
        let shard = u64_arg(env, &shard, "shard", Arg::Shard)?;
        let options = crate::args::options_arg(env, backwards_tolerance_ms, max_borrow_units)?;
        match shardid::sql::Postgres::new(layout, shard, &schema) {
            Ok(ddl) => Ok(ddl.options(options).to_string()),
            Err(SqlError::Core(e)) => Err(crate::errors::core_error(env, e)),
            Err(e) => Err(crate::segment::schema_error(env, &e)),
        }
    })
}

/// The DDL of public IDs in PostgreSQL for IDs of a layout (the core's
/// `shardid::sql::PostgresPublicIds`), for `publicIdsDdl()` of `shardid/postgres`.
#[napi]
pub fn public_ids_ddl(env: &Env, layout_index: u32, schema: String) -> Result<String> {
    guard(env, || {
        let layout = layout(env, layout_index)?;
        match shardid::sql::PostgresPublicIds::new(layout, &schema) {
            Ok(ddl) => Ok(ddl.to_string()),
            Err(SqlError::Core(e)) => Err(crate::errors::core_error(env, e)),
            Err(e) => Err(crate::segment::schema_error(env, &e)),
        }
    })
}
