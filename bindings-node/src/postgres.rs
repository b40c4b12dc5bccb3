//! The core's lease protocol (`shardid::sql::LeaseProtocol`), for `database-lease.js` to run
//! with `pg`, `mysql2` or a SQLite driver, and the PostgreSQL DDL of `next_id()`.

use napi::bindgen_prelude::{BigInt, Either, JsValue, Unknown};
use napi::{Env, Result, ValueType};
use napi_derive::napi;
use shardid::args::Arg;
use shardid::sql::{
    Answer, Cell, Dialect, EmptyShards, LeaseKind, Next, Placeholders, SqlError, Value,
};

use crate::args::{type_of, u64_arg};
use crate::errors::{Class, Field, guard, invalid_argument, throw_kind};
use crate::layout::layout;
use crate::segment::sql_error;

/// A statement to execute: its text (`$n` placeholders; `?` on SQLite) and its parameters as
/// text, except on SQLite, where integers are bigints: SQLite compares a number with a text as
/// text (`max(ceiling, '100')` is the text), so a ceiling sent as text could go down.
#[napi(object)]
pub struct LeaseStatement {
    pub text: String,
    pub values: Vec<Either<String, BigInt>>,
}

/// What to do next: `action` is `'run'` (run `text` with `values`), `'taken'` (the lease is
/// taken: `shard`, `recorded` — the last holder's ceiling as a decimal string, if any — and,
/// for a session lease, `backend`), or `'raise'` (throw the error just fed, as it is).
#[napi(object)]
pub struct LeaseStep {
    pub action: String,
    pub text: Option<String>,
    pub values: Option<Vec<Either<String, BigInt>>>,
    pub shard: Option<u32>,
    pub recorded: Option<String>,
    pub backend: Option<String>,
}

/// The core's lease protocol (`shardid::sql::LeaseProtocol`), for `database-lease.js` to run
/// with `pg`, `mysql2` or a SQLite driver: `next()` says what to do, `feed()` / `fail()` what
/// the database answered. The steps, statements and parameters are the core's; the driver only
/// executes them.
#[napi]
pub struct LeaseProtocol {
    protocol: shardid::sql::LeaseProtocol,
}

/// `INVALID_ARGUMENT` for a table name or a range of shards the core refused.
fn table_error(env: &Env, e: &SqlError) -> napi::Error {
    if let SqlError::Core(e) = *e {
        return crate::errors::core_error(env, e);
    }
    if let SqlError::EmptyShards { first, end } = *e {
        let reason = EmptyShards { first, end }.to_string();
        return invalid_argument(env, Class::Range, "shards", &reason);
    }
    let (argument, reason) = match e {
        SqlError::TableName { reason } => ("table", *reason),
        SqlError::SchemaName { reason } => ("schema", *reason),
        _ => ("table", "is not a valid name"),
    };
    invalid_argument(
        env,
        Class::Range,
        argument,
        &format!("is not a valid name: {reason}"),
    )
}

/// A statement of the protocol's: integers as bigints on SQLite (`typed`), as text elsewhere
/// (`pg` and `mysql2` send text, the SQL casts it).
fn statement(sql: String, values: &[Value<'_>], typed: bool) -> LeaseStatement {
    LeaseStatement {
        text: sql,
        values: values
            .iter()
            .map(|value| match value {
                Value::Text(text) => Either::A((*text).to_owned()),
                Value::Int(n) if typed => Either::B(BigInt::from(*n)),
                Value::Int(n) => Either::A(n.to_string()),
            })
            .collect(),
    }
}

/// A step with only its action set.
fn step(action: &str) -> LeaseStep {
    LeaseStep {
        action: action.into(),
        text: None,
        values: None,
        shard: None,
        recorded: None,
        backend: None,
    }
}

/// A column as the core reads it.
enum Column {
    Null,
    Bool(bool),
    Text(String),
}

impl Column {
    fn cell(&self) -> Cell<'_> {
        match self {
            Self::Null => Cell::Null,
            Self::Bool(b) => Cell::Bool(*b),
            Self::Text(t) => Cell::Text(t),
        }
    }
}

/// A row's columns (`None`: no row): numbers and bigints as their decimal text (MySQL's
/// `GET_LOCK` answers a negative number on a Galera node).
fn columns(env: &Env, row: Option<&[Unknown<'_>]>) -> Result<Option<Vec<Column>>> {
    let Some(row) = row else {
        return Ok(None);
    };
    let mut columns = Vec::with_capacity(row.len());
    for v in row {
        columns.push(match type_of(env, v.raw()) {
            ValueType::Undefined | ValueType::Null => Column::Null,
            // SAFETY: `v` is a boolean of this env.
            ValueType::Boolean => Column::Bool(unsafe { v.cast::<bool>() }?),
            // SAFETY: `v` is a string of this env.
            ValueType::String => Column::Text(unsafe { v.cast::<String>() }?),
            ValueType::Number => {
                // SAFETY: `v` is a number of this env.
                let n = unsafe { v.cast::<f64>() }?;
                #[allow(clippy::cast_possible_truncation)] // checked integral and in range
                if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
                    Column::Text((n as i64).to_string())
                } else {
                    Column::Text(u64_arg(env, v, "value", Arg::Id)?.to_string())
                }
            }
            // Bigints: their decimal text.
            _ => Column::Text(u64_arg(env, v, "value", Arg::Id)?.to_string()),
        });
    }
    Ok(Some(columns))
}

impl LeaseProtocol {
    /// Whether the statements' integers go as bigints (SQLite's; see [`LeaseStatement`]).
    fn typed(&self) -> bool {
        self.protocol.sql_dialect() == Dialect::Sqlite
    }
}

#[napi]
impl LeaseProtocol {
    /// Takes the first free shard of `first..end` on `table` for the layout at `layout_index`,
    /// with a lease of `kind` (`'expiring'` with `ttl_ms`, or `'session'`).
    #[napi(constructor)]
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        env: &Env,
        kind: String,
        ttl_ms: Unknown<'_>,
        layout_index: u32,
        table: String,
        first: Unknown<'_>,
        end: Unknown<'_>,
        holder: String,
        dialect: Option<String>,
        schema: Option<String>,
    ) -> Result<Self> {
        guard(env, || {
            let dialect = match dialect.as_deref() {
                None => Dialect::Postgres,
                Some(name) => Dialect::from_name(name).ok_or_else(|| {
                    invalid_argument(
                        env,
                        Class::Range,
                        "dialect",
                        &format!("must be one of {}", Dialect::NAMES),
                    )
                })?,
            };
            let layout = layout(env, layout_index)?;
            let ttl_ms = u64_arg(env, &ttl_ms, "ttlMs", Arg::Other)?;
            let kind = LeaseKind::parse(&kind, ttl_ms).map_err(|e| {
                let argument = match e.argument() {
                    "ttl_ms" => "ttlMs",
                    other => other,
                };
                invalid_argument(env, Class::Range, argument, &e.to_string())
            })?;
            let first = u64_arg(env, &first, "shards[0]", Arg::Shard)?;
            let end = u64_arg(env, &end, "shards[1]", Arg::Other)?;
            let protocol = shardid::sql::LeaseProtocol::new(
                kind,
                layout,
                &table,
                // SQLite's drivers take an array for `?` each; `?1` would need its index bound.
                if dialect == Dialect::Sqlite {
                    Placeholders::Question
                } else {
                    Placeholders::Numbered
                },
                first,
                end,
                &holder,
                &shardid::lease::new_token(),
            )
            .and_then(|p| p.schema(schema.as_deref()))
            .and_then(|p| p.dialect(dialect))
            .map_err(|e| table_error(env, &e))?;
            Ok(Self { protocol })
        })
    }

    /// What to do next; throws `NO_FREE_SHARD` when every shard is held.
    #[napi]
    pub fn next(&self, env: &Env) -> Result<LeaseStep> {
        guard(env, || match self.protocol.next() {
            Next::Run { sql, params } => {
                let run = statement(sql, &params, self.typed());
                Ok(LeaseStep {
                    text: Some(run.text),
                    values: Some(run.values),
                    ..step("run")
                })
            }
            Next::Taken {
                shard,
                recorded,
                backend,
            } => Ok(LeaseStep {
                // Shards of a layout the JS side accepts fit a u32.
                shard: Some(u32::try_from(shard).unwrap_or(u32::MAX)),
                recorded: recorded.map(|units| units.to_string()),
                backend: backend.map(str::to_owned),
                ..step("taken")
            }),
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
            Next::Raise => Ok(step("raise")),
            Next::Refuse { reason } => Err(throw_kind(
                env,
                shardid::ErrorKind::Unsupported,
                &[("reason", Field::Text(reason))],
            )),
            Next::Invalid { argument, reason } => Err(crate::errors::invalid_argument(
                env,
                crate::errors::Class::Plain,
                argument,
                &reason,
            )),
            Next::ClockSkew { ahead_ms, max_ms } => Err(throw_kind(
                env,
                shardid::ErrorKind::ClockSkew,
                &[
                    ("ahead_ms", Field::Int(ahead_ms)),
                    ("max_ms", Field::Int(max_ms)),
                ],
            )),
            Next::Corrupt { reason } => Err(throw_kind(
                env,
                shardid::ErrorKind::Database,
                &[("reason", Field::Text(&reason))],
            )),
        })
    }

    /// Feeds the first row the last statement returned (`null`: no row), as `pg` returns it
    /// with `rowMode: 'array'` (integers may come as strings); on MySQL a statement without
    /// rows is answered `[affectedRows, insertId]`.
    #[napi]
    pub fn feed(&mut self, env: &Env, row: Option<Vec<Unknown<'_>>>) -> Result<()> {
        guard(env, || {
            match columns(env, row.as_deref())? {
                None => self.protocol.feed(Answer::NoRow),
                Some(columns) => {
                    let cells: Vec<Cell<'_>> = columns.iter().map(Column::cell).collect();
                    self.protocol.feed(Answer::Row(&cells));
                }
            }
            Ok(())
        })
    }

    /// Whether the answer to `renew`, `record` or `release` (a row, or `null`) says the lease
    /// is still held: `false` means it is lost.
    #[napi]
    pub fn kept(&self, env: &Env, row: Option<Vec<Unknown<'_>>>) -> Result<bool> {
        guard(env, || {
            Ok(match columns(env, row.as_deref())? {
                None => self.protocol.kept(Answer::NoRow),
                Some(columns) => {
                    let cells: Vec<Cell<'_>> = columns.iter().map(Column::cell).collect();
                    self.protocol.kept(Answer::Row(&cells))
                }
            })
        })
    }

    /// How far this host's clock was ahead of the database's by the answer to the last
    /// `renew` (a row, or `null`), in ms, when beyond the skew a lease allows: the lease must
    /// stop. `null`: within it. `renew` notes the client's clock: make it for each renewal.
    #[napi]
    pub fn clock_ahead(&self, env: &Env, row: Option<Vec<Unknown<'_>>>) -> Result<Option<f64>> {
        guard(env, || {
            let ahead = match columns(env, row.as_deref())? {
                None => self.protocol.clock_ahead(Answer::NoRow),
                Some(columns) => {
                    let cells: Vec<Cell<'_>> = columns.iter().map(Column::cell).collect();
                    self.protocol.clock_ahead(Answer::Row(&cells))
                }
            };
            #[allow(clippy::cast_precision_loss)] // milliseconds of skew: far below 2^53
            Ok(ahead.map(|ms| ms as f64))
        })
    }

    /// The SQL the statements are rendered in: `'postgres'`, `'mariadb'`, or `'mysql'` (also
    /// once a MySQL server refused MariaDB's).
    #[napi(getter)]
    pub fn dialect(&self, env: &Env) -> Result<&'static str> {
        guard(env, || Ok(self.protocol.sql_dialect().name()))
    }

    /// The last statement failed with this SQLSTATE (`null`: the error had none).
    #[napi]
    pub fn fail(&mut self, env: &Env, code: Option<String>) -> Result<()> {
        guard(env, || {
            // Only SQLSTATEs (5 characters) and MySQL's error numbers are the database's; `pg`
            // puts Node's own codes (ECONNREFUSED) in the same field.
            let code = code.filter(|c| {
                c.len() == 5 && c.bytes().all(|b| b.is_ascii_alphanumeric())
                    || !c.is_empty() && c.len() <= 5 && c.bytes().all(|b| b.is_ascii_digit())
            });
            self.protocol.feed(Answer::Error(code.as_deref()));
            Ok(())
        })
    }

    /// A `renew`, `record` or `release` failed with the error `code` after `resent` resends:
    /// the milliseconds to wait before sending it again, or `null` to throw the error.
    #[napi]
    pub fn resend_after(
        &self,
        env: &Env,
        code: Option<String>,
        resent: u32,
    ) -> Result<Option<u32>> {
        guard(env, || {
            Ok(self
                .protocol
                .resend_after(code.as_deref(), resent)
                .map(|ms| u32::try_from(ms).unwrap_or(u32::MAX)))
        })
    }

    /// `'expiring'` or `'session'`.
    #[napi(getter)]
    pub fn kind(&self, env: &Env) -> Result<&'static str> {
        guard(env, || {
            Ok(match self.protocol.kind() {
                LeaseKind::Session => "session",
                _ => "expiring",
            })
        })
    }

    /// The statement that renews an expiring lease (a row back: still held); `null` for a
    /// session lease.
    #[napi]
    pub fn renew(&self, env: &Env, shard: Unknown<'_>) -> Result<Option<LeaseStatement>> {
        guard(env, || {
            let shard = u64_arg(env, &shard, "shard", Arg::Shard)?;
            Ok(self
                .protocol
                .renew(shard)
                .map(|(sql, params)| statement(sql, &params, self.typed())))
        })
    }

    /// The statement that records a ceiling of `units` for `shard` while the lease is held (a
    /// row back; none: the lease is lost).
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
            let (sql, params) = self.protocol.record(shard, units);
            Ok(statement(sql, &params, self.typed()))
        })
    }

    /// The statement that frees `shard` at once.
    #[napi]
    pub fn release(&self, env: &Env, shard: Unknown<'_>) -> Result<LeaseStatement> {
        guard(env, || {
            let shard = u64_arg(env, &shard, "shard", Arg::Shard)?;
            let (sql, params) = self.protocol.release(shard);
            Ok(statement(sql, &params, self.typed()))
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
        next_id_ddl(
            env,
            layout_index,
            &shard,
            &schema,
            backwards_tolerance_ms,
            max_borrow_units,
            || Ok(Dialect::Postgres),
        )
    })
}

/// The DDL of `next_id()` for PostgreSQL or the MySQL family (`postgresDdl`, `mysqlDdl`): the
/// layout, shard and options checked first, then the `dialect`. Call it inside `guard`.
pub(crate) fn next_id_ddl(
    env: &Env,
    layout_index: u32,
    shard: &Unknown<'_>,
    schema: &str,
    backwards_tolerance_ms: Option<Unknown<'_>>,
    max_borrow_units: Option<Unknown<'_>>,
    dialect: impl FnOnce() -> Result<Dialect>,
) -> Result<String> {
    let (layout, shard, options) = crate::args::generator_args(
        env,
        layout_index,
        shard,
        backwards_tolerance_ms,
        max_borrow_units,
    )?;
    match dialect()? {
        Dialect::Postgres => shardid::sql::Postgres::new(layout, shard, schema)
            .map(|ddl| ddl.options(options).to_string()),
        dialect => shardid::sql::Mysql::new(layout, shard, schema)
            .map(|ddl| ddl.options(options).dialect(dialect).to_string()),
    }
    .map_err(|e| sql_error(env, e))
}

/// The DDL of public IDs in PostgreSQL for IDs of a layout (the core's
/// `shardid::sql::PostgresPublicIds`), for `publicIdsDdl()` of `shardid/postgres`.
#[napi]
pub fn public_ids_ddl(env: &Env, layout_index: u32, schema: String) -> Result<String> {
    guard(env, || {
        let layout = layout(env, layout_index)?;
        shardid::sql::PostgresPublicIds::new(layout, &schema)
            .map(|ddl| ddl.to_string())
            .map_err(|e| sql_error(env, e))
    })
}
