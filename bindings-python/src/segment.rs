//! Dense IDs from database segments: the core's allocator (`shardid::segment`) and the
//! segments' SQL, for `shardid.segments` to drive with psycopg. Not for direct use.

use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::prelude::*;
use shardid::segment::{Empty, Fetch, Segment, SegmentAllocator, SizePolicy};
use shardid::sql::{Placeholders, Segments};

use crate::args::{Arg, u64_arg};
use crate::errors::invalid_argument;
use crate::sql::sql_error;

/// The DDL of dense IDs from segments in `schema`, for ticket server `index` of `servers`.
#[pyfunction]
#[pyo3(signature = (schema, *, servers = 1, index = 0))]
pub(crate) fn segments(py: Python<'_>, schema: &str, servers: u64, index: u64) -> PyResult<String> {
    Segments::new(schema)
        .and_then(|ddl| ddl.ticket_server(servers, index))
        .map(|ddl| ddl.to_string())
        .map_err(|e| sql_error(py, e))
}

/// The statements a segment driver sends, in psycopg's `%s` style: `(take, give_back,
/// create_tag)`.
#[pyfunction]
pub(crate) fn _segment_statements(
    py: Python<'_>,
    schema: &str,
) -> PyResult<(String, String, String)> {
    let statements = Segments::new(schema)
        .map_err(|e| sql_error(py, e))?
        .statements(Placeholders::Format);
    Ok((
        statements.take().to_string(),
        statements.give_back().to_string(),
        statements.create_tag().to_string(),
    ))
}

/// The core's segment allocator, with the hot path in one native call: `next_id()` returns
/// the ID, and when both segments are used up (or the allocator was closed, or this is a
/// forked child: see `forked`) returns what `on_empty()` returns (the Python side waits for the
/// fetch under way and retries with `try_next_id()`, which returns `None` instead). A fetch
/// that becomes due calls `on_fetch(size)` (the Python side starts it in a thread of its own).
#[pyclass(module = "shardid._shardid", name = "_SegmentAllocator", frozen)]
pub(crate) struct PySegmentAllocator {
    inner: SegmentAllocator,
    on_fetch: Py<PyAny>,
    on_empty: Py<PyAny>,
    /// The fork generation it was made in: a forked child must not use the parent's segments.
    generation: u64,
    closed: AtomicBool,
}

impl PySegmentAllocator {
    fn usable(&self) -> bool {
        shardid::fork_generation() == self.generation && !self.closed.load(Ordering::Acquire)
    }

    fn start(&self, py: Python<'_>, fetch: Option<Fetch>) -> PyResult<()> {
        if let Some(fetch) = fetch
            && let Err(e) = self.on_fetch.call1(py, (fetch.size,))
        {
            // Not started: let a later call start it.
            self.inner.fetch_failed(shardid::now_ms());
            return Err(e);
        }
        Ok(())
    }
}

#[pymethods]
impl PySegmentAllocator {
    #[new]
    #[pyo3(signature = (on_fetch, on_empty, *, min_size, max_size, target_ms))]
    fn new(
        on_fetch: Py<PyAny>,
        on_empty: Py<PyAny>,
        min_size: &Bound<'_, PyAny>,
        max_size: &Bound<'_, PyAny>,
        target_ms: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let py = min_size.py();
        let min = u64_arg(min_size, "min_size", Arg::Other)?;
        let max = u64_arg(max_size, "max_size", Arg::Other)?;
        let target = u64_arg(target_ms, "target_ms", Arg::Other)?;
        if min == 0 || max < min || max > shardid::sql::MAX_SEGMENT {
            return Err(invalid_argument(
                py,
                "min_size",
                "must be at least 1 and at most max_size, itself at most 2**40",
            ));
        }
        Ok(Self {
            inner: SegmentAllocator::new(SizePolicy::new().bounds(min, max).target_ms(target)),
            on_fetch,
            on_empty,
            generation: shardid::fork_generation(),
            closed: AtomicBool::new(false),
        })
    }

    /// The next ID, or what `on_empty()` returns (see the class docs).
    #[inline]
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        if self.usable() {
            match self.inner.next_id_with(shardid::now_ms) {
                Ok((id, fetch)) => {
                    self.start(py, fetch)?;
                    return Ok(id);
                }
                // This caller starts the fetch that is due, then waits like the others.
                Err(Empty::Fetch(fetch)) => self.start(py, Some(fetch))?,
                Err(Empty::Wait) => {}
            }
        }
        self.on_empty.call0(py)?.extract(py)
    }

    /// The next ID, or `None` (see the class docs).
    fn try_next_id(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        if !self.usable() {
            return Ok(None);
        }
        match self.inner.next_id_with(shardid::now_ms) {
            Ok((id, fetch)) => {
                self.start(py, fetch)?;
                Ok(Some(id))
            }
            Err(Empty::Fetch(fetch)) => {
                self.start(py, Some(fetch))?;
                Ok(None)
            }
            Err(Empty::Wait) => Ok(None),
        }
    }

    /// Up to `n` IDs (fewer when both segments run out).
    fn next_ids(&self, py: Python<'_>, n: usize) -> PyResult<Vec<u64>> {
        if !self.usable() {
            return Ok(Vec::new());
        }
        let mut ids = vec![0u64; n];
        let (written, fetch) = py.detach(|| self.inner.next_ids_with(&mut ids, shardid::now_ms));
        ids.truncate(written);
        self.start(py, fetch)?;
        Ok(ids)
    }

    /// Starts the first fetch of a new allocator (or none, if one is there or under way).
    fn prime(&self, py: Python<'_>) -> PyResult<()> {
        self.start(py, self.inner.prime(shardid::now_ms()))
    }

    fn fill(&self, py: Python<'_>, first: u64, count: u64, stride: u64) -> PyResult<()> {
        let segment = Segment {
            first,
            count,
            stride,
        };
        self.inner.fill(segment, shardid::now_ms()).map_err(|e| {
            invalid_argument(
                py,
                "segment",
                &format!("was refused by the allocator: {e:?}"),
            )
        })
    }

    fn fetch_failed(&self) {
        self.inner.fetch_failed(shardid::now_ms());
    }

    /// Makes every later call return `None`.
    fn close(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// Whether this is a forked child of the process that made the allocator.
    fn forked(&self) -> bool {
        shardid::fork_generation() != self.generation
    }

    /// `(first, end, count, lost)` of what is left to give back, or `None`.
    fn unused(&self) -> Option<(u64, u64, u64, u64)> {
        self.inner
            .unused()
            .map(|u| (u.first, u.end, u.count, u.lost))
    }

    fn fetching(&self) -> bool {
        self.inner.fetching()
    }
}
