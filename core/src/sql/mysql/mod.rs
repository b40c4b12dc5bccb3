//! The MySQL family's SQL (MySQL 8, MariaDB 10.6 and later; TiDB for the clients' statements):
//! the DDL of `<database>.next_id()` ([`Mysql`]), of dense IDs from segments
//! ([`MysqlSegments`]) and of the string ↔ ID dictionary ([`MysqlDictionary`]), and the plain
//! statements the clients send.
//!
//! What differs from PostgreSQL, and why:
//! - A *schema* is a database: `--schema seg` creates database `seg`, and the functions are
//!   called the same way (`SELECT seg.create_tag('orders')`).
//! - The clients send plain `SELECT`/`INSERT`/`UPDATE` statements, never a stored routine:
//!   they then work where routines do not (TiDB), and a segment is one `UPDATE` whose new
//!   value comes back in the reply (`LAST_INSERT_ID(expr)`: PyMySQL's `lastrowid`, mysql2's
//!   `insertId`), as MySQL has no `UPDATE ... RETURNING`. The stored functions are for SQL
//!   users (a column filled by a trigger, a tag created by hand).
//! - Scripts hold stored routines, so they are written for the `mysql`/`mariadb` command line
//!   (`DELIMITER $$`); a driver sends the statements [`script_statements`] splits out.
//! - Strings are `VARBINARY`: compared byte by byte, as PostgreSQL's `COLLATE "C"`. A `VARCHAR`
//!   of MySQL's usual collations would make `'a'`, `'A'` and `'a '` one key.

use core::fmt::{self, Display, Formatter};

use super::{Placeholders, Signature, SqlError, signed_layout};
use crate::{Error, Layout, Options};

/// The server's clock in Unix milliseconds, as a literal for the statements' `concat!`s:
/// [`super::failover::MYSQL_NOW_MS`] (a test checks they agree).
macro_rules! now {
    () => {
        "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)"
    };
}

#[cfg(feature = "mysql")]
pub mod connect;
mod dictionary;
mod next_id;
mod segments;
mod serials;
mod url;

pub use dictionary::{
    ASSIGN_ATTEMPTS, MAX_PREPARED_LIST, MysqlDictionary, MysqlDictionaryStatements, assign_again,
    assign_new, topic_base,
};
pub use segments::{
    FetchError, FetchStep, MysqlFetch, MysqlSegmentStatements, MysqlSegments, ROLLED_BACK_RETRIES,
};
pub use serials::{MysqlSerialStatements, MysqlSerials, registration_problem};
pub use url::{MysqlUrl, UrlProblem};

/// The SQL dialects the core renders.
///
/// MySQL and MariaDB share one SQL (what MySQL 8 and MariaDB 10.6 both accept); they differ in
/// one expression only, how the server names itself in the rows shardid writes
/// ([`Dialect::server_identity`]), which tells a row written before a failover: MariaDB's knows
/// Galera clusters, whose nodes are one server for this purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// PostgreSQL 12 or later.
    Postgres,
    /// MySQL 8 (and MariaDB without Galera's variables).
    Mysql,
    /// MariaDB 10.6 or later, Galera clusters included.
    Mariadb,
    /// SQLite 3.35 or later (`RETURNING`): one file, no server.
    Sqlite,
}

impl Dialect {
    /// The dialect of a name: `postgres` (or `postgresql`), `mysql`, `mariadb` or `sqlite`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "postgres" | "postgresql" => Some(Self::Postgres),
            "mysql" => Some(Self::Mysql),
            "mariadb" => Some(Self::Mariadb),
            "sqlite" => Some(Self::Sqlite),
            _ => None,
        }
    }

    /// The names, for a usage message.
    pub const NAMES: &'static str = "postgres, mysql, mariadb, sqlite";

    /// Whether this is MySQL or MariaDB.
    pub const fn is_mysql(self) -> bool {
        matches!(self, Self::Mysql | Self::Mariadb)
    }

    /// The SQL expression naming the server a statement runs on, as the rows shardid writes on
    /// the MySQL family record it ([`crate::sql::failover`]): `server <server_id>`, which a
    /// replication topology must keep distinct (a replica refuses a source with its own), so a
    /// promoted replica writes another name than its old source did; on a Galera cluster
    /// (MariaDB, `wsrep_on`), `galera <wsrep_cluster_name>`, the same on every node: a row
    /// written on another node of the cluster was certified by all of them, which is no
    /// failover. `None` for PostgreSQL, whose rows record the timeline, and for SQLite, which
    /// has no server and no replica to promote.
    pub const fn server_identity(self) -> Option<&'static str> {
        match self {
            Self::Postgres | Self::Sqlite => None,
            Self::Mysql => Some(super::failover::MYSQL_SERVER),
            Self::Mariadb => Some(super::failover::MARIADB_SERVER),
        }
    }
}

/// Whether the MySQL error `code` says the server rolled the statement, or the transaction,
/// back whole, so that sending it again is safe: `ER_LOCK_DEADLOCK` (1213; on a Galera
/// cluster also a certification conflict, two nodes changing one row at the same moment) and
/// `ER_LOCK_WAIT_TIMEOUT` (1205). The one rule of every client of the MySQL family, in every
/// language: a segment's take ([`MysqlFetch::rolled_back`]), the dictionary's transaction
/// ([`assign_again`]), a lease's statements (`LeaseProtocol`).
pub const fn rolled_back(code: u16) -> bool {
    matches!(code, 1213 | 1205)
}

/// The MySQL error number of an unknown system variable: what MySQL answers a statement
/// rendered for MariaDB (`@@wsrep_on`); render it for [`Dialect::Mysql`] instead.
pub const UNKNOWN_VARIABLE: &str = "1193";

/// What a client sends on a new connection to learn the dialect of its server (one round
/// trip per connection): MariaDB answers a row, MySQL refuses with [`UNKNOWN_VARIABLE`]
/// ([`Dialect::detected`]).
pub const DETECT_DIALECT: &str = "SELECT @@global.wsrep_on";

impl Dialect {
    /// The dialect of a server by its answer to [`DETECT_DIALECT`]: the error number it
    /// failed with (`None`: it answered). `None` for any other error, which the driver raises.
    pub fn detected(error: Option<&str>) -> Option<Self> {
        match error {
            None => Some(Self::Mariadb),
            Some(UNKNOWN_VARIABLE) => Some(Self::Mysql),
            Some(_) => None,
        }
    }
}

/// The statements of a MySQL script (the DDL the types of this module render): the text
/// between its `$$` delimiters, without the `DELIMITER` lines and comments-only pieces, for a
/// driver to send one at a time.
pub fn script_statements(script: &str) -> impl Iterator<Item = &str> {
    let body = script
        .split_once("DELIMITER $$\n")
        .map_or(script, |(_, body)| body);
    let body = body
        .rsplit_once("DELIMITER ;")
        .map_or(body, |(body, _)| body);
    body.split("$$\n").map(str::trim).filter(|statement| {
        statement.lines().any(|line| {
            let line = line.trim();
            !line.is_empty() && !line.starts_with("--")
        })
    })
}

/// The DDL of `<database>.next_id()` for one layout and shard on MySQL 8 or MariaDB; render it
/// with [`Display`].
///
/// It creates, in database `schema` (idempotently: re-running it replaces the functions and
/// keeps the counter):
/// - `shardid_counter`, one row holding the layout and the last counter value
///   (`unit << sequence_bits | sequence`);
/// - `next_id()`: unique for the shard however many sessions call it, increasing, never outside
///   the layout (errors `TIMESTAMP_BEFORE_EPOCH`, `TIMESTAMP_PAST_EXPIRY`,
///   `CLOCK_MOVED_BACKWARDS`, SQLSTATEs as on PostgreSQL);
/// - decoding, `DETERMINISTIC`: `shardid_timestamp_ms(id)`, `shardid_shard(id)`,
///   `shardid_sequence(id)`, `shardid_min_id_at_ms(ms)`, `shardid_max_id_at_ms(ms)`.
///
/// How it stays unique: every call takes the next value of one counter row, moved up to the
/// clock's unit when it lags (`UPDATE ... SET last = LAST_INSERT_ID(GREATEST(last + 1, unit <<
/// sequence_bits))`). A value is never handed out twice whatever the clocks
/// of the sessions read; the time only decides whether the value may be used now, or after a
/// wait (a unit whose IDs ran out carries into the next, which is waited for as the core's
/// generator waits), or not at all (`CLOCK_MOVED_BACKWARDS`: the value is skipped).
///
/// The row's lock is held until the calling transaction ends, so sessions that insert in long
/// transactions queue on it. A MariaDB `SEQUENCE` would not hold it, but a sequence cannot be
/// moved up to the clock inside a function (`SETVAL` takes only literals there, and dynamic
/// SQL is refused in functions), so a unit's IDs could not be told from the last one's.
///
/// MySQL cannot use a stored function as a column `DEFAULT` (MariaDB refuses one that calls
/// `NEXTVAL`, error 1901): a `BEFORE INSERT` trigger fills the column (see the README).
#[derive(Clone, Copy, Debug)]
#[must_use]
pub struct Mysql<'a> {
    /// The layout as the database can hold it: signed.
    layout: Layout,
    shard: u64,
    schema: &'a str,
    options: Options,
    dialect: Dialect,
    /// The UUIDv7 bridge's marker of the layout as given (as PostgreSQL's DDL keeps it).
    uuid_marker: u16,
}

impl<'a> Mysql<'a> {
    /// Checks the arguments; the generator options are the core's defaults.
    ///
    /// # Errors
    /// As [`super::Postgres::new`]: the shard must fit the layout, the layout a signed
    /// `BIGINT`, and `schema` (the database) be a plain lower-case identifier.
    pub fn new(layout: Layout, shard: u64, schema: &'a str) -> Result<Self, SqlError> {
        let uuid_marker = crate::uuid::marker(&layout);
        let layout = signed_layout(
            layout,
            shard,
            schema,
            "MySQL needs the layout's last millisecond to fit a BIGINT",
        )?;
        if u32::from(layout.time_bits()) + u32::from(layout.sequence_bits()) > 62 {
            return Err(Error::InvalidLayout {
                reason: "MySQL needs the time and sequence bits to leave a spare bit in a BIGINT",
            }
            .into());
        }
        Ok(Self {
            layout,
            shard,
            schema,
            options: Options::new(),
            dialect: Dialect::Mysql,
            uuid_marker,
        })
    }

    /// The DDL for the server `dialect` names ([`Dialect::Mysql`] by default, which MariaDB
    /// runs too; [`Dialect::Mariadb`] names a Galera cluster as one server).
    pub const fn dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }

    /// Sets how `next_id()` treats a clock that moved back and a time unit that ran out, as
    /// [`Options`] does for the core's generator.
    pub const fn options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }
}

/// One statement a MySQL client sends, rendered with its driver's placeholders
/// ([`Display`]): `?` is a parameter, `[...]` a group repeated `list` times (`IN ([?])` for a
/// list of `list` values, `VALUES [(?, ?, ?)]` for `list` rows), `{s}` the database, `{srv}`
/// the server's name in the rows it writes ([`Dialect::server_identity`]), `{tags_origin}` and
/// `{topics_origin}` the origin of a table's data ([`super::failover::MysqlOrigin`]).
#[derive(Clone, Copy, Debug)]
pub struct MysqlStatement<'a> {
    schema: &'a str,
    placeholders: Placeholders,
    dialect: Dialect,
    text: &'static str,
    list: usize,
}

impl<'a> MysqlStatement<'a> {
    const fn new(
        schema: &'a str,
        placeholders: Placeholders,
        dialect: Dialect,
        text: &'static str,
    ) -> Self {
        Self {
            schema,
            placeholders,
            dialect,
            text,
            list: 0,
        }
    }

    const fn list(mut self, list: usize) -> Self {
        self.list = list;
        self
    }

    fn write_plain(&self, f: &mut Formatter<'_>, text: &str) -> fmt::Result {
        let server = self
            .dialect
            .server_identity()
            .unwrap_or(super::failover::MYSQL_SERVER);
        for (i, piece) in text.split("{s}").enumerate() {
            if i > 0 {
                f.write_str(self.schema)?;
            }
            for (j, part) in piece.split('?').enumerate() {
                if j > 0 {
                    match self.placeholders {
                        // One at a time: %s (PyMySQL) or ? (mysql2, the `mysql` crate); a
                        // numbered style has no MySQL driver, and writes `?` too.
                        Placeholders::Format => f.write_str("%s")?,
                        Placeholders::Question | Placeholders::Numbered => f.write_str("?")?,
                    }
                }
                for (k, bit) in part.split("{srv}").enumerate() {
                    if k > 0 {
                        f.write_str(server)?;
                    }
                    self.write_origins(f, bit)?;
                }
            }
        }
        Ok(())
    }
}

impl MysqlStatement<'_> {
    /// `text` with `{tags_origin}` and `{topics_origin}` written out: the origin of the data of
    /// the tags' or the topics' table ([`super::failover::MysqlOrigin`]).
    fn write_origins(&self, f: &mut Formatter<'_>, mut text: &str) -> fmt::Result {
        const NAMES: [(&str, &str); 2] = [
            ("{tags_origin}", "shardid_tags"),
            ("{topics_origin}", "shardid_topics"),
        ];
        while let Some((at, name, table)) = NAMES
            .iter()
            .filter_map(|&(name, table)| text.find(name).map(|at| (at, name, table)))
            .min_by_key(|&(at, _, _)| at)
        {
            f.write_str(&text[..at])?;
            super::failover::MysqlOrigin {
                schema: Some(self.schema),
                table,
                galera: self.dialect == Dialect::Mariadb,
            }
            .fmt(f)?;
            text = &text[at + name.len()..];
        }
        f.write_str(text)
    }
}

impl Display for MysqlStatement<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut rest = self.text;
        while let Some(open) = rest.find('[') {
            self.write_plain(f, &rest[..open])?;
            let after = &rest[open + 1..];
            let close = after.find(']').unwrap_or(after.len());
            for i in 0..self.list {
                if i > 0 {
                    f.write_str(", ")?;
                }
                self.write_plain(f, &after[..close])?;
            }
            rest = after.get(close + 1..).unwrap_or("");
        }
        self.write_plain(f, rest)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_statements_clock_is_failovers() {
        assert_eq!(now!(), super::super::failover::MYSQL_NOW_MS);
    }
}
