//! The steps of the core's protocols as Python sees them, once for every protocol an executor
//! runs (the segments' take and give-back, the dictionary's transactions): a statement's
//! values as a tuple, a transaction's step as a tuple, the rows it answered as cells.

use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use shardid::dictionary::protocol::{Failure, Step};
use shardid::sql::{Cell, Value};

/// A statement's values as the tuple a DB-API driver takes: texts as `str`, integers as `int`.
pub(crate) fn values<'py>(py: Python<'py>, values: &[Value<'_>]) -> PyResult<Bound<'py, PyTuple>> {
    let values = values.iter().map(|value| match value {
        Value::Text(text) => PyString::new(py, text).into_any(),
        Value::Int(n) => n
            .into_pyobject(py)
            .map_or_else(|e| match e {}, Bound::into_any),
    });
    PyTuple::new(py, values)
}

/// A step of the dictionary's transactions (the MySQL family's, SQLite's) as the tuple their
/// executors read: `("begin",)`, `("commit",)`, `("rollback",)`, `("run", sql, values)`,
/// `("assigned", ids)`, `("failed", why)`.
pub(crate) fn assign_step<'py>(py: Python<'py>, step: Step<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match step {
        Step::Begin => ("begin",).into_pyobject(py)?.into_any(),
        Step::Commit => ("commit",).into_pyobject(py)?.into_any(),
        Step::RollBack => ("rollback",).into_pyobject(py)?.into_any(),
        Step::Run { statement, values } => ("run", statement, self::values(py, &values)?)
            .into_pyobject(py)?
            .into_any(),
        Step::Assigned(ids) => ("assigned", ids.to_vec()).into_pyobject(py)?.into_any(),
        Step::Failed(failure) => {
            let why = match failure {
                Failure::Driver => "driver",
                Failure::UnknownTopic => "unknown_topic",
                Failure::TopicDropped => "topic_dropped",
                _ => "unusable",
            };
            ("failed", why).into_pyobject(py)?.into_any()
        }
        _ => ("failed", "unusable").into_pyobject(py)?.into_any(),
    })
}

/// A column of a row a transaction reads: an integer, or text (bytes decoded by the caller).
#[derive(FromPyObject)]
pub(crate) enum Column {
    Int(i64),
    Text(String),
}

/// `rows` (as the executor read them) as the protocol's cells, handed to `answer`.
pub(crate) fn answer_rows(rows: &[Vec<Option<Column>>], answer: impl FnOnce(&[&[Cell<'_>]])) {
    let cells: Vec<Vec<Cell<'_>>> = rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|column| match column {
                    None => Cell::Null,
                    Some(Column::Int(n)) => Cell::Int(*n),
                    Some(Column::Text(text)) => Cell::Text(text),
                })
                .collect()
        })
        .collect();
    let rows: Vec<&[Cell<'_>]> = cells.iter().map(Vec::as_slice).collect();
    answer(&rows);
}
