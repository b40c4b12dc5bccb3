//! The Rust client of the string ↔ ID dictionary, over the `postgres` crate (feature
//! `postgres`): the core's [`Cache`](super::Cache) and batch logic, one connection, the core's statements —
//! as the Python (psycopg) and Node (pg) clients do. The driver is shared with
//! [`super::mysql`]; what is PostgreSQL's is here: each call is one function of the schema
//! over arrays, sent with `query_typed` (one round trip on the unnamed statement, so no
//! prepared statement has to outlive it: a pooler in transaction mode runs each on any server
//! session).
//!
//! ```no_run
//! use shardid::dictionary::postgres::Dictionary;
//!
//! let urls = Dictionary::connect(&["host=127.0.0.1 user=app dbname=app"], "urls", "dict", 100_000)?;
//! urls.create()?;
//! let id = urls.id("https://example.com/")?; // the same forever
//! assert_eq!(urls.value(id)?.as_deref(), Some("https://example.com/"));
//! # Ok::<(), shardid::dictionary::postgres::DictionaryError>(())
//! ```

use postgres::types::{ToSql, Type};
use std::string::{String, ToString};
use std::sync::Arc;
use std::vec::Vec;

pub use super::driver::DictionaryError;
use super::driver::{DictionaryClient, Driver, Failed, dictionary_methods};
use crate::driver::Client;
use crate::driver::postgres::off_runtime;
use crate::sql::{Dialect, Dictionary as Ddl};

/// The statements of one schema.
pub(crate) struct Statements {
    ids: String,
    lookup: String,
    values: String,
    create: String,
    drop: String,
}

/// The one value of the one row a statement of the dictionary returns (a function's result).
fn one<T: for<'a> postgres::types::FromSql<'a>>(
    conn: &mut postgres::Client,
    sql: &str,
    params: &[(&(dyn ToSql + Sync), Type)],
) -> Result<T, Failed<postgres::Error>> {
    let rows = off_runtime(|| conn.query_typed(sql, params))?;
    let row = rows.first().ok_or(Failed::Mismatch)?;
    Ok(row.try_get(0)?)
}

impl DictionaryClient for postgres::Client {
    type Statements = Statements;
    // One array per statement.
    const CHUNK: usize = usize::MAX;

    fn statements(schema: &str) -> Result<Statements, String> {
        let s = Ddl::new(schema)
            .map_err(|e| e.to_string())?
            .statements(Self::PLACEHOLDERS);
        Ok(Statements {
            ids: s.ids().to_string(),
            lookup: s.lookup().to_string(),
            values: s.values().to_string(),
            create: s.create_topic().to_string(),
            drop: s.drop_topic().to_string(),
        })
    }

    fn create(
        &mut self,
        s: &Statements,
        _: Dialect,
        topic: &str,
    ) -> Result<(), Failed<postgres::Error>> {
        off_runtime(|| self.query_typed(&s.create, &[(&topic, Type::TEXT)]))?;
        Ok(())
    }

    fn drop_topic(
        &mut self,
        s: &Statements,
        _: Dialect,
        topic: &str,
    ) -> Result<(), Failed<postgres::Error>> {
        off_runtime(|| self.query_typed(&s.drop, &[(&topic, Type::TEXT)]))?;
        Ok(())
    }

    fn find(
        &mut self,
        s: &Statements,
        _: Dialect,
        topic: &str,
        values: &[&str],
        assign: bool,
    ) -> Result<Vec<Option<u64>>, Failed<postgres::Error>> {
        let sql = if assign { &s.ids } else { &s.lookup };
        let answers: Vec<Option<i64>> = one(
            self,
            sql,
            &[(&topic, Type::TEXT), (&values, Type::TEXT_ARRAY)],
        )?;
        Ok(answers
            .into_iter()
            .map(|a| a.map(i64::cast_unsigned))
            .collect())
    }

    /// `dict_ids` assigned in the same statement: a string still without an ID is the
    /// server's answer not matching the batch.
    fn assign(
        &mut self,
        _: &Statements,
        _: Dialect,
        _: &str,
        _: &[&str],
        answers: &[Option<u64>],
    ) -> Result<Vec<Option<u64>>, Failed<postgres::Error>> {
        Ok(answers.to_vec())
    }

    fn values(
        &mut self,
        s: &Statements,
        _: Dialect,
        topic: &str,
        ids: &[u64],
    ) -> Result<Vec<Option<String>>, Failed<postgres::Error>> {
        let signed: Vec<i64> = ids.iter().map(|&m| m.cast_signed()).collect();
        one(
            self,
            &s.values,
            &[(&topic, Type::TEXT), (&signed, Type::INT8_ARRAY)],
        )
    }
}

dictionary_methods!(
    Dictionary,
    postgres::Client,
    "on one PostgreSQL server (of a list)",
    "libpq connection strings or `postgresql://` URLs",
    "[`DictionaryError::Unreachable`] when the server cannot be reached."
);
