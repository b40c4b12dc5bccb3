//! SQLite's SQL from the core (`shardid::sql::sqlite`), for `shardid.sql` (the DDL of
//! `segments(dialect="sqlite")` and `dictionary(dialect="sqlite")`) and the `sqlite3` drivers
//! in `shardid._sqlite`. Not for direct use.

use pyo3::prelude::*;
use shardid::sql::Placeholders;
use shardid::sql::sqlite::{
    ConnectionSetup, SqliteDictionary, SqliteDictionaryStatements, SqliteSegmentStatements,
    SqliteSegments, SqliteSerialStatements, SqliteTake, SqliteTakeStep, period_fits, period_tag,
};

use crate::sql::sql_error;

/// The DDL of segments (with the serials' registrations) on SQLite.
pub(crate) fn segments_ddl(py: Python<'_>, schema: &str) -> PyResult<String> {
    SqliteSegments::new(schema)
        .map(|ddl| ddl.to_string())
        .map_err(|e| sql_error(py, e))
}

/// The DDL of the dictionary on SQLite.
pub(crate) fn dictionary_ddl(py: Python<'_>, schema: &str) -> PyResult<String> {
    SqliteDictionary::new(schema)
        .map(|ddl| ddl.to_string())
        .map_err(|e| sql_error(py, e))
}

/// Every statement a `sqlite3` driver sends in one schema (`main`, or an attached database),
/// in `sqlite3`'s `?` style; those taking a list are rendered for `n` items.
#[pyclass(module = "shardid._sqlite", name = "_SqliteSql", frozen)]
pub(crate) struct PySqliteSql {
    schema: String,
}

impl PySqliteSql {
    fn segments(&self) -> SqliteSegmentStatements<'_> {
        SqliteSegments::new(&self.schema).map_or_else(
            |_| unreachable!("checked in new"),
            |s| s.statements(Placeholders::Question),
        )
    }
    fn serials(&self) -> SqliteSerialStatements<'_> {
        SqliteSegments::new(&self.schema).map_or_else(
            |_| unreachable!("checked in new"),
            |s| s.serial_statements(Placeholders::Question),
        )
    }
    fn dictionary(&self) -> SqliteDictionaryStatements<'_> {
        SqliteDictionary::new(&self.schema).map_or_else(
            |_| unreachable!("checked in new"),
            |d| d.statements(Placeholders::Question),
        )
    }
}

#[pymethods]
impl PySqliteSql {
    #[new]
    fn new(py: Python<'_>, schema: &str) -> PyResult<Self> {
        let _checked = SqliteSegments::new(schema).map_err(|e| sql_error(py, e))?;
        Ok(Self {
            schema: schema.into(),
        })
    }

    /// What every new connection runs first (busy timeout, WAL, `synchronous = FULL`).
    #[staticmethod]
    fn setup(busy_timeout_ms: u64) -> String {
        ConnectionSetup(busy_timeout_ms).to_string()
    }
    /// The segments' DDL (and the serials' registrations): tables created on first use.
    fn segments_ddl(&self, py: Python<'_>) -> PyResult<String> {
        segments_ddl(py, &self.schema)
    }
    /// The dictionary's DDL.
    fn dictionary_ddl(&self, py: Python<'_>) -> PyResult<String> {
        dictionary_ddl(py, &self.schema)
    }
    /// The DDL that removes the tags and the serials' registrations.
    fn segments_uninstall(&self) -> String {
        SqliteSegments::new(&self.schema).map_or_else(
            |_| unreachable!("checked in new"),
            |s| s.uninstall().to_string(),
        )
    }
    /// The DDL that removes the dictionary.
    fn dictionary_uninstall(&self) -> String {
        SqliteDictionary::new(&self.schema).map_or_else(
            |_| unreachable!("checked in new"),
            |d| d.uninstall().to_string(),
        )
    }

    fn take(&self) -> String {
        self.segments().take().to_string()
    }
    fn read(&self) -> String {
        self.segments().read().to_string()
    }
    fn give_back(&self) -> String {
        self.segments().give_back().to_string()
    }
    fn create_tag(&self) -> String {
        self.segments().create_tag().to_string()
    }

    fn serial_create(&self, n: usize) -> String {
        self.serials().create(n).to_string()
    }
    fn serial_info(&self) -> String {
        self.serials().info().to_string()
    }

    fn find(&self, n: usize) -> String {
        self.dictionary().find(n).to_string()
    }
    fn find_values(&self, n: usize) -> String {
        self.dictionary().find_values(n).to_string()
    }
    fn create_topic(&self) -> String {
        self.dictionary().create_topic().to_string()
    }
    fn drop_topic(&self) -> String {
        self.dictionary().drop_topic().to_string()
    }
    fn state(&self) -> String {
        self.dictionary().state().to_string()
    }
}

/// The steps of one take (the core's `SqliteTake`): `reading` says which statement to send
/// (the read, else the take); `answer(row)` takes its row (`None`: no row) and returns
/// `(segment, problem)`: the segment `(first, count, stride)` when it is there, the problem
/// `(SQLSTATE, the core's words)` when there is none (`SI001` unknown tag, the exhausted tag's,
/// `22023` a bad size, `XX000` a row no shardid DDL makes), neither: send the next statement.
#[pyclass(module = "shardid._sqlite", name = "_SqliteTake")]
pub(crate) struct PySqliteTake {
    inner: SqliteTake,
}

#[pymethods]
impl PySqliteTake {
    #[new]
    fn new(size: u64) -> Self {
        Self {
            inner: SqliteTake::new(size),
        }
    }

    #[getter]
    fn reading(&self) -> bool {
        self.inner.step() == SqliteTakeStep::Read
    }

    #[allow(clippy::type_complexity)] // the pair the driver takes apart
    fn answer(
        &mut self,
        row: Option<(i64, i64, i64)>,
    ) -> (Option<(u64, u64, u64)>, Option<(&'static str, String)>) {
        match self.inner.answer(row) {
            Ok(segment) => (segment.map(|s| (s.first, s.count, s.stride)), None),
            Err(e) => (None, Some((e.sqlstate(), e.to_string()))),
        }
    }
}

/// SQLite's writer numbering a dictionary's new strings (the core's
/// `shardid::dictionary::protocol::SqliteAssign`), for `_sqlite.py` to run over `sqlite3`:
/// `BEGIN IMMEDIATE` (a savepoint inside the caller's transaction), the topic's row, the
/// re-check under the write lock, the numbering, the inserts, the guarded advance, the commit
/// and the rollback after a failed step are the core's; the executor only runs them. `next()`
/// answers `("run", sql, values)`, `("assigned", ids)` or `("failed", why)` (`"driver"`: raise
/// the driver's error; `"unknown_topic"`, `"topic_dropped"`, `"unusable"`).
#[pyclass(module = "shardid._shardid", name = "_SqliteAssign")]
pub(crate) struct PySqliteAssign {
    inner: shardid::dictionary::protocol::SqliteAssign,
}

#[pymethods]
impl PySqliteAssign {
    /// The writer numbering `missing` (distinct strings) of `topic` in `schema`; `savepoint`:
    /// inside a transaction the caller holds.
    #[new]
    #[allow(clippy::needless_pass_by_value)] // pyo3 extracts a list into a Vec
    fn new(
        py: Python<'_>,
        schema: &str,
        topic: &str,
        missing: Vec<String>,
        savepoint: bool,
    ) -> PyResult<Self> {
        let missing: Vec<&str> = missing.iter().map(String::as_str).collect();
        let inner = shardid::dictionary::protocol::SqliteAssign::new(
            schema,
            Placeholders::Question,
            topic,
            &missing,
        )
        .map_err(|e| sql_error(py, e))?;
        Ok(Self {
            inner: if savepoint {
                inner.in_savepoint()
            } else {
                inner
            },
        })
    }

    /// What to do next (see the class).
    fn next<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::step::assign_step(py, self.inner.next())
    }

    /// Every row the step returned.
    #[allow(clippy::needless_pass_by_value)] // pyo3 extracts a list into a Vec
    fn answer(&mut self, rows: Vec<Vec<Option<crate::step::Column>>>) {
        crate::step::answer_rows(&rows, |cells| self.inner.answer(cells));
    }

    /// The step failed (its error is the executor's to raise).
    fn failed(&mut self) {
        self.inner.failed();
    }

    /// The executor was interrupted (`KeyboardInterrupt`) somewhere in the current step: the
    /// next steps roll back whatever began.
    fn interrupted(&mut self) {
        self.inner.interrupted();
    }
}

/// The tag holding `tag`'s numbers of `period` (`tag@2026-11-25`; `tag` for `""`).
#[pyfunction]
pub(crate) fn _sqlite_period_tag(tag: &str, period: &str) -> String {
    period_tag(tag, period).to_string()
}

/// Whether `period` is a period of a tag that resets every `reset`.
#[pyfunction]
pub(crate) fn _sqlite_period_fits(reset: &str, period: &str) -> bool {
    period_fits(reset, period)
}

/// The file a `sqlite:` URL names (`sqlite:///rel.db`, `sqlite:////abs.db`), or
/// `INVALID_ARGUMENT` on `argument`: the core's `usable_file`, the one reading of a URL every
/// client opens its file by (in-memory databases, hosts, query strings and files on a network
/// filesystem refused, with the core's messages).
#[pyfunction]
pub(crate) fn _sqlite_path<'u>(py: Python<'_>, url: &'u str, argument: &str) -> PyResult<&'u str> {
    shardid::sql::sqlite::usable_file(url)
        .map_err(|why| crate::errors::invalid_argument(py, argument, &why))
}
