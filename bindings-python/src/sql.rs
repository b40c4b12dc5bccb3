//! `shardid.sql.postgres`: the core's PostgreSQL DDL emitter.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyTuple};
use shardid::ErrorKind;
use shardid::sql::{
    Answer, Cell, LeaseKind, LeaseProtocol, Next, Placeholders, Postgres, PostgresPublicIds,
    PostgresUninstall, SqlError, Value,
};

use crate::args::{Arg, options_arg, u64_arg};
use crate::errors::{core_error, invalid_argument, raise_kind};
use crate::layout::PyLayout;

/// The DDL that makes `<schema>.next_id()` and the decoding functions for `layout` and
/// `shard` inside PostgreSQL.
#[pyfunction]
#[pyo3(signature = (layout, shard, schema, *, backwards_tolerance_ms = None, max_borrow_units = None))]
pub(crate) fn postgres(
    py: Python<'_>,
    layout: &Bound<'_, PyLayout>,
    shard: &Bound<'_, PyAny>,
    schema: &str,
    backwards_tolerance_ms: Option<&Bound<'_, PyAny>>,
    max_borrow_units: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let layout = layout.get().inner;
    let shard = u64_arg(shard, "shard", Arg::Shard(layout.max_shard()))?;
    let options = options_arg(backwards_tolerance_ms, max_borrow_units)?;
    match Postgres::new(layout, shard, schema) {
        Ok(ddl) => Ok(ddl.options(options).to_string()),
        Err(e) => Err(sql_error(py, e)),
    }
}

/// The DDL of public IDs in PostgreSQL for IDs of `layout` (default: Instagram's, every ID of
/// a signed 64-bit column): `<schema>.shardid_public_encode(id, keys, prefix, encoding)` and
/// `<schema>.shardid_public_decode(text, keys, prefix, encoding)`.
#[pyfunction]
#[pyo3(signature = (schema, layout = None))]
pub(crate) fn public_ids_sql(
    py: Python<'_>,
    schema: &str,
    layout: Option<&Bound<'_, PyLayout>>,
) -> PyResult<String> {
    let layout = layout.map_or(shardid::Layout::INSTAGRAM, |l| l.get().inner);
    PostgresPublicIds::new(layout, schema)
        .map(|ddl| ddl.to_string())
        .map_err(|e| sql_error(py, e))
}

/// The DDL that removes what `public_ids_sql()` installed in `schema`.
#[pyfunction]
pub(crate) fn public_ids_sql_uninstall(py: Python<'_>, schema: &str) -> PyResult<String> {
    PostgresPublicIds::new(shardid::Layout::INSTAGRAM, schema)
        .map(|ddl| ddl.uninstall().to_string())
        .map_err(|e| sql_error(py, e))
}

/// The DDL that removes what `postgres()` installed in `schema`.
#[pyfunction]
pub(crate) fn postgres_uninstall(py: Python<'_>, schema: &str) -> PyResult<String> {
    PostgresUninstall::new(schema)
        .map(|ddl| ddl.to_string())
        .map_err(|e| sql_error(py, e))
}

/// The Python exception for a refused schema or table name, or a core error.
pub(crate) fn sql_error(py: Python<'_>, e: SqlError) -> PyErr {
    match e {
        SqlError::Core(e) => core_error(py, e),
        SqlError::SchemaName { reason } => {
            invalid_argument(py, "schema", &format!("is not a valid name: {reason}"))
        }
        SqlError::TableName { reason } => {
            invalid_argument(py, "table", &format!("is not a valid name: {reason}"))
        }
        SqlError::EmptyShards { first, end } => invalid_argument(
            py,
            "shards",
            &shardid::sql::EmptyShards { first, end }.to_string(),
        ),
        _ => invalid_argument(py, "schema", &e.to_string()),
    }
}

/// The core's lease protocol (`shardid::sql::LeaseProtocol`), for `shardid.postgres`,
/// `shardid.mysql` and `shardid.sqlite` to run with any DB-API driver (psycopg, psycopg2,
/// PyMySQL, mysqlclient: `%s` placeholders; `sqlite3`: `?`, as the core renders SQLite's for
/// [`Placeholders::Format`]): `next()` gives what to do, `feed()` / `fail()` what the database
/// answered. `dialect` names the core's dialect (`Dialect::from_name`), `"sqlite"` included: the
/// core renders each from its own statements (`LeaseProtocol::dialect`), never another's. Not
/// for direct use.
#[pyclass(module = "shardid._shardid", name = "_LeaseProtocol")]
pub(crate) struct PyLeaseProtocol {
    protocol: LeaseProtocol,
}

fn values<'py>(py: Python<'py>, values: &[Value<'_>]) -> PyResult<Bound<'py, PyTuple>> {
    let values: PyResult<Vec<Bound<'py, PyAny>>> = values
        .iter()
        .map(|value| {
            Ok(match value {
                Value::Text(text) => text.into_pyobject(py)?.into_any(),
                Value::Int(n) => n.into_pyobject(py)?.into_any(),
            })
        })
        .collect();
    PyTuple::new(py, values?)
}

/// A row's columns as the core reads them.
enum Column {
    Null,
    Bool(bool),
    Int(i64),
    Text(String),
}

impl Column {
    fn cell(&self) -> Cell<'_> {
        match self {
            Self::Null => Cell::Null,
            Self::Bool(b) => Cell::Bool(*b),
            Self::Int(n) => Cell::Int(*n),
            Self::Text(t) => Cell::Text(t),
        }
    }
}

/// A row's columns as the core reads them (`None`: no row). Bytes (MySQL's binary strings) are
/// read as UTF-8 text; integers beyond `i64` (a MySQL last insert ID) as their decimal text.
fn columns(row: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<Column>>> {
    let Some(row) = row else {
        return Ok(None);
    };
    let mut columns = Vec::new();
    for value in row.try_iter()? {
        let value = value?;
        columns.push(if value.is_none() {
            Column::Null
        } else if value.is_instance_of::<PyBool>() {
            Column::Bool(value.is_truthy()?)
        } else if let Ok(n) = value.extract::<i64>() {
            Column::Int(n)
        } else if let Ok(bytes) = value.cast::<pyo3::types::PyBytes>() {
            Column::Text(String::from_utf8_lossy(bytes.as_bytes()).into_owned())
        } else {
            Column::Text(value.str()?.to_string())
        });
    }
    Ok(Some(columns))
}

#[pymethods]
impl PyLeaseProtocol {
    #[new]
    #[pyo3(signature = (kind, ttl_ms, layout, table, first, end, holder, dialect = None, schema = None, numbered = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        kind: &str,
        ttl_ms: &Bound<'_, PyAny>,
        layout: &Bound<'_, PyLayout>,
        table: &str,
        first: &Bound<'_, PyAny>,
        end: &Bound<'_, PyAny>,
        holder: &str,
        dialect: Option<&str>,
        schema: Option<&str>,
        numbered: bool,
    ) -> PyResult<Self> {
        let dialect = crate::mysql::dialect_arg(py, dialect)?;
        let ttl_ms = u64_arg(ttl_ms, "ttl_ms", Arg::Other)?;
        let kind = LeaseKind::parse(kind, ttl_ms)
            .map_err(|e| invalid_argument(py, e.argument(), &e.to_string()))?;
        let first = u64_arg(first, "first", Arg::Other)?;
        let end = u64_arg(end, "end", Arg::Other)?;
        let protocol = LeaseProtocol::new(
            kind,
            layout.get().inner,
            table,
            // asyncpg's `$1` when `numbered`, the DB-API's `%s` otherwise.
            if numbered {
                Placeholders::Numbered
            } else {
                Placeholders::Format
            },
            first,
            end,
            holder,
            &shardid::lease::new_token(),
        )
        .and_then(|p| p.schema(schema))
        .and_then(|p| p.dialect(dialect))
        .map_err(|e| sql_error(py, e))?;
        Ok(Self { protocol })
    }

    /// What to do next: `("run", sql, params)`, `("taken", shard, ceiling or None, backend or
    /// None)`, or `("raise",)` (raise the error just fed, as it is); raises
    /// `NoFreeShardError` when every shard is held, `UnsupportedError` when this kind of lease
    /// cannot hold on the server (a session lease on a Galera node, or on SQLite).
    fn next<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        match self.protocol.next() {
            Next::Run { sql, params } => {
                let params = values(py, &params)?.into_any();
                PyTuple::new(
                    py,
                    [
                        "run".into_pyobject(py)?.into_any(),
                        sql.into_pyobject(py)?.into_any(),
                        params,
                    ],
                )
            }
            Next::Taken {
                shard,
                recorded,
                backend,
            } => PyTuple::new(
                py,
                [
                    "taken".into_pyobject(py)?.into_any(),
                    shard.into_pyobject(py)?.into_any(),
                    recorded.into_pyobject(py)?.into_any(),
                    backend.into_pyobject(py)?.into_any(),
                ],
            ),
            Next::NoFreeShard {
                first,
                end,
                held_in,
            } => Err(no_free_shard(py, first, end, &held_in)),
            Next::Raise => PyTuple::new(py, ["raise"]),
            Next::Refuse { reason } => {
                let mut message = String::new();
                let _ = ErrorKind::Unsupported.render(&mut message, |_, out| {
                    out.push_str(reason);
                    Ok(())
                });
                Err(raise_kind(
                    py,
                    ErrorKind::Unsupported,
                    &message,
                    &[("reason", reason.into_pyobject(py)?.into_any())],
                ))
            }
            Next::Invalid { argument, reason } => Err(invalid_argument(py, argument, &reason)),
            Next::ClockSkew { ahead_ms, max_ms } => {
                let mut message = String::new();
                let _ = ErrorKind::ClockSkew.render(&mut message, |name, out| {
                    out.push_str(&if name == "ahead_ms" { ahead_ms } else { max_ms }.to_string());
                    Ok(())
                });
                Err(raise_kind(
                    py,
                    ErrorKind::ClockSkew,
                    &message,
                    &[
                        ("ahead_ms", ahead_ms.into_pyobject(py)?.into_any()),
                        ("max_ms", max_ms.into_pyobject(py)?.into_any()),
                    ],
                ))
            }
            Next::Corrupt { reason } => {
                let mut message = String::new();
                let _ = ErrorKind::Database.render(&mut message, |_, out| {
                    out.push_str(&reason);
                    Ok(())
                });
                Err(raise_kind(
                    py,
                    ErrorKind::Database,
                    &message,
                    &[("reason", reason.into_pyobject(py)?.into_any())],
                ))
            }
        }
    }

    /// Feeds the first row the last statement returned (`None`: no row; on MySQL a statement
    /// without rows is answered `(rowcount, lastrowid)`).
    fn feed(&mut self, row: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let columns = columns(row)?;
        match &columns {
            None => self.protocol.feed(Answer::NoRow),
            Some(columns) => {
                let cells: Vec<Cell<'_>> = columns.iter().map(Column::cell).collect();
                self.protocol.feed(Answer::Row(&cells));
            }
        }
        Ok(())
    }

    /// Whether the answer to `renew`, `record` or `release` (a row, or `None`) says the lease
    /// is still held: `False` means it is lost.
    fn kept(&self, row: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
        Ok(match columns(row)? {
            None => self.protocol.kept(Answer::NoRow),
            Some(columns) => {
                let cells: Vec<Cell<'_>> = columns.iter().map(Column::cell).collect();
                self.protocol.kept(Answer::Row(&cells))
            }
        })
    }

    /// How far this host's clock was ahead of the database's by the answer to the last
    /// `renew` (the statement notes the client's clock when it is made: make it for each
    /// renewal), when beyond the skew a lease allows: the lease must stop. `None`: within it.
    fn clock_ahead(&self, row: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
        Ok(match columns(row)? {
            None => self.protocol.clock_ahead(Answer::NoRow),
            Some(columns) => {
                let cells: Vec<Cell<'_>> = columns.iter().map(Column::cell).collect();
                self.protocol.clock_ahead(Answer::Row(&cells))
            }
        })
    }

    /// The last statement failed with this SQLSTATE (`None`: the error had none).
    fn fail(&mut self, code: Option<&str>) {
        self.protocol.feed(Answer::Error(code));
    }

    /// A `renew`, `record` or `release` failed with the error `code` after `resent` resends:
    /// the milliseconds to wait before sending it again, or `None` to raise the error.
    fn resend_after(&self, code: Option<&str>, resent: u32) -> Option<u64> {
        self.protocol.resend_after(code, resent)
    }

    /// The SQL the statements are rendered in: `"postgres"`, `"mariadb"`, `"mysql"` (also
    /// once a MySQL server refused MariaDB's), or `"sqlite"`.
    #[getter]
    fn dialect(&self) -> &'static str {
        self.protocol.sql_dialect().name()
    }

    /// The lease's kind: `"expiring"` or `"session"`.
    #[getter]
    fn kind(&self) -> &'static str {
        match self.protocol.kind() {
            LeaseKind::Session => "session",
            _ => "expiring",
        }
    }

    /// `(sql, params)` that renew an expiring lease (a row back: still held); `None` for a
    /// session lease.
    fn renew<'py>(
        &self,
        py: Python<'py>,
        shard: u64,
    ) -> PyResult<Option<(String, Bound<'py, PyTuple>)>> {
        self.protocol
            .renew(shard)
            .map(|(sql, params)| Ok((sql, values(py, &params)?)))
            .transpose()
    }

    /// `(sql, params)` that record a ceiling of `units` for `shard` while the lease is held
    /// (a row back; none: the lease is lost).
    fn record<'py>(
        &self,
        py: Python<'py>,
        shard: u64,
        units: u64,
    ) -> PyResult<(String, Bound<'py, PyTuple>)> {
        let (sql, params) = self.protocol.record(shard, units);
        Ok((sql, values(py, &params)?))
    }

    /// `(sql, params)` that free `shard` at once.
    fn release<'py>(&self, py: Python<'py>, shard: u64) -> PyResult<(String, Bound<'py, PyTuple>)> {
        let (sql, params) = self.protocol.release(shard);
        Ok((sql, values(py, &params)?))
    }
}

/// `NoFreeShardError` with its fields, and the range as Python has it.
pub(crate) fn no_free_shard(py: Python<'_>, first: u64, end: u64, held_in: &str) -> PyErr {
    let mut message = String::new();
    let _ = ErrorKind::NoFreeShard.render(&mut message, |name, out| {
        out.push_str(&match name {
            "first" => first.to_string(),
            "end" => end.to_string(),
            _ => held_in.to_string(),
        });
        Ok(())
    });
    let fields = || -> PyResult<Vec<(&str, Bound<'_, PyAny>)>> {
        let range = pyo3::types::PyRange::new(
            py,
            isize::try_from(first).unwrap_or(isize::MAX),
            isize::try_from(end).unwrap_or(isize::MAX),
        )?;
        Ok(vec![
            ("first", first.into_pyobject(py)?.into_any()),
            ("end", end.into_pyobject(py)?.into_any()),
            ("held_in", held_in.into_pyobject(py)?.into_any()),
            ("shards", range.into_any()),
        ])
    };
    match fields() {
        Ok(fields) => raise_kind(py, ErrorKind::NoFreeShard, &message, &fields),
        Err(e) => e,
    }
}

/// Why a lease's `kind` or `ttl_ms` would be refused, as `(argument, reason)`, or `None`: the
/// core's rule, for Django's system checks.
#[pyfunction]
pub(crate) fn _check_lease(kind: &str, ttl_ms: u64) -> Option<(&'static str, String)> {
    LeaseKind::parse(kind, ttl_ms)
        .err()
        .map(|e| (e.argument(), e.to_string()))
}
