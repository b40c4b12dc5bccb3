//! The SQL of a shard lease kept in PostgreSQL, for processes on different hosts: what
//! `shardid.postgres` (Python, psycopg) and `shardid/postgres` (Node, pg) send, written once.
//!
//! A lease holds a session advisory lock for its shard on a connection of its own (released by
//! the server however the process or its connection ends), and a table records each shard's
//! *ceiling*, written before any ID above it is handed out, only while the lock is still held;
//! the next holder starts above it. The drivers run the statements; the protocol is here.

use core::fmt::{self, Display, Formatter};

use super::{SqlError, identifier_problem};
use crate::Layout;

/// The SQLSTATEs with which `CREATE TABLE IF NOT EXISTS` can fail when another session
/// creates the same table at the same moment (a duplicate key in the catalog, the table, or
/// its row type): the table exists, carry on.
pub const LOST_CREATE_RACE: [&str; 3] = ["23505", "42P07", "42710"];

/// How a driver writes the parameters of a query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placeholders {
    /// `$1`, `$2`, …: libpq's own, node-postgres, asyncpg.
    Numbered,
    /// `%s` each: psycopg, the Python DB-API's `format` style.
    Format,
}

/// The statements of a lease on `table` for one layout; each takes its parameters in the order
/// its method says, one per placeholder (a value used twice is passed twice).
#[derive(Clone, Copy, Debug)]
pub struct PostgresLease<'a> {
    layout: Layout,
    table: &'a str,
    placeholders: Placeholders,
}

impl<'a> PostgresLease<'a> {
    /// # Errors
    /// [`SqlError::TableName`]: `table` must be a plain lower-case identifier, as a schema name
    /// for [`super::Postgres::new`] (it goes into the SQL unquoted).
    pub fn new(
        layout: Layout,
        table: &'a str,
        placeholders: Placeholders,
    ) -> Result<Self, SqlError> {
        match identifier_problem(table) {
            Some(reason) => Err(SqlError::TableName { reason }),
            None => Ok(Self {
                layout,
                table,
                placeholders,
            }),
        }
    }

    /// The layout as the table's `layout` column records it.
    pub const fn signature(&self) -> LeaseSignature {
        LeaseSignature(self.layout)
    }

    /// The text whose `hashtext()` is the advisory locks' first key: one namespace per table
    /// and layout, the shard being the second key.
    pub fn key(&self) -> impl Display + '_ {
        Key(self)
    }

    /// Creates the ceilings table if it is missing; no parameters. Ignore the errors in
    /// [`LOST_CREATE_RACE`].
    pub fn create_table(&self) -> Statement<'_> {
        self.statement(&[
            "CREATE TABLE IF NOT EXISTS ",
            " (layout text NOT NULL, shard bigint NOT NULL, ceiling bigint NOT NULL, \
             holder text, taken_at timestamptz, PRIMARY KEY (layout, shard))",
        ])
    }

    /// Tries the shard's lock; parameters `(key, shard)`; returns one boolean.
    pub fn try_lock(&self) -> Statement<'_> {
        self.statement(&["SELECT pg_try_advisory_lock(hashtext(?), ?)"])
    }

    /// Adds the shard's row if it has none; parameters `(signature, shard)`.
    pub fn insert(&self) -> Statement<'_> {
        self.statement(&[
            "INSERT INTO ",
            " (layout, shard, ceiling) VALUES (?, ?, 0) ON CONFLICT DO NOTHING",
        ])
    }

    /// Marks the shard taken; parameters `(holder, signature, shard)`; returns the recorded
    /// ceiling in time units (0: none), above which the new holder starts.
    pub fn claim(&self) -> Statement<'_> {
        self.statement(&[
            "UPDATE ",
            " SET holder = ?, taken_at = now() WHERE layout = ? AND shard = ? RETURNING ceiling",
        ])
    }

    /// Raises the shard's ceiling, only while this session still holds the shard's lock;
    /// parameters `(units, signature, shard, key, shard)`. A row count other than 1 means the
    /// lease is lost: the generator must stop at its ceiling.
    pub fn record(&self) -> Statement<'_> {
        self.statement(&[
            "UPDATE ",
            " SET ceiling = greatest(ceiling, ?) WHERE layout = ? AND shard = ? \
             AND EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() \
             AND classid = hashtext(?)::oid AND objid = ?::bigint::oid AND objsubid = 2)",
        ])
    }

    /// `parts` joined by the table name, with each `?` written as this driver's placeholder.
    const fn statement(&self, parts: &'static [&'static str]) -> Statement<'_> {
        Statement { lease: self, parts }
    }
}

/// One statement of a [`PostgresLease`]; render it with [`Display`].
#[derive(Clone, Copy, Debug)]
pub struct Statement<'a> {
    lease: &'a PostgresLease<'a>,
    parts: &'static [&'static str],
}

impl Display for Statement<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut n = 0;
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                f.write_str(self.lease.table)?;
            }
            for (j, piece) in part.split('?').enumerate() {
                if j > 0 {
                    n += 1;
                    match self.lease.placeholders {
                        Placeholders::Numbered => write!(f, "${n}")?,
                        Placeholders::Format => f.write_str("%s")?,
                    }
                }
                f.write_str(piece)?;
            }
        }
        Ok(())
    }
}

/// A layout's defining numbers, as lease records store them (lock files, the ceilings table).
#[derive(Clone, Copy, Debug)]
pub struct LeaseSignature(pub Layout);

impl Display for LeaseSignature {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let l = &self.0;
        write!(
            f,
            "epoch_ms={} unit_ms={} bits={}/{}/{} order={:?}",
            l.epoch_ms(),
            l.unit_ms(),
            l.time_bits(),
            l.shard_bits(),
            l.sequence_bits(),
            l.order()
        )
    }
}

struct Key<'a>(&'a PostgresLease<'a>);

impl Display for Key<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "shardid {} {}", self.0.table, self.0.signature())
    }
}
