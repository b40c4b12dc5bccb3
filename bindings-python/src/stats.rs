//! `stats()`: the core's counters as a dict, named by the core's table.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use shardid::stats::Metric;

/// `{name: value}` in the table's order (`metrics` and `values` are one family's).
pub(crate) fn to_dict<'py>(
    py: Python<'py>,
    metrics: &[Metric],
    values: &[u64],
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (metric, value) in metrics.iter().zip(values) {
        dict.set_item(metric.name, value)?;
    }
    Ok(dict)
}
