//! The Rust client of the string ↔ ID dictionary on MySQL 8 and MariaDB, over the `mysql`
//! crate (feature `mysql`): the core's [`Cache`](super::Cache) and batch logic, one connection, the core's
//! statements and steps (`shardid::sql::mysql`'s dictionary) — as the Python (PyMySQL) and Node
//! (mysql2) clients do, over the driver shared with [`super::postgres`]. Lists longer than [`MAX_PREPARED_LIST`] go in several statements (a
//! prepared statement takes at most 65,535 placeholders).
//!
//! ```no_run
//! use shardid::dictionary::mysql::Dictionary;
//!
//! let urls = Dictionary::connect(&["mysql://app:secret@127.0.0.1:3306/dict"], "urls", "dict", 100_000)?;
//! urls.create()?;
//! let id = urls.id("https://example.com/")?; // the same forever
//! assert_eq!(urls.value(id)?.as_deref(), Some("https://example.com/"));
//! # Ok::<(), shardid::dictionary::mysql::DictionaryError>(())
//! ```

use std::string::{String, ToString};
use std::sync::Arc;
use std::vec::Vec;

use mysql::prelude::Queryable;
use mysql::{Params, Value};

pub use super::driver::DictionaryError;
use super::driver::{DictionaryClient, Driver, Failed, dictionary_methods, in_order};
use super::protocol::{MysqlAssign, Step};
use crate::driver::Client;
use crate::sql::mysql::{MAX_PREPARED_LIST, MysqlDictionaryStatements};
use crate::sql::{Cell, Dialect, MysqlDictionary};

fn bytes(value: &Value) -> Option<&[u8]> {
    match value {
        Value::Bytes(b) => Some(b),
        _ => None,
    }
}

fn int(value: &Value) -> Option<i64> {
    match value {
        Value::Int(i) => Some(*i),
        Value::UInt(u) => i64::try_from(*u).ok(),
        Value::Bytes(b) => core::str::from_utf8(b).ok()?.parse().ok(),
        _ => None,
    }
}

/// The statements of `schema` for a server of `dialect` (checked when the dictionary was
/// made).
fn statements(schema: &str, dialect: Dialect) -> MysqlDictionaryStatements<'_> {
    MysqlDictionary::new(schema).map_or_else(
        |_| unreachable!("checked in connect"),
        |d| d.dialect(dialect).statements(mysql::Conn::PLACEHOLDERS),
    )
}

/// Whether the topic `state` says is dropped; [`Failed::UnknownTopic`] for no topic.
fn dropped(
    conn: &mut mysql::Conn,
    s: &MysqlDictionaryStatements<'_>,
    topic: &str,
) -> Result<bool, Failed<mysql::Error>> {
    let dropped: Option<i64> = conn.exec_first(s.state().to_string(), (topic,))?;
    dropped.map(|d| d != 0).ok_or(Failed::UnknownTopic)
}

impl DictionaryClient for mysql::Conn {
    /// The schema: the statements are rendered for the connection's dialect and each list's
    /// length.
    type Statements = String;
    // A prepared statement takes at most 65,535 placeholders.
    const CHUNK: usize = MAX_PREPARED_LIST;

    fn statements(schema: &str) -> Result<String, String> {
        MysqlDictionary::new(schema)
            .map(|_| schema.into())
            .map_err(|e| e.to_string())
    }

    fn create(
        &mut self,
        schema: &String,
        dialect: Dialect,
        topic: &str,
    ) -> Result<(), Failed<mysql::Error>> {
        let s = statements(schema, dialect);
        self.exec_drop(s.create_topic().to_string(), (topic,))?;
        if dropped(self, &s, topic)? {
            return Err(Failed::TopicDropped);
        }
        Ok(())
    }

    fn drop_topic(
        &mut self,
        schema: &String,
        dialect: Dialect,
        topic: &str,
    ) -> Result<(), Failed<mysql::Error>> {
        let s = statements(schema, dialect);
        self.exec_drop(s.drop_topic().to_string(), (topic,))?;
        dropped(self, &s, topic).map(|_| ())
    }

    /// The IDs the topic has of `values` (no lock; never assigns: [`Self::assign`] does).
    fn find(
        &mut self,
        schema: &String,
        dialect: Dialect,
        topic: &str,
        values: &[&str],
        _: bool,
    ) -> Result<Vec<Option<u64>>, Failed<mysql::Error>> {
        let mut params: Vec<Value> = values.iter().map(|v| Value::from(*v)).collect();
        params.push(Value::from(topic));
        let rows: Vec<mysql::Row> = self.exec(
            statements(schema, dialect).find(values.len()).to_string(),
            Params::Positional(params),
        )?;
        let found = rows.iter().map(|row| {
            Ok(bytes(&row[1])
                .zip(int(&row[2]))
                .map(|(v, id)| (v, id.cast_unsigned())))
        });
        in_order(values.iter().map(|v| v.as_bytes()), found)
    }

    /// The core's transaction ([`MysqlAssign`]: locks, re-checks, numbers, inserts,
    /// advances; again when the server rolled it back whole), each step sent as it says.
    fn assign(
        &mut self,
        schema: &String,
        dialect: Dialect,
        topic: &str,
        values: &[&str],
        answers: &[Option<u64>],
    ) -> Result<Vec<Option<u64>>, Failed<mysql::Error>> {
        let missing: Vec<&str> = values
            .iter()
            .zip(answers)
            .filter(|(_, a)| a.is_none())
            .map(|(v, _)| *v)
            .collect();
        let mut tx = MysqlAssign::new(dialect, schema, Self::PLACEHOLDERS, topic, &missing)
            .unwrap_or_else(|_| unreachable!("checked in connect"));
        let mut met = None;
        loop {
            let sent = match tx.next() {
                Step::Begin => self.query_drop("START TRANSACTION").map(|()| Vec::new()),
                Step::Commit => self.query_drop("COMMIT").map(|()| Vec::new()),
                Step::RollBack => self.query_drop("ROLLBACK").map(|()| Vec::new()),
                Step::Run { statement, values } => {
                    let params = values.iter().map(|v| match v {
                        crate::sql::Value::Text(text) => Value::from(*text),
                        crate::sql::Value::Int(n) => Value::from(*n),
                    });
                    self.exec::<mysql::Row, _, _>(statement, Params::Positional(params.collect()))
                }
                Step::Assigned(ids) => {
                    let ids = ids.to_vec();
                    return Ok(super::driver::answered(values, answers, &missing, ids));
                }
                Step::Failed(failure) => {
                    return Err(Failed::of(failure, met));
                }
            };
            match sent {
                Ok(rows) => {
                    let rows: Vec<Vec<Value>> = rows.into_iter().map(mysql::Row::unwrap).collect();
                    let cells: Vec<Vec<Cell<'_>>> = rows
                        .iter()
                        .map(|row| row.iter().map(cell).collect())
                        .collect();
                    let cells: Vec<&[Cell<'_>]> = cells.iter().map(Vec::as_slice).collect();
                    tx.answer(&cells);
                }
                Err(e) => {
                    tx.failed(Self::code(&e).as_deref());
                    met = Some(e);
                }
            }
        }
    }

    fn values(
        &mut self,
        schema: &String,
        dialect: Dialect,
        topic: &str,
        ids: &[u64],
    ) -> Result<Vec<Option<String>>, Failed<mysql::Error>> {
        let mut params: Vec<Value> = ids.iter().map(|&id| Value::from(id)).collect();
        params.push(Value::from(topic));
        let rows: Vec<mysql::Row> = self.exec(
            statements(schema, dialect)
                .find_values(ids.len())
                .to_string(),
            Params::Positional(params),
        )?;
        let found = rows.iter().map(|row| match (int(&row[1]), bytes(&row[2])) {
            (Some(id), Some(value)) => String::from_utf8(value.to_vec())
                .map(|text| Some((id.cast_unsigned(), text)))
                .map_err(|_| Failed::Mismatch),
            _ => Ok(None),
        });
        in_order(ids, found)
    }
}

/// A column as the protocol reads it (text as the server sent it, an integer as itself).
fn cell(value: &Value) -> Cell<'_> {
    match value {
        Value::Int(n) => Cell::Int(*n),
        Value::UInt(n) => i64::try_from(*n).map_or(Cell::Null, Cell::Int),
        Value::Bytes(b) => core::str::from_utf8(b).map_or(Cell::Null, Cell::Text),
        _ => Cell::Null,
    }
}

dictionary_methods!(
    Dictionary,
    mysql::Conn,
    "on one MySQL or MariaDB server (of a list)",
    "`mysql://` or `mariadb://` URLs",
    "[`DictionaryError::NotMysql`]; [`DictionaryError::Unreachable`] when the server cannot be reached."
);
