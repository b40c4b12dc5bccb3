//! Shard leases kept in PostgreSQL, from Rust (feature `postgres`, over the `postgres` crate):
//! the driver of the core's lease protocol ([`crate::sql::LeaseProtocol`]), as Python's
//! `shardid.postgres` and Node's `shardid/postgres` are, sharing its logic with
//! [`super::mysql`].
//!
//! ```no_run
//! use shardid::Layout;
//! use shardid::lease::postgres::{LeaseOptions, PostgresLease};
//!
//! let lease = PostgresLease::acquire(
//!     "host=db user=app dbname=app",
//!     Layout::INSTAGRAM,
//!     0..64,
//!     &LeaseOptions::new(),
//! )?;
//! let id = lease.next_id()?;
//! # Ok::<(), shardid::lease::LeaseError>(())
//! ```
//!
//! The default lease expires (see [`crate::sql::LeaseKind`]): a heartbeat thread renews it
//! every third of its time to live, so it holds through a transaction pooler. Every statement
//! is sent with `query_typed` (one round trip, the unnamed statement, parameters as text): no
//! server-side prepared statement outlives it, which a pooler in transaction mode could not
//! carry. The lease does not follow `fork()`: take one in each process.

use std::boxed::Box;
use std::fmt;
use std::ops::Range;
use std::string::{String, ToString};
use std::vec::Vec;

use postgres::types::Type;

use super::LeaseError;
pub use super::database::LeaseOptions;
use super::database::{Client, DatabaseLease, Owned, lease_methods};
use crate::Layout;
use crate::sql::postgres::client::ServerError;
use crate::sql::{Dialect, Placeholders, Value};

impl Client for postgres::Client {
    type Error = postgres::Error;
    const DIALECT: Dialect = Dialect::Postgres;
    const PLACEHOLDERS: Placeholders = Placeholders::Numbered;

    fn connect(config: &str) -> Result<Self, LeaseError> {
        if let Some(reason) = crate::sql::postgres::client::url_problem(config) {
            return Err(LeaseError::InvalidArgument {
                argument: "config",
                reason,
            });
        }
        postgres::Client::connect(config, postgres::NoTls)
            .map_err(|e| LeaseError::Database(ServerError::boxed(e)))
    }

    /// Runs one of the protocol's statements with its parameters sent as text (each is cast in
    /// the SQL), in one round trip; returns the first row's columns.
    fn run(&mut self, sql: &str, params: &[Value<'_>]) -> Result<Option<Vec<Owned>>, Self::Error> {
        let texts: Vec<String> = params
            .iter()
            .map(|value| match value {
                Value::Text(text) => (*text).to_string(),
                Value::Int(n) => n.to_string(),
            })
            .collect();
        let typed: Vec<(&(dyn postgres::types::ToSql + Sync), Type)> = texts
            .iter()
            .map(|text| (text as &(dyn postgres::types::ToSql + Sync), Type::TEXT))
            .collect();
        let rows = self.query_typed(sql, &typed)?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        let cells = row
            .columns()
            .iter()
            .enumerate()
            .map(|(i, column)| {
                let ty = column.type_();
                Ok(if *ty == Type::BOOL {
                    row.try_get::<_, Option<bool>>(i)?
                        .map_or(Owned::Null, Owned::Bool)
                } else if *ty == Type::INT8 {
                    row.try_get::<_, Option<i64>>(i)?
                        .map_or(Owned::Null, Owned::Int)
                } else if *ty == Type::INT4 {
                    row.try_get::<_, Option<i32>>(i)?
                        .map_or(Owned::Null, |n| Owned::Int(n.into()))
                } else {
                    row.try_get::<_, Option<String>>(i)?
                        .map_or(Owned::Null, Owned::Text)
                })
            })
            .collect::<Result<Vec<_>, postgres::Error>>()?;
        Ok(Some(cells))
    }

    fn boxed(e: Self::Error) -> Box<dyn std::error::Error + Send + Sync> {
        ServerError::boxed(e)
    }

    fn code(e: &Self::Error) -> Option<String> {
        e.code().map(|state| state.code().to_string())
    }

    fn broken(e: &Self::Error) -> bool {
        e.is_closed() || e.code().is_none()
    }

    fn is_closed(&self) -> bool {
        postgres::Client::is_closed(self)
    }

    fn close(self) {
        let _ = postgres::Client::close(self);
    }
}

/// A generator on a shard leased through PostgreSQL: see the [module](self) docs. `Sync`:
/// share it between threads. Dropping it releases the shard.
pub struct PostgresLease(DatabaseLease<postgres::Client>);

impl fmt::Debug for PostgresLease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl PostgresLease {
    /// Leases the first free shard of `shards` through the server at `config` (a libpq-style
    /// connection string or URL).
    ///
    /// # Errors
    /// [`LeaseError::EmptyShards`]; [`LeaseError::NoFreeShard`] when every shard is held;
    /// [`LeaseError::Database`] when the server cannot be reached or refuses a statement (a
    /// bad table name too, as its `INVALID_ARGUMENT` reason); [`LeaseError::SessionPooled`]
    /// for a session lease whose connection another session lease of this process shares.
    pub fn acquire(
        config: &str,
        layout: Layout,
        shards: Range<u64>,
        options: &LeaseOptions,
    ) -> Result<Self, LeaseError> {
        DatabaseLease::acquire(config, layout, shards, options).map(Self)
    }
}

lease_methods!(PostgresLease);
