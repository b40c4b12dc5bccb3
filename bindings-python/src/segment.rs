//! Dense IDs from database segments: the core's allocator (`shardid::segment`) and the
//! segments' SQL, for `shardid.segments` to drive with psycopg. Not for direct use.

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

/// The core's segment allocator. `next_id(now_ms)` returns `(id, fetch)`: `fetch` is the
/// size of a segment this caller must fetch now (or `None`); `id` is `None` when both
/// segments are used up, and then `fetch` `None` means a fetch is under way: wait for it.
#[pyclass(module = "shardid._shardid", name = "_SegmentAllocator", frozen)]
pub(crate) struct PySegmentAllocator {
    inner: SegmentAllocator,
}

fn fetch_size(fetch: Option<Fetch>) -> Option<u64> {
    fetch.map(|f| f.size)
}

#[pymethods]
impl PySegmentAllocator {
    #[new]
    #[pyo3(signature = (*, min_size, max_size, target_ms))]
    fn new(
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
        })
    }

    fn next_id(&self, now_ms: u64) -> (Option<u64>, Option<u64>) {
        match self.inner.next_id(now_ms) {
            Ok((id, fetch)) => (Some(id), fetch_size(fetch)),
            Err(Empty::Fetch(fetch)) => (None, Some(fetch.size)),
            Err(Empty::Wait) => (None, None),
        }
    }

    /// Up to `n` IDs (fewer when both segments run out), and the fetch to start, if due.
    fn next_ids(&self, py: Python<'_>, n: usize, now_ms: u64) -> (Vec<u64>, Option<u64>) {
        let mut ids = vec![0u64; n];
        let (written, fetch) = py.detach(|| self.inner.next_ids(&mut ids, now_ms));
        ids.truncate(written);
        (ids, fetch_size(fetch))
    }

    fn fill(
        &self,
        py: Python<'_>,
        first: u64,
        count: u64,
        stride: u64,
        now_ms: u64,
    ) -> PyResult<()> {
        self.inner
            .fill(
                Segment {
                    first,
                    count,
                    stride,
                },
                now_ms,
            )
            .map_err(|e| {
                invalid_argument(
                    py,
                    "segment",
                    &format!("was refused by the allocator: {e:?}"),
                )
            })
    }

    fn fetch_failed(&self, now_ms: u64) {
        self.inner.fetch_failed(now_ms);
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

    #[getter]
    fn handed_out(&self) -> u64 {
        self.inner.handed_out()
    }
}
