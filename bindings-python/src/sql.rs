//! `shardid.sql.postgres`: the core's PostgreSQL DDL emitter.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyTuple};
use shardid::ErrorKind;
use shardid::sql::{
    Fed, LeaseDriver, Next, Placeholders, Postgres, PostgresPublicIds, PostgresUninstall, SqlError,
    Value,
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

/// The core's protocol for taking a PostgreSQL shard lease (`shardid::sql::LeaseDriver`), for
/// `shardid.postgres` to run with psycopg: `next()` gives the statement to execute (or `None`
/// once the lease is taken), `feed()` the first column it returned. Not for direct use.
#[pyclass(module = "shardid._shardid", name = "_PostgresLeaseProtocol")]
pub(crate) struct PyLeaseProtocol {
    driver: LeaseDriver,
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

#[pymethods]
impl PyLeaseProtocol {
    #[new]
    fn new(
        py: Python<'_>,
        layout: &Bound<'_, PyLayout>,
        table: &str,
        first: &Bound<'_, PyAny>,
        end: &Bound<'_, PyAny>,
        holder: &str,
    ) -> PyResult<Self> {
        let first = u64_arg(first, "first", Arg::Other)?;
        let end = u64_arg(end, "end", Arg::Other)?;
        let driver = LeaseDriver::new(
            layout.get().inner,
            table,
            Placeholders::Format,
            first,
            end,
            holder,
        )
        .map_err(|e| sql_error(py, e))?;
        Ok(Self { driver })
    }

    /// `(sql, params, tolerated SQLSTATEs)` to execute next, or `None` once the lease is taken
    /// (see `taken`); raises `NoFreeShardError` when every shard is held.
    #[allow(clippy::type_complexity)]
    fn next<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Option<(String, Bound<'py, PyTuple>, Bound<'py, PyTuple>)>> {
        match self.driver.next() {
            Next::Run {
                sql,
                params,
                tolerate,
            } => Ok(Some((
                sql,
                values(py, &params)?,
                PyTuple::new(py, tolerate)?,
            ))),
            Next::Taken { .. } => Ok(None),
            Next::NoFreeShard {
                first,
                end,
                held_in,
            } => {
                let mut message = String::new();
                let _ = ErrorKind::NoFreeShard.render(&mut message, |name, out| {
                    out.push_str(&match name {
                        "first" => first.to_string(),
                        "end" => end.to_string(),
                        _ => held_in.clone(),
                    });
                    Ok(())
                });
                let range = pyo3::types::PyRange::new(
                    py,
                    isize::try_from(first).unwrap_or(isize::MAX),
                    isize::try_from(end).unwrap_or(isize::MAX),
                )?;
                Err(raise_kind(
                    py,
                    ErrorKind::NoFreeShard,
                    &message,
                    &[
                        ("first", first.into_pyobject(py)?.into_any()),
                        ("end", end.into_pyobject(py)?.into_any()),
                        ("held_in", held_in.into_pyobject(py)?.into_any()),
                        ("shards", range.into_any()),
                    ],
                ))
            }
        }
    }

    /// Feeds the first column of the first row the last statement returned (`None`: no row).
    fn feed(&mut self, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let fed = match value {
            None => Fed::Nothing,
            Some(v) if v.is_instance_of::<PyBool>() => Fed::Bool(v.is_truthy()?),
            Some(v) => Fed::Int(u64_arg(v, "value", Arg::Other)?),
        };
        self.driver.feed(fed);
        Ok(())
    }

    /// `(shard, ceiling or None)` once the lease is taken, else `None`.
    #[getter]
    fn taken(&self) -> Option<(u64, Option<u64>)> {
        match self.driver.next() {
            Next::Taken { shard, recorded } => Some((shard, recorded)),
            _ => None,
        }
    }

    /// `(sql, params)` that record a ceiling of `units` for `shard`, only while this session
    /// still holds its lock (one row updated; none: the lease is lost).
    fn record<'py>(
        &self,
        py: Python<'py>,
        shard: u64,
        units: u64,
    ) -> PyResult<(String, Bound<'py, PyTuple>)> {
        let (sql, params) = self.driver.record(shard, units);
        Ok((sql, values(py, &params)?))
    }
}
