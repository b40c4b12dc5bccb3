//! `shardid.sql.postgres`: the core's PostgreSQL DDL emitter.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use shardid::sql::{Placeholders, Postgres, PostgresLease, PostgresUninstall, SqlError};

use crate::args::{Arg, options_arg, u64_arg};
use crate::errors::{core_error, invalid_argument};
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

/// The DDL that removes what `postgres()` installed in `schema`.
#[pyfunction]
pub(crate) fn postgres_uninstall(py: Python<'_>, schema: &str) -> PyResult<String> {
    PostgresUninstall::new(schema)
        .map(|ddl| ddl.to_string())
        .map_err(|e| sql_error(py, e))
}

/// The Python exception for a refused schema or table name, or a core error.
fn sql_error(py: Python<'_>, e: SqlError) -> PyErr {
    match e {
        SqlError::Core(e) => core_error(py, e),
        SqlError::SchemaName { reason } => {
            invalid_argument(py, "schema", &format!("is not a valid name: {reason}"))
        }
        SqlError::TableName { reason } => {
            invalid_argument(py, "table", &format!("is not a valid name: {reason}"))
        }
        _ => invalid_argument(py, "schema", &e.to_string()),
    }
}

/// The statements of a PostgreSQL shard lease on `table` for `layout`, in psycopg's `%s`
/// style, with the advisory lock's key and the layout's signature (`shardid.postgres` runs
/// them; the protocol lives in the core, `shardid::sql::PostgresLease`).
#[pyfunction]
pub(crate) fn _postgres_lease_sql<'py>(
    py: Python<'py>,
    layout: &Bound<'_, PyLayout>,
    table: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let sql = PostgresLease::new(layout.get().inner, table, Placeholders::Format)
        .map_err(|e| sql_error(py, e))?;
    let out = PyDict::new(py);
    out.set_item("signature", sql.signature().to_string())?;
    out.set_item("key", sql.key().to_string())?;
    out.set_item("create_table", sql.create_table().to_string())?;
    out.set_item("try_lock", sql.try_lock().to_string())?;
    out.set_item("insert", sql.insert().to_string())?;
    out.set_item("claim", sql.claim().to_string())?;
    out.set_item("record", sql.record().to_string())?;
    Ok(out)
}
