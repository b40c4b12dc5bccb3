//! Dense IDs from database segments: the core's allocator (`shardid::segment`) and the
//! segments' SQL, for `segments.js` to drive with `pg`. The hot path is synchronous; fetches
//! are the JS side's, asynchronous.

use std::sync::Arc;

use napi::bindgen_prelude::{BigInt, BigUint64Array, Either, Unknown};
use napi::{Env, Result};
use napi_derive::napi;
use shardid::args::Arg;
use shardid::segment::protocol::{Command, Failure, Step};
use shardid::segment::{Empty, Fetch, Segment, SegmentAllocator, SizePolicy};
use shardid::sql::{Cell, Dialect, Placeholders, Segments, SqlError};

use crate::args::{ids_for, u64_arg};
use crate::errors::{Class, guard, invalid_argument};
use crate::slots::{own, owned};
use napi::bindgen_prelude::External;

/// An allocator, owned by its JS `DenseIds` (an `External`: `slots::own`). Shared with the
/// core's list of live objects, which exporters read: `segment_unregister` (on `close()`)
/// retires it there; an allocator never closed leaves that list when it is collected.
pub(crate) struct Entry(Arc<SegmentAllocator>);

/// Registers this module instance's fetch signal, a `Float64Array` of 3, unless it has one
/// (see `instance.rs`); returns the one registered. A call that makes a fetch due writes its
/// size there (-1: none), so the hot path returns a bare `bigint` and JavaScript checks one
/// typed-array slot. Serials also write a fetch's token in the second slot and 1 in the third
/// when a period waits to be given back (`serial.rs`).
#[napi(ts_args_type = "signal: Float64Array", ts_return_type = "Float64Array")]
pub fn set_segment_signal<'a>(env: &'a Env, signal: Unknown<'_>) -> Result<Unknown<'a>> {
    guard(env, || {
        crate::instance::register(env, crate::instance::Buffer::Signal, &signal)
    })
}

/// Writes each `(index, value)` into this module instance's signal (nothing without one, or
/// past its length).
pub(crate) fn signal_values(env: &Env, values: &[(usize, f64)]) {
    let Some((out, len)) = crate::instance::buffer(env, crate::instance::Buffer::Signal) else {
        return;
    };
    for &(i, value) in values {
        if i < len {
            // SAFETY: `out` came from `set_segment_signal` in this env: a Float64Array of `len`
            // elements the env holds strongly, and no JavaScript runs during this call.
            unsafe {
                *out.add(i) = value;
            }
        }
    }
}

/// Tells the JS side that `fetch` is due.
fn signal(env: &Env, fetch: Option<Fetch>) {
    if let Some(fetch) = fetch {
        #[allow(clippy::cast_precision_loss)] // sizes are at most 2^40
        signal_values(env, &[(0, fetch.size as f64)]);
    }
}

fn allocator<'a>(env: &Env, index: &Unknown<'a>) -> Result<&'a SegmentAllocator> {
    owned::<Entry>(env, index)
        .map(|e| &*e.0)
        .ok_or_else(|| invalid_argument(env, Class::Type, "ids", "is not a shardid DenseIds"))
}

/// The segments' size policy of an allocator (`DenseIds`' and `Serials`'): `minSize`,
/// `maxSize` and `targetMs`, checked.
pub(crate) fn size_policy(
    env: &Env,
    min_size: &Unknown<'_>,
    max_size: &Unknown<'_>,
    target_ms: &Unknown<'_>,
) -> Result<SizePolicy> {
    let min = u64_arg(env, min_size, "minSize", Arg::Other)?;
    let max = u64_arg(env, max_size, "maxSize", Arg::Other)?;
    let target = u64_arg(env, target_ms, "targetMs", Arg::Other)?;
    if min == 0 || max < min || max > shardid::sql::MAX_SEGMENT {
        return Err(invalid_argument(
            env,
            Class::Range,
            "minSize",
            "must be at least 1 and at most maxSize, itself at most 2^40",
        ));
    }
    Ok(SizePolicy::new().bounds(min, max).target_ms(target))
}

/// A new allocator with this size policy, for `tag` in `schema` (reported to exporters under
/// those labels until `segment_unregister`), for the JS object to hold.
#[napi(ts_return_type = "object")]
pub fn segment_new(
    env: &Env,
    min_size: Unknown<'_>,
    max_size: Unknown<'_>,
    target_ms: Unknown<'_>,
    schema: String,
    tag: String,
) -> Result<External<Entry>> {
    guard(env, || {
        let policy = size_policy(env, &min_size, &max_size, &target_ms)?;
        let allocator = Arc::new(SegmentAllocator::new(policy));
        shardid::stats::register_segments(&allocator, &schema, &tag);
        Ok(own(Entry(allocator)))
    })
}

/// Stops reporting the allocator to exporters: it was closed (or never started). Python's
/// closed allocator is dropped; this one lives on until its JS object is collected.
#[napi]
pub fn segment_unregister(env: &Env, index: Unknown<'_>) -> Result<()> {
    guard(env, || {
        let entry = owned::<Entry>(env, &index).ok_or_else(|| {
            invalid_argument(env, Class::Type, "ids", "is not a shardid DenseIds")
        })?;
        shardid::stats::unregister_segments(&entry.0);
        Ok(())
    })
}

/// One ID, or `null` when both segments are used up; a fetch that is due is signalled.
#[napi]
pub fn segment_next_id(env: &Env, index: Unknown<'_>) -> Result<Option<u64>> {
    guard(env, || {
        let a = allocator(env, &index)?;
        match a.next_id_with(shardid::now_ms) {
            Ok((id, fetch)) => {
                signal(env, fetch);
                Ok(Some(id))
            }
            Err(Empty::Fetch(fetch)) => {
                signal(env, Some(fetch));
                Ok(None)
            }
            Err(Empty::Wait) => Ok(None),
        }
    })
}

/// Up to `n` IDs (fewer when both segments run out); a fetch that is due is signalled.
#[napi]
pub fn segment_next_ids(env: &Env, index: Unknown<'_>, n: Unknown<'_>) -> Result<BigUint64Array> {
    guard(env, || {
        let a = allocator(env, &index)?;
        let mut ids = ids_for(env, &n)?;
        let (written, fetch) = a.next_ids_with(&mut ids, shardid::now_ms);
        signal(env, fetch);
        ids.truncate(written);
        Ok(BigUint64Array::new(ids))
    })
}

/// Hands the allocator the segment a fetch returned (decimal strings, as `pg` gives `int8`).
#[napi]
pub fn segment_fill(
    env: &Env,
    index: Unknown<'_>,
    first: Unknown<'_>,
    count: Unknown<'_>,
    stride: Unknown<'_>,
) -> Result<()> {
    guard(env, || {
        let a = allocator(env, &index)?;
        let segment = Segment {
            first: u64_arg(env, &first, "first", Arg::Id)?,
            count: u64_arg(env, &count, "count", Arg::Id)?,
            stride: u64_arg(env, &stride, "stride", Arg::Id)?,
        };
        a.fill(segment, shardid::now_ms()).map_err(|e| {
            invalid_argument(
                env,
                Class::Range,
                "segment",
                &format!("was refused by the allocator: {e:?}"),
            )
        })
    })
}

/// Signals the first fetch of a new allocator (or none, if one is there or under way).
#[napi]
pub fn segment_prime(env: &Env, index: Unknown<'_>) -> Result<()> {
    guard(env, || {
        signal(env, allocator(env, &index)?.prime(shardid::now_ms()));
        Ok(())
    })
}

/// What the allocator did: the core's counters in its table's order (`STATS.segments` in
/// core.generated.js names them).
#[napi]
pub fn segment_stats(env: &Env, index: Unknown<'_>) -> Result<BigUint64Array> {
    guard(env, || {
        Ok(BigUint64Array::new(
            allocator(env, &index)?.stats().values().to_vec(),
        ))
    })
}

/// The fetch failed: the next one starts after a backoff.
#[napi]
pub fn segment_fetch_failed(env: &Env, index: Unknown<'_>) -> Result<()> {
    guard(env, || {
        allocator(env, &index)?.fetch_failed(shardid::now_ms());
        Ok(())
    })
}

/// Whether a fetch is due or under way.
#[napi]
pub fn segment_fetching(env: &Env, index: Unknown<'_>) -> Result<bool> {
    guard(env, || Ok(allocator(env, &index)?.fetching()))
}

/// What is left to give back on a clean close.
#[napi(object)]
pub struct SegmentUnused {
    pub first: String,
    pub end: String,
    pub count: String,
    pub lost: String,
}

/// What is left to give back, or `null`.
#[napi]
pub fn segment_unused(env: &Env, index: Unknown<'_>) -> Result<Option<SegmentUnused>> {
    guard(env, || {
        Ok(allocator(env, &index)?.unused().map(|u| SegmentUnused {
            first: u.first.to_string(),
            end: u.end.to_string(),
            count: u.count.to_string(),
            lost: u.lost.to_string(),
        }))
    })
}

/// Counts what `segmentUnused` left as given back (`returned`) or as holes (the core's
/// `settle`: `skipped`).
#[napi]
pub fn segment_settle(env: &Env, index: Unknown<'_>, returned: bool) -> Result<()> {
    guard(env, || {
        let allocator = allocator(env, &index)?;
        if let Some(unused) = allocator.unused() {
            allocator.settle(unused, returned);
        }
        Ok(())
    })
}

/// The statements a segment driver sends (`$n` parameters, for `pg`).
#[napi(object)]
pub struct SegmentSql {
    /// `(tag, size)` → one row `(first, count, stride)`.
    pub take: String,
    /// `(tag, first, end)` → one boolean.
    pub give_back: String,
    /// `(tag, first)`.
    pub create_tag: String,
}

/// The error of a statement the core would not render: the core's own (a bad layout or
/// shard), or `INVALID_ARGUMENT` on the schema's name (`schema_error`).
pub(crate) fn sql_error(env: &Env, e: SqlError) -> napi::Error {
    match e {
        SqlError::Core(core) => crate::errors::core_error(env, core),
        other => schema_error(env, &other),
    }
}

pub(crate) fn schema_error(env: &Env, e: &SqlError) -> napi::Error {
    let reason = match e {
        SqlError::SchemaName { reason } => reason,
        _ => "is not a valid name",
    };
    invalid_argument(
        env,
        Class::Range,
        "schema",
        &format!("is not a valid name: {reason}"),
    )
}

/// The statements for segments in `schema`.
#[napi]
pub fn segment_sql(env: &Env, schema: String) -> Result<SegmentSql> {
    guard(env, || {
        let statements = Segments::new(&schema)
            .map_err(|e| schema_error(env, &e))?
            .statements(Placeholders::Numbered);
        Ok(SegmentSql {
            take: statements.take().to_string(),
            give_back: statements.give_back().to_string(),
            create_tag: statements.create_tag().to_string(),
        })
    })
}

/// The DDL of dense IDs from segments in `schema`, for ticket server `index` of `servers`.
#[napi]
pub fn segments_ddl(env: &Env, schema: String, servers: u32, index: u32) -> Result<String> {
    guard(env, || {
        Segments::new(&schema)
            .and_then(|ddl| ddl.ticket_server(u64::from(servers), u64::from(index)))
            .map(|ddl| ddl.to_string())
            .map_err(|e| sql_error(env, e))
    })
}

/// What a segment executor does next (`SegmentProtocol.next()`): `step` is `'connect'` (use
/// server `server`'s connection, then `connected(dialect)`), `'run'` (run `sql` with `values`
/// on server `server`, then `answer(row)` or `failed(code)`), `'segment'` (`segment`: `[first,
/// count, stride]` as decimal strings), `'givenBack'` (`returned`), `'failed'` (`driver`:
/// throw the last error fed; else the core's refusal: `kind`, `sqlstate`, `reason`) or
/// `'idle'`.
#[napi(object)]
pub struct SegmentStep {
    pub step: String,
    pub server: Option<u32>,
    pub sql: Option<String>,
    /// Texts as strings, integers as bigints (`pg` and `mysql2` send them as text, SQLite must
    /// compare integers with integers).
    pub values: Option<Vec<Either<String, BigInt>>>,
    pub segment: Option<Vec<String>>,
    pub returned: Option<bool>,
    pub driver: Option<bool>,
    pub kind: Option<String>,
    pub sqlstate: Option<String>,
    pub reason: Option<String>,
}

impl SegmentStep {
    fn of(step: &str) -> Self {
        Self {
            step: step.into(),
            server: None,
            sql: None,
            values: None,
            segment: None,
            returned: None,
            driver: None,
            kind: None,
            sqlstate: None,
            reason: None,
        }
    }
}

/// The core's take and give-back of segments (`shardid::segment::protocol::SegmentProtocol`),
/// for `segments.js` to run over `pg`, `mysql2` or a SQLite driver: the rotation across ticket
/// servers, each database's statements and steps, the MySQL family's resend of a take rolled
/// back whole and a serial period's first take are the core's; the executor only runs them.
#[napi]
pub struct SegmentProtocol {
    inner: shardid::segment::protocol::SegmentProtocol,
}

/// The core's dialect of a name the executor gives.
fn dialect_of(env: &Env, name: &str) -> Result<Dialect> {
    Dialect::from_name(name)
        .ok_or_else(|| invalid_argument(env, Class::Range, "dialect", "is not a dialect"))
}

/// A server's index as JavaScript gets it (the servers were counted in a `u32`).
fn index(server: usize) -> u32 {
    u32::try_from(server).unwrap_or(u32::MAX)
}

/// A decimal string as a `u64` (`INVALID_ARGUMENT` on `argument`).
fn decimal(env: &Env, text: &str, argument: &str) -> Result<u64> {
    shardid::parse_decimal(text.as_bytes())
        .ok_or_else(|| invalid_argument(env, Class::Range, argument, "must be a decimal integer"))
}

#[napi]
impl SegmentProtocol {
    /// The protocol of an allocator over `servers` ticket servers of `dialect` (`'postgres'`,
    /// `'mysql'`, `'mariadb'`, `'sqlite'`) whose `schema` holds the segments' DDL; statements
    /// with `$n` placeholders for `pg`, `?` for `mysql2` and SQLite's drivers.
    #[napi(constructor)]
    pub fn new(env: &Env, dialect: String, schema: String, servers: u32) -> Result<Self> {
        guard(env, || {
            let dialect = dialect_of(env, &dialect)?;
            let placeholders = match dialect {
                Dialect::Postgres => Placeholders::Numbered,
                _ => Placeholders::Question,
            };
            let inner = shardid::segment::protocol::SegmentProtocol::new(
                dialect,
                &schema,
                placeholders,
                servers as usize,
            )
            .map_err(|e| schema_error(env, &e))?;
            Ok(Self { inner })
        })
    }

    /// Starts a take of `size` (a decimal string; `"0"`: the size the row remembers) of `tag`.
    #[napi]
    pub fn take(&mut self, env: &Env, tag: String, size: String) -> Result<()> {
        guard(env, || {
            let size = decimal(env, &size, "size")?;
            self.inner.take(&tag, size);
            Ok(())
        })
    }

    /// Starts a take of `size` numbers of serial tag `tag`'s `period` (`''`: never resets).
    #[napi]
    pub fn take_period(
        &mut self,
        env: &Env,
        tag: String,
        period: String,
        size: String,
    ) -> Result<()> {
        guard(env, || {
            let size = decimal(env, &size, "size")?;
            self.inner.take_period(&tag, &period, size);
            Ok(())
        })
    }

    /// Starts giving `first..end` (decimal strings) of `tag` back to the last server taken from.
    #[napi]
    pub fn give_back(&mut self, env: &Env, tag: String, first: String, end: String) -> Result<()> {
        guard(env, || {
            let first = decimal(env, &first, "first")?;
            let end = decimal(env, &end, "end")?;
            self.inner.give_back(&tag, first, end);
            Ok(())
        })
    }

    /// What to do next.
    #[napi]
    pub fn next(&self, env: &Env) -> Result<SegmentStep> {
        guard(env, || {
            Ok(match self.inner.next() {
                Step::Connect { server } => SegmentStep {
                    server: Some(index(server)),
                    ..SegmentStep::of("connect")
                },
                Step::Run {
                    server,
                    command: Command::Sql { statement, values },
                } => SegmentStep {
                    server: Some(index(server)),
                    sql: Some(statement.into()),
                    values: Some(crate::step::values(&values)),
                    ..SegmentStep::of("run")
                },
                Step::Segment(s) => SegmentStep {
                    segment: Some([s.first, s.count, s.stride].map(|n| n.to_string()).to_vec()),
                    ..SegmentStep::of("segment")
                },
                Step::GivenBack(returned) => SegmentStep {
                    returned: Some(returned),
                    ..SegmentStep::of("givenBack")
                },
                Step::Failed(Failure::Refused {
                    kind,
                    sqlstate,
                    reason,
                }) => SegmentStep {
                    driver: Some(false),
                    kind: Some(kind.code().into()),
                    sqlstate: Some(sqlstate.into()),
                    reason: Some(reason),
                    ..SegmentStep::of("failed")
                },
                Step::Failed(_) => SegmentStep {
                    driver: Some(true),
                    ..SegmentStep::of("failed")
                },
                _ => SegmentStep::of("idle"),
            })
        })
    }

    /// The connection of `'connect'`'s server is there; its server's dialect.
    #[napi]
    pub fn connected(&mut self, env: &Env, dialect: String) -> Result<()> {
        guard(env, || {
            self.inner.connected(dialect_of(env, &dialect)?);
            Ok(())
        })
    }

    /// The first row of `'run'`'s statement (`null`: none), its cells as strings, booleans or
    /// `null` (on MySQL a statement without rows: `[affectedRows, insertId]`).
    #[napi]
    pub fn answer(
        &mut self,
        env: &Env,
        row: Option<Vec<Option<Either<String, bool>>>>,
    ) -> Result<()> {
        guard(env, || {
            let cells: Option<Vec<Cell<'_>>> = row.as_ref().map(|row| {
                row.iter()
                    .map(|cell| match cell {
                        None => Cell::Null,
                        Some(Either::A(text)) => Cell::Text(text),
                        Some(Either::B(b)) => Cell::Bool(*b),
                    })
                    .collect()
            });
            self.inner.answer(cells.as_deref());
            Ok(())
        })
    }

    /// The last step failed with the driver's error `code` (a SQLSTATE, MySQL's `errno` as a
    /// string, SQLite's result code; `null`: none, or the connection could not be opened).
    #[napi]
    pub fn failed(&mut self, env: &Env, code: Option<String>) -> Result<()> {
        guard(env, || {
            self.inner.failed(code.as_deref());
            Ok(())
        })
    }
}
