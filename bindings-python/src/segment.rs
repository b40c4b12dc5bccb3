//! Dense IDs from database segments: the core's allocator (`shardid::segment`) and the
//! segments' SQL, for `shardid.segments` to drive with psycopg. Not for direct use.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use pyo3::intern;
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

/// The core's segment allocator as the base class of `shardid.segments.DenseIds`, so that
/// `ids.next_id()` is one native call found on the type (no Python frame, no instance-dict
/// lookup). It calls back into the subclass only off the hot path: `self._start(size)` when a
/// fetch becomes due, `self._when_empty()` when both segments are used up (or the allocator was
/// closed, or this is a forked child: see `_forked`), whose return value it returns.
#[pyclass(
    module = "shardid._shardid",
    name = "_SegmentAllocator",
    frozen,
    subclass
)]
pub(crate) struct PySegmentAllocator {
    inner: SegmentAllocator,
    /// The fork generation it serves: a forked child must not use the parent's segments.
    generation: AtomicU64,
    closed: AtomicBool,
}

impl PySegmentAllocator {
    fn usable(&self) -> bool {
        shardid::fork_generation() == self.generation.load(Ordering::Relaxed)
            && !self.closed.load(Ordering::Acquire)
    }

    /// Asks the subclass (`ids`, the Python object) to start `fetch`, if any.
    fn start(&self, ids: &Bound<'_, Self>, fetch: Option<Fetch>) -> PyResult<()> {
        if let Some(fetch) = fetch
            && let Err(e) = ids.call_method1(intern!(ids.py(), "_start"), (fetch.size,))
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
    #[pyo3(signature = (*_args, min_size = None, max_size = None, target_ms = None, **_kwargs))]
    fn new(
        py: Python<'_>,
        _args: &Bound<'_, pyo3::types::PyTuple>,
        min_size: Option<&Bound<'_, PyAny>>,
        max_size: Option<&Bound<'_, PyAny>>,
        target_ms: Option<&Bound<'_, PyAny>>,
        _kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<Self> {
        let policy = SizePolicy::new();
        let arg = |v: Option<&Bound<'_, PyAny>>, name, default| {
            v.map_or(Ok(default), |v| u64_arg(v, name, Arg::Other))
        };
        let min = arg(min_size, "min_size", policy.min)?;
        let max = arg(max_size, "max_size", policy.max)?;
        let target = arg(target_ms, "target_ms", policy.target_ms)?;
        if min == 0 || max < min || max > shardid::sql::MAX_SEGMENT {
            return Err(invalid_argument(
                py,
                "min_size",
                "must be at least 1 and at most max_size, itself at most 2**40",
            ));
        }
        Ok(Self {
            inner: SegmentAllocator::new(policy.bounds(min, max).target_ms(target)),
            generation: AtomicU64::new(shardid::fork_generation()),
            closed: AtomicBool::new(false),
        })
    }

    /// The next ID of this allocator (increasing); waits (through `_when_empty`) when both
    /// segments are used up.
    #[inline]
    fn next_id(slf: &Bound<'_, Self>) -> PyResult<u64> {
        let this = slf.get();
        if this.usable() {
            match this.inner.next_id_with(shardid::now_ms) {
                Ok((id, fetch)) => {
                    this.start(slf, fetch)?;
                    return Ok(id);
                }
                // This caller starts the fetch that is due, then waits like the others.
                Err(Empty::Fetch(fetch)) => this.start(slf, Some(fetch))?,
                Err(Empty::Wait) => {}
            }
        }
        slf.call_method0(intern!(slf.py(), "_when_empty"))?
            .extract()
    }

    /// The next ID, or `None` when both segments are used up (or closed, or forked).
    fn _try_next_id(slf: &Bound<'_, Self>) -> PyResult<Option<u64>> {
        let this = slf.get();
        if !this.usable() {
            return Ok(None);
        }
        match this.inner.next_id_with(shardid::now_ms) {
            Ok((id, fetch)) => {
                this.start(slf, fetch)?;
                Ok(Some(id))
            }
            Err(Empty::Fetch(fetch)) => {
                this.start(slf, Some(fetch))?;
                Ok(None)
            }
            Err(Empty::Wait) => Ok(None),
        }
    }

    /// Up to `n` IDs (fewer when both segments run out).
    fn _take_ids(slf: &Bound<'_, Self>, n: usize) -> PyResult<Vec<u64>> {
        let this = slf.get();
        if !this.usable() {
            return Ok(Vec::new());
        }
        let mut ids = vec![0u64; n];
        let (written, fetch) = slf
            .py()
            .detach(|| this.inner.next_ids_with(&mut ids, shardid::now_ms));
        ids.truncate(written);
        this.start(slf, fetch)?;
        Ok(ids)
    }

    /// Starts the first fetch of a new allocator (or none, if one is there or under way).
    fn _prime(slf: &Bound<'_, Self>) -> PyResult<()> {
        let this = slf.get();
        this.start(slf, this.inner.prime(shardid::now_ms()))
    }

    fn _fill(&self, py: Python<'_>, first: u64, count: u64, stride: u64) -> PyResult<()> {
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

    fn _fetch_failed(&self) {
        self.inner.fetch_failed(shardid::now_ms());
    }

    /// Makes every later call wait (and the subclass raise).
    fn _shut(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// Whether this is a forked child of the process the allocator serves.
    fn _forked(&self) -> bool {
        shardid::fork_generation() != self.generation.load(Ordering::Relaxed)
    }

    /// In a forked child: forgets the parent's segments and serves this process.
    fn _adopt(&self) {
        self.inner.reset();
        self.generation
            .store(shardid::fork_generation(), Ordering::Relaxed);
    }

    /// `(first, end, count, lost)` of what is left to give back, or `None`.
    fn _unused(&self) -> Option<(u64, u64, u64, u64)> {
        self.inner
            .unused()
            .map(|u| (u.first, u.end, u.count, u.lost))
    }

    fn _fetching(&self) -> bool {
        self.inner.fetching()
    }
}
