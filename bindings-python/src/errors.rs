//! Raising the Python exceptions of `shardid._errors` for the core's errors.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyModule};
use shardid::Error;

/// `shardid._errors`, imported on the first error (the error path only).
static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// Raises `shardid.<class_name>(message, **fields)`.
pub(crate) fn raise(
    py: Python<'_>,
    class_name: &str,
    message: &str,
    fields: &[(&str, Bound<'_, PyAny>)],
) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let module =
            ERRORS.get_or_try_init(py, || py.import("shardid._errors").map(Bound::unbind))?;
        let kwargs = PyDict::new(py);
        for (name, value) in fields {
            kwargs.set_item(name, value)?;
        }
        let class = module.bind(py).getattr(class_name)?;
        Ok(PyErr::from_value(class.call((message,), Some(&kwargs))?))
    };
    build().unwrap_or_else(|e| e)
}

/// The Python exception for a core error: one class per kind, the fields as attributes.
pub(crate) fn core_error(py: Python<'_>, e: Error) -> PyErr {
    let int = |v: u64| v.into_pyobject(py).expect("int").into_any();
    let (class, fields): (&str, Vec<(&str, Bound<'_, PyAny>)>) = match e {
        Error::InvalidLayout { reason } => (
            "InvalidLayoutError",
            vec![("reason", reason.into_pyobject(py).expect("str").into_any())],
        ),
        Error::ShardOutOfRange { shard, max } => (
            "ShardOutOfRangeError",
            vec![("shard", int(shard)), ("max", int(max))],
        ),
        Error::SequenceOutOfRange { sequence, max } => (
            "SequenceOutOfRangeError",
            vec![("sequence", int(sequence)), ("max", int(max))],
        ),
        Error::InvalidShardCount { count, max } => (
            "InvalidShardCountError",
            vec![("count", int(count)), ("max", int(max))],
        ),
        Error::InvalidId { id } => ("InvalidIdError", vec![("id", int(id))]),
        Error::ScatterOverflow { id } => ("ScatterOverflowError", vec![("id", int(id))]),
        Error::TimestampBeforeEpoch {
            timestamp_ms,
            epoch_ms,
        } => (
            "TimestampBeforeEpochError",
            vec![
                ("timestamp_ms", int(timestamp_ms)),
                ("epoch_ms", int(epoch_ms)),
            ],
        ),
        Error::TimestampPastExpiry {
            timestamp_ms,
            expires_at_ms,
        } => (
            "TimestampPastExpiryError",
            vec![
                ("timestamp_ms", int(timestamp_ms)),
                ("expires_at_ms", int(expires_at_ms)),
            ],
        ),
        Error::ClockMovedBackwards {
            behind_ms,
            tolerance_ms,
        } => (
            "ClockMovedBackwardsError",
            vec![
                ("behind_ms", int(behind_ms)),
                ("tolerance_ms", int(tolerance_ms)),
            ],
        ),
        Error::SequenceExhausted { retry_at_ms } => (
            "SequenceExhaustedError",
            vec![("retry_at_ms", int(retry_at_ms))],
        ),
        // The core's enum is non_exhaustive: a kind added there without a class here is a
        // bug of this binding, reported as the base class rather than hidden.
        _ => ("ShardIdError", vec![]),
    };
    raise(py, class, &e.to_string(), &fields)
}

/// Converts a core result into a Python one.
pub(crate) trait OrRaise<T> {
    /// Raises the core error as its Python class.
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, Error> {
    #[inline]
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| core_error(py, e))
    }
}

/// A `TypeError` naming the argument and the type it got.
pub(crate) fn wrong_type(value: &Bound<'_, PyAny>, name: &str, expected: &str) -> PyErr {
    let got = value
        .get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string());
    PyTypeError::new_err(format!("{name} must be {expected}, not {got}"))
}

/// An `InvalidLayoutError` for a parameter the core never sees (a wrong order name, a width
/// that is not a byte).
pub(crate) fn invalid_layout(py: Python<'_>, message: &str) -> PyErr {
    match message.into_pyobject(py) {
        Ok(reason) => raise(
            py,
            "InvalidLayoutError",
            message,
            &[("reason", reason.into_any())],
        ),
        Err(e) => e.into(),
    }
}
