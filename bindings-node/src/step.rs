//! The steps of the core's protocols as JavaScript sees them, once for every protocol an
//! executor runs (the segments' take and give-back, the dictionary's transactions): a
//! statement's values, a transaction's step, the rows it answered as cells.

use napi::bindgen_prelude::{BigInt, Either};
use napi_derive::napi;
use shardid::dictionary::protocol::{Failure, Step};
use shardid::sql::{Cell, Value};

/// A statement's values as the drivers take them: texts as strings, integers as bigints (`pg`
/// and `mysql2` send them as text, SQLite must compare integers with integers).
pub(crate) fn values(values: &[Value<'_>]) -> Vec<Either<String, BigInt>> {
    values
        .iter()
        .map(|value| match value {
            Value::Text(text) => Either::A((*text).to_owned()),
            Value::Int(n) => Either::B(BigInt::from(*n)),
        })
        .collect()
}

/// What a dictionary's transaction (`MysqlAssign`, `SqliteAssign`) does next: `step` is
/// `'begin'`, `'commit'`, `'rollback'`, `'run'` (run `sql` with `values`, then `answer(rows)` or
/// `failed(...)`), `'assigned'` (`ids`: each string's ID, decimal strings, in order) or
/// `'failed'` (`why`: `'driver'`, throw the last error fed; `'unknownTopic'`, `'topicDropped'`,
/// `'unusable'`).
#[napi(object)]
pub struct AssignStep {
    pub step: String,
    pub sql: Option<String>,
    /// Texts as strings, integers as bigints.
    pub values: Option<Vec<Either<String, BigInt>>>,
    pub ids: Option<Vec<String>>,
    pub why: Option<String>,
}

impl AssignStep {
    fn of(step: &str) -> Self {
        Self {
            step: step.into(),
            sql: None,
            values: None,
            ids: None,
            why: None,
        }
    }
}

impl From<Step<'_>> for AssignStep {
    fn from(step: Step<'_>) -> Self {
        match step {
            Step::Begin => Self::of("begin"),
            Step::Commit => Self::of("commit"),
            Step::RollBack => Self::of("rollback"),
            Step::Run { statement, values } => Self {
                sql: Some(statement.into()),
                values: Some(self::values(&values)),
                ..Self::of("run")
            },
            Step::Assigned(ids) => Self {
                ids: Some(
                    ids.iter()
                        .map(|id| id.map_or_else(String::new, |id| id.to_string()))
                        .collect(),
                ),
                ..Self::of("assigned")
            },
            Step::Failed(failure) => Self {
                why: Some(
                    match failure {
                        Failure::Driver => "driver",
                        Failure::UnknownTopic => "unknownTopic",
                        Failure::TopicDropped => "topicDropped",
                        _ => "unusable",
                    }
                    .into(),
                ),
                ..Self::of("failed")
            },
            _ => Self {
                why: Some("unusable".into()),
                ..Self::of("failed")
            },
        }
    }
}

/// `rows` (each column as text, `null` for SQL NULL) as the protocol's cells, handed to
/// `answer`.
pub(crate) fn answer_rows(rows: &[Vec<Option<String>>], answer: impl FnOnce(&[&[Cell<'_>]])) {
    let cells: Vec<Vec<Cell<'_>>> = rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|column| column.as_deref().map_or(Cell::Null, Cell::Text))
                .collect()
        })
        .collect();
    let rows: Vec<&[Cell<'_>]> = cells.iter().map(Vec::as_slice).collect();
    answer(&rows);
}
