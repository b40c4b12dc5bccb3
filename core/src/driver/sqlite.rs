//! The [`super::Client`] of the `rusqlite` crate (feature `sqlite`): a SQLite file opened from
//! a `sqlite:///relative.db` or `sqlite:////absolute.db` URL ([`crate::sql::sqlite_path`]), set
//! up as every SQLite client of shardid sets it up ([`CONNECTION_SETUP`]: busy timeout, WAL,
//! `synchronous = FULL`).
//!
//! SQLite has no server, so "the database cannot be reached" means the file cannot be used: a
//! missing directory, a file this process may not write, a file that is not a SQLite
//! database. Each is refused when connecting, with SQLite's own message and the path
//! ([`ConnectError::Driver`]: `DATABASE_UNREACHABLE`, as a server that is down). A file on a
//! network filesystem is refused too ([`ConnectError::Url`]: `INVALID_ARGUMENT`): WAL mode
//! needs memory shared between the processes that open the file, which NFS, SMB and the like
//! do not give, and SQLite's own advice is not to use a database there at all.
//!
//! A write that waits for the write lock longer than the busy timeout fails with
//! `database is locked` (`SQLITE_BUSY`): the database's refusal of the statement, not a lost
//! connection ([`Client::broken`] is false), so the caller reports it and may retry.

use std::format;
#[cfg(all(test, not(miri)))]
use std::path::PathBuf;
use std::string::{String, ToString};
use std::vec::Vec;

use rusqlite::{Connection, ErrorCode, OpenFlags, ffi, types::ValueRef};

use super::{Client, ConnectError, Owned};
use crate::sql::sqlite::{CONNECTION_SETUP, ConnectionSetup, DEFAULT_BUSY_TIMEOUT_MS};
use crate::sql::{Dialect, Placeholders, Value};

// The setup's text is the one every SQLite client runs.
const _: &str = CONNECTION_SETUP;

/// The core's one rule for a connection string ([`Dialect::of_url`]), for the SQLite clients:
/// the reason of an `INVALID_ARGUMENT` for a URL that is not a usable `sqlite:` URL.
pub(crate) fn url_problem(url: &str) -> Option<String> {
    match Dialect::of_url(url) {
        Ok(Dialect::Sqlite) => crate::sql::sqlite_path(url).err().map(|e| e.to_string()),
        Ok(Dialect::Postgres) => Some(
            "names a PostgreSQL server: the postgres module's client takes it (a SQLite file is sqlite:///path.db)".into(),
        ),
        Ok(_) => Some(
            "names a MySQL or MariaDB server: the mysql module's client takes it (a SQLite file is sqlite:///path.db)".into(),
        ),
        Err(why) => Some(why.to_string()),
    }
}

/// An error of SQLite's own kind `code` with `message`, as SQLite reports its errors.
pub(crate) fn failure(code: i32, message: String) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(ffi::Error::new(code), Some(message))
}

/// Opens `path` for reading and writing (creating the file, not its directory) and sets the
/// connection up; SQLite's own errors with the path.
pub(crate) fn open(path: &str, busy_timeout_ms: u64) -> Result<Connection, rusqlite::Error> {
    let with_path = |e: rusqlite::Error| match e {
        rusqlite::Error::SqliteFailure(code, message) => failure(
            code.extended_code,
            format!(
                "{}: {path}",
                message.unwrap_or_else(|| ffi::code_to_str(code.extended_code).into())
            ),
        ),
        e => e,
    };
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(with_path)?;
    set_up(&conn, busy_timeout_ms).map_err(with_path)?;
    Ok(conn)
}

/// [`CONNECTION_SETUP`] on `conn`, after checking that SQLite opened it for writing (it opens
/// a file this process may not write read-only, silently): every client of shardid writes.
pub(crate) fn set_up(conn: &Connection, busy_timeout_ms: u64) -> Result<(), rusqlite::Error> {
    if conn.is_readonly(rusqlite::MAIN_DB)? {
        return Err(failure(
            ffi::SQLITE_READONLY,
            "attempt to write a readonly database (the file is read-only to this process)".into(),
        ));
    }
    // The first statement reads the file's header: a file that is not a SQLite database fails
    // here, with SQLITE_NOTADB. On a new file that other connections are switching to WAL mode
    // at the same moment, the switch can fail at once with SQLITE_BUSY: SQLite runs no busy
    // handler for a journal-mode change it could deadlock on. So a busy setup is tried again
    // every 10 ms until the busy timeout is over, as the handler would have waited (the same
    // in the Python and Node drivers).
    let setup = ConnectionSetup(busy_timeout_ms).to_string();
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(busy_timeout_ms);
    loop {
        match conn.execute_batch(&setup) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            done => break done?,
        }
    }
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(failure(
            ffi::SQLITE_CANTOPEN,
            format!("the database could not be switched to WAL mode (it is in {mode} mode)"),
        ));
    }
    Ok(())
}

/// A column as the core reads it.
fn column(value: ValueRef<'_>) -> Owned {
    match value {
        ValueRef::Null => Owned::Null,
        ValueRef::Integer(n) => Owned::Int(n),
        ValueRef::Real(x) => Owned::Text(x.to_string()),
        ValueRef::Text(t) | ValueRef::Blob(t) => {
            Owned::Text(String::from_utf8_lossy(t).into_owned())
        }
    }
}

/// The parameters of a statement as SQLite takes them: an integer past 2^63 - 1 is refused
/// (SQLite's integers are signed; no number of shardid's is that large).
pub(crate) fn params(params: &[Value<'_>]) -> Result<Vec<rusqlite::types::Value>, rusqlite::Error> {
    params
        .iter()
        .map(|value| match value {
            Value::Text(text) => Ok(rusqlite::types::Value::Text((*text).into())),
            Value::Int(n) => i64::try_from(*n)
                .map(rusqlite::types::Value::Integer)
                .map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into())),
        })
        .collect()
}

/// Whether `e` is SQLite's "no such table": the tables are created on first use.
pub(crate) fn no_such_table(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(_, Some(m)) if m.starts_with("no such table"))
}

/// Runs `step`; when it fails for a table that does not exist yet, creates the tables (`ddl`,
/// all `CREATE ... IF NOT EXISTS`) and runs it once more.
pub(crate) fn with_tables<T, E: From<rusqlite::Error>>(
    conn: &mut Connection,
    ddl: &str,
    missing: impl Fn(&E) -> bool,
    mut step: impl FnMut(&mut Connection) -> Result<T, E>,
) -> Result<T, E> {
    match step(conn) {
        Err(e) if missing(&e) => {
            conn.execute_batch(ddl)?;
            step(conn)
        }
        answer => answer,
    }
}

impl Client for Connection {
    type Error = rusqlite::Error;
    const DIALECT: Dialect = Dialect::Sqlite;
    // `?1`, `?2`, ...: rusqlite's usual style.
    const PLACEHOLDERS: Placeholders = Placeholders::Numbered;
    const URL_ARGUMENT: &'static str = "url";

    fn url_problem(url: &str) -> Option<String> {
        url_problem(url)
    }

    fn connect(url: &str) -> Result<Self, ConnectError<Self::Error>> {
        if let Some(reason) = url_problem(url) {
            return Err(ConnectError::Url(reason));
        }
        let path = crate::sql::sqlite::usable_file(url).map_err(ConnectError::Url)?;
        open(path, DEFAULT_BUSY_TIMEOUT_MS).map_err(ConnectError::Driver)
    }

    /// Runs one statement (prepared once per connection and kept in its cache); its first row,
    /// `None` for none. The statement is stepped to its end, so a write with `RETURNING` is
    /// complete when this returns.
    fn run(&mut self, sql: &str, params: &[Value<'_>]) -> Result<Option<Vec<Owned>>, Self::Error> {
        let params = self::params(params)?;
        let mut statement = self.prepare_cached(sql)?;
        let columns = statement.column_count();
        let mut rows = statement.query(rusqlite::params_from_iter(params))?;
        let mut first = None;
        while let Some(row) = rows.next()? {
            if first.is_none() {
                first = Some(
                    (0..columns)
                        .map(|i| row.get_ref(i).map(column))
                        .collect::<Result<Vec<_>, _>>()?,
                );
            }
        }
        Ok(first)
    }

    fn describe(e: &Self::Error) -> String {
        match e {
            rusqlite::Error::SqliteFailure(code, Some(message)) => {
                format!("{message} (SQLite error {})", code.extended_code)
            }
            e => e.to_string(),
        }
    }

    fn message(e: &Self::Error) -> Option<String> {
        match e {
            rusqlite::Error::SqliteFailure(_, Some(message)) => Some(message.clone()),
            _ => None,
        }
    }

    /// SQLite's extended result code (`5`: busy, `2067`: a unique constraint).
    fn code(e: &Self::Error) -> Option<String> {
        e.sqlite_error().map(|e| e.extended_code.to_string())
    }

    /// The file can no longer be used as it was opened (removed, made read-only, replaced by
    /// something that is not a database, an I/O error): open it again. A busy database is not
    /// broken, only busy.
    fn broken(e: &Self::Error) -> bool {
        matches!(
            e.sqlite_error_code(),
            Some(
                ErrorCode::CannotOpen
                    | ErrorCode::NotADatabase
                    | ErrorCode::DatabaseCorrupt
                    | ErrorCode::SystemIoFailure
                    | ErrorCode::ReadOnly
            )
        )
    }

    fn is_closed(&self) -> bool {
        false
    }

    fn close(self) {
        drop(Connection::close(self));
    }
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;

    #[test]
    fn sqlite_urls_of_other_databases_are_refused_naming_their_module() {
        assert_eq!(url_problem("sqlite:///a.db"), None);
        assert!(
            url_problem("postgresql://h/d")
                .unwrap()
                .contains("postgres module")
        );
        assert!(url_problem("mysql://h/d").unwrap().contains("mysql module"));
        assert!(url_problem("sqlite://").unwrap().contains("in-memory"));
        assert!(url_problem("redis://h").is_some());
        assert!(matches!(
            Connection::connect("sqlite:///:memory:"),
            Err(ConnectError::Url(_))
        ));
    }

    #[test]
    fn sqlite_params_refuse_what_sqlite_cannot_hold() {
        assert!(params(&[Value::Int(u64::MAX)]).is_err());
        assert_eq!(
            params(&[Value::Int(7), Value::Text("x")]).unwrap(),
            [
                rusqlite::types::Value::Integer(7),
                rusqlite::types::Value::Text("x".into())
            ]
        );
    }
}

/// A database file in a directory of its own under the system's temporary directory, removed
/// with it when dropped: each test of the SQLite clients on real files.
#[cfg(all(test, not(miri)))]
pub(crate) struct TempDb {
    pub(crate) dir: PathBuf,
}

#[cfg(all(test, not(miri)))]
impl TempDb {
    pub(crate) fn new(name: &str) -> Self {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "shardid-sqlite-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        Self { dir }
    }

    /// The file's `sqlite:////absolute/path` URL.
    pub(crate) fn url(&self) -> String {
        format!("sqlite:///{}", self.dir.join("ids.db").display())
    }
}

#[cfg(all(test, not(miri)))]
impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
