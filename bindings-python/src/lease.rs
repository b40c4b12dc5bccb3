//! `shardid.lease()` and `LeasedGenerator`: a shard leased from a directory of lock files
//! (the core's `lease` module), and the check that keeps a plain `Generator` out of a
//! forked child.

use std::path::PathBuf;

use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyRange, PyTuple};
use std::cell::RefCell;
use std::sync::{Arc, Mutex, PoisonError};

use shardid::lease::{
    BackendClaim, CeilingGenerator, CeilingStore, Hold, LeaseError, LeasedGenerator,
};

use crate::args::{Arg, id_list, options_arg, timestamp_arg, u64_arg};
use crate::errors::{core_error, invalid_argument, raise_kind};
use crate::fork::check_not_forked;
use crate::layout::PyLayout;

fn lease_error(py: Python<'_>, e: LeaseError) -> PyErr {
    if let LeaseError::Id(e) = e {
        return core_error(py, e);
    }
    let (kind, message) = (e.kind(), e.to_string());
    // The kinds of one field: the field's name and its value.
    let one = |name: &str, value: Result<Bound<'_, PyAny>, PyErr>| match value {
        Ok(value) => raise_kind(py, kind, &message, &[(name, value)]),
        Err(e) => e,
    };
    match e {
        LeaseError::NoFreeShard { directory, shards } => {
            // The kind's fields, and as Python has them: the directory and the range.
            let fields = || -> PyResult<Vec<(&str, Bound<'_, PyAny>)>> {
                let bound = |v: u64| isize::try_from(v).unwrap_or(isize::MAX);
                let range = PyRange::new(py, bound(shards.start), bound(shards.end))?;
                let directory = directory.display().to_string();
                Ok(vec![
                    ("first", shards.start.into_pyobject(py)?.into_any()),
                    ("end", shards.end.into_pyobject(py)?.into_any()),
                    (
                        "held_in",
                        format!("lock files in {directory}")
                            .into_pyobject(py)?
                            .into_any(),
                    ),
                    ("directory", directory.into_pyobject(py)?.into_any()),
                    ("shards", range.into_any()),
                ])
            };
            match fields() {
                Ok(fields) => raise_kind(py, kind, &message, &fields),
                Err(e) => e,
            }
        }
        LeaseError::EmptyShards { shards } => invalid_argument(
            py,
            "shards",
            &shardid::lease::empty_shards(&shards).to_string(),
        ),
        LeaseError::InvalidArgument { argument, reason } => invalid_argument(py, argument, &reason),
        LeaseError::Lost { shard } => one("shard", shard.into_bound_py_any(py)),
        LeaseError::Closed { shard } => one(
            "what",
            format!("the lease on shard {shard}").into_bound_py_any(py),
        ),
        LeaseError::SessionPooled { reason } => one("reason", reason.into_bound_py_any(py)),
        LeaseError::ClockSkew { ahead_ms, max_ms } => {
            match (ahead_ms.into_bound_py_any(py), max_ms.into_bound_py_any(py)) {
                (Ok(ahead), Ok(max)) => {
                    raise_kind(py, kind, &message, &[("ahead_ms", ahead), ("max_ms", max)])
                }
                (Err(e), _) | (_, Err(e)) => e,
            }
        }
        _ => {
            let reason = message.strip_prefix("lease file: ").unwrap_or(&message);
            one("reason", reason.into_bound_py_any(py))
        }
    }
}

/// A generator on a shard leased from lock files: no two processes hold the same shard, a
/// restart continues above its predecessor's IDs, and a forked child takes a shard of its own.
#[pyclass(module = "shardid._shardid", name = "LeasedGenerator", frozen)]
pub(crate) struct PyLeasedGenerator {
    inner: LeasedGenerator,
}

impl PyLeasedGenerator {
    fn or_raise<T>(py: Python<'_>, result: Result<T, LeaseError>) -> PyResult<T> {
        result.map_err(|e| lease_error(py, e))
    }
}

/// Leases the first free shard of `shards` (a `range`) from lock files in `directory`.
#[pyfunction]
#[pyo3(signature = (layout, directory, shards, *, backwards_tolerance_ms = None, max_borrow_units = None))]
pub(crate) fn lease(
    py: Python<'_>,
    layout: &Bound<'_, PyLayout>,
    directory: PathBuf,
    shards: &Bound<'_, PyRange>,
    backwards_tolerance_ms: Option<&Bound<'_, PyAny>>,
    max_borrow_units: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyLeasedGenerator> {
    let layout = layout.get().inner;
    let stride: i64 = shards.getattr("step")?.extract()?;
    if stride != 1 {
        return Err(invalid_argument(
            py,
            "shards",
            "must be a range with step 1",
        ));
    }
    let max = Arg::Shard(layout.max_shard());
    let start = u64_arg(&shards.getattr("start")?, "shards.start", max)?;
    let stop = u64_arg(&shards.getattr("stop")?, "shards.stop", Arg::Other)?;
    let options = options_arg(backwards_tolerance_ms, max_borrow_units)?;
    let result =
        py.detach(move || LeasedGenerator::acquire(directory, start..stop, layout, options));
    let inner = PyLeasedGenerator::or_raise(py, result)?;
    Ok(PyLeasedGenerator { inner })
}

#[pymethods]
impl PyLeasedGenerator {
    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout {
            inner: self.inner.layout(),
        }
    }
    /// The shard this process holds (another one in a forked child).
    #[getter]
    fn shard(&self, py: Python<'_>) -> PyResult<u64> {
        Self::or_raise(py, self.inner.shard())
    }
    #[getter]
    fn directory(&self) -> PathBuf {
        self.inner.directory().to_path_buf()
    }

    /// One ID now (waits for the next time unit when this one is used up, and after a
    /// restart for the clock to pass the last holder's ceiling).
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        Self::or_raise(py, self.inner.next_id())
    }

    /// One ID as if the clock read `now` (Unix ms or an aware datetime); never waits.
    fn next_id_at(&self, py: Python<'_>, now: &Bound<'_, PyAny>) -> PyResult<u64> {
        let now = timestamp_arg(now, "now", self.inner.layout())?;
        Self::or_raise(py, self.inner.next_id_at(now))
    }

    /// `n` IDs now, in increasing order.
    fn next_ids<'py>(
        &self,
        py: Python<'py>,
        n: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        id_list(n, |ids| {
            Self::or_raise(py, py.detach(|| self.inner.next_ids(ids)))
        })
    }

    /// Releases the shard at once, so another process can take it (and continue above this
    /// one's IDs); later calls raise `ClosedError`. Closing twice is fine.
    fn close(&self) {
        self.inner.close();
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        _kind: &Bound<'_, PyAny>,
        _value: &Bound<'_, PyAny>,
        _traceback: &Bound<'_, PyAny>,
    ) {
        self.inner.close();
    }

    fn __repr__(&self) -> String {
        format!(
            "<shardid.LeasedGenerator shard={} directory='{}'>",
            self.inner
                .shard()
                .map_or_else(|_| "?".to_string(), |s| s.to_string()),
            self.inner.directory().display()
        )
    }
}

thread_local! {
    /// The exception a Python ceiling store raised on this thread, re-raised as it is by the
    /// generator's caller: a database driver's error is reported as what it is.
    static RAISED: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// A Python callable as the core's ceiling store: `store(wanted, at_least)` must record a
/// ceiling of at least `at_least` time units durably before it returns (`shardid.postgres`
/// writes `wanted` to a table) and returns the ceiling it recorded, or `None` for `wanted`
/// (an asyncio lease answers with one it recorded earlier). It runs on the thread that asked
/// for the ID, which re-raises its exception (see [`ceiling_result`]).
struct PyStore(Py<PyAny>);

impl std::fmt::Debug for PyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PyStore")
    }
}

impl CeilingStore for PyStore {
    fn store(&self, at_least: u64, wanted: u64) -> std::io::Result<u64> {
        Python::attach(|py| {
            let recorded = self.0.call1(py, (wanted, at_least)).and_then(|r| {
                if r.is_none(py) {
                    Ok(wanted)
                } else {
                    r.extract::<u64>(py)
                }
            });
            recorded.map_err(|e| {
                // The store's `LeaseLostError` (see `shardid.postgres`) is the core's lost lease.
                let lost = py
                    .import("shardid._errors")
                    .and_then(|m| m.getattr("LeaseLostError"))
                    .is_ok_and(|class| e.get_type(py).is_subclass(&class).unwrap_or(false));
                if lost {
                    std::io::Error::other(shardid::lease::LostLease)
                } else {
                    let message = e.to_string();
                    RAISED.with(|raised| *raised.borrow_mut() = Some(e));
                    std::io::Error::other(format!("the ceiling store raised {message}"))
                }
            })
        })
    }
}

/// The generator's result, with the exception the store raised (a psycopg error, say)
/// re-raised as it is.
fn ceiling_result<T>(py: Python<'_>, result: Result<T, LeaseError>) -> PyResult<T> {
    let raised = RAISED.with(|raised| raised.borrow_mut().take());
    match (result, raised) {
        (Ok(value), _) => Ok(value),
        (Err(LeaseError::Io(_)), Some(e)) => Err(e),
        (Err(e), _) => Err(lease_error(py, e)),
    }
}

/// An expiring lease's hold on its shard (the core's `lease::Hold`), shared by the generator,
/// the heartbeat and the ceiling writes of `shardid.postgres`. Not for direct use.
#[pyclass(module = "shardid._shardid", name = "_Hold", frozen)]
pub(crate) struct PyHold {
    inner: Arc<Hold>,
}

#[pymethods]
impl PyHold {
    /// A hold taken by a claim sent at `sent_at` (`_Hold.now()`).
    #[new]
    fn new(ttl_ms: u64, sent_at: u64) -> Self {
        Self {
            inner: Arc::new(Hold::new(ttl_ms, sent_at)),
        }
    }

    /// The monotonic clock leases count with, in milliseconds.
    #[staticmethod]
    fn now() -> u64 {
        shardid::lease::monotonic_ms()
    }

    /// Waits (the interpreter released) until this host's clock passes the `recorded` ceiling
    /// a new holder starts above: after a failover the database raises it to its own clock
    /// plus the hosts' skew.
    #[staticmethod]
    #[pyo3(signature = (layout, recorded))]
    fn wait_for_ceiling(py: Python<'_>, layout: &Bound<'_, PyLayout>, recorded: Option<u64>) {
        let layout = layout.get().inner;
        py.detach(|| shardid::lease::wait_for_ceiling(&layout, recorded));
    }

    /// Whether the lease is held now.
    #[getter]
    fn holds(&self) -> bool {
        self.inner.holds()
    }

    /// The sending time of a renewal or ceiling write about to be sent, or `None` when the
    /// lease is no longer held (lost for good).
    fn sending(&self) -> Option<u64> {
        self.inner.sending()
    }

    /// A renewal or ceiling write sent at `sent_at` returned its row.
    fn renewed(&self, sent_at: u64) {
        self.inner.renewed(sent_at);
    }

    /// A renewal failed (the database did not answer): retry sooner.
    fn failed(&self) {
        self.inner.failed();
    }

    /// The lease is lost.
    fn lose(&self) {
        self.inner.lose();
    }

    /// Seconds until the heartbeat's next renewal, or `None` once the lease is lost.
    fn wait(&self) -> Option<f64> {
        self.inner.wait().map(|d| d.as_secs_f64())
    }
}

/// The counters of one database lease across the shards it takes (the core's `lease::Tally`,
/// reported to exporters while it lives): made once per `DatabaseLease`, handed to each
/// `_CeilingGenerator` it runs, which counts into it. Not for direct use.
#[pyclass(module = "shardid._shardid", name = "_LeaseTally", frozen)]
pub(crate) struct PyLeaseTally {
    inner: Arc<shardid::lease::Tally>,
}

#[pymethods]
impl PyLeaseTally {
    #[new]
    fn new(layout: &Bound<'_, PyLayout>, table: &str) -> Self {
        Self {
            inner: shardid::lease::Tally::new(&layout.get().inner, table),
        }
    }

    /// The lease's counts, named by the core's table (`acquisitions`, `renewals`, ...).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        crate::stats::to_dict(
            py,
            shardid::stats::LeaseStats::METRICS,
            &self.inner.stats().values(),
        )
    }
}

/// A server session a session lease holds its lock on (the core's `lease::claim_backend`);
/// `release()` forgets it. Not for direct use.
#[pyclass(module = "shardid._shardid", name = "_BackendClaim", frozen)]
pub(crate) struct PyBackendClaim {
    inner: Mutex<Option<BackendClaim>>,
}

#[pymethods]
impl PyBackendClaim {
    fn release(&self) {
        drop(
            self.inner
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
    }
}

/// Records the server session of a new session lease; raises `SessionPooledError` when
/// another session lease of this process already holds a lock on it (a pooler is in front).
#[pyfunction]
pub(crate) fn _claim_backend(py: Python<'_>, identity: &str) -> PyResult<PyBackendClaim> {
    shardid::lease::claim_backend(identity)
        .map(|claim| PyBackendClaim {
            inner: Mutex::new(Some(claim)),
        })
        .map_err(|e| lease_error(py, e))
}

/// A generator above a recorded ceiling that calls `store(units)` before handing out any ID
/// above the last one stored: the core of `shardid.postgres`'s leases. Not for direct use.
///
/// Used in a forked child (its shard is the parent's) it hands out nothing: it calls
/// `on_fork(method, *args)` and returns its answer (the blocking lease's own method, which takes
/// a shard of its own there), or raises `ForkedGeneratorError` without one.
#[pyclass(module = "shardid._shardid", name = "_CeilingGenerator", frozen)]
pub(crate) struct PyCeilingGenerator {
    inner: CeilingGenerator,
    /// The fork generation the generator was made in.
    made_in: u64,
    on_fork: Option<Py<PyAny>>,
}

impl PyCeilingGenerator {
    /// `Some(answer)` when this is a forked child of the process that made the generator:
    /// `on_fork`'s answer for `method(args)`, or `ForkedGeneratorError`.
    fn in_child<'py>(
        &self,
        py: Python<'py>,
        method: &str,
        args: impl FnOnce() -> Vec<Bound<'py, PyAny>>,
    ) -> Option<PyResult<Bound<'py, PyAny>>> {
        check_not_forked(py, self.made_in).err().map(|refused| {
            let Some(on_fork) = &self.on_fork else {
                return Err(refused);
            };
            let mut all = vec![method.into_pyobject(py)?.into_any()];
            all.extend(args());
            on_fork.bind(py).call1(PyTuple::new(py, all)?)
        })
    }
}

#[pymethods]
impl PyCeilingGenerator {
    #[new]
    #[pyo3(signature = (layout, shard, recorded, store, *, hold = None, tally = None, on_fork = None, backwards_tolerance_ms = None, max_borrow_units = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        layout: &Bound<'_, PyLayout>,
        shard: &Bound<'_, PyAny>,
        recorded: Option<&Bound<'_, PyAny>>,
        store: Py<PyAny>,
        hold: Option<&Bound<'_, PyHold>>,
        tally: Option<&Bound<'_, PyLeaseTally>>,
        on_fork: Option<Py<PyAny>>,
        backwards_tolerance_ms: Option<&Bound<'_, PyAny>>,
        max_borrow_units: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let py = layout.py();
        let layout = layout.get().inner;
        let shard = u64_arg(shard, "shard", Arg::Shard(layout.max_shard()))?;
        let recorded = recorded
            .map(|r| u64_arg(r, "recorded", Arg::Other))
            .transpose()?;
        let options = options_arg(backwards_tolerance_ms, max_borrow_units)?;
        let mut inner =
            CeilingGenerator::new(layout, shard, options, recorded, Box::new(PyStore(store)))
                .map_err(|e| core_error(py, e))?;
        if let Some(tally) = tally {
            inner = inner.with_tally(Arc::clone(&tally.get().inner));
        }
        if let Some(hold) = hold {
            inner = inner.with_hold(Arc::clone(&hold.get().inner));
        }
        Ok(Self {
            inner,
            made_in: shardid::fork_generation(),
            on_fork,
        })
    }

    #[getter]
    fn shard(&self) -> u64 {
        self.inner.shard()
    }

    // The ID is drawn and checked against the recorded ceiling with the interpreter held, as
    // a plain generator's is; it is released only to record a new ceiling, whose store takes
    // it back: another thread waiting for the recording must not hold it meanwhile.
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        if let Some(answer) = self.in_child(py, "next_id", Vec::new) {
            return answer?.extract();
        }
        let id = self.inner.draw().map_err(|e| core_error(py, e))?;
        if self.inner.covers(id) {
            return Ok(id);
        }
        let result = py.detach(|| self.inner.cover(id));
        ceiling_result(py, result.map(|()| id))
    }

    fn next_id_at(&self, py: Python<'_>, now: &Bound<'_, PyAny>) -> PyResult<u64> {
        if let Some(answer) = self.in_child(py, "next_id_at", || vec![now.clone()]) {
            return answer?.extract();
        }
        let now = timestamp_arg(now, "now", self.inner.layout())?;
        let id = self.inner.draw_at(now).map_err(|e| core_error(py, e))?;
        if self.inner.covers(id) {
            return Ok(id);
        }
        let result = py.detach(|| self.inner.cover(id));
        ceiling_result(py, result.map(|()| id))
    }

    /// Stops the generator for good (the lease is lost): every later call raises
    /// `LeaseLostError`.
    fn revoke(&self, py: Python<'_>) {
        // Waits for a ceiling write in progress, whose store needs the interpreter.
        py.detach(|| self.inner.revoke());
    }

    /// Stops the generator for good because a renewal found this host's clock `ahead_ms`
    /// ahead of the database's: every later call raises `ClockSkewError`.
    fn revoke_clock_skew(&self, py: Python<'_>, ahead_ms: u64) {
        py.detach(|| self.inner.revoke_clock_skew(ahead_ms));
    }

    /// Stops the generator for good because the lease is closed (no loss is counted).
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.inner.close());
    }

    fn next_ids<'py>(
        &self,
        py: Python<'py>,
        n: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        if let Some(answer) = self.in_child(py, "next_ids", || vec![n.clone()]) {
            return Ok(answer?.cast_into::<PyList>()?);
        }
        id_list(n, |ids| {
            ceiling_result(py, py.detach(|| self.inner.next_ids(ids)))
        })
    }
}
