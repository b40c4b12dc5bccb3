//! The core's protocol for taking a PostgreSQL shard lease (`shardid::sql::Acquire`), for
//! `postgres.js` to run with `pg`: `next()` gives the statement to execute (or `null` once the
//! lease is taken), `feed()` the first column of its first row. The steps, statements and
//! parameters are the core's; the driver only executes them.

use napi::bindgen_prelude::{JsValue, Unknown};
use napi::{Env, Result, ValueType};
use napi_derive::napi;
use shardid::Layout;
use shardid::args::Arg;
use shardid::sql::{Acquire, Action, Fed, Param, Params, Placeholders, PostgresLease, SqlError};

use crate::args::{type_of, u64_arg};
use crate::errors::{Class, Field, invalid_argument, throw_kind};
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
    layout: Layout,
    table: String,
    holder: String,
    key: String,
    signature: String,
    acquire: Acquire,
}

fn table_error(env: &Env, e: &SqlError) -> napi::Error {
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

impl PostgresLeaseProtocol {
    fn lease(&self) -> PostgresLease<'_> {
        PostgresLease::new(self.layout, &self.table, Placeholders::Numbered)
            .expect("the table name was checked by the constructor")
    }

    fn values(&self, params: &Params) -> Vec<String> {
        params
            .as_slice()
            .iter()
            .map(|param| match param {
                Param::Key => self.key.clone(),
                Param::Signature => self.signature.clone(),
                Param::Holder => self.holder.clone(),
                Param::Shard(n) | Param::Units(n) => n.to_string(),
            })
            .collect()
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
        let layout = layout(env, layout_index)?;
        let first = u64_arg(env, &first, "shards[0]", Arg::Shard)?;
        let end = u64_arg(env, &end, "shards[1]", Arg::Other)?;
        let lease = PostgresLease::new(layout, &table, Placeholders::Numbered)
            .map_err(|e| table_error(env, &e))?;
        let (key, signature) = (lease.key().to_string(), lease.signature().to_string());
        Ok(Self {
            layout,
            table,
            holder,
            key,
            signature,
            acquire: Acquire::new(first, end),
        })
    }

    /// The statement to execute next, or `null` once the lease is taken (see `taken`); throws
    /// `NO_FREE_SHARD` when every shard is held.
    #[napi]
    pub fn next(&self, env: &Env) -> Result<Option<LeaseStatement>> {
        let lease = self.lease();
        match self.acquire.next(&lease) {
            Action::Run {
                statement,
                params,
                tolerate,
            } => Ok(Some(LeaseStatement {
                text: statement.to_string(),
                values: self.values(&params),
                tolerate: tolerate.iter().map(|s| (*s).to_owned()).collect(),
            })),
            Action::Taken { .. } => Ok(None),
            Action::NoFreeShard { first, end } => {
                let held_in = format!("table {}", self.table);
                Err(throw_kind(
                    env,
                    shardid::ErrorKind::NoFreeShard,
                    &[
                        ("first", Field::Int(first)),
                        ("end", Field::Int(end)),
                        ("held_in", Field::Text(&held_in)),
                    ],
                ))
            }
        }
    }

    /// Feeds the first column of the first row the last statement returned (`null`: no row).
    #[napi]
    pub fn feed(&mut self, env: &Env, value: Option<Unknown<'_>>) -> Result<()> {
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
        self.acquire.feed(fed);
        Ok(())
    }

    /// The lease once taken, else `null`.
    #[napi(getter)]
    pub fn taken(&self) -> Option<LeaseTaken> {
        match self.acquire.next(&self.lease()) {
            Action::Taken { shard, recorded } => Some(LeaseTaken {
                shard: u32::try_from(shard).unwrap_or(u32::MAX),
                recorded: recorded.map(|units| units.to_string()),
            }),
            _ => None,
        }
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
        let shard = u64_arg(env, &shard, "shard", Arg::Shard)?;
        let units = u64_arg(env, &units, "units", Arg::Other)?;
        let lease = self.lease();
        Ok(LeaseStatement {
            text: lease.record().to_string(),
            values: self.values(&lease.record_params(shard, units)),
            tolerate: Vec::new(),
        })
    }
}
