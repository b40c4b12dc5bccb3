//! The Rust client of dense IDs from segments, over the `postgres` crate (feature `postgres`):
//! [`DenseIds`] runs the core's [`super::SegmentAllocator`] with fetches on a thread of their
//! own, as the Python (psycopg) and Node (pg) clients do. The driver is shared with
//! [`super::mysql`], and runs the core's [`SegmentProtocol`]: on PostgreSQL one fetch is one
//! statement, `take_segment`, sent with `query_typed` (one round trip on the unnamed
//! statement), so it works through a transaction pooler.
//!
//! ```no_run
//! use shardid::segment::postgres::DenseIds;
//! use shardid::segment::SizePolicy;
//!
//! let orders = DenseIds::connect("host=127.0.0.1 user=app dbname=app", "orders", "seg", SizePolicy::new())?;
//! let id = orders.next_id()?;
//! orders.close();
//! # Ok::<(), shardid::segment::postgres::SegmentError>(())
//! ```

use std::string::{String, ToString};

use super::SizePolicy;
pub use super::driver::SegmentError;
use super::driver::{Driver, SegmentClient, dense_ids_methods};
use super::protocol::SegmentProtocol;
use crate::driver::Client;
use crate::sql::{Dialect, Segments, Value};

/// The protocol of one schema's takes and give-backs, and the creation of a tag.
pub(crate) struct Statements {
    protocol: SegmentProtocol,
    create_tag: String,
}

impl SegmentClient for postgres::Client {
    type Statements = Statements;

    fn statements(schema: &str) -> Result<Statements, String> {
        let s = Segments::new(schema)
            .map_err(|e| e.to_string())?
            .statements(Self::PLACEHOLDERS);
        let protocol = SegmentProtocol::new(Dialect::Postgres, schema, Self::PLACEHOLDERS, 1)
            .map_err(|e| e.to_string())?;
        Ok(Statements {
            protocol,
            create_tag: s.create_tag().to_string(),
        })
    }

    fn protocol(s: &Statements, servers: usize) -> Option<SegmentProtocol> {
        Some(s.protocol.over(servers))
    }

    fn create_tag(
        &mut self,
        statements: &Statements,
        _: Dialect,
        tag: &str,
    ) -> Result<(), postgres::Error> {
        self.run(&statements.create_tag, &[Value::Text(tag), Value::Int(1)])
            .map(drop)
    }
}

/// Creates the tag `tag` (its first number 1) on the server `config` names (a libpq-style
/// connection string or a `postgresql://` URL), whose `schema` holds the segments' DDL; an
/// existing tag is left as it is. What `<schema>.create_tag(tag)` does in SQL, and Python's
/// `create_tag` and Node's `createTag`.
///
/// # Errors
/// [`SegmentError::InvalidArgument`] for a bad tag, schema or URL, [`SegmentError::Database`]
/// when the server cannot be reached or refused the statement (no DDL in `schema`).
pub fn create_tag(config: &str, tag: &str, schema: &str) -> Result<(), SegmentError> {
    super::driver::create_tag::<postgres::Client>(config, tag, schema)
}

dense_ids_methods!(
    postgres::Client,
    "PostgreSQL segments",
    "the server `url` names (a libpq connection string or a `postgresql://` URL)",
    "[`SegmentError::Database`] when the server cannot be reached",
    connect_servers
);
