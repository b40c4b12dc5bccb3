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
//!
//! In async code (tokio), take `shardid::lease::tokio_postgres::PostgresLease` (feature
//! `tokio-postgres`): the same statements and table, its heartbeat a task, its acquire and
//! release awaited; this one's `acquire` and `close` block the calling thread for their round
//! trips (inside a runtime, on a thread of their own: no panic).

use std::ops::Range;

use super::LeaseError;
pub use super::database::LeaseOptions;
use super::database::{DatabaseLease, lease_methods};
use crate::Layout;

lease_methods!(
    PostgresLease,
    postgres::Client,
    "PostgreSQL",
    "the server at `url` (a libpq-style connection string or URL)",
    "[`LeaseError::Unreachable`] when the server cannot be reached, [`LeaseError::Database`] when it refuses a statement; [`LeaseError::SessionPooled`] for a session lease whose connection another session lease of this process shares."
);
