//! The MySQL family's SQL from the core (`shardid::sql::mysql`), for `shardid.sql` and the
//! PyMySQL drivers in `shardid._mysql`. Not for direct use, except `mysql()` and
//! `mysql_statements()`, re-exported by `shardid.sql`.

use pyo3::prelude::*;
use shardid::sql::mysql::{
    MysqlDictionaryStatements, MysqlSerials, MysqlUrl, registration_problem, script_statements,
};
use shardid::sql::{Dialect, Mysql, MysqlDictionary, MysqlSegments, Placeholders};

use crate::args::{Arg, options_arg, u64_arg};
use crate::errors::invalid_argument;
use crate::layout::PyLayout;
use crate::sql::sql_error;

/// The dialect named by `dialect` (`None`: PostgreSQL), or `INVALID_ARGUMENT`.
pub(crate) fn dialect_arg(py: Python<'_>, dialect: Option<&str>) -> PyResult<Dialect> {
    match dialect {
        None => Ok(Dialect::Postgres),
        Some(name) => Dialect::from_name(name).ok_or_else(|| {
            invalid_argument(
                py,
                "dialect",
                &format!("must be one of {}, not {name:?}", Dialect::NAMES),
            )
        }),
    }
}

/// `INVALID_ARGUMENT` on `dialect` for a dialect the core added that this binding does not
/// take yet (`Dialect` is `#[non_exhaustive]`).
pub(crate) fn unsupported_dialect(py: Python<'_>, dialect: Dialect) -> PyErr {
    invalid_argument(
        py,
        "dialect",
        &format!("{} is not supported here", dialect.name()),
    )
}

/// The MySQL family's dialect named by `dialect` (`None`: MySQL's, which MariaDB runs too), or
/// `INVALID_ARGUMENT`.
pub(crate) fn mysql_dialect_arg(py: Python<'_>, dialect: Option<&str>) -> PyResult<Dialect> {
    match dialect_arg(py, dialect.or(Some("mysql")))? {
        other @ (Dialect::Mysql | Dialect::Mariadb) => Ok(other),
        other => Err(invalid_argument(
            py,
            "dialect",
            &format!("must be 'mysql' or 'mariadb' here, not '{}'", other.name()),
        )),
    }
}

/// The DDL that makes `<database>.next_id()` and the decoding functions for `layout` and
/// `shard` inside MySQL 8 or MariaDB (`schema` names the database; `dialect="mariadb"` names a
/// Galera cluster as one server).
#[pyfunction]
#[pyo3(signature = (layout, shard, schema, *, backwards_tolerance_ms = None, max_borrow_units = None, dialect = None))]
pub(crate) fn mysql(
    py: Python<'_>,
    layout: &Bound<'_, PyLayout>,
    shard: &Bound<'_, PyAny>,
    schema: &str,
    backwards_tolerance_ms: Option<&Bound<'_, PyAny>>,
    max_borrow_units: Option<&Bound<'_, PyAny>>,
    dialect: Option<&str>,
) -> PyResult<String> {
    let layout = layout.get().inner;
    let shard = u64_arg(shard, "shard", Arg::Shard(layout.max_shard()))?;
    let options = options_arg(backwards_tolerance_ms, max_borrow_units)?;
    let dialect = mysql_dialect_arg(py, dialect)?;
    Mysql::new(layout, shard, schema)
        .map(|ddl| ddl.options(options).dialect(dialect).to_string())
        .map_err(|e| sql_error(py, e))
}

/// The statements of a MySQL script (the DDL `mysql()`, `segments(dialect="mysql")` and
/// `dictionary(dialect="mysql")` render), for a driver to send one at a time.
#[pyfunction]
pub(crate) fn mysql_statements(script: &str) -> Vec<String> {
    script_statements(script).map(String::from).collect()
}

/// The DDL of segments on MySQL (`segments(..., dialect="mysql")` or `"mariadb"`).
pub(crate) fn segments_ddl(
    py: Python<'_>,
    schema: &str,
    servers: u64,
    index: u64,
    dialect: Dialect,
) -> PyResult<String> {
    MysqlSegments::new(schema)
        .and_then(|ddl| ddl.ticket_server(servers, index))
        .map(|ddl| ddl.dialect(dialect).to_string())
        .map_err(|e| sql_error(py, e))
}

/// The DDL of the dictionary on MySQL (`dictionary(..., dialect="mysql")` or `"mariadb"`).
pub(crate) fn dictionary_ddl(py: Python<'_>, schema: &str, dialect: Dialect) -> PyResult<String> {
    MysqlDictionary::new(schema)
        .map(|ddl| ddl.dialect(dialect).to_string())
        .map_err(|e| sql_error(py, e))
}

/// The statements a segment client sends, in PyMySQL's `%s` style, for a server of `dialect`
/// (`"mysql"` or `"mariadb"`): `(read, take, give_back, create_tag)`.
#[pyfunction]
#[pyo3(signature = (schema, dialect = None))]
pub(crate) fn _mysql_segment_statements(
    py: Python<'_>,
    schema: &str,
    dialect: Option<&str>,
) -> PyResult<(String, String, String, String)> {
    let dialect = mysql_dialect_arg(py, dialect)?;
    let s = MysqlSegments::new(schema)
        .map_err(|e| sql_error(py, e))?
        .dialect(dialect)
        .statements(Placeholders::Format);
    Ok((
        s.read().to_string(),
        s.take().to_string(),
        s.give_back().to_string(),
        s.create_tag().to_string(),
    ))
}

/// The DDL of serial numbers' registrations in database `schema` on MySQL 8 or MariaDB: run it
/// after the segments' DDL (`segments(schema, dialect="mysql")`), whose tags each period takes
/// its numbers from. (PostgreSQL's and SQLite's segments DDL holds the registrations already.)
#[pyfunction]
pub(crate) fn mysql_serials(py: Python<'_>, schema: &str) -> PyResult<String> {
    MysqlSerials::new(schema)
        .map(|ddl| ddl.to_string())
        .map_err(|e| sql_error(py, e))
}

/// The statements a serial driver sends on MySQL or MariaDB, in PyMySQL's `%s` style (the same
/// in both dialects): `(info, register, registered, create_period)`, each taking the
/// parameters the core's `MysqlSerialStatements` documents.
#[pyfunction]
pub(crate) fn _mysql_serial_statements(
    py: Python<'_>,
    schema: &str,
) -> PyResult<(String, String, String, String)> {
    let s = MysqlSerials::new(schema)
        .map_err(|e| sql_error(py, e))?
        .statements(Placeholders::Format);
    Ok((
        s.info().to_string(),
        s.register().to_string(),
        s.registered().to_string(),
        s.create_period().to_string(),
    ))
}

/// Why registering `tag` as `canonical` in `zone` does not fit the rows the `registered`
/// statement returned (`(tag, canonical, zone)`), or `None` (the core's
/// `registration_problem`).
#[pyfunction]
#[allow(clippy::needless_pass_by_value)] // pyo3 extracts a list into a Vec
pub(crate) fn _mysql_registration_problem(
    rows: Vec<(String, String, String)>,
    tag: &str,
    canonical: &str,
    zone: &str,
) -> Option<String> {
    registration_problem(
        rows.iter()
            .map(|(t, c, z)| (t.as_str(), c.as_str(), z.as_str())),
        tag,
        canonical,
        zone,
    )
}

/// The dictionary's statements for one database, in PyMySQL's `%s` style; those taking a list
/// are rendered for `n` items.
#[pyclass(module = "shardid._mysql", name = "_MysqlDictSql", frozen)]
pub(crate) struct PyMysqlDictSql {
    schema: String,
    dialect: Dialect,
}

impl PyMysqlDictSql {
    fn statements(&self) -> MysqlDictionaryStatements<'_> {
        // Checked in `new`.
        MysqlDictionary::new(&self.schema).map_or_else(
            |_| unreachable!("checked in new"),
            |d| d.dialect(self.dialect).statements(Placeholders::Format),
        )
    }
}

#[pymethods]
impl PyMysqlDictSql {
    #[new]
    #[pyo3(signature = (schema, dialect = None))]
    fn new(py: Python<'_>, schema: &str, dialect: Option<&str>) -> PyResult<Self> {
        let _checked = MysqlDictionary::new(schema).map_err(|e| sql_error(py, e))?;
        Ok(Self {
            schema: schema.into(),
            dialect: mysql_dialect_arg(py, dialect)?,
        })
    }
    fn find(&self, n: usize) -> String {
        self.statements().find(n).to_string()
    }
    fn find_values(&self, n: usize) -> String {
        self.statements().find_values(n).to_string()
    }
    fn lock(&self) -> String {
        self.statements().lock().to_string()
    }
    fn recheck(&self, n: usize) -> String {
        self.statements().recheck(n).to_string()
    }
    fn insert(&self, n: usize) -> String {
        self.statements().insert(n).to_string()
    }
    fn advance(&self) -> String {
        self.statements().advance().to_string()
    }
    fn create_topic(&self) -> String {
        self.statements().create_topic().to_string()
    }
    fn drop_topic(&self) -> String {
        self.statements().drop_topic().to_string()
    }
    fn state(&self) -> String {
        self.statements().state().to_string()
    }
}

/// The dialect of a server by its answer to `_MYSQL_DETECT_DIALECT` (the core's
/// `Dialect::detected`): `code` is the MySQL error number it refused the statement with, or
/// `None` when it answered; `None` back for an error that says nothing of the dialect (the
/// driver raises it).
#[pyfunction]
pub(crate) fn _mysql_detected(code: Option<&Bound<'_, PyAny>>) -> Option<&'static str> {
    let code = match code {
        None => None,
        // Any integer a driver put first in its error's arguments (however large).
        Some(code) => Some(code.extract::<u16>().ok()?.to_string()),
    };
    Dialect::detected(code.as_deref()).map(Dialect::name)
}

/// `(user, password, host, port, database)` of a `mysql://` or `mariadb://` URL, or
/// `INVALID_ARGUMENT` on `url`.
#[pyfunction]
#[allow(clippy::type_complexity)] // the tuple PyMySQL's connect() takes apart
pub(crate) fn _mysql_url(
    py: Python<'_>,
    url: &str,
) -> PyResult<(String, Option<String>, String, u16, Option<String>)> {
    let u = MysqlUrl::parse(url).map_err(|reason| invalid_argument(py, "url", reason))?;
    Ok((u.user, u.password, u.host, u.port, u.database))
}

/// The database a connection string names, by the core's one rule for the Python clients
/// (`Dialect::of_sqlalchemy_url`: `Dialect::of_url`'s, and `SQLAlchemy`'s `family+driver://`):
/// `"postgres"`, `"mysql"`, `"mariadb"` or `"sqlite"`; any other scheme is `INVALID_ARGUMENT` on
/// `argument`, naming the schemes taken. Every client decides its driver by it.
#[pyfunction]
pub(crate) fn _database_of_url(
    py: Python<'_>,
    url: &str,
    argument: &str,
) -> PyResult<&'static str> {
    shardid::sql::Dialect::of_sqlalchemy_url(url)
        .map(shardid::sql::Dialect::name)
        .map_err(|why| invalid_argument(py, argument, &why.to_string()))
}

/// A connection string as messages show it, by the core's one rule (`sql::url_shown`):
/// `host:port/database` only, never a user or a password.
#[pyfunction]
pub(crate) fn _url_shown(url: &str) -> String {
    shardid::sql::url_shown(url)
}

/// `text` (a driver's words about a connection to `url`) without the password `url` holds,
/// by the core's rule (`sql::redacted`): every driver error about a connection passes through
/// it before a message shows it.
#[pyfunction]
pub(crate) fn _redacted(text: &str, url: &str) -> String {
    shardid::sql::redacted(text, url)
}

/// The core's transaction that numbers a dictionary's new strings on the MySQL family
/// (`shardid::dictionary::protocol::MysqlAssign`), for `_dictionary_async.py` to run over
/// PyMySQL, aiomysql or Django's connection: the lock, the locking re-check, the numbering, the
/// insert, the move of the topic's next ID and the run again of a transaction the server rolled
/// back whole are the core's; the executor only runs them. `next()` answers a tuple:
/// `("begin",)`, `("commit",)`, `("rollback",)`, `("run", sql, values)`, `("assigned", ids)`
/// (each string's ID, in order) or `("failed", why)`: `"driver"` (raise the last driver error
/// fed), `"unknown_topic"`, `"topic_dropped"`, `"unusable"`.
#[pyclass(module = "shardid._shardid", name = "_MysqlAssign")]
pub(crate) struct PyMysqlAssign {
    inner: shardid::dictionary::protocol::MysqlAssign,
}

#[pymethods]
impl PyMysqlAssign {
    /// The transaction numbering `missing` (distinct strings) of `topic` on a server of
    /// `dialect` (`"mysql"`, `"mariadb"`) whose `schema` holds the DDL; `resend`: run again
    /// when the server rolled it back whole (not inside a caller's transaction).
    #[new]
    #[allow(clippy::needless_pass_by_value)] // pyo3 extracts a list into a Vec
    fn new(
        py: Python<'_>,
        dialect: &str,
        schema: &str,
        topic: &str,
        missing: Vec<String>,
        resend: bool,
    ) -> PyResult<Self> {
        let dialect = dialect_arg(py, Some(dialect))?;
        let missing: Vec<&str> = missing.iter().map(String::as_str).collect();
        let inner = shardid::dictionary::protocol::MysqlAssign::new(
            dialect,
            schema,
            Placeholders::Format,
            topic,
            &missing,
        )
        .map_err(|e| sql_error(py, e))?;
        Ok(Self {
            inner: if resend { inner } else { inner.once() },
        })
    }

    /// What to do next (see the class).
    fn next<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::step::assign_step(py, self.inner.next())
    }

    /// Every row the step returned (`(value, id)` with the value as text, `(topic_id, next,
    /// dropped, moved)` as integers; none for the others).
    #[allow(clippy::needless_pass_by_value)] // pyo3 extracts a list into a Vec
    fn answer(&mut self, rows: Vec<Vec<Option<crate::step::Column>>>) {
        crate::step::answer_rows(&rows, |cells| self.inner.answer(cells));
    }

    /// The step failed with the driver's MySQL error number `code` (`None`: none, a lost
    /// connection).
    #[pyo3(signature = (code = None))]
    fn failed(&mut self, code: Option<&Bound<'_, PyAny>>) {
        // Any integer a driver put first in its error's arguments (however large).
        let code = code
            .and_then(|c| c.extract::<u64>().ok())
            .map(|c| c.to_string());
        self.inner.failed(code.as_deref());
    }
}
