//! `PublicIds`: IDs as short, opaque text for URLs and APIs, and back (the core's
//! `shardid::PublicIds`).

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyString};
use shardid::public::Format;
use shardid::{Encoding, PublicIds};

use crate::args::{Arg, u64_arg};
use crate::errors::{OrRaise, wrong_type};
use crate::layout::PyLayout;

/// A key argument: `bytes` or `bytearray` (a `str` is a type error: text is not a key, and a
/// hex string would silently be read as its characters).
fn key_arg(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<u8>> {
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(bytes.as_bytes().to_vec());
    }
    if let Ok(array) = value.cast::<PyByteArray>() {
        return Ok(array.to_vec());
    }
    Err(wrong_type(value, name, "bytes (16 of them)"))
}

fn encoding_arg(py: Python<'_>, name: &str) -> PyResult<Encoding> {
    Encoding::from_name(name).or_raise(py)
}

/// A `str` argument (a type error for anything else).
fn str_arg<'a>(value: &'a Bound<'_, PyAny>, name: &str) -> PyResult<std::borrow::Cow<'a, str>> {
    value
        .cast::<PyString>()
        .map_err(|_| wrong_type(value, name, "a str"))?
        .to_cow()
}

/// An encoding's name, or base32 when none is given.
fn optional_encoding(py: Python<'_>, value: Option<&Bound<'_, PyAny>>) -> PyResult<Encoding> {
    match value {
        None => Ok(Encoding::Base32),
        Some(e) => encoding_arg(py, &str_arg(e, "encoding")?),
    }
}

/// The default layout: every ID of a signed 64-bit column.
const INSTAGRAM: PyLayout = PyLayout {
    inner: shardid::Layout::INSTAGRAM,
};

/// Encodes IDs as public IDs (`note_0923h26jsg2d8g`) and decodes them back, under a secret
/// key of 16 bytes. The key is not kept (only what is derived from it) and never shown.
#[pyclass(module = "shardid._shardid", name = "PublicIds", frozen)]
pub(crate) struct PyPublicIds {
    inner: PublicIds,
    layout: PyLayout,
}

#[pymethods]
impl PyPublicIds {
    #[new]
    #[pyo3(signature = (key, prefix, encoding = None, *, key_version = None, old_keys = None, layout = None))]
    fn new(
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        prefix: &Bound<'_, PyAny>,
        encoding: Option<&Bound<'_, PyAny>>,
        key_version: Option<&Bound<'_, PyAny>>,
        old_keys: Option<&Bound<'_, PyAny>>,
        layout: Option<&Bound<'_, PyLayout>>,
    ) -> PyResult<Self> {
        let key = key_arg(key, "key")?;
        let prefix = str_arg(prefix, "prefix")?;
        let encoding = optional_encoding(py, encoding)?;
        let version = |v: Option<&Bound<'_, PyAny>>, name: &str| -> PyResult<u32> {
            match v {
                None => Ok(0),
                // Above u32 is still "must be 0 to 31": the core says so.
                Some(v) => Ok(u32::try_from(u64_arg(v, name, Arg::Other)?).unwrap_or(u32::MAX)),
            }
        };
        let layout = layout.map_or(
            PyLayout {
                inner: shardid::Layout::INSTAGRAM,
            },
            |l| *l.get(),
        );
        let mut inner = PublicIds::new(
            &key,
            version(key_version, "key_version")?,
            &prefix,
            encoding,
        )
        .or_raise(py)?
        .with_layout(layout.inner);
        if let Some(old) = old_keys {
            let old = old
                .cast::<PyDict>()
                .map_err(|_| wrong_type(old, "old_keys", "a dict of key versions to keys"))?;
            for (v, k) in old.iter() {
                inner = inner
                    .with_old_key(version(Some(&v), "old_keys")?, &key_arg(&k, "old_keys")?)
                    .or_raise(py)?;
            }
        }
        Ok(Self { inner, layout })
    }

    /// Public IDs from keys written as text, as an environment variable or a setting holds
    /// them: 32 hex digits (one key, version 0), or `VERSION:HEX` pairs separated by commas
    /// (`"2:<hex>,1:<hex>"`), the highest version current.
    #[staticmethod]
    #[pyo3(signature = (keys, prefix, encoding = None, *, layout = None))]
    fn from_keys(
        py: Python<'_>,
        keys: &Bound<'_, PyAny>,
        prefix: &Bound<'_, PyAny>,
        encoding: Option<&Bound<'_, PyAny>>,
        layout: Option<&Bound<'_, PyLayout>>,
    ) -> PyResult<Self> {
        let keys = str_arg(keys, "keys")?;
        let prefix = str_arg(prefix, "prefix")?;
        let encoding = optional_encoding(py, encoding)?;
        let layout = layout.map_or(INSTAGRAM, |l| *l.get());
        let inner = PublicIds::from_keys(&keys, &prefix, encoding)
            .or_raise(py)?
            .with_layout(layout.inner);
        Ok(Self { inner, layout })
    }

    /// The public ID of `id` (an int or a decimal string).
    fn encode<'py>(
        &self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyString>> {
        let text = self
            .inner
            .encode(u64_arg(id, "id", Arg::Id)?)
            .or_raise(py)?;
        Ok(PyString::new(py, text.as_str()))
    }

    /// The ID a public ID stands for; a `ValueError` subclass (`PublicIdPrefixError`, ...,
    /// `PublicIdMismatchError`) for any text that is not one.
    fn decode(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<u64> {
        let text = text
            .cast::<PyString>()
            .map_err(|_| wrong_type(text, "text", "a str"))?;
        // A string Python cannot hold as UTF-8 (a lone surrogate) is no public ID either: the
        // core sees its bytes with the surrogate replaced, and refuses them.
        let text = text.to_cow().unwrap_or_else(|_| "\u{fffd}".into());
        self.inner.decode(&text).or_raise(py)
    }

    /// Checks the shape of `text` without decoding (prefix, length, alphabet, check symbol)
    /// and returns the key version it names.
    fn check(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<u32> {
        check_text(py, self.inner.format(), text)
    }

    /// The type prefix.
    #[getter]
    fn prefix(&self) -> &str {
        self.inner.prefix()
    }
    /// The encoding's name.
    #[getter]
    fn encoding(&self) -> &'static str {
        self.inner.encoding().name()
    }
    /// The current key's version, which every text this makes carries.
    #[getter]
    fn key_version(&self) -> u32 {
        self.inner.key_version()
    }
    /// The versions of every key held, the current one first.
    #[getter]
    fn key_versions(&self) -> Vec<u32> {
        let mut out = [0; shardid::public::MAX_KEYS];
        let n = self.inner.key_versions(&mut out);
        out[..n].to_vec()
    }
    /// The layout whose IDs this takes.
    #[getter]
    fn layout(&self) -> PyLayout {
        self.layout
    }
    /// The length of every text this makes.
    #[getter]
    fn text_len(&self) -> usize {
        self.inner.text_len()
    }
    /// A regular expression matching every text of this prefix and encoding (no anchors), for
    /// URL routers.
    #[getter]
    fn pattern(&self) -> String {
        self.inner.format().pattern().to_string()
    }

    /// Never the key: the prefix, the encoding, the key versions and the layout. Not
    /// picklable (Python's default for a native class): it holds what is derived from the key;
    /// make it again from the key where it is needed.
    fn __repr__(&self) -> String {
        format!(
            "PublicIds(prefix={:?}, encoding={:?}, key_versions={:?}, layout={})",
            self.inner.prefix(),
            self.inner.encoding().name(),
            self.key_versions(),
            self.layout.__repr__()
        )
    }
}

fn check_text(py: Python<'_>, format: &Format, text: &Bound<'_, PyAny>) -> PyResult<u32> {
    let text = text
        .cast::<PyString>()
        .map_err(|_| wrong_type(text, "text", "a str"))?;
    let text = text.to_cow().unwrap_or_else(|_| "\u{fffd}".into());
    format.check(&text).or_raise(py)
}

/// Checks the shape of a public ID without its key (what a program without the key can do):
/// prefix, length, alphabet, check symbol; returns the key version it names.
#[pyfunction]
#[pyo3(signature = (text, prefix, encoding = "base32"))]
pub(crate) fn check_public_id(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    prefix: &str,
    encoding: &str,
) -> PyResult<u32> {
    let format = Format::new(prefix, encoding_arg(py, encoding)?).or_raise(py)?;
    check_text(py, &format, text)
}

/// The regular expression of every public ID of `prefix` and `encoding` (no anchors), without
/// a key: a Django path converter's `regex` (`PublicIds.pattern` with one).
#[pyfunction]
#[pyo3(signature = (prefix, encoding = "base32"))]
pub(crate) fn _public_id_pattern(py: Python<'_>, prefix: &str, encoding: &str) -> PyResult<String> {
    let format = Format::new(prefix, encoding_arg(py, encoding)?).or_raise(py)?;
    Ok(format.pattern().to_string())
}
