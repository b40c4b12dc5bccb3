//! The Rust client of dense IDs from segments, over the `postgres` crate (feature `postgres`):
//! [`DenseIds`] runs the core's [`super::SegmentAllocator`] with fetches on a thread of their
//! own, as the Python (psycopg) and Node (pg) clients do. The driver is shared with
//! [`super::mysql`]; what is PostgreSQL's is here: one fetch is one statement,
//! `take_segment`, sent with `query_typed` (one round trip on the unnamed statement), so it
//! works through a transaction pooler.
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

use std::format;
use std::string::{String, ToString};

pub use super::driver::SegmentError;
use super::driver::{Driver, Failed, SegmentClient, dense_ids};
use super::{Segment, SizePolicy, Unused};
use crate::driver::Client;
use crate::sql::{Dialect, Segments, Value};

/// The take and the give-back of one schema.
pub(crate) struct Statements {
    take: String,
    give_back: String,
}

impl SegmentClient for postgres::Client {
    type Statements = Statements;

    fn statements(schema: &str) -> Result<Statements, String> {
        let s = Segments::new(schema)
            .map_err(|e| e.to_string())?
            .statements(Self::PLACEHOLDERS);
        Ok(Statements {
            take: s.take().to_string(),
            give_back: s.give_back().to_string(),
        })
    }

    fn take(
        &mut self,
        statements: &Statements,
        _: Dialect,
        tag: &str,
        size: u64,
        _: &mut Option<u64>,
    ) -> Result<Segment, Failed<postgres::Error>> {
        let row = self
            .run(&statements.take, &[Value::Text(tag), Value::Int(size)])
            .map_err(Failed::Driver)?;
        match row.as_deref().map(|row| {
            let mut ints = row.iter().map(crate::driver::Owned::int);
            (
                ints.next().flatten(),
                ints.next().flatten(),
                ints.next().flatten(),
            )
        }) {
            Some((Some(first), Some(count), Some(stride))) => Ok(Segment {
                first: first.unsigned_abs(),
                count: count.unsigned_abs(),
                stride: stride.unsigned_abs(),
            }),
            other => Err(Failed::Unusable(format!(
                "take_segment answered {other:?}, not (first, count, stride)"
            ))),
        }
    }

    fn give_back(
        &mut self,
        statements: &Statements,
        _: Dialect,
        tag: &str,
        unused: &Unused,
    ) -> Result<bool, postgres::Error> {
        let row = self.run(
            &statements.give_back,
            &[
                Value::Text(tag),
                Value::Int(unused.first),
                Value::Int(unused.end),
            ],
        )?;
        Ok(row
            .as_deref()
            .and_then(<[_]>::first)
            .and_then(crate::driver::Owned::bool)
            .unwrap_or(false))
    }
}

dense_ids! {
    /// Dense IDs of one tag from PostgreSQL segments: see the [module](self) docs. `Sync`: share
    /// it (in an `Arc`) between threads.
    over postgres::Client;
    /// Connects to the server (`url`: a libpq-style connection string) whose `schema` holds
    /// the segments' DDL, and takes the first segment of `tag`.
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] for a bad tag or schema name or a URL no PostgreSQL
    /// client takes, [`SegmentError::UnknownTag`], [`SegmentError::Database`] when the server
    /// cannot be reached, [`SegmentError::Unavailable`] when the first segment does not arrive.
    connect, connect_servers;
}
