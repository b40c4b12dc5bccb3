//! The one connection trait of the Rust drivers (features `postgres`, `mysql`, `sqlite`): what
//! differs between the `postgres`, `mysql` and `rusqlite` crates — connecting from a URL,
//! running one statement with the core's [`Value`] parameters, how an error names itself (with
//! the server's own message), whether the connection is gone — behind [`Client`], implemented
//! once per crate ([`postgres`], [`mysql`], [`sqlite`]). Every ID system's driver (the lease, dense IDs, the dictionary,
//! serials) is written once over it.

use std::boxed::Box;
use std::string::String;
use std::vec::Vec;

use crate::sql::{Cell, Dialect, Placeholders, Value};

#[cfg(feature = "mysql")]
pub(crate) mod mysql;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
#[cfg(feature = "sqlite")]
pub(crate) mod sqlite;

/// A column as a [`Client`] returns it: the owned twin of the core's [`Cell`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Owned {
    Null,
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Bool(bool),
    Int(i64),
    Text(String),
}

impl Owned {
    /// The core's view of this column.
    pub(crate) fn cell(&self) -> Cell<'_> {
        match self {
            Self::Null => Cell::Null,
            Self::Bool(b) => Cell::Bool(*b),
            Self::Int(n) => Cell::Int(*n),
            Self::Text(t) => Cell::Text(t),
        }
    }

    /// An integer column (a driver may hand `bigint` back as text).
    #[cfg_attr(
        not(any(feature = "serial", feature = "sqlite", feature = "redis")),
        allow(dead_code)
    )]
    pub(crate) fn int(&self) -> Option<i64> {
        match self {
            Self::Int(n) => Some(*n),
            Self::Text(t) => t.parse().ok(),
            _ => None,
        }
    }

    /// A boolean column (the MySQL family has none: 0 or 1).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) fn bool(&self) -> Option<bool> {
        match self {
            Self::Bool(b) => Some(*b),
            Self::Int(n) => Some(*n != 0),
            _ => None,
        }
    }
}

/// Why [`Client::connect`] could not open a connection.
#[derive(Debug)]
pub(crate) enum ConnectError<E> {
    /// The URL is not one this client takes (`INVALID_ARGUMENT`, this reason).
    Url(String),
    /// The server accepted the connection and did not greet as MySQL (`NOT_MYSQL`).
    #[cfg_attr(not(feature = "mysql"), allow(dead_code))]
    NotMysql {
        /// `host:port`.
        server: String,
        /// What it did instead.
        reason: String,
    },
    /// The driver's error: the server is down, refused the log-in, ...
    Driver(E),
}

/// A connection of a database's crate, as every driver of the core uses it.
pub(crate) trait Client: Sized + Send + 'static {
    /// The crate's error.
    type Error: std::error::Error + Send + Sync + 'static;
    /// The SQL statements are rendered in at first (the MySQL family: MariaDB's, until the
    /// server says otherwise, see [`Client::detect`]).
    const DIALECT: Dialect;
    /// The placeholders the crate takes.
    const PLACEHOLDERS: Placeholders;
    /// The name of the connection argument in an `INVALID_ARGUMENT` (`config`, `url`).
    const URL_ARGUMENT: &'static str;

    /// Why this client does not take `url` (the core's one rule for URLs, then the client's
    /// own reading of it), `None` when it does.
    fn url_problem(url: &str) -> Option<String>;

    /// A new connection to `url`, after the core's one rule for URLs said this client takes it.
    fn connect(url: &str) -> Result<Self, ConnectError<Self::Error>>;

    /// The dialect of the server this connection reaches (one round trip on the MySQL
    /// family, none on PostgreSQL).
    fn detect(&mut self) -> Result<Dialect, Self::Error> {
        Ok(Self::DIALECT)
    }

    /// Runs one statement in one round trip, never leaving a named prepared statement on the
    /// server that a transaction pooler could not carry; its first row's columns, `None` for no
    /// row (on the MySQL family, a statement without rows answers `(affected rows, last insert
    /// ID)`).
    fn run(&mut self, sql: &str, params: &[Value<'_>]) -> Result<Option<Vec<Owned>>, Self::Error>;

    /// `e` as text, with the server's own message (not the crate's bare kind, "db error").
    fn describe(e: &Self::Error) -> String;

    /// The server's own message of a refusal, bare (no kind, no code), `None` for an error of
    /// the connection.
    #[cfg_attr(not(all(feature = "serial", feature = "postgres")), allow(dead_code))]
    fn message(e: &Self::Error) -> Option<String>;

    /// `e` boxed for an error that holds any database's, shown as [`Client::describe`].
    fn boxed(e: Self::Error) -> Box<dyn std::error::Error + Send + Sync> {
        Box::new(e)
    }

    /// How the core's protocols know the error: its SQLSTATE, or MySQL's error number.
    fn code(e: &Self::Error) -> Option<String>;

    /// Whether `e` says the connection is gone (not the database's refusal of a statement).
    fn broken(e: &Self::Error) -> bool;

    /// Whether the connection is known to be gone.
    fn is_closed(&self) -> bool;

    /// Closes the connection, saying goodbye if it can.
    fn close(self);
}
