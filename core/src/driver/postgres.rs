//! The [`super::Client`] of the `postgres` crate (feature `postgres`), and a driver error
//! as text that keeps what the server or the system said. The crate's own `Display` of an
//! error is its kind only ("db error", "error connecting to server"); the server's message,
//! its detail and hint, and the system's reason (connection refused) are in
//! [`postgres::Error::as_db_error`] and the error's source.
//!
//! The `postgres` crate runs each call on a tokio runtime of its own, which panics ("Cannot
//! start a runtime from within a runtime") on a thread that already drives one: a client made
//! or used inside `#[tokio::main]`, an axum handler or a `#[tokio::test]`. So on such a thread
//! each call that reaches the server runs on a thread of its own ([`off_runtime`]): the blocking
//! clients never panic there; they block the caller for the round trip, as the MySQL and SQLite
//! clients do. The async client of dense IDs (`shardid::segment::tokio_postgres`, feature
//! `tokio-postgres`) blocks nothing.

use core::fmt;
use std::boxed::Box;
use std::error::Error;

/// `e` shown with the server's own message (`ERROR: relation "seg.x" does not exist`, with its
/// detail and hint) or, for an error of the connection, the system's reason after the kind
/// (`error connecting to server: Connection refused (os error 111)`).
pub(crate) struct Described<'a>(pub &'a postgres::Error);

impl fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(db) = self.0.as_db_error() {
            return write!(f, "{db} (SQLSTATE {})", db.code().code());
        }
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(cause) = source {
            write!(f, ": {cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

/// A driver error boxed for an error that holds any database's (the leases'
/// `LeaseError::Database`): shown as [`Described`], with the driver's error as
/// its source.
#[derive(Debug)]
pub(crate) struct ServerError(pub(crate) postgres::Error);

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Described(&self.0).fmt(f)
    }
}

impl Error for ServerError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.0)
    }
}

impl ServerError {
    /// `e`, boxed.
    pub(crate) fn boxed(e: postgres::Error) -> Box<dyn Error + Send + Sync> {
        Box::new(Self(e))
    }
}

/// Runs `f` where the `postgres` crate's runtime may block: on this thread, or, when this thread
/// is inside a tokio runtime, on a thread of its own (no runtime there), waited for.
///
/// Why not an error instead: tokio's public API tells a thread that has a runtime's context
/// (`Handle::try_current`) but not whether blocking is allowed on it: an async task and
/// `spawn_blocking`'s threads look alike, and refusing there would refuse the very call
/// `spawn_blocking` is for. Why not `block_in_place`: it panics on a current-thread runtime.
/// A thread that cannot be started leaves `f` on this thread (the crate's own panic, as before).
pub(crate) fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if tokio::runtime::Handle::try_current().is_err() {
        return f();
    }
    // Borrowed by the thread, so that `f` is still here if the thread cannot start.
    let slot = std::sync::Mutex::new(Some(f));
    let take = || {
        slot.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    };
    let ran = std::thread::scope(|scope| {
        let started = std::thread::Builder::new()
            .name("shardid-postgres".into())
            .spawn_scoped(scope, || take().map(|f| f()));
        started.ok().map(|thread| match thread.join() {
            Ok(value) => value,
            Err(panic) => std::panic::resume_unwind(panic),
        })
    });
    match ran.flatten() {
        Some(value) => value,
        None => take().map_or_else(|| unreachable!("f ran nowhere"), |f| f()),
    }
}

/// The core's one rule for a connection string ([`crate::sql::Dialect::of_url`]), for the
/// PostgreSQL clients: the reason of an `INVALID_ARGUMENT` on `config` for a URL no driver
/// takes, one of a MySQL-family server (which the `mysql` modules' clients take) or a SQLite
/// file.
pub(crate) fn url_problem(config: &str) -> Option<std::string::String> {
    use crate::sql::Dialect;
    use std::string::ToString;
    match Dialect::of_url(config) {
        Ok(Dialect::Postgres) => None,
        Ok(Dialect::Sqlite) => {
            Some("names a SQLite file: the sqlite module's client takes it".into())
        }
        Ok(_) => Some("names a MySQL or MariaDB server: the mysql module's client takes it".into()),
        Err(why) => Some(why.to_string()),
    }
}

/// The core's values as the texts they are sent as (the core's SQL casts each).
pub(crate) fn texts(params: &[crate::sql::Value<'_>]) -> std::vec::Vec<std::string::String> {
    use crate::sql::Value;
    use std::string::ToString;
    params
        .iter()
        .map(|value| match value {
            Value::Text(text) => (*text).to_string(),
            Value::Int(n) => n.to_string(),
        })
        .collect()
}

/// `texts` as `query_typed`'s parameters, each of type `text`.
pub(crate) fn typed(
    texts: &[std::string::String],
) -> std::vec::Vec<(&(dyn postgres::types::ToSql + Sync), postgres::types::Type)> {
    texts
        .iter()
        .map(|text| {
            (
                text as &(dyn postgres::types::ToSql + Sync),
                postgres::types::Type::TEXT,
            )
        })
        .collect()
}

/// A row's columns as the drivers read them (the `postgres` and `tokio-postgres` crates' rows
/// alike).
pub(crate) fn owned_row(
    row: &postgres::Row,
) -> Result<std::vec::Vec<super::Owned>, postgres::Error> {
    use super::Owned;
    use postgres::types::Type;
    use std::string::String;
    row.columns()
        .iter()
        .enumerate()
        .map(|(i, column)| {
            let ty = column.type_();
            Ok(if *ty == Type::VOID {
                // A function that returns nothing (`create_tag`): no value to read.
                Owned::Null
            } else if *ty == Type::BOOL {
                row.try_get::<_, Option<bool>>(i)?
                    .map_or(Owned::Null, Owned::Bool)
            } else if *ty == Type::INT8 {
                row.try_get::<_, Option<i64>>(i)?
                    .map_or(Owned::Null, Owned::Int)
            } else if *ty == Type::INT4 {
                row.try_get::<_, Option<i32>>(i)?
                    .map_or(Owned::Null, |n| Owned::Int(n.into()))
            } else if *ty == Type::INT2 {
                row.try_get::<_, Option<i16>>(i)?
                    .map_or(Owned::Null, |n| Owned::Int(n.into()))
            } else {
                row.try_get::<_, Option<String>>(i)?
                    .map_or(Owned::Null, Owned::Text)
            })
        })
        .collect()
}

impl super::Client for postgres::Client {
    type Error = postgres::Error;
    const DIALECT: crate::sql::Dialect = crate::sql::Dialect::Postgres;
    const PLACEHOLDERS: crate::sql::Placeholders = crate::sql::Placeholders::Numbered;
    const URL_ARGUMENT: &'static str = "config";

    fn url_problem(url: &str) -> Option<std::string::String> {
        url_problem(url)
    }

    fn connect(url: &str) -> Result<Self, super::ConnectError<Self::Error>> {
        if let Some(reason) = url_problem(url) {
            return Err(super::ConnectError::Url(reason));
        }
        off_runtime(|| postgres::Client::connect(url, postgres::NoTls))
            .map_err(super::ConnectError::Driver)
    }

    /// Runs one statement with `query_typed`: one round trip on the unnamed statement,
    /// parameters sent as text (the core's SQL casts each), so no server-side prepared
    /// statement outlives it, which a pooler in transaction mode could not carry.
    fn run(
        &mut self,
        sql: &str,
        params: &[crate::sql::Value<'_>],
    ) -> Result<Option<std::vec::Vec<super::Owned>>, Self::Error> {
        let texts = texts(params);
        let typed = typed(&texts);
        let rows = off_runtime(|| self.query_typed(sql, &typed))?;
        rows.first().map(owned_row).transpose()
    }

    fn describe(e: &Self::Error) -> std::string::String {
        use std::string::ToString;
        Described(e).to_string()
    }

    fn message(e: &Self::Error) -> Option<std::string::String> {
        use std::string::ToString;
        e.as_db_error().map(|db| db.message().to_string())
    }

    fn boxed(e: Self::Error) -> Box<dyn Error + Send + Sync> {
        ServerError::boxed(e)
    }

    fn code(e: &Self::Error) -> Option<std::string::String> {
        use std::string::ToString;
        e.code().map(|state| state.code().to_string())
    }

    fn broken(e: &Self::Error) -> bool {
        e.is_closed() || e.code().is_none()
    }

    fn is_closed(&self) -> bool {
        postgres::Client::is_closed(self)
    }

    fn close(self) {
        // Also what drops the crate's runtime, which panics on a runtime's thread too.
        let _ = off_runtime(|| postgres::Client::close(self));
    }
}
