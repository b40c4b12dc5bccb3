//! SQL that shardid renders, so that every language sends the same statements: the DDL that
//! makes and reads IDs inside PostgreSQL ([`Postgres`], [`PostgresUninstall`]) and the
//! statements and steps of a shard lease kept in a table ([`LeaseProtocol`]), and the
//! DDL and statements of dense IDs from segments ([`Segments`], with business serial numbers'
//! [`SerialStatements`]) and of the string ↔ ID dictionary ([`Dictionary`]); the same for MySQL 8 and MariaDB in [`mysql`] ([`Mysql`],
//! [`MysqlSegments`], [`MysqlDictionary`]); SQLite's tables and plain statements in [`sqlite`]
//! (not yet a [`Dialect`]: see there).
//!
//! Rendering writes into any [`core::fmt::Write`]: `format!("{}", ddl)` or `write!(out, "{ddl}")`.
//! Names that go into SQL unquoted (schemas, tables) are checked first: plain lower-case
//! identifiers only, so no name can inject SQL.

use core::fmt::{self, Display, Formatter, Write as _};

use crate::Error;

mod dictionary;
pub mod failover;
mod lease;
pub mod mysql;
pub(crate) mod postgres;
mod public_ids;
mod segments;
mod serials;
pub mod sqlite;
#[cfg(feature = "std")]
pub mod status;
mod uninstall;
mod url;

pub use dictionary::{
    Dictionary, DictionaryStatements, DictionaryUninstall, TOPIC_DROPPED, UNKNOWN_TOPIC,
};
pub use lease::{
    Answer, Cell, DEFAULT_TTL_MS, EmptyShards, GALERA_SESSION, LOST_CREATE_RACE, LeaseKind,
    LeaseSignature, MAX_RESENDS, MAX_TTL_MS, MIN_TTL_MS, SQLITE_SESSION, Tenure, TtlError, Value,
    check_table,
};
#[cfg(feature = "alloc")]
pub use lease::{LeaseProtocol, Next};
pub use mysql::{Dialect, Mysql, MysqlDictionary, MysqlSegments};
pub use postgres::Postgres;
pub use public_ids::{PostgresPublicIds, PostgresPublicIdsUninstall};
pub use segments::{
    DEFAULT_SEGMENT, MAX_SEGMENT, MAX_TAG_LEN, SegmentStatements, Segments, SegmentsUninstall,
    TAG_EXHAUSTED, UNKNOWN_TAG,
};
pub use serials::{
    INVALID_SERIAL_FORMAT, MAX_SERIAL_TAG_LEN, SERIAL_MISMATCH, SERIAL_OVERFLOW, SerialStatements,
    UNKNOWN_TIME_ZONE,
};
pub use uninstall::PostgresUninstall;
pub(crate) use url::decoded;
pub use url::{NotADatabaseUrl, NotASqliteUrl, URL_SCHEMES, redacted, sqlite_path, url_shown};
pub use url::{SQLALCHEMY_DRIVERS, url_driver, without_driver};

/// The longest schema name accepted: PostgreSQL truncates identifiers beyond 63 bytes without a
/// word, and 40 leaves room for names derived from the schema.
pub const MAX_SCHEMA_LEN: usize = 40;

/// Why [`Postgres::new`] refused its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SqlError {
    /// The shard does not fit the layout ([`Error::ShardOutOfRange`]), or the layout cannot be
    /// kept in a PostgreSQL `bigint` ([`Error::InvalidLayout`]).
    Core(Error),
    /// The schema name is not a plain lower-case SQL identifier.
    SchemaName {
        /// Which rule the name broke.
        reason: &'static str,
    },
    /// The table name is not a plain lower-case SQL identifier (same rules as a schema's).
    TableName {
        /// Which rule the name broke.
        reason: &'static str,
    },
    /// A lease was asked for an empty range of shards (`first >= end`); an `INVALID_ARGUMENT`
    /// on `shards`, whose reason is [`lease::EmptyShards`].
    EmptyShards {
        /// The first shard of the range.
        first: u64,
        /// One past its last shard.
        end: u64,
    },
}

impl Display for SqlError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Self::Core(error) => error.fmt(f),
            Self::SchemaName { reason } => write!(f, "invalid schema name: {reason}"),
            Self::TableName { reason } => write!(f, "invalid table name: {reason}"),
            Self::EmptyShards { first, end } => {
                write!(
                    f,
                    "shards {}",
                    EmptyShards {
                        first: *first,
                        end: *end
                    }
                )
            }
        }
    }
}

impl core::error::Error for SqlError {}

impl From<Error> for SqlError {
    fn from(error: Error) -> Self {
        Self::Core(error)
    }
}

/// How a driver writes the parameters of a query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placeholders {
    /// `$1`, `$2`, …: libpq's own, node-postgres, asyncpg.
    Numbered,
    /// `%s` each: psycopg, the Python DB-API's `format` style (PyMySQL too).
    Format,
    /// `?` each: mysql2, the `mysql` crate, JDBC.
    Question,
}

/// One statement calling a function of a schema, rendered with the driver's placeholders
/// ([`Display`]): the statements of [`SegmentStatements`] and [`DictionaryStatements`].
#[derive(Clone, Copy, Debug)]
pub struct SchemaStatement<'a> {
    schema: &'a str,
    placeholders: Placeholders,
    /// The text before the schema, then after it, `?` for each parameter.
    text: (&'static str, &'static str),
}

impl<'a> SchemaStatement<'a> {
    const fn new(
        schema: &'a str,
        placeholders: Placeholders,
        text: (&'static str, &'static str),
    ) -> Self {
        Self {
            schema,
            placeholders,
            text,
        }
    }
}

impl Display for SchemaStatement<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(self.text.0)?;
        f.write_str(self.schema)?;
        let mut n = 0;
        for (i, piece) in self.text.1.split('?').enumerate() {
            if i > 0 {
                n += 1;
                match self.placeholders {
                    Placeholders::Numbered => write!(f, "${n}")?,
                    Placeholders::Format => f.write_str("%s")?,
                    Placeholders::Question => f.write_str("?")?,
                }
            }
            f.write_str(piece)?;
        }
        Ok(())
    }
}

/// Text as a PostgreSQL string literal, whatever `standard_conforming_strings` says: quotes
/// doubled, and written `E'...'` with backslashes doubled when it holds one.
#[derive(Clone, Copy, Debug)]
pub struct Literal<'a>(pub &'a str);

impl Display for Literal<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let escape = self.0.contains('\\');
        f.write_str(if escape { "E'" } else { "'" })?;
        for c in self.0.chars() {
            match c {
                '\'' => f.write_str("''")?,
                '\\' => f.write_str("\\\\")?,
                c => f.write_char(c)?,
            }
        }
        f.write_str("'")
    }
}

fn check_schema(schema: &str) -> Result<(), SqlError> {
    identifier_problem(schema).map_or(Ok(()), |reason| Err(SqlError::SchemaName { reason }))
}

/// The layout's defining numbers, which the ID functions of PostgreSQL (on the even counter)
/// and MySQL (in `shardid_counter`) record: a database holds one layout.
struct Signature<'a>(&'a crate::Layout);

impl Display for Signature<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let l = self.0;
        let order = match l.order() {
            crate::FieldOrder::TimeShardSequence => "time|shard|sequence",
            crate::FieldOrder::TimeSequenceShard => "time|sequence|shard",
        };
        write!(
            f,
            "epoch {} ms, unit {} ms, {} time / {} shard / {} sequence bits, {order}",
            l.epoch_ms(),
            l.unit_ms(),
            l.time_bits(),
            l.shard_bits(),
            l.sequence_bits(),
        )
    }
}

/// What the ID functions of PostgreSQL and MySQL start from: `shard` must fit `layout`,
/// `schema` be a plain name, and `layout`, made signed (a `bigint` holds the IDs), end before
/// millisecond 2^63 (`too_late` says so otherwise, in the database's words). The signed layout.
fn signed_layout(
    layout: crate::Layout,
    shard: u64,
    schema: &str,
    too_late: &'static str,
) -> Result<crate::Layout, SqlError> {
    if shard > layout.max_shard() {
        return Err(Error::ShardOutOfRange {
            shard,
            max: layout.max_shard(),
        }
        .into());
    }
    check_schema(schema)?;
    let layout = crate::Layout::builder()
        .epoch_ms(layout.epoch_ms())
        .unit_ms(layout.unit_ms())
        .bits(
            layout.time_bits(),
            layout.shard_bits(),
            layout.sequence_bits(),
        )
        .order(layout.order())
        .signed(true)
        .build()?;
    if layout.expires_at_ms() > i64::MAX as u64 {
        return Err(Error::InvalidLayout { reason: too_late }.into());
    }
    Ok(layout)
}

/// Why `name` is not a plain lower-case identifier of at most [`MAX_SCHEMA_LEN`] bytes that
/// can go into SQL unquoted, if it is not.
fn identifier_problem(name: &str) -> Option<&'static str> {
    let bytes = name.as_bytes();
    match bytes.first() {
        None => Some("it is empty"),
        Some(_) if bytes.len() > MAX_SCHEMA_LEN => Some("it is longer than 40 bytes"),
        Some(b'0'..=b'9') => Some("it starts with a digit"),
        Some(_) if name.starts_with("pg_") => Some("names starting with pg_ are reserved"),
        Some(_)
            if !bytes
                .iter()
                .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_')) =>
        {
            Some("only a-z, 0-9 and _ are allowed")
        }
        Some(_) => None,
    }
}
