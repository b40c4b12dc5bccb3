//! Dense IDs on Redis (issue 57): the core's steps of a take, a give-back and a tag's creation
//! (`shardid::redis::RedisSegments`: its Lua scripts, keys and the reading of their replies),
//! for `shardid/_redis_async.py` to run over redis-py. Not for direct use.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString, PyTuple};
use shardid::redis::{Command, Failure, RedisSegments, Step};
use shardid::sql::Cell;

use crate::errors::invalid_argument;

/// Whether `url` names a Redis server (`redis://`, `rediss://`, `unix://`,
/// `redis+sentinel://`): the core's rule (`shardid::redis::is_redis_url`), asked before the SQL
/// databases' (`_database_of_url`).
#[pyfunction]
pub(crate) fn _is_redis_url(url: &str) -> bool {
    shardid::redis::is_redis_url(url)
}

/// `(sentinels, master, db, username, password)` of a `redis+sentinel://` URL, by the core's
/// reading (`shardid::redis::sentinel_url`), or `INVALID_ARGUMENT` on `argument`.
#[pyfunction]
#[allow(clippy::type_complexity)] // the pieces redis-py's Sentinel and Redis take
pub(crate) fn _redis_sentinel_url(
    py: Python<'_>,
    url: &str,
    argument: &str,
) -> PyResult<(
    Vec<(String, u16)>,
    String,
    u32,
    Option<String>,
    Option<String>,
)> {
    let u = shardid::redis::sentinel_url(url)
        .map_err(|reason| invalid_argument(py, argument, reason))?;
    Ok((u.sentinels, u.master, u.db, u.username, u.password))
}

/// The core's take, give-back and creation of one tag's segments on a Redis server. `next()`
/// answers a tuple, in the vocabulary of `_SegmentProtocol`: `("connect", server)` (read the
/// connection's `INFO server`, then `connected(run_id)`), `("run", server, script, values)`
/// (`EVALSHA` of the script's SHA-1, `EVAL` of `script` on `NOSCRIPT`, `values` being the rest
/// of the command: the number of keys, the keys, the arguments; then `answer(reply)` or
/// `failed()`), `("segment", (first, count, stride))`, `("given_back", returned)`,
/// `("created", (made, next))`, `("failed", None)` (raise the last driver error) or
/// `("failed", (code, sqlstate, reason))` (the core's refusal, with the SQLSTATE the SQL
/// databases' protocol gives the same case), `("idle",)`.
#[pyclass(module = "shardid._shardid", name = "_RedisSegments")]
pub(crate) struct PyRedisSegments {
    inner: RedisSegments,
}

#[pymethods]
impl PyRedisSegments {
    /// The steps for the keys under `schema` (a plain identifier: `INVALID_ARGUMENT`).
    #[new]
    fn new(py: Python<'_>, schema: &str) -> PyResult<Self> {
        let inner =
            RedisSegments::new(schema).map_err(|reason| invalid_argument(py, "schema", reason))?;
        Ok(Self { inner })
    }

    /// Starts a take of `size` numbers of `tag`.
    fn take(&mut self, tag: &str, size: u64) {
        self.inner.take(tag, size);
    }

    /// Starts giving `first..end` of `tag` back.
    fn give_back(&mut self, tag: &str, first: u64, end: u64) {
        self.inner.give_back(tag, first, end);
    }

    /// Starts creating `tag` from `first`; `explicit`: the caller chose `first`, so a server
    /// without shardid's marks is taken as new (else refused: `create_tag_from`).
    fn create_tag(&mut self, tag: &str, first: u64, explicit: bool) {
        self.inner.create_tag(tag, first, explicit);
    }

    /// What to do next (see the class).
    fn next<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self.inner.next() {
            Step::Connect { server } => ("connect", server).into_pyobject(py)?.into_any(),
            Step::Run {
                server,
                command: Command::Script { source, keys, args },
            } => {
                let mut values: Vec<Bound<'py, PyAny>> =
                    Vec::with_capacity(1 + keys.len() + args.len());
                values.push(keys.len().into_pyobject(py)?.into_any());
                for text in keys.iter().chain(&args) {
                    values.push(PyString::new(py, text).into_any());
                }
                let values = PyTuple::new(py, values)?;
                ("run", server, source, values)
                    .into_pyobject(py)?
                    .into_any()
            }
            Step::Segment(s) => ("segment", (s.first, s.count, s.stride))
                .into_pyobject(py)?
                .into_any(),
            Step::GivenBack(returned) => ("given_back", returned).into_pyobject(py)?.into_any(),
            Step::Created { made, next } => ("created", (made, next)).into_pyobject(py)?.into_any(),
            Step::Failed(failure) => match (&failure, failure.sqlstate()) {
                (Failure::Refused { kind, reason }, Some(sqlstate)) => {
                    ("failed", Some((kind.code(), sqlstate, reason.clone())))
                        .into_pyobject(py)?
                        .into_any()
                }
                _ => ("failed", None::<(u8,)>).into_pyobject(py)?.into_any(),
            },
            _ => ("idle",).into_pyobject(py)?.into_any(),
        })
    }

    /// The connection of `"connect"` is open and its server's `run_id` is `run_id`.
    fn connected(&mut self, run_id: &str) {
        self.inner.connected(run_id);
    }

    /// The connection was lost: the next operation reads the identity again.
    fn lost(&mut self) {
        self.inner.lost();
    }

    /// The reply of `"run"`'s script as redis-py returns it (a list of integers and bytes,
    /// nested lists flattened).
    fn answer(&mut self, reply: &Bound<'_, PyAny>) -> PyResult<()> {
        enum Column {
            Null,
            Int(i64),
            Text(String),
        }
        fn flatten(value: &Bound<'_, PyAny>, out: &mut Vec<Column>) -> PyResult<()> {
            if value.is_none() {
                out.push(Column::Null);
            } else if let Ok(bytes) = value.cast::<PyBytes>() {
                out.push(Column::Text(
                    String::from_utf8_lossy(bytes.as_bytes()).into_owned(),
                ));
            } else if let Ok(text) = value.cast::<PyString>() {
                out.push(Column::Text(text.to_str()?.to_owned()));
            } else if let Ok(n) = value.extract::<i64>() {
                out.push(Column::Int(n));
            } else if let Ok(items) = value.try_iter() {
                for item in items {
                    flatten(&item?, out)?;
                }
            } else {
                out.push(Column::Text(value.str()?.to_string()));
            }
            Ok(())
        }
        let mut columns = Vec::new();
        flatten(reply, &mut columns)?;
        let cells: Vec<Cell<'_>> = columns
            .iter()
            .map(|column| match column {
                Column::Null => Cell::Null,
                Column::Int(n) => Cell::Int(*n),
                Column::Text(text) => Cell::Text(text),
            })
            .collect();
        self.inner.answer(&cells);
        Ok(())
    }

    /// The last step failed with the driver's error (`code`: none on Redis, taken as the SQL
    /// databases' protocol takes it): the operation fails with it, and the identity is read
    /// again before the next one (the core's rule).
    #[pyo3(signature = (code = None))]
    fn failed(&mut self, code: Option<&str>) {
        let _ = code;
        self.inner.failed();
    }
}

/// A script call of a lease step as the executor sends it: `(script, values)`, `values` the
/// number of keys, the keys, the arguments.
fn call(command: Command) -> (&'static str, Vec<String>) {
    // The only command of the core's Redis steps (`Command` may grow: nothing to send then).
    let Command::Script { source, keys, args } = command else {
        return ("", Vec::new());
    };
    let mut values = Vec::with_capacity(1 + keys.len() + args.len());
    values.push(keys.len().to_string());
    values.extend(keys);
    values.extend(args);
    (source, values)
}

/// A reply as the core's cells (see `_RedisSegments.answer`).
fn reply_cells(reply: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    fn flatten(value: &Bound<'_, PyAny>, out: &mut Vec<String>) -> PyResult<()> {
        if let Ok(bytes) = value.cast::<PyBytes>() {
            out.push(String::from_utf8_lossy(bytes.as_bytes()).into_owned());
        } else if let Ok(text) = value.cast::<PyString>() {
            out.push(text.to_str()?.to_owned());
        } else if let Ok(n) = value.extract::<i64>() {
            out.push(n.to_string());
        } else if let Ok(items) = value.try_iter() {
            for item in items {
                flatten(&item?, out)?;
            }
        } else {
            out.push(value.str()?.to_string());
        }
        Ok(())
    }
    let mut out = Vec::new();
    flatten(reply, &mut out)?;
    Ok(out)
}

/// A shard lease on Redis as the core's steps (`shardid::redis::lease_steps::LeaseSteps`): the
/// script of a claim, a renewal, a ceiling's record and a release with their keys and
/// arguments (`(script, values)`, as `_RedisSegments`' `"run"`), and the reading of their
/// replies, for `shardid/_redis_lease.py` to run over redis-py. Its token is the core's.
#[pyclass(module = "shardid._shardid", name = "_RedisLeaseSteps", frozen)]
pub(crate) struct PyRedisLeaseSteps {
    inner: shardid::redis::lease_steps::LeaseSteps,
}

#[pymethods]
impl PyRedisLeaseSteps {
    /// The steps of a lease of a shard of `first..end` for `layout` under the key prefix
    /// `schema`, expiring `ttl_ms` after each renewal; `INVALID_ARGUMENT` on the argument
    /// refused.
    #[new]
    fn new(
        py: Python<'_>,
        schema: &str,
        layout: &Bound<'_, crate::layout::PyLayout>,
        first: u64,
        end: u64,
        ttl_ms: u64,
        holder: &str,
    ) -> PyResult<Self> {
        let token = shardid::lease::new_token();
        let inner = shardid::redis::lease_steps::LeaseSteps::new(
            schema,
            &layout.get().inner,
            first..end,
            ttl_ms,
            &token,
            holder,
        )
        .map_err(|(argument, reason)| invalid_argument(py, argument, reason))?;
        Ok(Self { inner })
    }

    /// The lease hash's key.
    #[getter]
    fn key(&self) -> &str {
        self.inner.key()
    }

    /// The claim's script call, on the server whose identity is `run_id`.
    fn claim(&self, run_id: &str) -> (&'static str, Vec<String>) {
        call(self.inner.claim(run_id))
    }

    /// The last claim's reply: `("shard", shard, ceiling or None, fencing token)`, `("none",)`
    /// when every shard is held, `("clock_skew", shard, ahead_ms, max_ms)` when this host's
    /// clock was too far ahead of the server's (release the shard, then raise `CLOCK_SKEW`),
    /// `("unusable",)`.
    fn claimed<'py>(
        &self,
        py: Python<'py>,
        reply: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        use shardid::redis::lease_steps::Claimed;
        let cells = reply_cells(reply)?;
        let cells: Vec<Cell<'_>> = cells.iter().map(|c| Cell::Text(c)).collect();
        Ok(match self.inner.claimed(&cells) {
            Claimed::Shard {
                shard,
                ceiling,
                fencing_token,
            } => ("shard", shard, ceiling, fencing_token)
                .into_pyobject(py)?
                .into_any(),
            Claimed::NoFreeShard => ("none",).into_pyobject(py)?.into_any(),
            Claimed::ClockSkew {
                shard,
                ahead_ms,
                max_ms,
            } => ("clock_skew", shard, ahead_ms, max_ms)
                .into_pyobject(py)?
                .into_any(),
            _ => ("unusable",).into_pyobject(py)?.into_any(),
        })
    }

    /// A renewal's script call.
    fn renew(&self, run_id: &str, shard: u64) -> (&'static str, Vec<String>) {
        call(self.inner.renew(run_id, shard))
    }

    /// A ceiling's record (and renewal).
    fn record(&self, run_id: &str, shard: u64, units: u64) -> (&'static str, Vec<String>) {
        call(self.inner.record(run_id, shard, units))
    }

    /// A release's script call.
    fn release(&self, run_id: &str, shard: u64) -> (&'static str, Vec<String>) {
        call(self.inner.release(run_id, shard))
    }

    /// How far this host's clock, read when the last renewal was made, was ahead of the
    /// server's clock its reply carries, when too far (the lease must stop: `CLOCK_SKEW`);
    /// `None` within the skew or when the lease is lost.
    fn clock_ahead(&self, reply: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        let cells = reply_cells(reply)?;
        let cells: Vec<Cell<'_>> = cells.iter().map(|c| Cell::Text(c)).collect();
        Ok(self.inner.clock_ahead(&cells))
    }

    /// Whether a renewal's, record's or release's reply says the lease still held.
    #[staticmethod]
    fn held(reply: &Bound<'_, PyAny>) -> PyResult<bool> {
        let cells = reply_cells(reply)?;
        let cells: Vec<Cell<'_>> = cells.iter().map(|c| Cell::Text(c)).collect();
        Ok(shardid::redis::lease_steps::LeaseSteps::held(&cells))
    }
}
