//! The UUIDv7 bridge ([`shardid::uuid`]): Python's `uuid.UUID` in and out, a `str` taken as
//! the core reads UUID text. Every rule is the core's.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyString};
use shardid::Layout;

use crate::args::{Arg, u64_arg};
use crate::errors::{OrRaise, wrong_type};
use crate::layout::PyLayout;

/// Python's `uuid.UUID` class, imported once.
fn uuid_class(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static CLASS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    Ok(CLASS
        .get_or_try_init(py, || py.import("uuid")?.getattr("UUID").map(Bound::unbind))?
        .bind(py))
}

/// The 16 bytes of a `uuid.UUID`, or of a `str` the core parses; a `TypeError` otherwise.
fn uuid_bytes(value: &Bound<'_, PyAny>) -> PyResult<[u8; 16]> {
    let py = value.py();
    if value.is_instance(uuid_class(py)?)? {
        let bytes: Vec<u8> = value.getattr("bytes")?.extract()?;
        return bytes
            .try_into()
            .map_err(|_| wrong_type(value, "uuid", "a uuid.UUID or a str"));
    }
    let text = value
        .cast::<PyString>()
        .map_err(|_| wrong_type(value, "uuid", "a uuid.UUID or a str"))?;
    // A string Python cannot hold as UTF-8 (a lone surrogate) is no UUID either.
    let text = text.to_cow().unwrap_or_else(|_| "\u{fffd}".into());
    shardid::uuid::parse(&text).or_raise(py)
}

/// `uuid.UUID(bytes=...)`.
fn to_python<'py>(py: Python<'py>, bytes: &[u8; 16]) -> PyResult<Bound<'py, PyAny>> {
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("bytes", PyBytes::new(py, bytes))?;
    uuid_class(py)?.call((), Some(&kwargs))
}

pub(crate) fn to_uuid<'py>(
    py: Python<'py>,
    layout: &Layout,
    id: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = shardid::uuid::to_uuid(layout, u64_arg(id, "id", Arg::Id)?).or_raise(py)?;
    to_python(py, &bytes)
}

pub(crate) fn from_uuid(
    py: Python<'_>,
    layout: Option<&Layout>,
    uuid: &Bound<'_, PyAny>,
) -> PyResult<u64> {
    shardid::uuid::from_uuid(layout, &uuid_bytes(uuid)?).or_raise(py)
}

/// The ID a UUID made by `Layout.to_uuid` holds. Without `layout`, the UUID's marker names its
/// preset; a custom layout's UUID needs its layout. `InvalidArgumentError` for a UUID the
/// bridge did not make, of another version or variant, or of another layout.
#[pyfunction(name = "from_uuid")]
#[pyo3(signature = (uuid, layout = None))]
pub(crate) fn from_uuid_fn(
    py: Python<'_>,
    uuid: &Bound<'_, PyAny>,
    layout: Option<&Bound<'_, PyLayout>>,
) -> PyResult<u64> {
    from_uuid(py, layout.map(|l| &l.get().inner), uuid)
}
