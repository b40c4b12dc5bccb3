//! Shard leases kept in a SQLite file, from Rust (feature `sqlite`, over the `rusqlite` crate):
//! the driver of the core's lease protocol ([`crate::sql::LeaseProtocol`]) in SQLite's SQL
//! ([`crate::sql::sqlite::SqliteLease`]'s statements), sharing its logic with
//! [`super::postgres`] and [`super::mysql`]. The table is created on first use.
//!
//! ```no_run
//! use shardid::Layout;
//! use shardid::lease::sqlite::{LeaseOptions, SqliteLease};
//!
//! let lease = SqliteLease::acquire("sqlite:///ids.db", Layout::INSTAGRAM, 0..64, &LeaseOptions::new())?;
//! let id = lease.next_id()?;
//! # Ok::<(), shardid::lease::LeaseError>(())
//! ```
//!
//! The lease expires (a heartbeat thread renews it every third of its time to live, by the
//! database's clock); a session lease is refused ([`LeaseError::Unsupported`]: SQLite has no
//! advisory locks). One file serves the processes of one host (a network filesystem is
//! refused), which the lock-file leases ([`super::LeasedGenerator`]) serve too, and free a
//! crashed holder's shard at once: this lease is for the projects whose state is already in
//! the SQLite file. The lease does not follow `fork()`: take one in each process.

use std::fmt;
use std::ops::Range;

use super::LeaseError;
pub use super::database::LeaseOptions;
use super::database::{DatabaseLease, lease_type};
use crate::Layout;

lease_type! {
    /// A generator on a shard leased through a SQLite file: see the [module](self) docs. `Sync`:
    /// share it between threads. Dropping it releases the shard.
    SqliteLease over rusqlite::Connection;
    /// Leases the first free shard of `shards` in the SQLite file `url` names
    /// (`sqlite:///relative.db`, `sqlite:////absolute.db`).
    ///
    /// # Errors
    /// [`LeaseError::EmptyShards`]; [`LeaseError::InvalidArgument`] for a URL the core cannot
    /// read (a file on a network filesystem among them) or a bad table name;
    /// [`LeaseError::NoFreeShard`] when every shard is held; [`LeaseError::Unreachable`] when
    /// the file cannot be used, [`LeaseError::Database`] when SQLite refuses a statement;
    /// [`LeaseError::Unsupported`] for a session lease.
    acquire;
}

#[cfg(all(test, not(miri)))]
mod tests {
    use std::collections::BTreeSet;
    use std::string::ToString;
    use std::sync::Arc;
    use std::thread;
    use std::vec::Vec;

    use super::*;
    use crate::ErrorKind;
    use crate::driver::sqlite::TempDb;
    use crate::sql::LeaseKind;

    #[test]
    fn sqlite_two_leases_on_one_file_never_hold_one_shard() {
        let db = TempDb::new("lease");
        let url = db.url();
        let options = LeaseOptions::new().table("leases");
        // Threads racing for 3 shards on one new file (the table made by the first claims).
        let takers: Vec<_> = (0..4)
            .map(|_| {
                let (url, options) = (url.clone(), options.clone());
                thread::spawn(move || SqliteLease::acquire(&url, Layout::INSTAGRAM, 5..8, &options))
            })
            .collect();
        let results: Vec<_> = takers.into_iter().map(|t| t.join().unwrap()).collect();
        let held: Vec<&SqliteLease> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(held.len(), 3, "every shard taken once");
        let shards: BTreeSet<u64> = held.iter().map(|l| l.shard()).collect();
        assert_eq!(shards, BTreeSet::from([5, 6, 7]), "never one shard twice");
        let refused = results.iter().find_map(|r| r.as_ref().err()).unwrap();
        assert_eq!(refused.kind(), ErrorKind::NoFreeShard, "{refused}");
        // IDs of the leases are distinct; a released shard is taken again, above its ceiling.
        let a = Arc::new(SqliteLease::acquire(&url, Layout::INSTAGRAM, 8..9, &options).unwrap());
        let before = a.next_id().unwrap();
        a.close();
        let b = SqliteLease::acquire(&url, Layout::INSTAGRAM, 8..9, &options).unwrap();
        assert_eq!(b.shard(), 8);
        assert!(b.next_id().unwrap() > before);
        let e = SqliteLease::acquire(&url, Layout::INSTAGRAM, 8..9, &options).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NoFreeShard);
        drop(results);
    }

    #[test]
    fn sqlite_session_leases_and_bad_files_are_refused() {
        let db = TempDb::new("lease-bad");
        let session = LeaseOptions::new().kind(LeaseKind::Session);
        let e = SqliteLease::acquire(&db.url(), Layout::INSTAGRAM, 0..4, &session).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
        assert!(e.to_string().contains("advisory locks"), "{e}");
        let missing = std::format!("sqlite:///{}", db.dir.join("no/x.db").display());
        let e = SqliteLease::acquire(&missing, Layout::INSTAGRAM, 0..4, &LeaseOptions::new());
        let e = e.unwrap_err();
        assert!(
            e.to_string().contains("unable to open database file"),
            "{e}"
        );
        let e = SqliteLease::acquire("sqlite://", Layout::INSTAGRAM, 0..4, &LeaseOptions::new());
        assert_eq!(e.unwrap_err().kind(), ErrorKind::InvalidArgument);
    }
}
