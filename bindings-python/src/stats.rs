//! `stats()`: the core's counters as a dict, named by the core's table.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use shardid::stats::{Family, Kind, Metric};

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

/// The core's table for exporters: `{family: {"labels": [...], "metrics": [(name, kind,
/// help, prometheus_name, opentelemetry_name, le_ms or None, divide_by, process_wide)]}}`.
/// `kind` is `counter`, `gauge`, `gauge_max`, `bucket` or `sum`; a bucket's `le_ms` of +Inf
/// is 2**64 - 1; `divide_by` turns a value into base units (1,000 for milliseconds, else 1).
#[pyfunction]
pub(crate) fn _stats_table(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for family in Family::ALL {
        let metrics = PyList::empty(py);
        for metric in family.metrics() {
            let (kind, le) = match metric.kind {
                Kind::Counter => ("counter", None),
                Kind::Gauge => ("gauge", None),
                Kind::GaugeMax => ("gauge_max", None),
                // Milliseconds; u64::MAX is +Inf.
                Kind::Bucket { le_ms, .. } => ("bucket", Some(le_ms)),
                Kind::Sum { .. } => ("sum", None),
                _ => continue,
            };
            let divide_by = if metric.in_ms() { 1000 } else { 1 };
            metrics.append((
                metric.name,
                kind,
                metric.help,
                family.prometheus(metric).to_string(),
                family.opentelemetry(metric).to_string(),
                le,
                divide_by,
                metric.process_wide,
            ))?;
        }
        let entry = PyDict::new(py);
        entry.set_item("labels", family.labels().to_vec())?;
        entry.set_item("metrics", metrics)?;
        out.set_item(family.name(), entry)?;
    }
    Ok(out)
}

/// Every live object's figures (`shardid::stats::collect`): `[(family, labels, values)]`.
#[pyfunction]
pub(crate) fn _collect(py: Python<'_>) -> Vec<(&'static str, Vec<String>, Vec<u64>)> {
    py.detach(shardid::stats::collect)
        .into_iter()
        .map(|s| (s.family.name(), s.labels, s.values))
        .collect()
}
