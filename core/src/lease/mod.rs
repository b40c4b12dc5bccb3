//! Shard leases: no two processes on a host hold the same shard, and no process reissues the
//! IDs of one that held its shard before.
//!
//! The most common way snowflake IDs repeat in production is two processes with the same
//! shard: pre-fork servers whose workers inherit one generator, N copies of one configuration,
//! a restart onto a clock that was set back. A [`LeasedGenerator`] takes its shard from a
//! directory of lock files, one per shard of a configured range, each held with the OS's
//! advisory lock (`flock` on Unix, `LockFileEx` on Windows, through [`std::fs::File::try_lock`]).
//! The OS releases it when the process dies, however it dies, so a crashed worker's shard is
//! free again for the next one.
//!
//! Each lock file also records a *ceiling*: a time unit at or above every unit the holder has
//! issued. It is written before any ID above it is handed out (a little ahead, so a file write
//! happens every few hundred milliseconds, not every ID). The next holder starts its state
//! above the ceiling: after a restart, or with a clock set back, it continues after the last
//! holder's IDs within the generator's backwards tolerance and fails with
//! [`Error::ClockMovedBackwards`] beyond it, exactly as one long-lived generator would.
//! The file is written, not synced: the ceiling survives the process (killed or not), and a
//! machine that loses its page cache takes longer to reboot than the ceiling runs ahead.
//!
//! After `fork()`, a leased generator used in the child takes a new lease of its own in the
//! child (the bindings' at-fork hooks call [`crate::after_fork`], which tells it), so a
//! pre-fork server's workers get one shard each.

use std::boxed::Box;
use std::fmt;
use std::ops::Range;
use std::path::PathBuf;
use std::string::String;

use crate::{Error, ErrorKind};

mod ceiling;
#[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
mod database;
mod hold;
mod lock_file;
#[cfg(feature = "mysql")]
pub mod mysql;
#[cfg(feature = "postgres")]
pub mod postgres;
mod session;
#[cfg(feature = "sqlite")]
pub mod sqlite;
mod tally;
#[cfg(feature = "tokio-postgres")]
pub mod tokio_postgres;

pub use ceiling::{CeilingGenerator, CeilingStore};
/// How a database lease is taken: one type for every database, here where users look for it
/// (issue 59), and also as `lease::postgres::LeaseOptions`, `lease::mysql::...` and
/// `lease::sqlite::...`, beside the lease it configures.
#[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
pub use database::LeaseOptions;
pub use hold::{
    Hold, MAX_CEILING_WAIT_MS, ceiling_wait_ms, monotonic_ms, new_token, wait_for_ceiling,
};
pub use lock_file::{LeasedGenerator, LockFileError, read_lock_file, signature};
pub use session::{BackendClaim, claim_backend};
pub use tally::Tally;

/// Why a lease could not be taken or kept.
#[derive(Debug)]
#[non_exhaustive]
pub enum LeaseError {
    /// An error of the generator (clock moved backwards, expiry, shard out of range).
    Id(Error),
    /// An argument with no kind of its own is wrong, such as a table name that is not a plain
    /// identifier (`INVALID_ARGUMENT`).
    InvalidArgument {
        /// The argument.
        argument: &'static str,
        /// Why.
        reason: String,
    },
    /// The range of shards is empty (`INVALID_ARGUMENT` on `shards`).
    EmptyShards {
        /// The range that was asked for.
        shards: Range<u64>,
    },
    /// Every shard of the range is held by a live process.
    NoFreeShard {
        /// The directory of lock files.
        directory: PathBuf,
        /// The range of shards that were tried.
        shards: Range<u64>,
    },
    /// A lock file records another layout: the directory belongs to other IDs.
    OtherLayout {
        /// The lock file.
        path: PathBuf,
    },
    /// Reading or writing a lock file failed.
    Io(std::io::Error),
    /// The store reported that this process no longer holds the shard (a database lease
    /// taken over, expired, or whose session ended): no ID above the recorded ceiling is
    /// handed out.
    Lost {
        /// The shard that was held.
        shard: u64,
    },
    /// The lease was closed ([`LeasedGenerator::close`], or a database lease's `close()`): it
    /// makes no more IDs, and retrying cannot change that (`CLOSED`). A lease that was *lost*
    /// is [`LeaseError::Lost`].
    Closed {
        /// The shard it held.
        shard: u64,
    },
    /// The database failed (Rust's drivers; the source is the driver's own error). Nothing
    /// was handed out; the lease may still be held.
    Database(Box<dyn std::error::Error + Send + Sync>),
    /// The database could not be reached: no connection was opened
    /// (`DATABASE_UNREACHABLE`, as every client's; the source is the driver's own error).
    Unreachable(Box<dyn std::error::Error + Send + Sync>),
    /// A session lease shares its server session with another lease connection of this
    /// process: a transaction pooler is in front of the database.
    SessionPooled {
        /// What was seen.
        reason: String,
    },
    /// This kind of lease cannot hold on the server (a session lease on a Galera node).
    Unsupported {
        /// Why.
        reason: String,
    },
    /// This host's clock is ahead of the database's by more than a lease allows
    /// ([`crate::sql::failover::SKEW_MS`]), seen at the claim or a renewal: the lease is
    /// refused, or stops (`CLOCK_SKEW`).
    ClockSkew {
        /// How far ahead, at least, in milliseconds.
        ahead_ms: u64,
        /// How far ahead a lease allows.
        max_ms: u64,
    },
    /// The server a `mysql://` URL names took the connection but did not greet as MySQL.
    NotMysql {
        /// `host:port`.
        server: String,
        /// What it did instead.
        reason: String,
    },
}

/// What a [`CeilingStore`] wraps in its `io::Error` (`io::Error::other(DatabaseFailure(e))`)
/// when the database failed: the generator then reports [`LeaseError::Database`], not a
/// lock file's error.
#[derive(Debug)]
pub struct DatabaseFailure(pub Box<dyn std::error::Error + Send + Sync>);

impl fmt::Display for DatabaseFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for DatabaseFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

/// What a [`CeilingStore`] wraps in its `io::Error` (`io::Error::other(LostLease)`) when the
/// lease it records for is no longer held: the generator then reports [`LeaseError::Lost`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LostLease;

impl fmt::Display for LostLease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the lease is no longer held")
    }
}

impl std::error::Error for LostLease {}

impl LeaseError {
    /// The kind of the shared table this error is reported as in every binding.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Id(e) => e.kind(),
            Self::EmptyShards { .. } | Self::InvalidArgument { .. } => ErrorKind::InvalidArgument,
            Self::NoFreeShard { .. } => ErrorKind::NoFreeShard,
            Self::OtherLayout { .. } | Self::Io(_) => ErrorKind::LeaseFile,
            Self::Lost { .. } => ErrorKind::LeaseLost,
            Self::Closed { .. } => ErrorKind::Closed,
            Self::Database(_) => ErrorKind::Database,
            Self::Unreachable(_) => ErrorKind::DatabaseUnreachable,
            Self::SessionPooled { .. } => ErrorKind::SessionPooled,
            Self::Unsupported { .. } => ErrorKind::Unsupported,
            Self::NotMysql { .. } => ErrorKind::NotMysql,
            Self::ClockSkew { .. } => ErrorKind::ClockSkew,
        }
    }
}

impl fmt::Display for LeaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Id(e) => e.fmt(f),
            Self::EmptyShards { shards } => {
                ErrorKind::InvalidArgument.render(f, |name, f| match name {
                    "argument" => f.write_str("shards"),
                    _ => write!(f, "{}", empty_shards(shards)),
                })
            }
            Self::InvalidArgument { argument, reason } => {
                ErrorKind::InvalidArgument.render(f, |name, f| match name {
                    "argument" => f.write_str(argument),
                    _ => f.write_str(reason),
                })
            }
            Self::NoFreeShard { directory, shards } => {
                ErrorKind::NoFreeShard.render(f, |name, f| match name {
                    "first" => write!(f, "{}", shards.start),
                    "end" => write!(f, "{}", shards.end),
                    _ => write!(f, "lock files in {}", directory.display()),
                })
            }
            Self::OtherLayout { path } => ErrorKind::LeaseFile.render(f, |_, f| {
                write!(
                    f,
                    "{} records another layout: use a directory per layout",
                    path.display()
                )
            }),
            Self::Io(e) => ErrorKind::LeaseFile.render(f, |_, f| write!(f, "{e}")),
            Self::Lost { shard } => ErrorKind::LeaseLost.render(f, |_, f| write!(f, "{shard}")),
            Self::Closed { shard } => {
                ErrorKind::Closed.render(f, |_, f| write!(f, "the lease on shard {shard}"))
            }
            Self::Database(e) => ErrorKind::Database.render(f, |_, f| write!(f, "{e}")),
            Self::Unreachable(e) => {
                ErrorKind::DatabaseUnreachable.render(f, |_, f| write!(f, "{e}"))
            }
            Self::SessionPooled { reason } => {
                ErrorKind::SessionPooled.render(f, |_, f| f.write_str(reason))
            }
            Self::Unsupported { reason } => {
                ErrorKind::Unsupported.render(f, |_, f| f.write_str(reason))
            }
            Self::NotMysql { server, reason } => {
                ErrorKind::NotMysql.render(f, |name, f| match name {
                    "server" => f.write_str(server),
                    _ => f.write_str(reason),
                })
            }
            Self::ClockSkew { ahead_ms, max_ms } => {
                ErrorKind::ClockSkew.render(f, |name, f| match name {
                    "ahead_ms" => write!(f, "{ahead_ms}"),
                    _ => write!(f, "{max_ms}"),
                })
            }
        }
    }
}

/// The reason an empty range is refused, the same words for every kind of lease.
pub fn empty_shards(shards: &Range<u64>) -> crate::sql::EmptyShards {
    crate::sql::EmptyShards {
        first: shards.start,
        end: shards.end,
    }
}

impl std::error::Error for LeaseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Id(e) => Some(e),
            Self::Io(e) => Some(e),
            Self::Database(e) | Self::Unreachable(e) => Some(&**e),
            _ => None,
        }
    }
}

impl From<Error> for LeaseError {
    fn from(e: Error) -> Self {
        Self::Id(e)
    }
}

impl From<std::io::Error> for LeaseError {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e)
    }
}

/// `shardid::lease::LeaseOptions` is the type of every database's lease (issue 59: it was only
/// under `lease::sqlite`, `lease::postgres` and `lease::mysql`). `sqlite` in the name: the
/// filter scripts/test.sh runs the `sqlite` feature's tests with.
#[cfg(all(test, feature = "sqlite"))]
mod sqlite_options_tests {
    #[test]
    fn sqlite_lease_options_are_found_under_lease() {
        let options: super::LeaseOptions = super::sqlite::LeaseOptions::new();
        assert_eq!(options.table, "shardid_leases");
    }
}
