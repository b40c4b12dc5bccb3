//! SQLite's SQL (3.35 or later): the tables and plain statements of dense IDs from segments
//! ([`SqliteSegments`]), of the string ↔ ID dictionary ([`SqliteDictionary`]) and of expiring
//! shard leases ([`SqliteLease`]), for a driver to send: Python's `sqlite3`, Node's
//! `better-sqlite3` (or `node:sqlite`), Rust's `rusqlite`. The drivers only execute; the
//! statements, their parameters and the order a driver sends them in are here, once.
//!
//! The dialect is [`super::Dialect::Sqlite`] (`sqlite:///` URLs, `shardid sql --dialect
//! sqlite`, the lease protocol's [`super::LeaseProtocol::dialect`]). Rust's clients over these
//! statements are the feature `sqlite`'s (`rusqlite`): `shardid::segment::sqlite`,
//! `shardid::dictionary::sqlite`, `shardid::serial::sqlite`, `shardid::lease::sqlite`.
//!
//! What differs from PostgreSQL and the MySQL family, and why:
//! - **No stored routines.** SQLite has no procedural language, so every statement is plain
//!   SQL and every check a function made elsewhere is either a named `CHECK` constraint (a bad
//!   tag, topic or string fails with `CHECK constraint failed: shardid_...`, which the driver
//!   reports as `INVALID_ARGUMENT`) or a condition in the statement's `WHERE`, whose "no row
//!   returned" the driver turns into an error by reading the row (an unknown tag and an
//!   exhausted one: [`SqliteSegmentStatements::take`]).
//! - **`UPDATE ... RETURNING`** (3.35): a take is one statement that moves the tag on and
//!   returns the segment, as `take_segment` does on PostgreSQL, with no second round trip and
//!   no window between reading and writing.
//! - **One file, one writer at a time.** SQLite serializes writers on the whole database: a
//!   write statement in autocommit, or a transaction begun with `BEGIN IMMEDIATE`, holds the
//!   write lock and reads the latest committed state. There are no row locks, no `FOR UPDATE`,
//!   no `SKIP LOCKED`, no deadlocks between writers, and no failover (no replica that may lack
//!   the last writes), so none of the other dialects' failover bookkeeping (timelines, server
//!   names, rates, `grown_at`) is here. Ticket servers mean nothing with one file: `stride` is
//!   kept for the same columns and answers as elsewhere, and is always 1. A file restored from a
//!   backup (Litestream, `.backup`, `VACUUM INTO`) lost the last takes and cannot tell: each tag
//!   and topic records its last handout and highest rate beside it (`shardid_tag_marks`,
//!   `shardid_topic_marks`, kept by triggers within the take's and the batch's statements), and
//!   once an operator marks the rows restored ([`SqliteSegmentStatements::mark_restored`],
//!   [`SqliteDictionaryStatements::mark_restored`]) the next take or batch of each skips by
//!   [`super::failover`]'s rule.
//! - **`BEGIN IMMEDIATE`** for the dictionary's writer: a plain `BEGIN` is deferred, takes a
//!   read snapshot at its first read and fails with `SQLITE_BUSY_SNAPSHOT` when it then writes
//!   after another writer committed — an error the busy timeout does not wait out. `BEGIN
//!   IMMEDIATE` takes the write lock first (waiting for it under the busy timeout), so the
//!   re-check inside sees every string committed before it and the numbering is dense.
//! - **WAL mode and a busy timeout** on every connection ([`CONNECTION_SETUP`]): in WAL mode
//!   readers never block the writer nor the writer them (a warm dictionary's lookups and the
//!   leases' renewals go on while a batch is written), and a connection that finds the write
//!   lock taken waits up to the busy timeout instead of failing at once with `SQLITE_BUSY`.
//!   `synchronous = FULL`: in WAL mode `NORMAL` may lose the last commits on a power cut, and a
//!   lost take would hand its numbers out again. WAL needs shared memory between the processes:
//!   a file on a network filesystem must not be used (SQLite's own advice).
//! - **The database's clock** is `julianday('now')` in Unix milliseconds ([`NOW_MS`]): SQLite
//!   3.40 (the version Python ships on this project's machines) has no `unixepoch('subsec')`
//!   (3.42). `'now'` is the same for every use within one statement. Times are stored as
//!   integer milliseconds since the Unix epoch, UTC.
//! - **A schema is an attached database**: `main` for the file itself (what the clients use),
//!   or a name given to `ATTACH DATABASE`. The names are checked as for the other dialects.
//! - **Placeholders**: `?` each for [`Placeholders::Question`] and [`Placeholders::Format`]
//!   (Python's `sqlite3` and `better-sqlite3` take `?`; SQLite has no `%s`), `?1`, `?2`, ... for
//!   [`Placeholders::Numbered`] (`rusqlite`'s usual style; SQLite would read `$1` as a *named*
//!   parameter). Either way the parameters go in the same order, the one each method says.
//! - Strings are `TEXT` compared with SQLite's default `BINARY` collation: byte by byte, as
//!   PostgreSQL's `COLLATE "C"` and MySQL's `VARBINARY`.
//!
//! Every statement here runs in autocommit except the dictionary writer's, which begins and
//! ends its own transaction: a driver must not open transactions of its own around them
//! (Python's `sqlite3` does before each `INSERT`/`UPDATE` unless the connection is made with
//! `isolation_level=None`, or `autocommit=True` from Python 3.12; a deferred transaction held
//! open would keep the write lock from every other process until it commits).
//!
//! Tables are created on first use: a driver runs the DDL ([`SqliteSegments`],
//! [`SqliteDictionary`], [`SqliteLease::create_table`]), all `CREATE ... IF NOT EXISTS`, once
//! per connection before its first statement (every SQLite driver runs a script:
//! `executescript`, `exec`, `execute_batch`). Projects that manage their migrations take the
//! same DDL from the CLI.

use core::fmt::{self, Display, Formatter};

use super::Placeholders;

mod dictionary;
#[cfg(feature = "std")]
mod filesystem;
#[cfg(feature = "alloc")]
mod lease;
mod segments;
mod serials;
// Under the feature `sqlite` only (the default build does not compile SQLite's C), and not
// under Miri: the tests run SQLite itself, C behind rusqlite's FFI, which Miri cannot call.
#[cfg(all(test, feature = "sqlite", not(miri)))]
mod tests;
#[cfg(feature = "sqlite")]
mod uuid;

pub use dictionary::{
    MAX_LIST, SqliteDictionary, SqliteDictionaryStatements, SqliteDictionaryUninstall, assign_new,
};
#[cfg(feature = "std")]
pub use filesystem::usable_file;
#[cfg(feature = "alloc")]
pub use lease::SqliteLease;
#[cfg(feature = "std")]
pub(crate) use lease::mark as mark_lease_restored;
pub use segments::{
    SqliteSegmentStatements, SqliteSegments, SqliteSegmentsUninstall, SqliteTake, SqliteTakeStep,
    TakeError, read, took,
};
pub use serials::{PeriodTag, SqliteSerialStatements, period_fits, period_tag};
#[cfg(feature = "sqlite")]
pub use uuid::{UUID_FUNCTIONS, uuid_functions};

/// The database's clock in Unix milliseconds, as an SQL expression: SQLite keeps `'now'` as a
/// Julian day number with millisecond resolution, so the rounded product is exact.
pub const NOW_MS: &str = "CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)";

/// How long a connection waits for the write lock another holds before failing with
/// `SQLITE_BUSY`, unless the caller says otherwise: writes are single short statements or one
/// short transaction, so 5 s is many queued writers, not one slow one.
pub const DEFAULT_BUSY_TIMEOUT_MS: u64 = 5_000;

/// What a driver runs on every new connection, before anything else: the busy timeout first
/// (switching to WAL needs the write lock for a moment), WAL mode (recorded in the file, so
/// this is a no-op after the first time), and `synchronous = FULL` (see the module docs).
/// Render it with the busy timeout in milliseconds (`{ms}` in the text). Drivers with an
/// option for the timeout (Python's `timeout=`, better-sqlite3's `timeout`) may use it
/// instead of the first line.
pub const CONNECTION_SETUP: &str =
    "PRAGMA busy_timeout = {ms};\nPRAGMA journal_mode = WAL;\nPRAGMA synchronous = FULL;\n";

/// [`CONNECTION_SETUP`] with a busy timeout of `busy_timeout_ms`.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionSetup(pub u64);

impl Display for ConnectionSetup {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut pieces = CONNECTION_SETUP.split("{ms}");
        f.write_str(pieces.next().unwrap_or(""))?;
        for piece in pieces {
            write!(f, "{}", self.0)?;
            f.write_str(piece)?;
        }
        Ok(())
    }
}

/// Starts a writer's transaction holding the write lock (see the module docs).
pub const BEGIN_IMMEDIATE: &str = "BEGIN IMMEDIATE";
/// Ends it.
pub const COMMIT: &str = "COMMIT";
/// Ends it on any error: nothing it numbered is kept, so no number is lost.
pub const ROLLBACK: &str = "ROLLBACK";

/// Starts the dictionary writer's steps inside a transaction the caller holds (Django's
/// `atomic()`), where `BEGIN IMMEDIATE` is refused: a savepoint, released on success. The
/// caller's transaction decides the rest; a deferred one that read before another writer
/// committed fails with `SQLITE_BUSY_SNAPSHOT` at the first write (never a number twice: the
/// advance is guarded by the `next` read).
pub const SAVEPOINT: &str = "SAVEPOINT shardid_assign";
/// Ends [`SAVEPOINT`] on success.
pub const RELEASE: &str = "RELEASE shardid_assign";
/// Undoes [`SAVEPOINT`] on any error (then [`RELEASE`]): the caller's transaction goes on
/// without the numbers.
pub const ROLLBACK_TO: &str = "ROLLBACK TO shardid_assign";

/// One statement, rendered with its driver's placeholders ([`Display`]): `?` is a parameter,
/// `[...]` a group repeated `list` times (`IN ([?])` for `list` values, `VALUES [(?, ?, ?)]`
/// for `list` rows), `{s}` the schema, `{now}` the database's clock ([`NOW_MS`]).
#[derive(Clone, Copy, Debug)]
pub struct SqliteStatement<'a> {
    schema: &'a str,
    placeholders: Placeholders,
    text: &'static str,
    list: usize,
}

impl<'a> SqliteStatement<'a> {
    const fn new(schema: &'a str, placeholders: Placeholders, text: &'static str) -> Self {
        Self {
            schema,
            placeholders,
            text,
            list: 0,
        }
    }

    const fn list(mut self, list: usize) -> Self {
        self.list = list;
        self
    }

    fn write_plain(&self, f: &mut Formatter<'_>, text: &str, n: &mut usize) -> fmt::Result {
        for (i, piece) in text.split("{s}").enumerate() {
            if i > 0 {
                f.write_str(self.schema)?;
            }
            for (j, part) in piece.split('?').enumerate() {
                if j > 0 {
                    *n += 1;
                    match self.placeholders {
                        Placeholders::Numbered => write!(f, "?{n}")?,
                        Placeholders::Question | Placeholders::Format => f.write_str("?")?,
                    }
                }
                for (k, bit) in part.split("{now}").enumerate() {
                    if k > 0 {
                        f.write_str(NOW_MS)?;
                    }
                    f.write_str(bit)?;
                }
            }
        }
        Ok(())
    }
}

impl Display for SqliteStatement<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut n = 0;
        let mut rest = self.text;
        while let Some(open) = rest.find('[') {
            self.write_plain(f, &rest[..open], &mut n)?;
            let after = &rest[open + 1..];
            let close = after.find(']').unwrap_or(after.len());
            for i in 0..self.list {
                if i > 0 {
                    f.write_str(", ")?;
                }
                self.write_plain(f, &after[..close], &mut n)?;
            }
            rest = after.get(close + 1..).unwrap_or("");
        }
        self.write_plain(f, rest, &mut n)
    }
}
