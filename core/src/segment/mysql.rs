//! The Rust client of dense IDs from segments on MySQL 8 and MariaDB, over the `mysql` crate
//! (feature `mysql`): [`DenseIds`] runs the core's [`super::SegmentAllocator`] with fetches on
//! a thread of their own, as the Python (PyMySQL) and Node (mysql2) clients do. The driver is
//! shared with [`super::postgres`]; what is the MySQL family's is here: each fetch is the steps
//! of [`MysqlFetch`] (one `UPDATE` once the stride is known), in the server's dialect.
//!
//! ```no_run
//! use shardid::segment::mysql::DenseIds;
//! use shardid::segment::SizePolicy;
//!
//! let orders = DenseIds::connect("mysql://app:secret@127.0.0.1:3306/seg", "orders", "seg", SizePolicy::new())?;
//! let id = orders.next_id()?;
//! orders.close();
//! # Ok::<(), shardid::segment::mysql::SegmentError>(())
//! ```

use std::string::{String, ToString};

pub use super::driver::SegmentError;
use super::driver::{Driver, Failed, SegmentClient, dense_ids_methods};
use super::{Segment, SizePolicy, Unused};
use crate::driver::mysql::error_number;
use crate::driver::{Client, Owned};
use crate::sql::mysql::{FetchError, FetchStep, MysqlFetch};
use crate::sql::{Dialect, MysqlSegments, Value};

/// The read, the take, the give-back and the creation of a tag in one schema, for MySQL and
/// for MariaDB (the server names itself in the rows it writes: [`Dialect::server_identity`]).
pub(crate) struct Statements([[String; 4]; 2]);

impl Statements {
    fn of(&self, dialect: Dialect, which: usize) -> &str {
        &self.0[usize::from(dialect == Dialect::Mariadb)][which]
    }
}

/// A fetch's error as the driver reports it.
fn fetch_error(e: FetchError) -> Failed<mysql::Error> {
    match e {
        FetchError::UnknownTag => Failed::UnknownTag("the tag does not exist".into()),
        e => Failed::Unusable(e.to_string()),
    }
}

impl SegmentClient for mysql::Conn {
    type Statements = Statements;

    fn statements(schema: &str) -> Result<Statements, String> {
        let ddl = MysqlSegments::new(schema).map_err(|e| e.to_string())?;
        Ok(Statements([Dialect::Mysql, Dialect::Mariadb].map(
            |dialect| {
                let s = ddl.dialect(dialect).statements(Self::PLACEHOLDERS);
                [
                    s.read().to_string(),
                    s.take().to_string(),
                    s.give_back().to_string(),
                    s.create_tag().to_string(),
                ]
            },
        )))
    }

    /// The steps of [`MysqlFetch`] (a read while the server's `stride` is not known, then one
    /// `UPDATE`), a step the server rolled back whole sent again. Serials take their periods'
    /// segments so too.
    fn take(
        &mut self,
        statements: &Statements,
        dialect: Dialect,
        tag: &str,
        size: u64,
        stride: &mut Option<u64>,
    ) -> Result<Segment, Failed<mysql::Error>> {
        let mut fetch = MysqlFetch::new(size, *stride);
        loop {
            let step = fetch.step();
            let (sql, params) = match step {
                FetchStep::Read => (statements.of(dialect, 0), [Value::Text(tag)].to_vec()),
                FetchStep::Take { size } => {
                    let n = Value::Int(size);
                    (
                        statements.of(dialect, 1),
                        [n, n, n, Value::Text(tag), n, n].to_vec(),
                    )
                }
            };
            let row = match self.run(sql, &params) {
                Ok(row) => row,
                Err(e) if error_number(&e).is_some_and(|code| fetch.rolled_back(code)) => {
                    continue;
                }
                Err(e) => return Err(Failed::Driver(e)),
            };
            let int = |i: usize| {
                row.as_ref()
                    .and_then(|row| row.get(i))
                    .and_then(Owned::int)
                    .unwrap_or(0)
            };
            match step {
                FetchStep::Read => {
                    let read = row.as_ref().map(|_| (int(0), int(1), int(2)));
                    fetch.read(read).map_err(fetch_error)?;
                    *stride = fetch.stride();
                }
                FetchStep::Take { .. } => {
                    let (rows, first) = (int(0).unsigned_abs(), int(1).unsigned_abs());
                    if let Some(segment) = fetch.took(rows, first).map_err(fetch_error)? {
                        return Ok(segment);
                    }
                }
            }
        }
    }

    fn give_back(
        &mut self,
        statements: &Statements,
        dialect: Dialect,
        tag: &str,
        unused: &Unused,
    ) -> Result<bool, mysql::Error> {
        give_back(self, statements, dialect, tag, unused.first, unused.end)
    }

    fn create_tag(
        &mut self,
        statements: &Statements,
        dialect: Dialect,
        tag: &str,
    ) -> Result<(), mysql::Error> {
        self.run(statements.of(dialect, 3), &[Value::Text(tag)])
            .map(drop)
    }
}

/// Creates the tag `tag` (its first number 1) on the server `url` names (`mysql://` or
/// `mariadb://`), whose database `schema` holds the segments' DDL; an existing tag is left as
/// it is. What `<schema>.create_tag(tag)` does in SQL, and Python's `create_tag` and Node's
/// `createTag`.
///
/// # Errors
/// [`SegmentError::InvalidArgument`] for a bad tag, schema or URL, [`SegmentError::NotMysql`],
/// [`SegmentError::Database`] when the server cannot be reached or refused the statement (no
/// DDL in `schema`).
pub fn create_tag(url: &str, tag: &str, schema: &str) -> Result<(), SegmentError> {
    super::driver::create_tag::<mysql::Conn>(url, tag, schema)
}

/// Gives `first..end` of `tag` back; whether the server took it.
pub(crate) fn give_back(
    conn: &mut mysql::Conn,
    statements: &Statements,
    dialect: Dialect,
    tag: &str,
    first: u64,
    end: u64,
) -> Result<bool, mysql::Error> {
    let (first, end) = (Value::Int(first), Value::Int(end));
    let row = conn.run(
        statements.of(dialect, 2),
        &[first, Value::Text(tag), end, first, first],
    )?;
    // `(affected rows, last insert ID)`: one row changed when the rest was taken back.
    Ok(row.as_deref().and_then(<[_]>::first).and_then(Owned::int) == Some(1))
}

dense_ids_methods!(
    mysql::Conn,
    "MySQL or MariaDB segments",
    "the server `url` names (`mysql://user:password@host:port/database`, or `mariadb://`)",
    "[`SegmentError::NotMysql`], [`SegmentError::Database`] when the server cannot be reached",
    connect_servers
);
