//! The Rust client of dense IDs from segments on a SQLite file, over the `rusqlite` crate
//! (feature `sqlite`): [`DenseIds`] runs the core's [`super::SegmentAllocator`] with fetches on
//! a thread of their own, as the Python (`sqlite3`) and Node (`better-sqlite3`) clients do,
//! over the driver shared with [`super::postgres`] and [`super::mysql`]. What is SQLite's is
//! here: a fetch is one `UPDATE ... RETURNING` ([`crate::sql::sqlite`]'s segments; no row: one
//! read tells an unknown tag from an exhausted one), and there is no server to install: the
//! tables are created on first use, and a tag by [`create_tag`].
//!
//! Any number of threads, connections and processes may take from one file: SQLite serializes
//! the takes under its write lock (WAL mode, a busy timeout of
//! [`DEFAULT_BUSY_TIMEOUT_MS`](crate::sql::sqlite::DEFAULT_BUSY_TIMEOUT_MS)). The file must be
//! on a local disk: one on a network filesystem is refused (SQLite's own advice).
//!
//! ```no_run
//! use shardid::segment::SizePolicy;
//! use shardid::segment::sqlite::{DenseIds, create_tag};
//!
//! let url = "sqlite:///ids.db"; // ids.db in the working directory
//! create_tag(url, "orders", "main", 1)?; // once; again does nothing
//! let orders = DenseIds::connect(url, "orders", "main", SizePolicy::new())?;
//! let id = orders.next_id()?;
//! orders.close();
//! # Ok::<(), shardid::segment::sqlite::SegmentError>(())
//! ```

use std::string::{String, ToString};
use std::vec::Vec;

use rusqlite::Connection;

use super::SizePolicy;
pub use super::driver::SegmentError;
use super::driver::{Driver, SegmentClient, dense_ids_methods};
use super::protocol::SegmentProtocol;
use crate::driver::sqlite::{no_such_table, with_tables};
use crate::driver::{Client, Owned};
use crate::sql::sqlite::SqliteSegments;
use crate::sql::{Dialect, Value};

/// The DDL, the protocol of one schema's takes and give-backs, and the creation of a tag.
pub(crate) struct Statements {
    pub(crate) ddl: String,
    protocol: SegmentProtocol,
    pub(crate) create_tag: String,
}

impl Statements {
    pub(crate) fn new(schema: &str) -> Result<Self, String> {
        let ddl = SqliteSegments::new(schema).map_err(|e| e.to_string())?;
        let s = ddl.statements(Connection::PLACEHOLDERS);
        let protocol = SegmentProtocol::new(Dialect::Sqlite, schema, Connection::PLACEHOLDERS, 1)
            .map_err(|e| e.to_string())?;
        Ok(Self {
            ddl: ddl.to_string(),
            protocol,
            create_tag: s.create_tag().to_string(),
        })
    }
}

impl SegmentClient for Connection {
    type Statements = Statements;

    fn statements(schema: &str) -> Result<Statements, String> {
        Statements::new(schema)
    }

    /// The protocol's take is [`crate::sql::sqlite::SqliteTake`]'s steps (the take; no row, the
    /// read that says why, a tag created in between taken again).
    fn protocol(s: &Statements, servers: usize) -> Option<SegmentProtocol> {
        Some(s.protocol.over(servers))
    }

    /// The statement, the tables made first on a file no client used yet.
    fn step(
        &mut self,
        s: &Statements,
        statement: &str,
        values: &[Value<'_>],
    ) -> Result<Option<Vec<Owned>>, rusqlite::Error> {
        with_tables(self, &s.ddl, no_such_table, |conn| {
            conn.run(statement, values)
        })
    }

    fn create_tag(
        &mut self,
        statements: &Statements,
        _: Dialect,
        tag: &str,
    ) -> Result<(), rusqlite::Error> {
        create(self, statements, tag, 1).map(drop)
    }
}

/// Creates `tag` from `first`, the tables first on a new file; whether it was created.
fn create(
    conn: &mut Connection,
    s: &Statements,
    tag: &str,
    first: u64,
) -> Result<bool, rusqlite::Error> {
    let created = with_tables(conn, &s.ddl, no_such_table, |conn| {
        conn.run(&s.create_tag, &[Value::Text(tag), Value::Int(first)])
    })?;
    Ok(created.is_some())
}

/// Takes a segment of `size` IDs of `tag` on `conn` by the protocol (the tables made first on
/// a new file), as the tests below take one.
#[cfg(test)]
pub(crate) fn take(
    conn: &mut Connection,
    s: &Statements,
    tag: &str,
    size: u64,
) -> Result<super::Segment, super::driver::Failed<rusqlite::Error>> {
    SegmentClient::take(conn, s, Dialect::Sqlite, tag, size, &mut None)
}

/// Gives `first..end` of `tag` back on `conn` by the protocol; whether the database took it
/// (nobody took a segment since).
#[cfg(feature = "serial")]
pub(crate) fn give_back(
    conn: &mut Connection,
    s: &Statements,
    tag: &str,
    first: u64,
    end: u64,
) -> Result<bool, rusqlite::Error> {
    super::driver::give_back_on(conn, s, Dialect::Sqlite, tag, first, end)
}

/// Creates the tag `tag` in the SQLite file `url` names, its first number `first` (the tables
/// too, on a new file); whether it was created (`false`: it existed, and is left as it was).
/// The DDL is also in `shardid sql --dialect sqlite --segments` for projects that manage their
/// migrations.
///
/// # Errors
/// [`SegmentError::InvalidArgument`] for a bad URL, schema, tag or `first` (above 2^63 - 1),
/// [`SegmentError::Database`] when the file cannot be used, or SQLite refused the statement.
pub fn create_tag(url: &str, tag: &str, schema: &str, first: u64) -> Result<bool, SegmentError> {
    super::driver::check_tag(tag)?;
    if i64::try_from(first).is_err() {
        return Err(SegmentError::InvalidArgument {
            argument: "first",
            reason: "must be at most 2^63 - 1".into(),
        });
    }
    let s = Statements::new(schema).map_err(|reason| SegmentError::InvalidArgument {
        argument: "schema",
        reason,
    })?;
    let mut conn = Connection::connect(url).map_err(SegmentError::of_connect::<Connection>)?;
    let created =
        create(&mut conn, &s, tag, first).map_err(|e| SegmentError::Database(Connection::boxed(e)));
    Client::close(conn);
    created
}

dense_ids_methods!(
    Connection,
    "the segments of a SQLite file",
    "the SQLite file `url` names (`sqlite:///relative.db`, `sqlite:////absolute.db`; a file on a network filesystem is refused; `schema`: `main`, or an attached database's name)",
    "[`SegmentError::Database`] when the file cannot be used (a missing directory, a read-only file, not a SQLite database)"
);

#[cfg(all(test, not(miri)))]
mod tests {
    use std::sync::Arc;
    use std::vec::Vec;
    use std::{format, thread};

    use super::*;
    use crate::ErrorKind;
    use crate::driver::sqlite::TempDb;
    use crate::segment::driver::Failed;

    fn tiny() -> SizePolicy {
        SizePolicy::new().bounds(1, 3)
    }

    #[test]
    fn sqlite_dense_ids_threads_and_connections_on_one_file_never_repeat() {
        let db = TempDb::new("dense");
        let url = db.url();
        assert!(create_tag(&url, "orders", "main", 1).unwrap());
        assert!(!create_tag(&url, "orders", "main", 500).unwrap(), "exists");
        // 3 connections x 3 threads, tiny segments: thousands of takes on one file.
        let handles: Vec<_> = (0..3)
            .map(|_| Arc::new(DenseIds::connect(&url, "orders", "main", tiny()).unwrap()))
            .collect();
        let threads: Vec<_> = (0..9)
            .map(|i| {
                let ids = Arc::clone(&handles[i % 3]);
                thread::spawn(move || {
                    let mut out = Vec::new();
                    for _ in 0..150 {
                        out.push(ids.next_id().unwrap());
                    }
                    out
                })
            })
            .collect();
        let mut all: Vec<u64> = threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "0 duplicates");
        assert!(all[0] >= 1);
        let lost: u64 = handles.iter().map(|h| h.close()).sum();
        // Every number below the highest was handed out, given back, or counted as lost.
        let highest = *all.last().unwrap();
        assert!(
            highest < 1 + n as u64 + lost + 3 * 3,
            "{highest} {n} {lost}"
        );
        // A restart continues after the numbers handed out.
        let again = DenseIds::connect(&url, "orders", "main", tiny()).unwrap();
        assert!(again.next_id().unwrap() > highest - lost.min(highest));
        again.close();
    }

    #[test]
    fn sqlite_unknown_tags_bad_names_and_bad_urls_are_refused() {
        let db = TempDb::new("refused");
        let url = db.url();
        // A new file: the tables are created, and the tag is unknown.
        let e = DenseIds::connect(&url, "nope", "main", tiny()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnknownTag, "{e}");
        for (tag, schema, url) in [
            ("", "main", url.as_str()),
            ("t", "no such", url.as_str()),
            ("t", "main", "sqlite://"),
            ("t", "main", "postgresql://h/d"),
        ] {
            let e = DenseIds::connect(url, tag, schema, tiny()).unwrap_err();
            assert_eq!(
                e.kind(),
                ErrorKind::InvalidArgument,
                "{tag} {schema} {url}: {e}"
            );
            let e = create_tag(url, tag, schema, 1).unwrap_err();
            assert_eq!(
                e.kind(),
                ErrorKind::InvalidArgument,
                "{tag} {schema} {url}: {e}"
            );
        }
        let e = create_tag(&url, "t", "main", u64::MAX).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        // A tag near the end of the numbers: exhausted, not unknown.
        create_tag(&url, "big", "main", (i64::MAX - 2).cast_unsigned()).unwrap();
        let mut conn = Connection::connect(&url).unwrap();
        let s = Statements::new("main").unwrap();
        let Err(Failed::Unusable(why)) = take(&mut conn, &s, "big", 10) else {
            panic!("a take past 2^63 - 1")
        };
        assert!(why.contains("TAG_EXHAUSTED"), "{why}");
        assert_eq!(take(&mut conn, &s, "big", 2).ok().map(|s| s.count), Some(2));
        assert!(matches!(
            take(&mut conn, &s, "nope", 2),
            Err(Failed::UnknownTag(_))
        ));
    }

    #[test]
    fn sqlite_files_that_cannot_be_used_are_reported_with_sqlites_message() {
        let db = TempDb::new("bad");
        // A missing directory.
        let url = format!("sqlite:///{}", db.dir.join("no/such/dir/x.db").display());
        let e = DenseIds::connect(&url, "t", "main", tiny()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DatabaseUnreachable);
        assert!(
            e.to_string().contains("unable to open database file"),
            "{e}"
        );
        assert!(e.to_string().contains("no/such/dir/x.db"), "the path: {e}");
        // A file that is not a SQLite database.
        let path = db.dir.join("text.db");
        std::fs::write(&path, "this is not a database, only some text of ours").unwrap();
        let url = format!("sqlite:///{}", path.display());
        let e = DenseIds::connect(&url, "t", "main", tiny()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DatabaseUnreachable);
        assert!(e.to_string().contains("file is not a database"), "{e}");
        let e = create_tag(&url, "t", "main", 1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DatabaseUnreachable, "{e}");
        // A read-only database: SQLite opens it read-only without a word; refused.
        let path = db.dir.join("ro.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE x (a)")
            .unwrap();
        let ro =
            Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        let e = crate::driver::sqlite::set_up(&ro, 100).unwrap_err();
        assert_eq!(
            Connection::code(&e).as_deref(),
            Some("8"),
            "SQLITE_READONLY: {e}"
        );
        assert!(Connection::broken(&e));
        drop(ro);
        // The same through a URL, where the file's permissions say so (root writes any file:
        // there the connection above stands in for it).
        let mut permissions = std::fs::metadata(&path).unwrap().permissions();
        permissions.set_readonly(true);
        std::fs::set_permissions(&path, permissions).unwrap();
        if std::fs::OpenOptions::new().write(true).open(&path).is_err() {
            let url = format!("sqlite:///{}", path.display());
            let e = create_tag(&url, "t", "main", 1).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::DatabaseUnreachable);
            assert!(e.to_string().contains("readonly"), "{e}");
        }
    }

    #[test]
    fn sqlite_a_lock_held_past_the_busy_timeout_is_a_refusal_not_a_lost_connection() {
        let db = TempDb::new("busy");
        let url = db.url();
        create_tag(&url, "t", "main", 1).unwrap();
        let path = crate::sql::sqlite_path(&url).unwrap();
        let holder = crate::driver::sqlite::open(path, 100).unwrap();
        holder.execute_batch("BEGIN IMMEDIATE").unwrap();
        let mut other = crate::driver::sqlite::open(path, 50).unwrap();
        let s = Statements::new("main").unwrap();
        let Err(Failed::Driver(e)) = take(&mut other, &s, "t", 10) else {
            panic!("a take under another's write lock")
        };
        assert!(
            Connection::describe(&e).contains("database is locked"),
            "{e}"
        );
        assert_eq!(
            e.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DatabaseBusy)
        );
        assert!(!Connection::broken(&e));
        holder.execute_batch("ROLLBACK").unwrap();
        assert_eq!(take(&mut other, &s, "t", 10).ok().map(|s| s.first), Some(1));
    }
}
