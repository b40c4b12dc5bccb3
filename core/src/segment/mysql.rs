//! The Rust client of dense IDs from segments on MySQL 8 and MariaDB, over the `mysql` crate
//! (feature `mysql`): [`DenseIds`] runs the core's [`super::SegmentAllocator`] with fetches on
//! a thread of their own, as the Python (PyMySQL) and Node (mysql2) clients do. The driver is
//! shared with [`super::postgres`], and runs the core's [`SegmentProtocol`]: on the MySQL
//! family each fetch is the steps of [`crate::sql::mysql::MysqlFetch`] (one `UPDATE` once the
//! stride is known), in the server's dialect.
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

use super::SizePolicy;
pub use super::driver::SegmentError;
use super::driver::{Driver, SegmentClient, dense_ids_methods};
use super::protocol::SegmentProtocol;
use crate::driver::Client;
use crate::sql::{Dialect, MysqlSegments, Value};

/// The protocol of one schema's takes and give-backs (for MySQL and for MariaDB: the server
/// names itself in the rows it writes, [`Dialect::server_identity`]), and the creation of a
/// tag in each dialect.
pub(crate) struct Statements {
    protocol: SegmentProtocol,
    create_tag: [String; 2],
}

impl SegmentClient for mysql::Conn {
    type Statements = Statements;

    fn statements(schema: &str) -> Result<Statements, String> {
        let ddl = MysqlSegments::new(schema).map_err(|e| e.to_string())?;
        let protocol = SegmentProtocol::new(Dialect::Mysql, schema, Self::PLACEHOLDERS, 1)
            .map_err(|e| e.to_string())?;
        Ok(Statements {
            protocol,
            create_tag: [Dialect::Mysql, Dialect::Mariadb].map(|dialect| {
                let s = ddl.dialect(dialect).statements(Self::PLACEHOLDERS);
                s.create_tag().to_string()
            }),
        })
    }

    /// The protocol's fetch is [`crate::sql::mysql::MysqlFetch`]'s steps (one `UPDATE` once
    /// the stride is known), a step the server rolled back whole sent again.
    fn protocol(s: &Statements, servers: usize) -> Option<SegmentProtocol> {
        Some(s.protocol.over(servers))
    }

    fn create_tag(
        &mut self,
        statements: &Statements,
        dialect: Dialect,
        tag: &str,
    ) -> Result<(), mysql::Error> {
        let create = &statements.create_tag[usize::from(dialect == Dialect::Mariadb)];
        self.run(create, &[Value::Text(tag)]).map(drop)
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

/// Gives `first..end` of `tag` back by the protocol; whether the server took it (serial
/// periods' rests go back so).
#[cfg(feature = "serial")]
pub(crate) fn give_back(
    conn: &mut mysql::Conn,
    statements: &Statements,
    dialect: Dialect,
    tag: &str,
    first: u64,
    end: u64,
) -> Result<bool, mysql::Error> {
    super::driver::give_back_on(conn, statements, dialect, tag, first, end)
}

dense_ids_methods!(
    mysql::Conn,
    "MySQL or MariaDB segments",
    "the server `url` names (`mysql://user:password@host:port/database`, or `mariadb://`)",
    "[`SegmentError::NotMysql`], [`SegmentError::Database`] when the server cannot be reached",
    connect_servers
);
