//! Shard leases kept in MySQL 8 or MariaDB (Galera clusters included), from Rust (feature
//! `mysql`, over the `mysql` crate): the driver of the core's lease protocol
//! ([`crate::sql::LeaseProtocol`]) in the MySQL family's SQL, as Python's `shardid.mysql` and
//! Node's `shardid/mysql` are, sharing its logic with [`super::postgres`].
//!
//! ```no_run
//! use shardid::Layout;
//! use shardid::lease::mysql::{LeaseOptions, MysqlLease};
//!
//! let lease = MysqlLease::acquire(
//!     "mysql://app:secret@db:3306/app",
//!     Layout::INSTAGRAM,
//!     0..64,
//!     &LeaseOptions::new(),
//! )?;
//! let id = lease.next_id()?;
//! # Ok::<(), shardid::lease::LeaseError>(())
//! ```
//!
//! The default lease expires: a heartbeat thread renews it every third of its time to live, so
//! it holds on a Galera cluster (processes attached to different nodes) and behind a proxy. A
//! session lease (`GET_LOCK`) is for one server reached directly, and is refused on a Galera
//! node ([`LeaseError::Unsupported`]). The lease does not follow `fork()`: take one in each
//! process.

use std::boxed::Box;
use std::fmt;
use std::ops::Range;
use std::string::{String, ToString};
use std::vec;
use std::vec::Vec;

use mysql::prelude::Queryable;

use super::LeaseError;
pub use super::database::LeaseOptions;
use super::database::{Client, DatabaseLease, Owned, lease_methods};
use crate::Layout;
use crate::sql::mysql::connect::{ConnectError, connect};
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

    fn connect(config: &str) -> Result<Self, LeaseError> {
        connect(config).map_err(|e| match e {
            ConnectError::Url(reason) => LeaseError::InvalidArgument {
                argument: "url",
                reason: reason.into(),
            },
            ConnectError::NotMysql { server, reason } => LeaseError::NotMysql { server, reason },
            ConnectError::Driver(e) => LeaseError::Database(Box::new(e)),
        })
    }

    /// Runs one statement (prepared, as the crate sends parameters); its first row, or for a
    /// statement without rows `(affected rows, last insert ID)`.
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
        // The rest (none: every statement of the lease returns one row at most) is read when
        // `result` is dropped.
        Ok(first.map(|row| row.unwrap().into_iter().map(column).collect()))
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

/// A generator on a shard leased through MySQL or MariaDB: see the [module](self) docs.
/// `Sync`: share it between threads. Dropping it releases the shard.
pub struct MysqlLease(DatabaseLease<mysql::Conn>);

impl fmt::Debug for MysqlLease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl MysqlLease {
    /// Leases the first free shard of `shards` through the server at `url`
    /// (`mysql://user:password@host:port/database`, or `mariadb://`; the table goes in that
    /// database).
    ///
    /// # Errors
    /// [`LeaseError::EmptyShards`]; [`LeaseError::InvalidArgument`] for a URL the core cannot
    /// read or a bad table name; [`LeaseError::NoFreeShard`] when every shard is held;
    /// [`LeaseError::NotMysql`] when the server does not greet as MySQL;
    /// [`LeaseError::Database`] when it cannot be reached or refuses a statement;
    /// [`LeaseError::Unsupported`] for a session lease on a Galera node;
    /// [`LeaseError::SessionPooled`] for a session lease whose connection another session
    /// lease of this process shares.
    pub fn acquire(
        url: &str,
        layout: Layout,
        shards: Range<u64>,
        options: &LeaseOptions,
    ) -> Result<Self, LeaseError> {
        DatabaseLease::acquire(url, layout, shards, options).map(Self)
    }
}

lease_methods!(MysqlLease);
