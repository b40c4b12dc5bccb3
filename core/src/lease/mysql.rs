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

use std::fmt;
use std::ops::Range;

use super::LeaseError;
pub use super::database::LeaseOptions;
use super::database::{DatabaseLease, lease_type};
use crate::Layout;

lease_type! {
    /// A generator on a shard leased through MySQL or MariaDB: see the [module](self) docs.
    /// `Sync`: share it between threads. Dropping it releases the shard.
    MysqlLease over mysql::Conn;
    /// Leases the first free shard of `shards` through the server at `url`
    /// (`mysql://user:password@host:port/database`, or `mariadb://`; the table goes in that
    /// database).
    ///
    /// # Errors
    /// [`LeaseError::EmptyShards`]; [`LeaseError::InvalidArgument`] for a URL the core cannot
    /// read or a bad table name; [`LeaseError::NoFreeShard`] when every shard is held;
    /// [`LeaseError::NotMysql`] when the server does not greet as MySQL;
    /// [`LeaseError::Unreachable`] when it cannot be reached, [`LeaseError::Database`] when it
    /// refuses a statement;
    /// [`LeaseError::Unsupported`] for a session lease on a Galera node;
    /// [`LeaseError::SessionPooled`] for a session lease whose connection another session
    /// lease of this process shares.
    acquire;
}
