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

/// Why an empty range of shards is refused, the reason of an `INVALID_ARGUMENT` on `shards`
/// for every kind of lease (lock files and PostgreSQL): an empty range would otherwise be
/// reported as every shard being held by a live process.
pub struct EmptyShards {
    /// The first shard of the range.
    pub first: u64,
    /// One past its last shard.
    pub end: u64,
}

impl Display for EmptyShards {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}..{} is empty: a lease needs a range of at least one shard",
            self.first, self.end
        )
    }
}

/// How a driver writes the parameters of a query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placeholders {
    /// `$1`, `$2`, …: libpq's own, node-postgres, asyncpg.
    Numbered,
    /// `%s` each: psycopg, the Python DB-API's `format` style (PyMySQL too).
    Format,
    /// `?` each: mysql2, the `mysql` crate, JDBC.
    Question,
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
                        Placeholders::Question => f.write_str("?")?,
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

/// A value of a lease statement's parameter, in the order of its placeholders: the driver
/// passes [`PostgresLease::key`], [`PostgresLease::signature`], its own holder text (host and
/// process, shown in the table) or the number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// [`PostgresLease::key`], as text.
    Key,
    /// [`PostgresLease::signature`], as text.
    Signature,
    /// Who takes the lease, as text (e.g. `"host pid 123"`).
    Holder,
    /// A shard, as a `bigint`.
    Shard(u64),
    /// A ceiling in time units, as a `bigint`.
    Units(u64),
}

/// The parameters of one statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    items: [Param; 5],
    len: usize,
}

impl Params {
    fn of(items: &[Param]) -> Self {
        let mut all = [Param::Key; 5];
        all[..items.len()].copy_from_slice(items);
        Self {
            items: all,
            len: items.len(),
        }
    }

    /// The parameters, in order.
    pub fn as_slice(&self) -> &[Param] {
        &self.items[..self.len]
    }
}

/// What a driver does next to take a lease: see [`Acquire`].
#[derive(Clone, Copy, Debug)]
pub enum Action<'a> {
    /// Run `statement` with `params`; an error whose SQLSTATE is in `tolerate` counts as
    /// success (the table was created by another session at the same moment). Then
    /// [`Acquire::feed`] the first column of the first row it returned, if any.
    Run {
        /// The statement.
        statement: Statement<'a>,
        /// Its parameters.
        params: Params,
        /// SQLSTATEs that are not errors for this statement.
        tolerate: &'static [&'static str],
    },
    /// The lease is taken: this session holds `shard`'s lock; start the generator above
    /// `recorded`, the ceiling its last holder recorded (`None`: never held).
    Taken {
        /// The shard.
        shard: u64,
        /// The last holder's ceiling, in time units.
        recorded: Option<u64>,
    },
    /// Every shard of the range is held by a live session: report
    /// [`ErrorKind::NoFreeShard`](crate::ErrorKind::NoFreeShard).
    NoFreeShard {
        /// The first shard tried.
        first: u64,
        /// One past the last shard tried.
        end: u64,
    },
}

/// The first column of a statement's first row, as [`Acquire::feed`] takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fed {
    /// No row (or a statement that returns none).
    Nothing,
    /// A boolean column.
    Bool(bool),
    /// An integer column.
    Int(u64),
}

/// The steps of taking a PostgreSQL lease on the first free shard of a range, as a state
/// machine the drivers run: [`Acquire::next`] says what to do, [`Acquire::feed`] takes what
/// the database answered. Python's psycopg and Node's pg drivers only execute; the order, the
/// statements and their parameters are here, once.
///
/// The steps: create the ceilings table if missing; try each shard's advisory lock in turn
/// until one is free; add the shard's row if it has none; mark it taken, which returns the
/// last holder's ceiling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Acquire {
    first: u64,
    end: u64,
    state: State,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    CreateTable,
    TryLock(u64),
    Insert(u64),
    Claim(u64),
    Taken(u64, Option<u64>),
    NoFreeShard,
}

impl Acquire {
    /// Takes the first free shard of `first..end`.
    pub const fn new(first: u64, end: u64) -> Self {
        Self {
            first,
            end,
            state: State::CreateTable,
        }
    }

    /// What to do next, with `lease`'s statements.
    pub fn next<'a>(&self, lease: &'a PostgresLease<'a>) -> Action<'a> {
        let run = |statement, params: &[Param], tolerate| Action::Run {
            statement,
            params: Params::of(params),
            tolerate,
        };
        match self.state {
            State::CreateTable => run(lease.create_table(), &[], &LOST_CREATE_RACE),
            State::TryLock(shard) => run(lease.try_lock(), &[Param::Key, Param::Shard(shard)], &[]),
            State::Insert(shard) => run(
                lease.insert(),
                &[Param::Signature, Param::Shard(shard)],
                &[],
            ),
            State::Claim(shard) => run(
                lease.claim(),
                &[Param::Holder, Param::Signature, Param::Shard(shard)],
                &[],
            ),
            State::Taken(shard, recorded) => Action::Taken { shard, recorded },
            State::NoFreeShard => Action::NoFreeShard {
                first: self.first,
                end: self.end,
            },
        }
    }

    /// Takes the answer to the last [`Action::Run`]: the first column of its first row.
    pub fn feed(&mut self, answer: Fed) {
        let next_shard = |shard: u64| match shard.checked_add(1) {
            Some(next) if next < self.end => State::TryLock(next),
            _ => State::NoFreeShard,
        };
        self.state = match self.state {
            State::CreateTable if self.first < self.end => State::TryLock(self.first),
            State::CreateTable => State::NoFreeShard,
            State::TryLock(shard) if answer == Fed::Bool(true) => State::Insert(shard),
            State::TryLock(shard) => next_shard(shard),
            State::Insert(shard) => State::Claim(shard),
            // A ceiling of 0 is the row's default: never recorded.
            State::Claim(shard) => State::Taken(
                shard,
                match answer {
                    Fed::Int(units) if units > 0 => Some(units),
                    _ => None,
                },
            ),
            done => done,
        };
    }
}

impl PostgresLease<'_> {
    /// The parameters of [`PostgresLease::record`] for `shard` and a ceiling of `units`.
    pub fn record_params(&self, shard: u64, units: u64) -> Params {
        Params::of(&[
            Param::Units(units),
            Param::Signature,
            Param::Shard(shard),
            Param::Key,
            Param::Shard(shard),
        ])
    }
}

/// A parameter's value, as a driver passes it: text, or a `bigint`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    /// A text parameter.
    Text(&'a str),
    /// A `bigint` parameter.
    Int(u64),
}

/// What [`LeaseDriver::next`] says to do.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg(feature = "alloc")]
pub enum Next<'a> {
    /// Run `sql` with `params`; an error whose SQLSTATE is in `tolerate` counts as success.
    /// Then [`LeaseDriver::feed`] the first column of the first row, if any.
    Run {
        /// The statement, with the driver's placeholders.
        sql: alloc::string::String,
        /// Its parameters, in order.
        params: alloc::vec::Vec<Value<'a>>,
        /// SQLSTATEs that are not errors for this statement.
        tolerate: &'static [&'static str],
    },
    /// The lease is taken (see [`Action::Taken`]).
    Taken {
        /// The shard.
        shard: u64,
        /// The last holder's ceiling, in time units.
        recorded: Option<u64>,
    },
    /// Every shard is held: report [`ErrorKind::NoFreeShard`](crate::ErrorKind::NoFreeShard)
    /// with these fields.
    NoFreeShard {
        /// The first shard tried.
        first: u64,
        /// One past the last shard tried.
        end: u64,
        /// Where the shards are held: `"table <name>"`.
        held_in: alloc::string::String,
    },
}

/// [`Acquire`] with everything a driver would otherwise keep beside it: the table, the key,
/// the signature and the holder text, so that `shardid.postgres` (psycopg) and
/// `shardid/postgres` (pg) hold one of these and only execute what it says.
#[derive(Clone, Debug)]
#[cfg(feature = "alloc")]
pub struct LeaseDriver {
    layout: Layout,
    table: alloc::string::String,
    placeholders: Placeholders,
    holder: alloc::string::String,
    key: alloc::string::String,
    signature: alloc::string::String,
    acquire: Acquire,
}

#[cfg(feature = "alloc")]
impl LeaseDriver {
    /// A driver that takes the first free shard of `first..end` on `table`, marking it taken
    /// by `holder` (host and process, shown in the table).
    ///
    /// # Errors
    /// [`SqlError::TableName`], as [`PostgresLease::new`]; [`SqlError::EmptyShards`] when
    /// `first >= end`.
    pub fn new(
        layout: Layout,
        table: &str,
        placeholders: Placeholders,
        first: u64,
        end: u64,
        holder: &str,
    ) -> Result<Self, SqlError> {
        use alloc::string::ToString;
        let lease = PostgresLease::new(layout, table, placeholders)?;
        if first >= end {
            return Err(SqlError::EmptyShards { first, end });
        }
        Ok(Self {
            layout,
            table: table.into(),
            placeholders,
            holder: holder.into(),
            key: lease.key().to_string(),
            signature: lease.signature().to_string(),
            acquire: Acquire::new(first, end),
        })
    }

    fn lease(&self) -> PostgresLease<'_> {
        PostgresLease {
            layout: self.layout,
            table: &self.table,
            placeholders: self.placeholders,
        }
    }

    fn values(&self, params: &Params) -> alloc::vec::Vec<Value<'_>> {
        params
            .as_slice()
            .iter()
            .map(|param| match param {
                Param::Key => Value::Text(&self.key),
                Param::Signature => Value::Text(&self.signature),
                Param::Holder => Value::Text(&self.holder),
                Param::Shard(n) | Param::Units(n) => Value::Int(*n),
            })
            .collect()
    }

    /// What to do next.
    pub fn next(&self) -> Next<'_> {
        use alloc::string::ToString;
        match self.acquire.next(&self.lease()) {
            Action::Run {
                statement,
                params,
                tolerate,
            } => Next::Run {
                sql: statement.to_string(),
                params: self.values(&params),
                tolerate,
            },
            Action::Taken { shard, recorded } => Next::Taken { shard, recorded },
            Action::NoFreeShard { first, end } => Next::NoFreeShard {
                first,
                end,
                held_in: alloc::format!("table {}", self.table),
            },
        }
    }

    /// Takes the answer to the last [`Next::Run`], as [`Acquire::feed`].
    pub fn feed(&mut self, answer: Fed) {
        self.acquire.feed(answer);
    }

    /// The statement and parameters that record a ceiling of `units` for `shard`, only while
    /// this session still holds its lock: one row updated, or none when the lease is lost.
    pub fn record(
        &self,
        shard: u64,
        units: u64,
    ) -> (alloc::string::String, alloc::vec::Vec<Value<'_>>) {
        use alloc::string::ToString;
        let lease = self.lease();
        (
            lease.record().to_string(),
            self.values(&lease.record_params(shard, units)),
        )
    }
}
