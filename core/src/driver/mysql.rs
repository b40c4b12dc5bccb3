//! The [`super::Client`] of the `mysql` crate (feature `mysql`), for MySQL 8 and MariaDB: a
//! connection opened from a `mysql://` URL by [`crate::sql::mysql::connect`].

use std::string::{String, ToString};
use std::vec;
use std::vec::Vec;

use mysql::prelude::Queryable;

use super::{Client, ConnectError, Owned};
use crate::sql::mysql::connect;
use crate::sql::{Dialect, Placeholders, Value};

/// A value of a row as the core reads it: binary strings as UTF-8 text.
fn column(value: mysql::Value) -> Owned {
    match value {
        mysql::Value::NULL => Owned::Null,
        mysql::Value::Int(n) => Owned::Int(n),
        mysql::Value::UInt(n) => {
            i64::try_from(n).map_or_else(|_| Owned::Text(n.to_string()), Owned::Int)
        }
        mysql::Value::Bytes(bytes) => Owned::Text(String::from_utf8_lossy(&bytes).into_owned()),
        other => Owned::Text(other.as_sql(true)),
    }
}

impl Client for mysql::Conn {
    type Error = mysql::Error;
    // Rendered for MariaDB first; the core renders MySQL's once a server refuses MariaDB's.
    const DIALECT: Dialect = Dialect::Mariadb;
    const PLACEHOLDERS: Placeholders = Placeholders::Question;
    const URL_ARGUMENT: &'static str = "url";

    fn url_problem(url: &str) -> Option<String> {
        crate::sql::mysql::MysqlUrl::parse(url)
            .err()
            .map(Into::into)
    }

    fn connect(url: &str) -> Result<Self, ConnectError<Self::Error>> {
        connect::connect(url).map_err(|e| match e {
            connect::ConnectError::Url(reason) => ConnectError::Url(reason.into()),
            connect::ConnectError::NotMysql { server, reason } => {
                ConnectError::NotMysql { server, reason }
            }
            connect::ConnectError::Driver(e) => ConnectError::Driver(e),
        })
    }

    fn detect(&mut self) -> Result<Dialect, Self::Error> {
        connect::detect(self)
    }

    /// Runs one statement (prepared, as the crate sends parameters, and kept in the
    /// connection's statement cache: the MySQL family has no transaction pooler to refuse it);
    /// its first row, or for a statement without rows `(affected rows, last insert ID)`.
    fn run(&mut self, sql: &str, params: &[Value<'_>]) -> Result<Option<Vec<Owned>>, Self::Error> {
        let params: Vec<mysql::Value> = params
            .iter()
            .map(|value| match value {
                Value::Text(text) => mysql::Value::Bytes(text.as_bytes().to_vec()),
                Value::Int(n) => mysql::Value::UInt(*n),
            })
            .collect();
        let mut result = self.exec_iter(sql, params)?;
        if result.columns().as_ref().is_empty() {
            let affected = i64::try_from(result.affected_rows()).unwrap_or(i64::MAX);
            let id = result.last_insert_id().unwrap_or(0);
            return Ok(Some(vec![
                Owned::Int(affected),
                column(mysql::Value::UInt(id)),
            ]));
        }
        let first = result.next().transpose()?;
        // The rest (none: every statement of the core returns one row at most) is read when
        // `result` is dropped.
        Ok(first.map(|row| row.unwrap().into_iter().map(column).collect()))
    }

    fn describe(e: &Self::Error) -> String {
        e.to_string()
    }

    fn message(e: &Self::Error) -> Option<String> {
        match e {
            mysql::Error::MySqlError(e) => Some(e.message.clone()),
            _ => None,
        }
    }

    fn code(e: &Self::Error) -> Option<String> {
        match e {
            mysql::Error::MySqlError(e) => Some(e.code.to_string()),
            _ => None,
        }
    }

    /// The client's own errors (the server went away, the connection broke) are not the
    /// server's refusal of a statement.
    fn broken(e: &Self::Error) -> bool {
        !matches!(e, mysql::Error::MySqlError(_))
    }

    fn is_closed(&self) -> bool {
        false
    }

    fn close(self) {
        drop(self);
    }
}
