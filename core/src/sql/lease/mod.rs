//! The SQL and the steps of a shard lease kept in a database table, for processes on different
//! hosts: what `shardid.postgres` (Python), `shardid/postgres` (Node) and
//! `shardid::lease::postgres` (Rust) send, written once. The drivers only execute.
//!
//! One row per `(layout, shard)` records the shard's *ceiling* (a time unit at or above every
//! ID its holders issued), who holds it, a random *token* of the holder's, and when the lease
//! expires by the **database's** clock. Two kinds of lease share the table:
//!
//! - [`LeaseKind::Expiring`], the default: no session state at all, so it holds behind a
//!   transaction pooler (`PgBouncer`, Supavisor, RDS Proxy), where consecutive statements of one
//!   client run on different server sessions. A claim takes the first free or expired row of
//!   the range in one statement and writes its token; the holder renews the expiry every
//!   third of the time to live, and every renewal and ceiling write is guarded by the token, so
//!   a holder that was taken over can write nothing more. A holder also stops on its own once
//!   its *monotonic* clock passes its last successful renewal plus the time to live (less a
//!   margin: [`Tenure`]), so a holder that was paused or cut off never issues an ID after its
//!   lease could have been taken over. A crashed holder's shard is free one time to live later.
//! - [`LeaseKind::Session`]: a session advisory lock per shard, for direct connections only. It
//!   frees a crashed holder's shard at once, but a pooler shares server sessions between
//!   clients (and locks are re-entrant), so it checks that it is not pooled: the ceiling is
//!   written only from the server session that took the lock (its `pg_backend_pid()`), and the
//!   bindings refuse two lease connections of one process that see one server session.
//!
//! A new holder starts above the recorded ceiling, and a holder never issues an ID above a
//! ceiling it has not written under its token: so two holders of one shard, one after the
//! other, never issue the same ID, whatever the time to live.
//!
//! The protocol speaks PostgreSQL's dialect, the MySQL family's and SQLite's
//! ([`super::Dialect`]): the steps are the same, the statements differ (`postgres.rs`,
//! `mysql.rs`, and SQLite's [`super::sqlite::SqliteLease`]), and MySQL needs a step or two more
//! where PostgreSQL does it in one statement (see `mysql.rs`). SQLite has expiring leases only
//! (no advisory locks: a session lease is refused, [`SQLITE_SESSION`]).

use core::fmt::{self, Display, Formatter};

use super::{Dialect, Placeholders, SqlError, identifier_problem};
use crate::Layout;

mod mysql;
mod postgres;
mod tenure;

pub use tenure::{DEFAULT_TTL_MS, MAX_TTL_MS, MIN_TTL_MS, Tenure, TtlError};

/// The SQLSTATEs with which `CREATE TABLE IF NOT EXISTS` can fail when another session
/// creates the same table at the same moment (a duplicate key in the catalog, the table, or
/// its row type): the table exists, carry on.
pub const LOST_CREATE_RACE: [&str; 3] = ["23505", "42P07", "42710"];

/// How many claims in a row may lose a race to other claimants (a row another session claimed
/// between this statement's snapshot and its lock, or the same new shard inserted first)
/// before the lease reports that no shard is free. Each lost race is another process's win.
const MAX_CLAIMS: u32 = 32;

/// `shardid restored`'s statements marking the lease table `name` (quoted as the dialect
/// quotes, with its schema where known) restored (issue 54): its fence row's mark set to the
/// database's clock, which the next claim of every lease reads. When `exists` is false the
/// table is made first, with the statement a lease makes it with (SQLite's:
/// [`super::sqlite`]): a backup taken before the first lease ran has no table, and the lost
/// holders that made one after it dated IDs that a new holder, finding no mark, would date
/// again. On PostgreSQL the table is then owned by the role that ran `shardid restored`, as a
/// lease's own table is owned by the lease's user: run it as that role (a lease refuses a
/// table none of its user's roles own, naming the owner).
#[cfg(feature = "std")]
pub(crate) fn mark_restored(
    dialect: Dialect,
    name: &str,
    exists: bool,
) -> alloc::vec::Vec<alloc::string::String> {
    let mut out = alloc::vec::Vec::new();
    match Family::of(dialect) {
        Family::Postgres => {
            if !exists {
                out.push(postgres::CREATE_TABLE.replace("{t}", name));
            }
            out.push(postgres::MARK.replace("{t}", name));
        }
        Family::Mysql => {
            if !exists {
                out.push(mysql::CREATE_TABLE.replace("{t}", name));
            }
            out.push(mysql::MARK.replace("{t}", name));
        }
        Family::Sqlite => {}
    }
    out
}

/// How far past the database's clock a row's ceiling jumps after a step back (every dialect's
/// `JUMP`) or a restore (the fence, issue 54): the failover rule's skew between the hosts'
/// clocks, plus the ceiling any holder may have written ahead of its clock (at most 100 ms).
pub const JUMP_SKEW_MS: u64 = super::failover::SKEW_MS + 250;

/// How many times a held lease's statement is sent again after the server rolled it back
/// ([`LeaseProtocol::resend_after`]).
pub const MAX_RESENDS: u32 = 10;

/// Why an empty range of shards is refused, the reason of an `INVALID_ARGUMENT` on `shards`
/// for every kind of lease (lock files and databases): an empty range would otherwise be
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

/// Which kind of lease: see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LeaseKind {
    /// A lease with no session state, renewed by heartbeats, that expires `ttl_ms` after its
    /// last renewal by the database's clock: the default, and the only kind that holds behind
    /// a transaction pooler.
    Expiring {
        /// The time to live, in milliseconds ([`MIN_TTL_MS`]..=[`MAX_TTL_MS`]).
        ttl_ms: u64,
    },
    /// A session advisory lock per shard, for direct connections: a crashed holder's shard is
    /// free at once.
    Session,
}

impl LeaseKind {
    /// An expiring lease of [`DEFAULT_TTL_MS`].
    pub const DEFAULT: Self = Self::Expiring {
        ttl_ms: DEFAULT_TTL_MS,
    };

    /// The kind by its name (`"expiring"`, `"session"`), as the bindings take it; an expiring
    /// lease gets `ttl_ms`.
    ///
    /// # Errors
    /// The reason, for an `INVALID_ARGUMENT` on `kind` or `ttl_ms`.
    pub fn parse(name: &str, ttl_ms: u64) -> Result<Self, TtlError> {
        match name {
            "expiring" => tenure::check_ttl(ttl_ms).map(|ttl_ms| Self::Expiring { ttl_ms }),
            "session" => Ok(Self::Session),
            _ => Err(TtlError::Kind),
        }
    }
}

/// A value of a statement's parameter, in the order of its placeholders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    /// A text parameter.
    Text(&'a str),
    /// An integer parameter (`bigint`, or `int` where the SQL casts it so).
    Int(u64),
}

/// One column of a row a statement returned, as a driver hands it back.
///
/// On the MySQL family a statement that returns no rows (an `UPDATE`, an `INSERT`) is answered
/// with the row `(affected rows, last insert ID)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell<'a> {
    /// SQL `NULL`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A text (drivers that return `bigint` as text may pass it so: it is parsed).
    Text(&'a str),
}

impl Cell<'_> {
    fn int(&self) -> Option<i64> {
        match self {
            Self::Int(n) => Some(*n),
            Self::Text(text) => text.parse().ok(),
            Self::Null | Self::Bool(_) => None,
        }
    }

    /// An unsigned number: a MySQL reply's last insert ID may pass `i64::MAX`, and drivers
    /// then hand it back as text.
    fn uint(&self) -> Option<u64> {
        match self {
            Self::Int(n) => u64::try_from(*n).ok(),
            Self::Text(text) => text.parse().ok(),
            Self::Null | Self::Bool(_) => None,
        }
    }

    /// Whether a lock was granted: PostgreSQL's `true`, MySQL's `1`.
    fn granted(&self) -> bool {
        matches!(self, Self::Bool(true) | Self::Int(1)) || matches!(self, Self::Text("1"))
    }
}

/// The last insert ID of a MySQL reply, fed as the row `(affected rows, last insert ID)`; 0 for
/// any other answer.
fn last_insert_id(answer: &Answer<'_>) -> u64 {
    match answer {
        Answer::Row([_, id, ..]) => id.uint().unwrap_or(0),
        _ => 0,
    }
}

/// What the last statement of [`LeaseProtocol::next`] came back with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer<'a> {
    /// Its first row (the only one the lease's statements return).
    Row(&'a [Cell<'a>]),
    /// No row.
    NoRow,
    /// It failed; the error's SQLSTATE if it has one (PostgreSQL), or its error number in
    /// decimal (the MySQL family: `"1146"`). [`Next::Raise`] then tells the driver to raise that
    /// error as it is, unless the protocol knows what to do.
    Error(Option<&'a str>),
}

/// What a driver does next to take a lease: see [`LeaseProtocol`].
#[cfg(feature = "alloc")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next<'a> {
    /// Run `sql` with `params`, then [`LeaseProtocol::feed`] what came back.
    Run {
        /// The statement, with the driver's placeholders.
        sql: alloc::string::String,
        /// Its parameters, in order.
        params: alloc::vec::Vec<Value<'a>>,
    },
    /// The lease is taken: start the generator above `recorded`, the ceiling its last holder
    /// recorded (`None`: never held).
    Taken {
        /// The shard.
        shard: u64,
        /// The last holder's ceiling, in time units.
        recorded: Option<u64>,
        /// For a session lease, the server session holding the lock (address, port, start
        /// time and process ID): the bindings refuse a second lease connection of the process
        /// that sees the same one (`lease::claim_backend`).
        backend: Option<&'a str>,
    },
    /// Every shard of the range is held by a live lease: report
    /// [`ErrorKind::NoFreeShard`](crate::ErrorKind::NoFreeShard).
    NoFreeShard {
        /// The first shard of the range.
        first: u64,
        /// One past its last shard.
        end: u64,
        /// Where the shards are held: `"table <name>"`.
        held_in: alloc::string::String,
    },
    /// Raise the error the last statement failed with, as it is.
    Raise,
    /// This kind of lease cannot hold on this server: report
    /// [`ErrorKind::Unsupported`](crate::ErrorKind::Unsupported) with `reason` (a session lease
    /// on a Galera node).
    Refuse {
        /// Why.
        reason: &'static str,
    },
    /// The lease's table cannot be used: report
    /// [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) on `argument` with
    /// `reason` (a PostgreSQL table another role owns, whose triggers would run as this user;
    /// no schema to make the table in).
    Invalid {
        /// `"table"` or `"schema"`.
        argument: &'static str,
        /// Why, naming the table and its owner.
        reason: alloc::string::String,
    },
    /// This host's clock is ahead of the database's by more than a lease allows
    /// ([`super::failover::SKEW_MS`]): report
    /// [`ErrorKind::ClockSkew`](crate::ErrorKind::ClockSkew). A shard the claim took was
    /// released first.
    ClockSkew {
        /// How far ahead, at least, in milliseconds.
        ahead_ms: u64,
        /// How far ahead a lease allows.
        max_ms: u64,
    },
    /// The row taken records what no lease writes: report
    /// [`ErrorKind::Database`](crate::ErrorKind::Database) with `reason` (a ceiling past the
    /// layout's last time unit, which would wrap the generator's first slot). The row stays
    /// as it is, held by this claim until it expires: a person must look at it.
    Corrupt {
        /// Why, naming the row and its ceiling.
        reason: alloc::string::String,
    },
}

/// Why a session lease is refused on a Galera cluster.
pub const GALERA_SESSION: &str = "a session lease on a Galera cluster: GET_LOCK locks one node \
    only, so processes attached to two nodes would both take a shard; use the expiring lease \
    (kind 'expiring', the default)";

/// Why a session lease is refused on SQLite.
pub const SQLITE_SESSION: &str = "a session lease on SQLite: SQLite has no advisory locks; use \
    the expiring lease (kind 'expiring', the default), or lock-file leases for the processes of \
    one host";

/// The statements a dialect's lease is rendered from: each `match` on it names every dialect,
/// so a new one cannot silently take another's SQL.
#[cfg(feature = "alloc")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Postgres,
    Mysql,
    Sqlite,
}

#[cfg(feature = "alloc")]
impl Family {
    const fn of(dialect: Dialect) -> Self {
        match dialect {
            Dialect::Postgres => Self::Postgres,
            Dialect::Mysql | Dialect::Mariadb => Self::Mysql,
            Dialect::Sqlite => Self::Sqlite,
        }
    }
}

/// Where to go back to after the table was made or upgraded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resume {
    Claim,
    /// A session lease's first lock.
    TryLock(u64),
    SessionClaim(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// PostgreSQL: who owns the table, before the first write to it ([`postgres::CHECK_TABLE`]).
    Check(Resume),
    /// The MySQL family: the server's clock, before the claim ([`mysql::CLOCK`]).
    Clock(Resume),
    /// The table's fence row, read once before the first claim (issue 54): a mark of
    /// `shardid restored`, or a step back it saw, raises what a claim starts from.
    Fence(Resume),
    /// The MySQL family: add the fence row [`Step::Fence`] found missing.
    AddFence(Resume),
    /// A claim took this shard, but the client's clock is too far ahead: give it back.
    Unclaim(u64),
    /// [`Next::ClockSkew`].
    Skewed,
    Claim,
    /// MySQL: insert the first shard of the range that has no row.
    Insert,
    /// MySQL: count the held rows of the range.
    Held,
    TryLock(u64),
    SessionClaim(u64),
    /// MySQL: add the row of a shard whose lock is held.
    SessionInsert(u64),
    Unlock(u64),
    CreateTable(Resume),
    UpgradeTable(Resume),
    Taken(u64, Option<u64>),
    NoFreeShard,
    Raise,
    Refuse,
    /// [`Next::Invalid`].
    Invalid,
    /// [`Next::Corrupt`].
    Corrupt,
}

/// A layout's defining numbers, as lease records store them (lock files, the leases table).
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

/// Checks a lease table's name: a plain lower-case identifier, as a schema name for
/// [`super::Postgres::new`] (it goes into the SQL unquoted).
///
/// # Errors
/// [`SqlError::TableName`].
pub fn check_table(table: &str) -> Result<(), SqlError> {
    identifier_problem(table).map_or(Ok(()), |reason| Err(SqlError::TableName { reason }))
}

/// The steps of taking a lease on the first free shard of a range, and the statements that keep
/// it, as a state machine the drivers run: [`LeaseProtocol::next`] says what to do,
/// [`LeaseProtocol::feed`] takes what the database answered. Python's, Node's and Rust's
/// drivers only execute; the order, the statements and their parameters are here, once.
///
/// Taking an expiring lease is one statement (two more the first time: the table is created
/// when missing, or upgraded from an older shardid's); a session lease tries each shard's lock
/// in turn, then claims its row.
#[cfg(feature = "alloc")]
#[derive(Clone, Debug)]
pub struct LeaseProtocol {
    kind: LeaseKind,
    dialect: Dialect,
    max_units: u64,
    shard_bits: u8,
    max_shard: u64,
    lock_prefix: alloc::string::String,
    table: alloc::string::String,
    /// The table's schema: named by the caller ([`LeaseProtocol::schema`]), or, on PostgreSQL,
    /// learnt from [`postgres::CHECK_TABLE`] (`None` until then; the MySQL family's default is
    /// the connection's database, named by its URL).
    schema: Option<alloc::string::String>,
    /// Whether the caller named the schema.
    schema_named: bool,
    /// The quoted name [`postgres::CHECK_TABLE`] looks up: `"schema"."table"`, or `"table"`
    /// through `search_path` when no schema was named.
    check_name: alloc::string::String,
    /// Why the next step is [`Next::Invalid`] or [`Next::Corrupt`], and the argument.
    refusal: Option<(&'static str, alloc::string::String)>,
    placeholders: Placeholders,
    signature: alloc::string::String,
    key: alloc::string::String,
    holder: alloc::string::String,
    token: alloc::string::String,
    first: u64,
    end: u64,
    epoch_ms: u64,
    unit_ms: u64,
    step: Step,
    claims: u32,
    made_table: bool,
    upgraded_table: bool,
    backend: Option<(u64, alloc::string::String)>,
    layout: Layout,
    /// SQLite's statements, once the dialect is SQLite.
    sqlite: Option<super::sqlite::SqliteLease>,
    /// The client's clock, in Unix milliseconds ([`LeaseProtocol::clock`]): the generator's
    /// (`shardid::clock::now_ms`) with `std`; none without, and then nothing is compared.
    clock: Option<fn() -> u64>,
    /// What the client's clock read when the last claim or renewal was handed to the driver.
    sent: Sent,
    /// How far ahead the client's clock was found ([`Next::ClockSkew`]).
    ahead_ms: u64,
    /// What the fence row said ([`Step::Fence`]; `None`: not read yet): after a restore (issue
    /// 54), the time unit a claimed row starts from at least when it is missing or was last
    /// taken before the mark, and the mark `shardid restored` left, in Unix ms by the
    /// database's clock (0 and 0: no restore to account for).
    fence: Option<(u64, u64)>,
}

#[cfg(feature = "alloc")]
impl LeaseProtocol {
    /// A protocol that takes the first free shard of `first..end` of `layout` on `table`, for
    /// `holder` (host and process, shown in the table) with `token` (random, unique to this
    /// lease: `lease::new_token()` makes one).
    ///
    /// # Errors
    /// [`SqlError::TableName`], as [`check_table`]; [`SqlError::EmptyShards`] when
    /// `first >= end`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        kind: LeaseKind,
        layout: Layout,
        table: &str,
        placeholders: Placeholders,
        first: u64,
        end: u64,
        holder: &str,
        token: &str,
    ) -> Result<Self, SqlError> {
        use alloc::string::ToString;
        check_table(table)?;
        if first >= end {
            return Err(SqlError::EmptyShards { first, end });
        }
        let signature = LeaseSignature(layout).to_string();
        let key = alloc::format!("shardid {table} {signature}");
        Ok(Self {
            lock_prefix: alloc::format!(
                "shardid {:016x} ",
                crate::dictionary::fnv1a64(key.as_bytes())
            ),
            kind,
            dialect: Dialect::Postgres,
            max_units: layout.max_time_units(),
            shard_bits: layout.shard_bits(),
            max_shard: layout.max_shard(),
            key,
            table: table.into(),
            placeholders,
            signature,
            holder: holder.into(),
            token: token.into(),
            first,
            end,
            epoch_ms: layout.epoch_ms(),
            unit_ms: layout.unit_ms(),
            step: Step::Check(start(kind, first)),
            claims: 0,
            made_table: false,
            upgraded_table: false,
            backend: None,
            layout,
            sqlite: None,
            schema: None,
            schema_named: false,
            check_name: alloc::format!("\"{table}\""),
            refusal: None,
            #[cfg(feature = "std")]
            clock: Some(crate::clock::now_ms),
            #[cfg(not(feature = "std"))]
            clock: None,
            sent: Sent::default(),
            ahead_ms: 0,
            fence: None,
        })
    }

    /// The same protocol with the client's clock read from `clock` (Unix milliseconds), as
    /// tests script it; by default the generator's own clock.
    ///
    /// Each claim and renewal returns the database's clock read while it ran: a client whose
    /// clock, read when the statement was handed to the driver, was already more than
    /// [`super::failover::SKEW_MS`] ahead of it is refused ([`Next::ClockSkew`],
    /// [`LeaseProtocol::clock_ahead`]). The failover rule raises a ceiling to the database's
    /// clock plus that skew: a client further ahead dates IDs above it. The database reads its
    /// clock after the statement was sent, so however long the round trip, the client's clock
    /// then read at least what it read at sending: the comparison never takes a slow round
    /// trip for skew (a client within the skew is never refused), and a client further ahead
    /// than the skew is refused unless its statement took longer to reach the database than it
    /// is beyond the skew.
    #[must_use]
    pub fn clock(mut self, clock: fn() -> u64) -> Self {
        self.clock = Some(clock);
        self
    }

    /// The same protocol on the table in `schema` (a plain lower-case name, as `table`): on
    /// PostgreSQL a schema, on the MySQL family a database, on SQLite `main` (the default) or
    /// an attached database. `None`: on PostgreSQL the schema where `search_path` finds the
    /// table when the lease starts, else the first schema of `search_path`, from then on named
    /// in every statement (and its owner checked, as a named one's); on the MySQL family the
    /// database the connection's URL names; on SQLite `main`. Call it before
    /// [`LeaseProtocol::dialect`].
    ///
    /// # Errors
    /// [`SqlError::SchemaName`].
    pub fn schema(mut self, schema: Option<&str>) -> Result<Self, SqlError> {
        if let Some(schema) = schema {
            super::check_schema(schema)?;
        }
        self.schema = schema.map(Into::into);
        self.schema_named = schema.is_some();
        self.check_name = match schema {
            Some(schema) => alloc::format!("\"{schema}\".\"{}\"", self.table),
            None => alloc::format!("\"{}\"", self.table),
        };
        Ok(self)
    }

    /// The same protocol in the SQL of `dialect` (PostgreSQL by default; [`Placeholders::Numbered`]
    /// are written `?` on the MySQL family, which has no numbered style).
    ///
    /// On the MySQL family the statements name the server they run on for failovers
    /// ([`Dialect::server_identity`]); one rendered for MariaDB that MySQL refuses (an unknown
    /// variable) is rendered for MySQL and sent again, so a driver that cannot tell the two
    /// apart may pass [`Dialect::Mariadb`] for both.
    ///
    /// # Errors
    /// [`SqlError::Core`] with [`crate::Error::ShardOutOfRange`] when the range passes the
    /// layout's last shard (on the MySQL family a claim's answer packs the shard in the
    /// layout's shard bits).
    ///
    /// On SQLite an expiring lease is rendered from [`super::sqlite::SqliteLease`]'s
    /// statements (one claim, created table on first use), and a session lease is refused:
    /// [`Next::Refuse`] with [`SQLITE_SESSION`].
    pub fn dialect(mut self, dialect: Dialect) -> Result<Self, SqlError> {
        match Family::of(dialect) {
            Family::Mysql if self.end - 1 > self.max_shard => {
                return Err(SqlError::Core(crate::Error::ShardOutOfRange {
                    shard: self.end - 1,
                    max: self.max_shard,
                }));
            }
            Family::Sqlite => {
                let lease = super::sqlite::SqliteLease::new(
                    self.layout,
                    &self.table,
                    self.placeholders,
                    self.first,
                    self.end,
                    &self.holder,
                    &self.token,
                )?;
                let lease = match &self.schema {
                    Some(schema) => lease.schema(schema)?,
                    None => lease,
                };
                self.sqlite = Some(match self.kind {
                    // The kinds the bindings make were checked (`LeaseKind::parse`); one made
                    // by hand out of range keeps the default, as the SQL of the others has none
                    // to refuse it with.
                    LeaseKind::Expiring { ttl_ms } => lease.clone().ttl(ttl_ms).unwrap_or(lease),
                    LeaseKind::Session => {
                        self.step = Step::Refuse;
                        lease
                    }
                });
            }
            Family::Postgres | Family::Mysql => self.sqlite = None,
        }
        // Only PostgreSQL has owners to check: on the MySQL family the database of a table
        // named without one is the connection's (no search path), and SQLite's tables are the
        // file's. The MySQL family's claim cannot return the server's clock: it is read first.
        if let Step::Check(resume) | Step::Clock(resume) = self.step {
            self.step = match Family::of(dialect) {
                Family::Postgres => Step::Check(resume),
                Family::Mysql => Step::Clock(resume),
                Family::Sqlite => self.resumed(resume),
            };
        }
        self.dialect = dialect;
        Ok(self)
    }

    const fn family(&self) -> Family {
        Family::of(self.dialect)
    }

    /// SQLite's statements (set with the dialect).
    fn sqlite(&self) -> &super::sqlite::SqliteLease {
        self.sqlite
            .as_ref()
            .unwrap_or_else(|| unreachable!("made when the dialect was set to SQLite"))
    }

    /// The kind of lease.
    pub const fn kind(&self) -> LeaseKind {
        self.kind
    }

    /// The SQL dialect the statements are rendered in: on the MySQL family, [`Dialect::Mysql`]
    /// once MySQL refused MariaDB's.
    pub const fn sql_dialect(&self) -> Dialect {
        self.dialect
    }

    /// The lease's token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The text whose `hashtext()` is a session lease's advisory locks' first key: one
    /// namespace per table and layout, the shard being the second key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The name of a session lease's `GET_LOCK` on `shard` (the MySQL family): at most 64
    /// characters, as MySQL allows, so the table and layout go in as a 64-bit FNV-1a hash of
    /// [`LeaseProtocol::key`].
    pub fn lock_name(&self, shard: u64) -> alloc::string::String {
        alloc::format!("{}{shard}", self.lock_prefix)
    }

    /// The layout as the table's `layout` column records it.
    pub fn signature(&self) -> &str {
        &self.signature
    }

    /// What to do next.
    pub fn next(&self) -> Next<'_> {
        let next = self.step();
        if let Next::Run { .. } = next {
            self.sent.set(self.clock.map(|clock| clock()));
        }
        next
    }

    fn step(&self) -> Next<'_> {
        let family = self.family();
        let my = family == Family::Mysql;
        match self.step {
            Step::Claim if family == Family::Sqlite => {
                let (sql, params) = self
                    .sqlite()
                    .claim(self.floor_units(), self.fence.unwrap_or_default().1);
                Next::Run { sql, params }
            }
            Step::Fence(_) if family == Family::Sqlite => {
                let (sql, params) = self.sqlite().fence();
                Next::Run { sql, params }
            }
            Step::Fence(_) if my => self.run(&[mysql::FENCE], None, None),
            Step::Fence(_) => self.run(&[postgres::FENCE], None, None),
            Step::AddFence(_) => self.run(&[mysql::ADD_FENCE], None, None),
            Step::CreateTable(_) if family == Family::Sqlite => Next::Run {
                sql: self.sqlite().create_table(),
                params: alloc::vec::Vec::new(),
            },
            Step::Check(_) => self.run(&[postgres::CHECK_TABLE], None, None),
            Step::Clock(_) => self.run(&[mysql::CLOCK], None, None),
            Step::Unclaim(shard) => {
                let (sql, params) = self.release(shard);
                Next::Run { sql, params }
            }
            Step::Skewed => Next::ClockSkew {
                ahead_ms: self.ahead_ms,
                max_ms: super::failover::SKEW_MS,
            },
            Step::Claim if my => self.run(&mysql::CLAIM, None, None),
            Step::Claim => self.run(&postgres::CLAIM, None, None),
            Step::Insert => self.run(&mysql::INSERT, None, None),
            Step::Held => self.run(&mysql::HELD, None, None),
            Step::TryLock(shard) if my => self.run(&[mysql::TRY_LOCK], Some(shard), None),
            Step::TryLock(shard) => self.run(&[postgres::TRY_LOCK], Some(shard), None),
            Step::SessionClaim(shard) if my => self.run(&[mysql::SESSION_CLAIM], Some(shard), None),
            Step::SessionClaim(shard) => self.run(&postgres::SESSION_CLAIM, Some(shard), None),
            Step::SessionInsert(shard) => self.run(&[mysql::SESSION_INSERT], Some(shard), None),
            Step::Unlock(shard) if my => self.run(&[mysql::UNLOCK], Some(shard), None),
            Step::Unlock(shard) => self.run(&[postgres::UNLOCK], Some(shard), None),
            Step::CreateTable(_) if my => self.run(&[mysql::CREATE_TABLE], None, None),
            Step::CreateTable(_) => self.run(&[postgres::CREATE_TABLE], None, None),
            Step::UpgradeTable(_) => self.run(&[postgres::UPGRADE_TABLE], None, None),
            Step::Taken(shard, recorded) => Next::Taken {
                shard,
                recorded,
                backend: self.backend.as_ref().map(|(_, identity)| identity.as_str()),
            },
            Step::NoFreeShard => Next::NoFreeShard {
                first: self.first,
                end: self.end,
                held_in: alloc::format!("table {}", self.table_name()),
            },
            Step::Invalid => {
                let (argument, reason) = self.refusal.clone().unwrap_or_default();
                Next::Invalid { argument, reason }
            }
            Step::Corrupt => Next::Corrupt {
                reason: self.refusal.clone().unwrap_or_default().1,
            },
            Step::Raise => Next::Raise,
            Step::Refuse => Next::Refuse {
                reason: match family {
                    Family::Sqlite => SQLITE_SESSION,
                    Family::Postgres | Family::Mysql => GALERA_SESSION,
                },
            },
        }
    }

    /// Takes the answer to the last [`Next::Run`].
    pub fn feed(&mut self, answer: Answer<'_>) {
        match self.family() {
            Family::Mysql => {
                self.step = match (self.step, answer) {
                    // The server's clock, read before the claim: nothing is taken yet.
                    (Step::Clock(_), Answer::Row([now, ..])) if self.skewed(Some(now)) => {
                        Step::Skewed
                    }
                    (Step::Clock(resume), Answer::Row(_)) => self.resumed(resume),
                    _ => self.feed_mysql(answer),
                };
                return;
            }
            Family::Sqlite => {
                self.step = self.feed_sqlite(answer);
                return;
            }
            Family::Postgres => {}
        }
        self.step = match (self.step, answer) {
            (Step::Unclaim(_), _) => Step::Skewed,
            (Step::Check(resume), Answer::Row(row)) => self.checked(row, resume),
            (Step::Fence(resume), Answer::Row(_) | Answer::NoRow) => self.fence(answer, resume),
            (Step::Fence(resume), Answer::Error(code)) => self.repair(code, resume),
            (Step::Claim, Answer::Row(row)) => self.claimed(row),
            (Step::Claim, Answer::Error(code)) => self.repair(code, Resume::Claim),
            (Step::TryLock(shard), Answer::Row(row)) => match row {
                [Cell::Bool(true), pid, identity, ..] => match (pid.int(), identity) {
                    (Some(pid), Cell::Text(identity)) => {
                        self.backend = Some((pid.unsigned_abs(), (*identity).into()));
                        Step::SessionClaim(shard)
                    }
                    _ => Step::Raise,
                },
                _ => self.after(shard),
            },
            (Step::SessionClaim(shard), Answer::Row(row)) => {
                match row.first().and_then(Cell::int) {
                    Some(_) if self.skewed(row.get(1)) => Step::Unclaim(shard),
                    Some(units) => self.taken(shard, units),
                    None => Step::Raise,
                }
            }
            // An expiring lease holds the row: let go of the lock, try the next shard.
            (Step::SessionClaim(shard), Answer::NoRow) => Step::Unlock(shard),
            (Step::SessionClaim(shard), Answer::Error(code)) => {
                self.repair(code, Resume::SessionClaim(shard))
            }
            (Step::Unlock(shard), Answer::Row(_) | Answer::NoRow) => {
                self.backend = None;
                self.after(shard)
            }
            // A table made here, or by another session at the same moment: whose it is is
            // checked again before it is written.
            (Step::CreateTable(resume), Answer::Row(_) | Answer::NoRow) => Step::Check(resume),
            (Step::UpgradeTable(resume), Answer::Row(_) | Answer::NoRow) => self.resumed(resume),
            (Step::CreateTable(resume), Answer::Error(Some(code)))
                if LOST_CREATE_RACE.contains(&code) =>
            {
                Step::Check(resume)
            }
            (Step::UpgradeTable(resume), Answer::Error(Some(postgres::DUPLICATE_COLUMN))) => {
                self.resumed(resume)
            }
            (
                Step::Taken(..)
                | Step::NoFreeShard
                | Step::Refuse
                | Step::Invalid
                | Step::Corrupt
                | Step::Skewed,
                _,
            ) => self.step,
            _ => Step::Raise,
        };
    }

    /// [`LeaseProtocol::feed`] on SQLite: the claim runs under the database's write lock, so
    /// no row is every shard held (no race to retry).
    fn feed_sqlite(&mut self, answer: Answer<'_>) -> Step {
        match (self.step, answer) {
            (Step::Unclaim(_), _) => Step::Skewed,
            (Step::Claim, Answer::Row([shard, ceiling, now @ ..])) => {
                match (
                    shard.int().and_then(|s| u64::try_from(s).ok()),
                    ceiling.int(),
                ) {
                    (Some(shard), Some(_))
                        if (self.first..self.end).contains(&shard) && self.skewed(now.first()) =>
                    {
                        Step::Unclaim(shard)
                    }
                    (Some(shard), Some(ceiling)) if (self.first..self.end).contains(&shard) => {
                        self.taken(shard, ceiling)
                    }
                    _ => Step::Raise,
                }
            }
            (Step::Claim, Answer::NoRow) => Step::NoFreeShard,
            (Step::Fence(resume), Answer::Row(_) | Answer::NoRow) => self.fence(answer, resume),
            (Step::Fence(resume), Answer::Error(_)) if !self.made_table => {
                self.made_table = true;
                Step::CreateTable(resume)
            }
            // SQLite reports a missing table as its generic error (SQLITE_ERROR, `1`), and
            // drivers differ in what code they pass: make the table (`IF NOT EXISTS`) once on
            // any error of the first claim, and raise the same error if it comes again.
            (Step::Claim, Answer::Error(_)) if !self.made_table => {
                self.made_table = true;
                Step::CreateTable(Resume::Claim)
            }
            (Step::CreateTable(resume), Answer::Row(_) | Answer::NoRow) => self.resumed(resume),
            (
                Step::Taken(..)
                | Step::NoFreeShard
                | Step::Refuse
                | Step::Invalid
                | Step::Corrupt
                | Step::Skewed,
                _,
            ) => self.step,
            _ => Step::Raise,
        }
    }

    /// [`LeaseProtocol::feed`] on the MySQL family: see `mysql.rs` for the statements.
    #[allow(clippy::too_many_lines)] // one arm per step and answer, as the other dialects'
    fn feed_mysql(&mut self, answer: Answer<'_>) -> Step {
        if let Answer::Error(Some(super::mysql::UNKNOWN_VARIABLE)) = answer
            && self.dialect == Dialect::Mariadb
        {
            // MySQL: MariaDB's variables are unknown there. The same step in MySQL's SQL.
            self.dialect = Dialect::Mysql;
            return self.step;
        }
        // A read, the table's `IF NOT EXISTS`, a release: rolled back whole (on a Galera cluster
        // another node's DDL aborts even a read of the table, 1213), sent again as it was,
        // within the claims' bound.
        if let Answer::Error(Some(code)) = answer
            && mysql::rolled_back(code)
            && matches!(
                self.step,
                Step::Clock(_)
                    | Step::Fence(_)
                    | Step::CreateTable(_)
                    | Step::Held
                    | Step::Unlock(_)
            )
        {
            self.claims += 1;
            return if self.claims >= MAX_CLAIMS {
                Step::Raise
            } else {
                self.step
            };
        }
        let id = last_insert_id(&answer);
        match (self.step, answer) {
            (Step::Fence(resume), Answer::NoRow) => {
                self.fence = Some((0, 0));
                Step::AddFence(resume)
            }
            (Step::Fence(resume), Answer::Row(_)) => self.fence(answer, resume),
            (Step::Fence(resume), Answer::Error(code)) => self.repair_mysql(code, resume),
            // Rolled back: the next lease adds it.
            (Step::AddFence(resume), Answer::Error(Some(code))) if mysql::rolled_back(code) => {
                self.resumed(resume)
            }
            (Step::Claim, Answer::Row(_)) if id > 0 => {
                let packed = id - 1;
                let shard = packed & crate::layout::mask(u32::from(self.shard_bits));
                let ceiling = packed >> self.shard_bits;
                if (self.first..self.end).contains(&shard) {
                    self.taken(shard, i64::try_from(ceiling).unwrap_or(-1))
                } else {
                    Step::Raise
                }
            }
            (Step::Claim, Answer::Row(_)) => Step::Insert,
            (Step::Insert, Answer::Row(_)) if id > 0 => {
                let shard = id - 1;
                if (self.first..self.end).contains(&shard) {
                    Step::Taken(shard, self.floor())
                } else {
                    Step::Raise
                }
            }
            (Step::Insert, Answer::Row(_)) => Step::Held,
            (Step::Held, Answer::Row([held, ..])) => match held.uint() {
                Some(held) if held >= self.end - self.first => Step::NoFreeShard,
                Some(_) => self.lost_race(),
                None => Step::Raise,
            },
            (Step::Insert, Answer::Error(Some(code)))
                if code == mysql::DUPLICATE_KEY || mysql::rolled_back(code) =>
            {
                self.lost_race()
            }
            (Step::Claim, Answer::Error(Some(code))) if mysql::rolled_back(code) => {
                self.lost_race()
            }
            (Step::Claim | Step::Insert | Step::Held, Answer::Error(code)) => {
                self.repair_mysql(code, Resume::Claim)
            }
            (Step::TryLock(shard), Answer::Row([grant, pid, identity, ..])) => {
                if grant.int() == Some(-2) {
                    return Step::Refuse;
                }
                if !grant.granted() {
                    return self.after(shard);
                }
                match (pid.uint(), identity) {
                    (Some(pid), Cell::Text(identity)) => {
                        self.backend = Some((pid, (*identity).into()));
                        Step::SessionClaim(shard)
                    }
                    _ => Step::Raise,
                }
            }
            (Step::SessionClaim(shard), Answer::Row(_)) if id > 0 => {
                self.taken(shard, i64::try_from(id - 1).unwrap_or(-1))
            }
            (Step::SessionClaim(shard), Answer::Row(_)) => Step::SessionInsert(shard),
            (Step::SessionInsert(shard), Answer::Row(_)) => Step::Taken(shard, self.floor()),
            // An expiring lease holds the row: let go of the lock, try the next shard.
            (Step::SessionInsert(shard), Answer::Error(Some(mysql::DUPLICATE_KEY))) => {
                Step::Unlock(shard)
            }
            (Step::SessionClaim(shard) | Step::SessionInsert(shard), Answer::Error(Some(code)))
                if mysql::rolled_back(code) =>
            {
                self.claims += 1;
                if self.claims >= MAX_CLAIMS {
                    Step::Raise
                } else {
                    Step::SessionClaim(shard)
                }
            }
            (Step::SessionClaim(shard) | Step::SessionInsert(shard), Answer::Error(code)) => {
                self.repair_mysql(code, Resume::SessionClaim(shard))
            }
            (Step::Unlock(shard), Answer::Row(_) | Answer::NoRow) => {
                self.backend = None;
                self.after(shard)
            }
            // The fence added, or by another lease first.
            (
                Step::CreateTable(resume) | Step::AddFence(resume),
                Answer::Row(_) | Answer::NoRow,
            ) => self.resumed(resume),
            (Step::CreateTable(resume), Answer::Error(Some(mysql::TABLE_EXISTS))) => {
                self.resumed(resume)
            }
            (
                Step::Taken(..)
                | Step::NoFreeShard
                | Step::Refuse
                | Step::Invalid
                | Step::Corrupt
                | Step::Skewed,
                _,
            ) => self.step,
            _ => Step::Raise,
        }
    }

    /// Whether the client's clock, read when the last claim was handed to the driver, was more
    /// than [`super::failover::SKEW_MS`] ahead of the database's clock `now` that the claim
    /// returned; the lead is kept for [`Next::ClockSkew`]. No clock (or no `now`): nothing to
    /// compare.
    fn skewed(&mut self, now: Option<&Cell<'_>>) -> bool {
        match self.ahead(now.and_then(Cell::int)) {
            Some(ahead) => {
                self.ahead_ms = ahead;
                true
            }
            None => false,
        }
    }

    /// How far the client's clock at the last sending was ahead of the database's `now`, if
    /// more than [`super::failover::SKEW_MS`].
    fn ahead(&self, now: Option<i64>) -> Option<u64> {
        Self::ahead_of(self.sent.get(), now)
    }

    /// The rule of [`LeaseProtocol::clock`], for every lease that reads its server's clock (the
    /// SQL leases and Redis's, `redis::lease_steps`): how far the client's clock `sent`, read
    /// when the statement or script was handed to the driver, was ahead of the server's `now`
    /// that it returned, if more than [`super::failover::SKEW_MS`]. `None` for either: nothing
    /// to compare.
    pub(crate) fn ahead_of(sent: Option<u64>, now: Option<i64>) -> Option<u64> {
        let sent = sent?;
        let now = u64::try_from(now?).ok()?;
        let ahead = sent.saturating_sub(now);
        (ahead > super::failover::SKEW_MS).then_some(ahead)
    }

    /// The step after taking `shard`, whose row records `ceiling`: taken, unless the ceiling
    /// is one no lease writes. Above the layout's last time unit it would wrap the generator's
    /// first slot (`(units + 1) << sequence_bits`: 2^63 - 1 wraps to the first IDs of the
    /// epoch, IDs long handed out) and below 0 it is no ceiling at all: refused
    /// ([`Next::Corrupt`]), never started from.
    fn taken(&mut self, shard: u64, ceiling: i64) -> Step {
        match u64::try_from(ceiling) {
            Ok(units) if units <= self.max_units => Step::Taken(shard, recorded(ceiling)),
            _ => {
                self.refusal = Some((
                    "table",
                    alloc::format!(
                        "the row of shard {shard} in lease table {} records a ceiling of \
                         {ceiling} time units, outside what the layout's time can hold (0 to \
                         {}): no lease writes that; the row was altered outside shardid (by \
                         hand, or a trigger), so the shard is not taken",
                        self.table_name(),
                        self.max_units
                    ),
                ));
                Step::Corrupt
            }
        }
    }

    /// The step after [`postgres::CHECK_TABLE`]'s row `(schema, owner, ours, current user)`:
    /// no table, make it (once); a table this user's roles own, go on to `resume` in its
    /// schema; another role's, refused.
    fn checked(&mut self, row: &[Cell<'_>], resume: Resume) -> Step {
        let [schema, owner, ours, user, ..] = row else {
            return Step::Raise;
        };
        let Cell::Text(schema) = schema else {
            self.refusal = Some((
                "schema",
                alloc::format!(
                    "was not given, and the search path names no schema that exists: lease \
                     table {} has nowhere to be made; pass the schema",
                    self.table
                ),
            ));
            return Step::Invalid;
        };
        self.schema = Some((*schema).into());
        match (owner, ours) {
            (Cell::Null, _) if !self.made_table => {
                self.made_table = true;
                Step::CreateTable(resume)
            }
            (Cell::Text(_), Cell::Bool(true)) => self.resumed(resume),
            (Cell::Text(owner), _) => {
                let user = match user {
                    Cell::Text(user) => user,
                    _ => "?",
                };
                self.refusal = Some((
                    "table",
                    alloc::format!(
                        "{} is owned by role {owner}, which the lease's user {user} neither is \
                         nor is a member of: its triggers and rules would run as {user} at the \
                         lease's writes (and could alter the ceilings), so it is not used; pass \
                         a schema of this application's (schema), or have the table owned by \
                         {user} or a role it is a member of",
                        self.table_name()
                    ),
                ));
                Step::Invalid
            }
            _ => Step::Raise,
        }
    }

    /// The table as the statements name it, unquoted (`schema.table`; the table alone while
    /// its schema is not known yet), for messages.
    fn table_name(&self) -> alloc::string::String {
        match &self.schema {
            Some(schema) => alloc::format!("{schema}.{}", self.table),
            None => self.table.clone(),
        }
    }

    /// Where the steps go after the table is known (made, upgraded, checked), to `resume`: the
    /// fence row first, once, before the first claim or lock (issue 54).
    fn resumed(&self, resume: Resume) -> Step {
        match resume {
            Resume::Claim | Resume::TryLock(_) if self.fence.is_none() => Step::Fence(resume),
            _ => resumed(resume),
        }
    }

    /// The step after the fence row's answer `(mark, stepped back, the database's clock)` (no
    /// row: no fence, nothing to account for), then `resume`.
    ///
    /// Why (issue 54): a restore (a dump restored, a file copied back) loses the rows written
    /// after the backup, and with them a lease row's ceiling, or the whole row, which a claim
    /// would then make anew with ceiling 0; the IDs a lost holder dated after the backup would
    /// be handed out again. So after a mark of `shardid restored`, or a fence written on
    /// another timeline, cluster, server or origin of the table's data, a missing row, or one
    /// last taken before the mark, starts past the database's clock plus the skew the
    /// failover rule allows any holder (the `JUMP` of every dialect, [`JUMP_SKEW_MS`]): above
    /// every ID a holder on a clock at most that far ahead could have dated. A row taken since
    /// the mark is its own: a claim waits ~2 s only after a restore, never on a fresh table.
    fn fence(&mut self, answer: Answer<'_>, resume: Resume) -> Step {
        self.fence = Some((0, 0));
        if let Answer::Row([mark, stepped, now, ..]) = answer {
            let mark = mark.int().and_then(|m| u64::try_from(m).ok());
            let stepped = stepped.granted() || matches!(stepped, Cell::Text("t" | "true"));
            match (
                now.int().and_then(|n| u64::try_from(n).ok()),
                mark.is_some() || stepped,
            ) {
                (Some(now), true) => {
                    let floor = ((now + JUMP_SKEW_MS).saturating_sub(self.epoch_ms) / self.unit_ms)
                        .min(self.max_units);
                    self.fence = Some((floor, mark.unwrap_or(0)));
                }
                (Some(_), false) => {}
                (None, _) => return Step::Raise,
            }
        }
        resumed(resume)
    }

    /// The time unit a claimed row starts from at least, by the fence (0: none).
    fn floor_units(&self) -> u64 {
        self.fence.unwrap_or_default().0
    }

    /// What a row a claim added records, as the generator starts above it: the fence's floor
    /// (`None`: 0, never held).
    fn floor(&self) -> Option<u64> {
        Some(self.floor_units()).filter(|&units| units > 0)
    }

    /// Another claimant took the row first (or the two were rolled back against each other):
    /// claim again, up to [`MAX_CLAIMS`] times.
    fn lost_race(&mut self) -> Step {
        self.claims += 1;
        if self.claims >= MAX_CLAIMS {
            Step::NoFreeShard
        } else {
            Step::Claim
        }
    }

    /// On the MySQL family: make the table if it is missing (once), else raise the error.
    fn repair_mysql(&mut self, code: Option<&str>, resume: Resume) -> Step {
        match code {
            Some(mysql::NO_SUCH_TABLE) if !self.made_table => {
                self.made_table = true;
                Step::CreateTable(resume)
            }
            _ => Step::Raise,
        }
    }

    /// The step after an expiring claim's row: `(shard, ceiling, held)`.
    fn claimed(&mut self, row: &[Cell<'_>]) -> Step {
        match row {
            [shard, ceiling, held, now @ ..] => match (shard.int(), ceiling.int(), held.int()) {
                (Some(shard), Some(ceiling), _) => match u64::try_from(shard) {
                    Ok(shard) if self.skewed(now.first()) => Step::Unclaim(shard),
                    Ok(shard) => self.taken(shard, ceiling),
                    Err(_) => Step::Raise,
                },
                (None, _, Some(held)) => {
                    self.claims += 1;
                    let all_held = u64::try_from(held).is_ok_and(|h| h >= self.end - self.first);
                    if all_held || self.claims >= MAX_CLAIMS {
                        Step::NoFreeShard
                    } else {
                        // Lost a race to another claimant: try again.
                        Step::Claim
                    }
                }
                _ => Step::Raise,
            },
            _ => Step::Raise,
        }
    }

    /// The step after a statement failed with `code`: make the table if it is missing, or
    /// upgrade it if it lacks a column (each once), else raise the error.
    fn repair(&mut self, code: Option<&str>, resume: Resume) -> Step {
        match code {
            Some(postgres::UNDEFINED_TABLE) if !self.made_table => {
                self.made_table = true;
                Step::CreateTable(resume)
            }
            Some(postgres::UNDEFINED_COLUMN) if !self.upgraded_table => {
                self.upgraded_table = true;
                Step::UpgradeTable(resume)
            }
            _ => Step::Raise,
        }
    }

    /// The next shard's lock after `shard`'s, or no free shard.
    fn after(&self, shard: u64) -> Step {
        match shard.checked_add(1) {
            Some(next) if next < self.end => Step::TryLock(next),
            _ => Step::NoFreeShard,
        }
    }

    /// The statement and parameters that renew an expiring lease on `shard` (none for a
    /// session lease, which its lock keeps): one row returned, or none when it was taken over.
    pub fn renew(&self, shard: u64) -> Option<(alloc::string::String, alloc::vec::Vec<Value<'_>>)> {
        self.sent.set(self.clock.map(|clock| clock()));
        match (self.kind, self.family()) {
            (LeaseKind::Expiring { .. }, Family::Mysql) => {
                Some(self.render(&mysql::RENEW, Some(shard), None))
            }
            (LeaseKind::Expiring { .. }, Family::Postgres) => {
                Some(self.render(&postgres::RENEW, Some(shard), None))
            }
            (LeaseKind::Expiring { .. }, Family::Sqlite) => Some(self.sqlite().renew(shard)),
            (LeaseKind::Session, _) => None,
        }
    }

    /// Whether the answer to a [`LeaseProtocol::renew`], [`LeaseProtocol::record`] or
    /// [`LeaseProtocol::release`] says the row still held the lease's token (and now holds
    /// what was written): a row returned on PostgreSQL and SQLite, a last insert ID above 0 on
    /// the MySQL family. `false`: the lease is lost.
    pub fn kept(&self, answer: Answer<'_>) -> bool {
        match self.family() {
            Family::Mysql => last_insert_id(&answer) > 0,
            Family::Postgres | Family::Sqlite => matches!(answer, Answer::Row(_)),
        }
    }

    /// How far the client's clock was ahead of the database's, in milliseconds, by the answer
    /// to the last [`LeaseProtocol::renew`] (which returns the database's clock: a row's
    /// second column, or on the MySQL family the last insert ID), when more than
    /// [`super::failover::SKEW_MS`]: the lease must stop, reporting
    /// [`ErrorKind::ClockSkew`](crate::ErrorKind::ClockSkew) (see [`LeaseProtocol::clock`]).
    /// `None`: within the skew, or the lease is lost ([`LeaseProtocol::kept`] says so).
    pub fn clock_ahead(&self, answer: Answer<'_>) -> Option<u64> {
        let now = match (self.family(), answer) {
            (Family::Mysql, _) => i64::try_from(last_insert_id(&answer)).ok(),
            (Family::Postgres | Family::Sqlite, Answer::Row([_, now, ..])) => now.int(),
            _ => None,
        };
        self.ahead(now.filter(|&now| now > 0))
    }

    /// The last [`LeaseProtocol::renew`], [`LeaseProtocol::record`] or
    /// [`LeaseProtocol::release`] failed with the error `code`, after it had been sent again
    /// `resent` times: how many milliseconds to wait before sending the same statement again,
    /// or `None` to report the error.
    ///
    /// Only on the MySQL family, for an error that says the statement was rolled back whole: a
    /// deadlock or a lock wait timeout (a Galera certification conflict is a deadlock too), and
    /// a Galera node's refusal while the cluster evicts a node (see `mysql::resent`). Seen in
    /// CI: a ceiling's record on a surviving node failed with 1180 while a killed node was
    /// being evicted, and `next_id` raised it. Each of these statements is conditioned on the
    /// lease's token and only raises the ceiling (`GREATEST`), so sending one again writes
    /// nothing twice. At most [`MAX_RESENDS`] times, waiting 25 ms doubled each time up to 1 s
    /// (5.6 s in all: Galera evicts a node within its `evs.inactive_timeout`); a driver also
    /// stops once the lease is past its deadline.
    pub fn resend_after(&self, code: Option<&str>, resent: u32) -> Option<u64> {
        match code {
            Some(code)
                if self.family() == Family::Mysql
                    && mysql::resent(code)
                    && resent < MAX_RESENDS =>
            {
                Some((25u64 << resent.min(6)).min(1000))
            }
            _ => None,
        }
    }

    /// The statement and parameters that record a ceiling of `units` for `shard` (renewing an
    /// expiring lease too), only while the lease is held: one row returned, or none when it
    /// is lost, and the generator must stop at its ceiling.
    pub fn record(
        &self,
        shard: u64,
        units: u64,
    ) -> (alloc::string::String, alloc::vec::Vec<Value<'_>>) {
        let sql: &[&str] = match (self.kind, self.family()) {
            (LeaseKind::Expiring { .. }, Family::Mysql) => &mysql::RECORD,
            (LeaseKind::Session, Family::Mysql) => &[mysql::SESSION_RECORD],
            (LeaseKind::Expiring { .. }, Family::Postgres) => &[postgres::RECORD],
            (LeaseKind::Session, Family::Postgres) => &[postgres::SESSION_RECORD],
            // A session lease is refused on SQLite before it is taken.
            (_, Family::Sqlite) => return self.sqlite().record(shard, units),
        };
        self.render(sql, Some(shard), Some(units))
    }

    /// The statement and parameters that free `shard` at once, if the lease still holds it
    /// (one row returned then).
    pub fn release(&self, shard: u64) -> (alloc::string::String, alloc::vec::Vec<Value<'_>>) {
        let sql = match self.family() {
            Family::Mysql => mysql::RELEASE,
            Family::Postgres => postgres::RELEASE,
            Family::Sqlite => return self.sqlite().release(shard),
        };
        self.render(&[sql], Some(shard), None)
    }

    fn run(&self, parts: &[&str], shard: Option<u64>, units: Option<u64>) -> Next<'_> {
        let (sql, params) = self.render(parts, shard, units);
        Next::Run { sql, params }
    }

    /// `parts` joined, with `{t}` the table and each `@name` the driver's placeholder for that
    /// parameter: `$n` numbered once per name (a value used twice is passed once), or `%s` for
    /// each use (a value used twice is passed twice). PostgreSQL's and the MySQL family's only:
    /// SQLite's statements render themselves ([`super::sqlite::SqliteLease`]).
    fn render(
        &self,
        parts: &[&str],
        shard: Option<u64>,
        units: Option<u64>,
    ) -> (alloc::string::String, alloc::vec::Vec<Value<'_>>) {
        use core::fmt::Write;
        let mut sql = alloc::string::String::new();
        let mut names: alloc::vec::Vec<alloc::string::String> = alloc::vec::Vec::new();
        let mut params = alloc::vec::Vec::new();
        for part in parts {
            // The fragments first: the timeline, the system identifier and the ceiling jump
            // (which holds parameters).
            let part = match self.dialect.server_identity() {
                None => part
                    .replace(
                        "{schema}",
                        if self.schema_named {
                            "@schema::text"
                        } else {
                            "current_schema()"
                        },
                    )
                    .replace("{jump l.}", &postgres::JUMP.replace("{r}", "l."))
                    .replace("{fenced l.}", &postgres::FENCED.replace("{r}", "l."))
                    .replace("{jump}", &postgres::JUMP.replace("{r}", ""))
                    .replace("{tli}", super::failover::TIMELINE)
                    .replace("{sysid}", super::failover::SYSTEM_ID),
                Some(server) => self.mysql_fragments(part, server),
            };
            let mut rest = part.as_str();
            while let Some(at) = rest.find(['@', '{']) {
                sql.push_str(&rest[..at]);
                let tail = &rest[at..];
                if let Some(after) = tail.strip_prefix("@@") {
                    // A system variable (MySQL): no parameter.
                    sql.push_str("@@");
                    rest = after;
                    continue;
                }
                if let Some(after) = tail.strip_prefix("{t}") {
                    // Quoted, so a reserved word (`distinct`) is a name too; both names are
                    // plain lower-case identifiers (checked), so quoting changes no name.
                    match (self.family(), &self.schema) {
                        (Family::Mysql, Some(schema)) => {
                            let _ = write!(sql, "`{schema}`.`{}`", self.table);
                        }
                        (Family::Mysql, None) => {
                            let _ = write!(sql, "`{}`", self.table);
                        }
                        (_, Some(schema)) => {
                            let _ = write!(sql, "\"{schema}\".\"{}\"", self.table);
                        }
                        // Only before the check has found the schema, which no statement that
                        // names the table is sent before.
                        (_, None) => {
                            let _ = write!(sql, "\"{}\"", self.table);
                        }
                    }
                    rest = after;
                    continue;
                }
                let name_len = tail[1..]
                    .find(|c: char| !c.is_ascii_lowercase())
                    .unwrap_or(tail.len() - 1);
                if tail.starts_with('{') || name_len == 0 {
                    sql.push_str(&tail[..1]);
                    rest = &tail[1..];
                    continue;
                }
                let name = &tail[1..=name_len];
                rest = &tail[1 + name_len..];
                match self.placeholders {
                    Placeholders::Numbered if self.family() != Family::Mysql => {
                        let n = if let Some(i) = names.iter().position(|seen| seen == name) {
                            i + 1
                        } else {
                            names.push(name.into());
                            params.push(self.value(name, shard, units));
                            names.len()
                        };
                        let _ = write!(sql, "${n}");
                    }
                    Placeholders::Format => {
                        sql.push_str("%s");
                        params.push(self.value(name, shard, units));
                    }
                    Placeholders::Question | Placeholders::Numbered => {
                        sql.push('?');
                        params.push(self.value(name, shard, units));
                    }
                }
            }
            sql.push_str(rest);
        }
        (sql, params)
    }

    /// A MySQL statement's fragments and the layout's numbers, written in (see `mysql.rs`).
    fn mysql_fragments(&self, part: &str, server: &str) -> alloc::string::String {
        use alloc::string::ToString;
        let galera = if self.dialect == Dialect::Mariadb {
            "@@global.wsrep_on"
        } else {
            "FALSE"
        };
        // The server and the origin of the table's data (a `mysqldump` restored into a fresh
        // server keeps its `server_id`, often 1, but makes the table anew): a row written by
        // another server, or before the table was restored, jumps its ceiling.
        let identity = alloc::format!(
            "CONCAT_WS(' ', {server}, {})",
            super::failover::MysqlOrigin {
                schema: self.schema.as_deref(),
                table: &self.table,
                galera: self.dialect == Dialect::Mariadb,
            }
        );
        part.replace("{jump}", mysql::JUMP)
            .replace("{srv}", &identity)
            .replace("{server}", server)
            .replace("{now}", super::failover::MYSQL_NOW_MS)
            .replace("{never}", mysql::NEVER)
            .replace("{galera}", galera)
            .replace("{fenced}", mysql::FENCED)
            .replace("{floor}", &self.floor_units().to_string())
            .replace("{mark}", &self.fence.unwrap_or_default().1.to_string())
            .replace("{skew}", &JUMP_SKEW_MS.to_string())
            .replace("{epoch}", &self.epoch_ms.to_string())
            .replace("{unit}", &self.unit_ms.to_string())
            .replace("{maxunits}", &self.max_units.to_string())
            .replace("{shardbits}", &self.shard_bits.to_string())
    }

    fn value(&self, name: &str, shard: Option<u64>, units: Option<u64>) -> Value<'_> {
        match name {
            "sig" => Value::Text(&self.signature),
            "key" => Value::Text(&self.key),
            "holder" => Value::Text(&self.holder),
            "token" => Value::Text(&self.token),
            "first" => Value::Int(self.first),
            "end" => Value::Int(self.end),
            "ttl" => Value::Int(match self.kind {
                LeaseKind::Expiring { ttl_ms } => ttl_ms,
                LeaseKind::Session => 0,
            }),
            "pid" => Value::Int(self.backend.as_ref().map_or(0, |(pid, _)| *pid)),
            "lockprefix" => Value::Text(&self.lock_prefix),
            "schema" => Value::Text(self.schema.as_deref().unwrap_or_default()),
            "name" => Value::Text(&self.check_name),
            "units" => Value::Int(units.unwrap_or(0)),
            "epoch" => Value::Int(self.epoch_ms),
            "unit" => Value::Int(self.unit_ms),
            "skew" => Value::Int(JUMP_SKEW_MS),
            "floor" => Value::Int(self.floor_units()),
            "mark" => Value::Int(self.fence.unwrap_or_default().1),
            // "shard": every statement that names one is rendered with it.
            _ => Value::Int(shard.unwrap_or(0)),
        }
    }
}

/// What the client's clock read when a claim or renewal was last handed to a driver (0: not
/// read). Atomic, not a `Cell`: a lease's protocol is shared with its heartbeat thread, and
/// `next` and `renew` take `&self`.
#[derive(Debug, Default)]
struct Sent(core::sync::atomic::AtomicU64);

impl Sent {
    fn set(&self, ms: Option<u64>) {
        self.0
            .store(ms.unwrap_or(0), core::sync::atomic::Ordering::Relaxed);
    }

    fn get(&self) -> Option<u64> {
        Some(self.0.load(core::sync::atomic::Ordering::Relaxed)).filter(|&ms| ms > 0)
    }
}

impl Clone for Sent {
    fn clone(&self) -> Self {
        let sent = Self::default();
        sent.set(self.get());
        sent
    }
}

/// Where a lease of `kind` on `first..` starts, once its table's owner is checked.
const fn start(kind: LeaseKind, first: u64) -> Resume {
    match kind {
        LeaseKind::Expiring { .. } => Resume::Claim,
        LeaseKind::Session => Resume::TryLock(first),
    }
}

/// A ceiling as the table records it: 0 is the column's default, never recorded.
fn recorded(units: i64) -> Option<u64> {
    u64::try_from(units).ok().filter(|&units| units > 0)
}

const fn resumed(resume: Resume) -> Step {
    match resume {
        Resume::Claim => Step::Claim,
        Resume::TryLock(shard) => Step::TryLock(shard),
        Resume::SessionClaim(shard) => Step::SessionClaim(shard),
    }
}
