//! `shardid status`: the core's statements, rows and report (`shardid::sql::status`), run by
//! `shardid/status.py` on psycopg, PyMySQL or sqlite3. Nothing is computed here.

// pyo3 converts Python lists and str into owned arguments.
#![allow(clippy::needless_pass_by_value)]

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use shardid::cli::StatusRun;
use shardid::sql::status::Row;

use crate::layout::PyLayout;

/// A run of `shardid status` (`shardid::cli::StatusRun`): `next()` a statement, `feed(rows)`
/// its rows as text cells, then `output()` (the command line's) or `report_json()`.
#[pyclass(name = "_StatusRun", module = "shardid._shardid")]
pub(crate) struct PyStatusRun {
    inner: StatusRun,
}

#[pymethods]
impl PyStatusRun {
    /// A run on a connection the caller has, of `family` (`"postgres"`, `"mysql"` or
    /// `"sqlite"`; `url` only names the database in errors), or when `family` is `None` on
    /// the database `url` names (the core's rule: `StatusRun::on_connection`). A schema `None`
    /// is the family's default (the lease table's: as a lease finds it).
    /// `InvalidArgumentError` for what the core refuses.
    #[new]
    #[pyo3(signature = (family, url, table, lease_schema, segments_schema, dictionary_schema, layout))]
    #[allow(clippy::too_many_arguments)] // the API's options, passed through
    fn new(
        py: Python<'_>,
        family: Option<&str>,
        url: &str,
        table: &str,
        lease_schema: Option<&str>,
        segments_schema: Option<&str>,
        dictionary_schema: Option<&str>,
        layout: PyRef<'_, PyLayout>,
    ) -> PyResult<Self> {
        StatusRun::on_connection(
            family,
            url,
            table,
            lease_schema,
            segments_schema,
            dictionary_schema,
            layout.inner,
        )
        .map(|inner| Self { inner })
        .map_err(|(argument, reason)| crate::errors::invalid_argument(py, argument, &reason))
    }

    /// The URL the command line was given.
    #[getter]
    fn url(&self) -> String {
        self.inner.url().into()
    }

    /// `"postgres"`, `"mysql"` or `"sqlite"`: which driver runs the statements.
    #[getter]
    fn family(&self) -> &'static str {
        self.inner.family().family_name()
    }

    /// The file of a `sqlite:` URL, opened read-only (for writing under `restored`); `None` for
    /// the other databases.
    #[getter]
    fn sqlite_path(&self) -> Option<String> {
        self.inner.sqlite_path().map(Into::into)
    }

    /// Whether this is `shardid restored`, which marks rows (a SQLite file is opened for writing).
    #[getter]
    fn marks_restored(&self) -> bool {
        self.inner.marks_restored()
    }

    /// The next statement, or `None` when done.
    fn next(&self) -> Option<String> {
        self.inner.next()
    }

    /// The rows of the last statement: text or `None` cells. `ValueError` for rows none of
    /// the statements return.
    fn feed(&mut self, rows: Vec<Row>) -> PyResult<()> {
        self.inner.feed(&rows).map_err(PyValueError::new_err)
    }

    /// (stdout, stderr, exit status) of the command line.
    fn output(&self) -> (String, String, i32) {
        let out = self.inner.output();
        (out.stdout, out.stderr, out.code)
    }

    /// (stdout, stderr, exit status) when the database could not be read: `why`, exit 2.
    fn failed(&self, why: &str) -> (String, String, i32) {
        let out = self.inner.failed(why);
        (out.stdout, out.stderr, out.code)
    }

    /// The report as text.
    fn report_text(&self) -> String {
        self.inner.report_text()
    }

    /// The report as JSON (schema version 1).
    fn report_json(&self) -> String {
        self.inner.report_json()
    }
}

/// `shardid status ...`'s arguments as a `_StatusRun`, or the (stdout, stderr, exit status)
/// of a usage error.
#[pyfunction]
pub(crate) fn _cli_status(py: Python<'_>, args: Vec<String>) -> PyResult<Py<PyAny>> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match shardid::cli::status(&args) {
        Ok(inner) => Ok(Py::new(py, PyStatusRun { inner })?.into_any()),
        Err(out) => Ok((out.stdout, out.stderr, out.code)
            .into_pyobject(py)?
            .into_any()
            .unbind()),
    }
}
