//! The string ↔ ID dictionary: the core's cache and batch logic (`shardid::dictionary`) and its
//! SQL, for `shardid.dictionary` to drive with psycopg (or Django's connection). Not for direct
//! use.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use std::borrow::Cow;

use shardid::dictionary::{self as dict, Cache, Invalid};
use shardid::sql::{Dialect, Dictionary, Placeholders};

use crate::args::{Arg, u64_arg};
use crate::errors::{invalid_argument, wrong_type};
use crate::sql::sql_error;

/// The DDL of the dictionary in `schema`, in `dialect` (`"postgres"`, the default;
/// `"mysql"`/`"mariadb"`: `schema` is a database; `"sqlite"`: `main` or an attached database).
#[pyfunction]
#[pyo3(signature = (schema, *, dialect = None))]
pub(crate) fn dictionary(py: Python<'_>, schema: &str, dialect: Option<&str>) -> PyResult<String> {
    match crate::mysql::dialect_arg(py, dialect)? {
        dialect @ (Dialect::Mysql | Dialect::Mariadb) => {
            crate::mysql::dictionary_ddl(py, schema, dialect)
        }
        Dialect::Sqlite => crate::sqlite::dictionary_ddl(py, schema),
        Dialect::Postgres => Dictionary::new(schema)
            .map(|ddl| ddl.to_string())
            .map_err(|e| sql_error(py, e)),
        other => Err(crate::mysql::unsupported_dialect(py, other)),
    }
}

/// The DDL that removes the dictionary from `schema` (functions, topics and strings).
#[pyfunction]
pub(crate) fn dictionary_uninstall(py: Python<'_>, schema: &str) -> PyResult<String> {
    Dictionary::new(schema)
        .map(|ddl| ddl.uninstall().to_string())
        .map_err(|e| sql_error(py, e))
}

/// The statements a dictionary client sends, in psycopg's `%s` style, or asyncpg's `$1` when
/// `numbered`: `(ids, lookup, values, create_topic, drop_topic)`.
#[pyfunction]
#[pyo3(signature = (schema, numbered = false))]
pub(crate) fn _dictionary_statements(
    py: Python<'_>,
    schema: &str,
    numbered: bool,
) -> PyResult<(String, String, String, String, String)> {
    let s = Dictionary::new(schema)
        .map_err(|e| sql_error(py, e))?
        .statements(if numbered {
            Placeholders::Numbered
        } else {
            Placeholders::Format
        });
    Ok((
        s.ids().to_string(),
        s.lookup().to_string(),
        s.values().to_string(),
        s.create_topic().to_string(),
        s.drop_topic().to_string(),
    ))
}

/// Which of `servers` servers holds `topic` (FNV-1a 64, then jump consistent hash).
#[pyfunction]
pub(crate) fn server_for(py: Python<'_>, topic: &Bound<'_, PyAny>, servers: u32) -> PyResult<u32> {
    let topic = text(py, topic, "topic")?;
    dict::check_topic(&topic).map_err(|e| invalid(py, e, "topic"))?;
    Ok(dict::server_for(&topic, servers))
}

/// Checks a topic name as the core does.
#[pyfunction]
pub(crate) fn _check_topic(py: Python<'_>, topic: &Bound<'_, PyAny>) -> PyResult<()> {
    let topic = text(py, topic, "topic")?;
    dict::check_topic(&topic).map_err(|e| invalid(py, e, "topic"))
}

fn invalid(py: Python<'_>, e: Invalid, argument: &str) -> PyErr {
    invalid_argument(py, argument, e.reason())
}

/// A `str` as UTF-8, or `INVALID_ARGUMENT` (a non-string, or one with a lone surrogate).
fn text<'a>(py: Python<'_>, value: &'a Bound<'_, PyAny>, argument: &str) -> PyResult<Cow<'a, str>> {
    let Ok(s) = value.cast::<PyString>() else {
        return Err(wrong_type(value, argument, "a str"));
    };
    s.to_cow().map_err(|_| invalid(py, Invalid::Utf8, argument))
}

fn texts<'a>(py: Python<'_>, values: &'a [Bound<'_, PyAny>]) -> PyResult<Vec<Cow<'a, str>>> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| text(py, v, &format!("values[{i}]")))
        .collect()
}

fn items<'py>(values: &Bound<'py, PyAny>, argument: &str) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if values.is_instance_of::<PyString>() {
        return Err(invalid_argument(
            values.py(),
            argument,
            "must be a list of items, not one str",
        ));
    }
    values
        .try_iter()
        .map_err(|_| invalid_argument(values.py(), argument, "must be a list (or any iterable)"))?
        .collect()
}

/// `(values, ids, misses)`: the strings as a list, their cached IDs, the distinct misses.
type PlannedIds<'py> = (Bound<'py, PyList>, Vec<Option<u64>>, Vec<String>);

/// `(ids, values, misses)`: the IDs, their cached strings, the distinct misses.
type PlannedValues = (Vec<u64>, Vec<Option<String>>, Vec<i64>);

/// The cache of one topic, both directions, bounded: the core's `dictionary::Cache`.
#[pyclass(module = "shardid._shardid", name = "_DictCache", frozen)]
pub(crate) struct PyDictCache {
    /// Shared with the core's list of live objects, which exporters read (weakly).
    inner: Arc<Cache>,
}

// pyo3 converts arguments into owned values.
#[allow(clippy::needless_pass_by_value)]
#[pymethods]
impl PyDictCache {
    #[new]
    #[pyo3(signature = (capacity = dict::DEFAULT_CACHE))]
    fn new(capacity: usize) -> Self {
        Self {
            inner: Arc::new(Cache::new(capacity)),
        }
    }

    #[getter]
    fn capacity(&self) -> usize {
        self.inner.capacity()
    }

    /// What the dictionary did, as a dict of counts named by the core's table (`id_hits`,
    /// `id_misses`, `value_hits`, `value_misses`, `statements`, `retries`).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        crate::stats::to_dict(
            py,
            shardid::stats::DictionaryStats::METRICS,
            &self.inner.stats().values(),
        )
    }

    /// Reports this cache's dictionary (`topic` in `schema`) to exporters while it lives.
    fn _register(&self, schema: &str, topic: &str) {
        shardid::stats::register_dictionary(&self.inner, schema, topic);
    }

    /// Stops reporting this cache's dictionary to exporters: the dictionary was closed (the
    /// object may live on).
    fn _unregister(&self) {
        shardid::stats::unregister_dictionary(&self.inner);
    }

    /// The driver sends a statement (`retry`: again, on a new connection).
    fn _sent(&self, retry: bool) {
        self.inner.sent(retry);
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn clear(&self) {
        self.inner.clear();
    }

    /// The cached ID of `value` (checked first), or `None`.
    fn id(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        let value = text(py, value, "value")?;
        dict::check_value(&value).map_err(|e| invalid(py, e, "value"))?;
        Ok(self.inner.id(&value))
    }

    /// The cached string of `id` (checked first), or `None`.
    fn value(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let id = u64_arg(id, "id", Arg::Other)?;
        dict::check_id(id).map_err(|e| invalid(py, e, "id"))?;
        Ok(self.inner.value(id).map(|v| v.to_string()))
    }

    /// Checks a batch, answers from the cache: `(values, ids, misses)` — the strings as a list,
    /// their IDs (`None` where not cached) and the distinct misses to send. `count=False`: a
    /// second look at strings the call already counted (`stats()` unchanged).
    #[pyo3(signature = (values, count = true))]
    fn plan_ids<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
        count: bool,
    ) -> PyResult<PlannedIds<'py>> {
        let items = items(values, "values")?;
        let strs = texts(py, &items)?;
        let planned = if count {
            self.inner.plan_ids(&strs)
        } else {
            self.inner.plan_ids_uncounted(&strs)
        };
        let (ids, misses) = planned.map_err(|(e, i)| {
            let argument = match e {
                Invalid::Batch => "values".to_owned(),
                _ => format!("values[{i}]"),
            };
            invalid(py, e, &argument)
        })?;
        let misses = misses.into_iter().map(str::to_owned).collect();
        Ok((PyList::new(py, items)?, ids, misses))
    }

    /// Fills the server's answers for the misses in, and caches them if `remember`.
    #[pyo3(signature = (values, ids, misses, answers, remember = true))]
    fn complete_ids(
        &self,
        py: Python<'_>,
        values: Vec<String>,
        mut ids: Vec<Option<u64>>,
        misses: Vec<String>,
        answers: Vec<Option<i64>>,
        remember: bool,
    ) -> PyResult<Vec<Option<u64>>> {
        let answers: Vec<Option<u64>> = answers
            .into_iter()
            .map(|a| a.map(i64::cast_unsigned))
            .collect();
        self.inner
            .merge_ids(&values, &mut ids, &misses, &answers, remember)
            .map_err(|_| mismatch(py))?;
        Ok(ids)
    }

    /// Caches answers a transaction committed (strings and their IDs, `None` skipped).
    fn remember_ids(&self, misses: Vec<String>, answers: Vec<Option<i64>>) {
        let answers: Vec<Option<u64>> = answers
            .into_iter()
            .map(|a| a.map(i64::cast_unsigned))
            .collect();
        self.inner.remember_ids(&misses, &answers);
    }

    /// Checks a batch of IDs, answers from the cache: `(ids, values, misses)`; `count` as for
    /// `plan_ids`.
    #[pyo3(signature = (ids, count = true))]
    fn plan_values(
        &self,
        py: Python<'_>,
        ids: &Bound<'_, PyAny>,
        count: bool,
    ) -> PyResult<PlannedValues> {
        let ids = items(ids, "ids")?
            .iter()
            .enumerate()
            .map(|(i, id)| u64_arg(id, &format!("ids[{i}]"), Arg::Other))
            .collect::<PyResult<Vec<u64>>>()?;
        let planned = if count {
            self.inner.plan_values(&ids)
        } else {
            self.inner.plan_values_uncounted(&ids)
        };
        let (values, misses) = planned.map_err(|(e, i)| {
            let argument = match e {
                Invalid::Batch => "ids".to_owned(),
                _ => format!("ids[{i}]"),
            };
            invalid(py, e, &argument)
        })?;
        Ok((
            ids,
            values
                .into_iter()
                .map(|v| v.map(|v| v.to_string()))
                .collect(),
            misses.into_iter().map(u64::cast_signed).collect(),
        ))
    }

    /// Fills the server's answers for the missing IDs in, and caches them if `remember`.
    #[pyo3(signature = (ids, values, misses, answers, remember = true))]
    fn complete_values(
        &self,
        py: Python<'_>,
        ids: Vec<u64>,
        values: Vec<Option<String>>,
        misses: Vec<u64>,
        answers: Vec<Option<String>>,
        remember: bool,
    ) -> PyResult<Vec<Option<String>>> {
        let mut values: Vec<Option<Arc<str>>> =
            values.into_iter().map(|v| v.map(Arc::from)).collect();
        self.inner
            .merge_values(&ids, &mut values, &misses, &answers, remember)
            .map_err(|_| mismatch(py))?;
        Ok(values
            .into_iter()
            .map(|v| v.map(|v| v.to_string()))
            .collect())
    }
}

fn mismatch(py: Python<'_>) -> PyErr {
    invalid_argument(
        py,
        "answers",
        "do not match the batch: the server's reply was not for these strings",
    )
}
