//! Raising the Python exceptions of `shardid._errors` for the core's errors.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyModule};
use shardid::{Error, ErrorKind, FieldValue};

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

/// The Python exception for a core error: the class of its kind (`ErrorKind::name` +
/// `Error`, generated into `_errors.py` from the same table), its fields as attributes and the
/// core's message.
#[cold]
#[inline(never)]
pub(crate) fn core_error(py: Python<'_>, e: Error) -> PyErr {
    let fields: PyResult<Vec<(&str, Bound<'_, PyAny>)>> = e
        .fields()
        .map(|(name, value)| {
            let value = match value {
                FieldValue::Int(v) => v.into_pyobject(py)?.into_any(),
                FieldValue::Text(t) => t.into_pyobject(py)?.into_any(),
            };
            Ok((name, value))
        })
        .collect();
    match fields {
        Ok(fields) => raise_kind(py, e.kind(), &e.to_string(), &fields),
        Err(err) => err,
    }
}

/// Raises the class of `kind` with `message` and `fields`.
pub(crate) fn raise_kind(
    py: Python<'_>,
    kind: ErrorKind,
    message: &str,
    fields: &[(&str, Bound<'_, PyAny>)],
) -> PyErr {
    raise(py, &format!("{}Error", kind.name()), message, fields)
}

/// `InvalidArgumentError`: `argument` (its Python name) and what is wrong with it; the message
/// is the kind's template filled in.
pub(crate) fn invalid_argument(py: Python<'_>, argument: &str, reason: &str) -> PyErr {
    let build = || -> PyResult<PyErr> {
        Ok(raise_kind(
            py,
            ErrorKind::InvalidArgument,
            &format!("{argument} {reason}"),
            &[
                ("argument", argument.into_pyobject(py)?.into_any()),
                ("reason", reason.into_pyobject(py)?.into_any()),
            ],
        ))
    };
    build().unwrap_or_else(|e| e)
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

/// The exception of the kind coded `code` (`"UNKNOWN_TOPIC"`) with `fields`, its message the
/// core's template filled in: for the Python modules that report errors found by a database.
#[pyfunction]
#[pyo3(signature = (code, **fields))]
pub(crate) fn _error(
    py: Python<'_>,
    code: &str,
    fields: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyErr> {
    let Some(kind) = ErrorKind::from_code(code) else {
        return Err(PyTypeError::new_err(format!("no error kind {code:?}")));
    };
    let mut message = String::new();
    let mut values: Vec<(String, Bound<'_, PyAny>)> = Vec::new();
    if let Some(fields) = fields {
        for (name, value) in fields.iter() {
            values.push((name.extract()?, value));
        }
    }
    let mut failed = None;
    kind.render(&mut message, |name, out| {
        match values.iter().find(|(n, _)| n == name) {
            Some((_, v)) => match v.str() {
                Ok(s) => out.push_str(&s.to_string_lossy()),
                Err(e) => failed = Some(e),
            },
            None => {
                failed = Some(PyTypeError::new_err(format!(
                    "{code} needs the field {name}"
                )));
            }
        }
        Ok(())
    })
    .map_err(|_| PyTypeError::new_err("rendering failed"))?;
    if let Some(e) = failed {
        return Err(e);
    }
    let fields: Vec<(&str, Bound<'_, PyAny>)> = values
        .iter()
        .map(|(n, v)| (n.as_str(), v.clone()))
        .collect();
    Ok(raise_kind(py, kind, &message, &fields))
}
