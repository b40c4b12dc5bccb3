//! `Generator`: a handle on the process's one state for a (layout, shard).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyMemoryView, PySlice};
use shardid::Generator;

use crate::args::{Arg, id_list, ids_for, options_arg, timestamp_arg, u64_arg};
use crate::errors::OrRaise;
use crate::fork::check_not_forked;
use crate::layout::PyLayout;

/// Batches at least this long are made with the interpreter released: long enough to wait
/// for the next time unit, which other threads should not wait on.
const DETACH_AT: usize = 4096;

/// Makes unique, strictly increasing IDs for one shard of a layout. Thread-safe and
/// lock-free; every `Generator` for the same layout and shard in this process shares one state.
#[pyclass(module = "shardid._shardid", name = "Generator", frozen)]
pub(crate) struct PyGenerator {
    inner: Generator<&'static shardid::State>,
    /// The fork generation the handle was made in: used in a forked child, it refuses.
    made_in: u64,
}

impl PyGenerator {
    fn fill(&self, py: Python<'_>, ids: &mut [u64]) -> PyResult<()> {
        check_not_forked(py, self.made_in)?;
        if ids.len() >= DETACH_AT {
            py.detach(|| self.inner.next_ids(ids)).or_raise(py)
        } else {
            self.inner.next_ids(ids).or_raise(py)
        }
    }
}

#[pymethods]
impl PyGenerator {
    #[new]
    #[pyo3(signature = (layout, shard, *, backwards_tolerance_ms = None, max_borrow_units = None))]
    fn new(
        py: Python<'_>,
        layout: &Bound<'_, PyLayout>,
        shard: &Bound<'_, PyAny>,
        backwards_tolerance_ms: Option<&Bound<'_, PyAny>>,
        max_borrow_units: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let layout = layout.get().inner;
        let options = options_arg(backwards_tolerance_ms, max_borrow_units)?;
        let shard = u64_arg(shard, "shard", Arg::Shard(layout.max_shard()))?;
        let inner = Generator::shared(layout, shard, options).or_raise(py)?;
        Ok(Self {
            inner,
            made_in: shardid::fork_generation(),
        })
    }

    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout {
            inner: self.inner.layout(),
        }
    }
    #[getter]
    fn shard(&self) -> u64 {
        self.inner.shard()
    }
    #[getter]
    fn backwards_tolerance_ms(&self) -> u64 {
        self.inner.options().backwards_tolerance_ms
    }
    #[getter]
    fn max_borrow_units(&self) -> u64 {
        self.inner.options().max_borrow_units
    }

    /// What every generator for this layout and shard in the process did, as a dict of
    /// counts named by the core's table (`ids`, `waits`, `borrowed_units`, ...).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        crate::stats::to_dict(
            py,
            shardid::stats::GeneratorStats::METRICS,
            &self.inner.stats().values(),
        )
    }

    /// One ID now. Waits for the next time unit (at most 1 ms; 10 ms for Sonyflake) when
    /// this one is used up.
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        check_not_forked(py, self.made_in)?;
        self.inner.next_id().or_raise(py)
    }

    /// One ID as if the clock read `now` (Unix ms or an aware datetime). Deterministic and
    /// never waits: raises `SequenceExhaustedError` when the unit is used up.
    fn next_id_at(&self, py: Python<'_>, now: &Bound<'_, PyAny>) -> PyResult<u64> {
        check_not_forked(py, self.made_in)?;
        let now = timestamp_arg(now, "now", self.inner.layout())?;
        self.inner.next_id_at(now).or_raise(py)
    }

    /// `n` IDs now, in increasing order.
    fn next_ids<'py>(
        &self,
        py: Python<'py>,
        n: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        id_list(n, |ids| self.fill(py, ids))
    }

    /// Up to `n` IDs as if the clock read `now`, in one step: what is left of the time unit
    /// (and of any units the generator may borrow). Deterministic and never waits.
    fn next_ids_at<'py>(
        &self,
        py: Python<'py>,
        now: &Bound<'py, PyAny>,
        n: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        check_not_forked(py, self.made_in)?;
        let now = timestamp_arg(now, "now", self.inner.layout())?;
        let mut ids = ids_for(n)?;
        let written = self.inner.next_ids_at(now, &mut ids).or_raise(py)?;
        PyList::new(py, &ids[..written])
    }

    /// Fills a writable buffer of unsigned 64-bit integers (`array('Q')`, a NumPy `uint64`
    /// array, ...) with new IDs and returns how many it wrote (all of it).
    fn next_ids_into(&self, py: Python<'_>, buffer: &Bound<'_, PyAny>) -> PyResult<usize> {
        let view = PyMemoryView::from(buffer)?;
        let itemsize: usize = view.getattr("itemsize")?.extract()?;
        let format: String = view.getattr("format")?.extract()?;
        let readonly: bool = view.getattr("readonly")?.extract()?;
        let contiguous: bool = view.getattr("c_contiguous")?.extract()?;
        let format = format.trim_start_matches(['@', '=']);
        if itemsize != 8 || !matches!(format, "Q" | "L") || readonly || !contiguous {
            return Err(PyTypeError::new_err(format!(
                "buffer must be a writable, contiguous buffer of unsigned 64-bit integers such as array('Q'), not format {format:?} with {itemsize}-byte items{}",
                if readonly { " (read-only)" } else { "" }
            )));
        }
        let nbytes: usize = view.getattr("nbytes")?.extract()?;
        let mut ids = vec![0u64; nbytes / 8];
        self.fill(py, &mut ids)?;
        let bytes: Vec<u8> = ids.iter().flat_map(|id| id.to_ne_bytes()).collect();
        view.call_method1("cast", ("B",))?
            .set_item(PySlice::full(py), PyBytes::new(py, &bytes))?;
        Ok(ids.len())
    }

    fn __repr__(&self) -> String {
        let layout = PyLayout {
            inner: self.inner.layout(),
        };
        format!(
            "Generator(layout={}, shard={})",
            layout.__repr__(),
            self.inner.shard()
        )
    }

    /// A generator is a handle on this process's state: a copy in another process would
    /// issue the same IDs.
    #[allow(clippy::unused_self)]
    fn __reduce__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "a shardid Generator cannot be pickled: make one in each process, each with its own shard",
        ))
    }
}
