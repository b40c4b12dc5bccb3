//! The Rust client of the string ↔ ID dictionary on a SQLite file, over the `rusqlite` crate
//! (feature `sqlite`): the core's [`Cache`](super::Cache) and batch logic, one connection, the
//! core's statements and steps ([`crate::sql::sqlite`]'s dictionary) — as the Python
//! (`sqlite3`) and Node (`better-sqlite3`) clients do, over the driver shared with
//! [`super::postgres`] and [`super::mysql`]. Lookups run without the write lock (WAL: no
//! writer blocks them); new strings are numbered in one transaction begun with `BEGIN
//! IMMEDIATE`, so every process numbering the same topic on the file sees the others' strings
//! first and the IDs are dense, `0..n` with no hole. The tables are created on first use.
//!
//! ```no_run
//! use shardid::dictionary::sqlite::Dictionary;
//!
//! let urls = Dictionary::connect(&["sqlite:///dict.db"], "urls", "main", 100_000)?;
//! urls.create()?;
//! let id = urls.id("https://example.com/")?; // the same forever
//! assert_eq!(urls.value(id)?.as_deref(), Some("https://example.com/"));
//! # Ok::<(), shardid::dictionary::sqlite::DictionaryError>(())
//! ```

use std::string::{String, ToString};
use std::sync::Arc;
use std::vec::Vec;

use rusqlite::types::Value as Sql;
use rusqlite::{Connection, params_from_iter};

pub use super::driver::DictionaryError;
use super::driver::{DictionaryClient, Driver, Failed, dictionary_methods, in_order};
use super::protocol::{SqliteAssign, Step};
use crate::driver::Client;
use crate::driver::sqlite::no_such_table;
use crate::sql::sqlite::{MAX_LIST, SqliteDictionary, SqliteDictionaryStatements};
use crate::sql::{Cell, Dialect};

/// The schema (the statements are rendered for each list's length) and the DDL.
pub(crate) struct Statements {
    schema: String,
    ddl: String,
}

impl Statements {
    fn of(&self) -> SqliteDictionaryStatements<'_> {
        SqliteDictionary::new(&self.schema).map_or_else(
            |_| unreachable!("checked in statements()"),
            |d| d.statements(Connection::PLACEHOLDERS),
        )
    }
}

fn text(value: &str) -> Sql {
    Sql::Text(value.into())
}

fn int(n: u64) -> Result<Sql, rusqlite::Error> {
    i64::try_from(n)
        .map(Sql::Integer)
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))
}

/// Runs `step`; on a file whose tables do not exist yet, creates them and runs it again.
fn with_tables<T>(
    conn: &mut Connection,
    s: &Statements,
    step: impl FnMut(&mut Connection) -> Result<T, Failed<rusqlite::Error>>,
) -> Result<T, Failed<rusqlite::Error>> {
    crate::driver::sqlite::with_tables(
        conn,
        &s.ddl,
        |e| matches!(e, Failed::Driver(e) if no_such_table(e)),
        step,
    )
}

/// Whether the topic is dropped; [`Failed::UnknownTopic`] for none.
fn dropped(
    conn: &mut Connection,
    s: &Statements,
    topic: &str,
) -> Result<bool, Failed<rusqlite::Error>> {
    let row = conn.run(
        &s.of().state().to_string(),
        &[crate::sql::Value::Text(topic)],
    )?;
    let row = row.ok_or(Failed::UnknownTopic)?;
    Ok(row.first().and_then(crate::driver::Owned::int).unwrap_or(0) != 0)
}

impl DictionaryClient for Connection {
    type Statements = Statements;
    const CHUNK: usize = MAX_LIST;

    fn statements(schema: &str) -> Result<Statements, String> {
        let ddl = SqliteDictionary::new(schema).map_err(|e| e.to_string())?;
        Ok(Statements {
            schema: schema.into(),
            ddl: ddl.to_string(),
        })
    }

    fn create(
        &mut self,
        s: &Statements,
        _: Dialect,
        topic: &str,
    ) -> Result<(), Failed<rusqlite::Error>> {
        with_tables(self, s, |conn| {
            conn.run(
                &s.of().create_topic().to_string(),
                &[crate::sql::Value::Text(topic)],
            )?;
            if dropped(conn, s, topic)? {
                return Err(Failed::TopicDropped);
            }
            Ok(())
        })
    }

    fn drop_topic(
        &mut self,
        s: &Statements,
        _: Dialect,
        topic: &str,
    ) -> Result<(), Failed<rusqlite::Error>> {
        with_tables(self, s, |conn| {
            let row = conn.run(
                &s.of().drop_topic().to_string(),
                &[crate::sql::Value::Text(topic)],
            )?;
            row.map(|_| ()).ok_or(Failed::UnknownTopic)
        })
    }

    /// The IDs the topic has of `values`, in autocommit without the write lock (never assigns:
    /// [`Self::assign`] does).
    fn find(
        &mut self,
        s: &Statements,
        _: Dialect,
        topic: &str,
        values: &[&str],
        _: bool,
    ) -> Result<Vec<Option<u64>>, Failed<rusqlite::Error>> {
        with_tables(self, s, |conn| {
            let params: Vec<Sql> = core::iter::once(text(topic))
                .chain(values.iter().map(|v| text(v)))
                .collect();
            let mut statement = conn.prepare_cached(&s.of().find(values.len()).to_string())?;
            let found = statement.query_map(params_from_iter(params), |row| {
                let value = row.get::<_, Option<String>>(2)?;
                Ok(value.zip(row.get::<_, Option<i64>>(3)?))
            })?;
            let found = found.map(|row| Ok(row?.map(|(v, id)| (v, id.cast_unsigned()))));
            in_order(values.iter().copied(), found)
        })
    }

    /// The core's writer ([`SqliteAssign`]: `BEGIN IMMEDIATE`, the topic's row, the re-check
    /// under the write lock, the numbering, the inserts, the guarded advance, the commit; the
    /// rollback after any failed step), each step sent as it says.
    fn assign(
        &mut self,
        s: &Statements,
        _: Dialect,
        topic: &str,
        values: &[&str],
        answers: &[Option<u64>],
    ) -> Result<Vec<Option<u64>>, Failed<rusqlite::Error>> {
        // The strings still missing, each once, in the order they first appear.
        let mut missing: Vec<&str> = Vec::new();
        for (value, answer) in values.iter().zip(answers) {
            if answer.is_none() && !missing.contains(value) {
                missing.push(value);
            }
        }
        with_tables(self, s, |conn| {
            let mut tx = SqliteAssign::new(&s.schema, Connection::PLACEHOLDERS, topic, &missing)
                .unwrap_or_else(|_| unreachable!("checked in statements()"));
            let mut met = None;
            loop {
                let sent = match tx.next() {
                    Step::Run { statement, values } => rows(conn, statement, &values),
                    Step::Begin | Step::Commit | Step::RollBack => {
                        unreachable!("SQLite's writer names its transaction's statements")
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
                        let cells: Vec<Vec<Cell<'_>>> = rows
                            .iter()
                            .map(|row| row.iter().map(cell).collect())
                            .collect();
                        let cells: Vec<&[Cell<'_>]> = cells.iter().map(Vec::as_slice).collect();
                        tx.answer(&cells);
                    }
                    // The first error is the one raised; the rollback's own would hide it.
                    Err(e) => {
                        tx.failed();
                        met.get_or_insert(e);
                    }
                }
            }
        })
    }

    fn values(
        &mut self,
        s: &Statements,
        _: Dialect,
        topic: &str,
        ids: &[u64],
    ) -> Result<Vec<Option<String>>, Failed<rusqlite::Error>> {
        with_tables(self, s, |conn| {
            let mut params = Vec::with_capacity(ids.len() + 1);
            params.push(text(topic));
            for &id in ids {
                params.push(int(id)?);
            }
            let mut statement = conn.prepare_cached(&s.of().find_values(ids.len()).to_string())?;
            let found = statement.query_map(params_from_iter(params), |row| {
                let id = row.get::<_, Option<i64>>(1)?;
                Ok(id.zip(row.get::<_, Option<String>>(2)?))
            })?;
            let found = found.map(|row| Ok(row?.map(|(id, v)| (id.cast_unsigned(), v))));
            in_order(ids, found)
        })
    }
}

/// Every row of `statement` run with `values`, each column as SQLite stored it.
fn rows(
    conn: &Connection,
    statement: &str,
    values: &[crate::sql::Value<'_>],
) -> Result<Vec<Vec<Sql>>, rusqlite::Error> {
    let mut params = Vec::with_capacity(values.len());
    for value in values {
        params.push(match value {
            crate::sql::Value::Text(t) => text(t),
            crate::sql::Value::Int(n) => int(*n)?,
        });
    }
    let mut statement = conn.prepare_cached(statement)?;
    let width = statement.column_count();
    let mut rows = statement.query(params_from_iter(params))?;
    let mut all = Vec::new();
    while let Some(row) = rows.next()? {
        all.push((0..width).map(|i| row.get(i)).collect::<Result<_, _>>()?);
    }
    Ok(all)
}

/// A column as the protocol reads it.
fn cell(value: &Sql) -> Cell<'_> {
    match value {
        Sql::Integer(n) => Cell::Int(*n),
        Sql::Text(t) => Cell::Text(t),
        _ => Cell::Null,
    }
}

dictionary_methods!(
    Dictionary,
    Connection,
    "in a SQLite file (of a list of files, one per topic's [`super::server_for`]; `schema`: `main`, or an attached database's name)",
    "`sqlite:///` URLs; a file on a network filesystem is refused",
    "[`DictionaryError::Unreachable`] when the file cannot be used (a missing directory, a read-only file, not a SQLite database)."
);

#[cfg(all(test, not(miri)))]
mod tests {
    use std::collections::HashMap;
    use std::format;
    use std::sync::Arc;
    use std::thread;

    use super::*;
    use crate::ErrorKind;
    use crate::driver::sqlite::TempDb;

    #[test]
    fn sqlite_dictionary_is_dense_under_threads_and_connections_on_one_file() {
        let db = TempDb::new("dict");
        let url = db.url();
        let first = Dictionary::connect(&[&url], "words", "main", 0).unwrap();
        assert_eq!(
            first.id("x").unwrap_err().kind(),
            Some(ErrorKind::UnknownTopic),
            "the tables are made, the topic is not"
        );
        first.create().unwrap();
        first.create().unwrap(); // again: nothing
        // 4 connections (no cache: every call reaches the file), 2 threads each, overlapping
        // batches of 40 strings out of 120.
        let dicts: Vec<_> = (0..4)
            .map(|_| Arc::new(Dictionary::connect(&[&url], "words", "main", 0).unwrap()))
            .collect();
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let dict = Arc::clone(&dicts[t % 4]);
                thread::spawn(move || {
                    let mut seen = Vec::new();
                    for round in 0..6 {
                        let batch: Vec<String> = (0..40)
                            .map(|i| format!("w{}", (t * 13 + round * 17 + i * 3) % 120))
                            .collect();
                        let ids = dict.ids(&batch).unwrap();
                        seen.extend(batch.into_iter().zip(ids));
                    }
                    seen
                })
            })
            .collect();
        let mut by_value: HashMap<String, u64> = HashMap::new();
        for t in threads {
            for (value, id) in t.join().unwrap() {
                assert_eq!(*by_value.entry(value.clone()).or_insert(id), id, "{value}");
            }
        }
        let mut ids: Vec<u64> = by_value.values().copied().collect();
        ids.sort_unstable();
        assert_eq!(
            ids,
            (0..ids.len() as u64).collect::<Vec<_>>(),
            "dense 0..n-1"
        );
        for (value, id) in &by_value {
            assert_eq!(first.value(*id).unwrap().as_deref(), Some(value.as_str()));
        }
        assert_eq!(first.lookup(&["never"]).unwrap(), [None]);
        assert_eq!(first.values(&[1_000_000]).unwrap(), [None]);
        // A batch of 12,000 new strings goes in pieces of MAX_LIST, in one transaction.
        let many: Vec<String> = (0..12_000).map(|i| format!("m{i}")).collect();
        let got = first.ids(&many).unwrap();
        let n = ids.len() as u64;
        assert_eq!(got, (n..n + 12_000).collect::<Vec<_>>());
        first.drop_topic().unwrap();
        assert_eq!(
            first.id("new").unwrap_err().kind(),
            Some(ErrorKind::TopicDropped)
        );
        assert_eq!(
            first.id("w1").unwrap(),
            by_value["w1"],
            "a dropped topic still reads"
        );
        assert_eq!(
            first.create().unwrap_err().kind(),
            Some(ErrorKind::TopicDropped)
        );
    }

    #[test]
    fn sqlite_dictionary_files_that_cannot_be_used_are_refused() {
        let db = TempDb::new("dict-bad");
        let url = format!("sqlite:///{}", db.dir.join("missing/x.db").display());
        let e = Dictionary::connect(&[&url], "t", "main", 10).unwrap_err();
        assert!(matches!(e, DictionaryError::Unreachable(_)), "{e}");
        assert_eq!(e.kind(), Some(ErrorKind::DatabaseUnreachable));
        assert!(
            e.to_string().contains("unable to open database file"),
            "{e}"
        );
        let e = Dictionary::connect(&["sqlite:///x.db"], "t", "no such", 10).unwrap_err();
        assert_eq!(e.kind(), Some(ErrorKind::InvalidArgument));
        let e = Dictionary::connect(&["mysql://h/d"], "t", "main", 10).unwrap_err();
        assert_eq!(e.kind(), Some(ErrorKind::InvalidArgument));
    }
}
