//! Business serial numbers on MySQL and MariaDB ([`crate::serial`]): the registrations' table
//! and the statements of a client, beside the segments' DDL ([`super::MysqlSegments`]) in the
//! same database, on the same rows.
//!
//! As on PostgreSQL ([`crate::sql::Segments`]' serials): a serial tag is registered once with
//! its format as the core parsed it (`SerialFormat::registration`) and its zone; a tag
//! registered with another format or zone, or a format another tag already prints (its
//! `shape`, unique), is `SERIAL_MISMATCH`. Each period takes its numbers from a tag of its own
//! (`orders@2026-11-25`; `orders` for a format that never resets), created on first use by the
//! segments' `create_tag` (so it is a ticket server's and a failover-safe row like any tag),
//! and taken from by the segments' steps ([`super::MysqlFetch`]). The period is computed by
//! the client, in the zone, with the tz database the core bundles (MySQL's own time zone
//! tables are often empty).

use alloc::format;
use alloc::string::String;
use core::fmt::{self, Display, Formatter};

use super::{Dialect, MysqlStatement};
use crate::sql::{Placeholders, SqlError, check_schema};

/// The registrations' DDL in one database; render it with [`Display`] after the segments' DDL.
#[derive(Clone, Copy, Debug)]
#[must_use]
pub struct MysqlSerials<'a> {
    schema: &'a str,
}

impl<'a> MysqlSerials<'a> {
    /// The DDL of database `schema`.
    ///
    /// # Errors
    /// [`SqlError::SchemaName`], as for [`super::Mysql::new`].
    pub fn new(schema: &'a str) -> Result<Self, SqlError> {
        check_schema(schema)?;
        Ok(Self { schema })
    }

    /// The statements a client sends, with its driver's placeholders.
    pub const fn statements(&self, placeholders: Placeholders) -> MysqlSerialStatements<'a> {
        MysqlSerialStatements {
            schema: self.schema,
            placeholders,
        }
    }
}

impl Display for MysqlSerials<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = self.schema;
        let version = env!("CARGO_PKG_VERSION");
        write!(
            f,
            "\
-- shardid {version}: serial numbers' registrations, in database {s} (after the segments' DDL).
CREATE TABLE IF NOT EXISTS {s}.shardid_serials (
    tag VARCHAR(189) NOT NULL PRIMARY KEY,
    format TEXT NOT NULL,
    zone VARCHAR(64) NOT NULL,
    canonical TEXT NOT NULL,
    shape VARCHAR(500) NOT NULL,
    pieces TEXT NOT NULL,
    width INT NOT NULL,
    resets VARCHAR(8) NOT NULL,
    max_gap INT NOT NULL DEFAULT 1,
    UNIQUE KEY shardid_serials_shape (shape)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
"
        )
    }
}

/// The statements a serial client sends; each takes its parameters in the order its method
/// says. Render with [`Display`].
#[derive(Clone, Copy, Debug)]
pub struct MysqlSerialStatements<'a> {
    schema: &'a str,
    placeholders: Placeholders,
}

impl<'a> MysqlSerialStatements<'a> {
    const fn statement(&self, text: &'static str) -> MysqlStatement<'a> {
        // No statement here names the server ({srv}): any dialect renders them alike.
        MysqlStatement::new(self.schema, self.placeholders, Dialect::Mysql, text)
    }

    /// A tag's registration; parameter `(tag)`; one row `(canonical, zone, max_gap)`, or none.
    pub const fn info(&self) -> MysqlStatement<'a> {
        self.statement("SELECT canonical, zone, max_gap FROM {s}.shardid_serials WHERE tag = ?")
    }

    /// Registers a tag unless it, or its shape, is registered; parameters `(tag, format,
    /// zone, canonical, shape, pieces, width, reset, max_gap)` (`pieces` one per line).
    pub const fn register(&self) -> MysqlStatement<'a> {
        self.statement(
            "INSERT IGNORE INTO {s}.shardid_serials \
             (tag, format, zone, canonical, shape, pieces, width, resets, max_gap) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
    }

    /// What stands in the way of a registration, after [`Self::register`]: the rows of the tag
    /// or of its shape; parameters `(tag, shape)`; rows `(tag, canonical, zone)`.
    pub const fn registered(&self) -> MysqlStatement<'a> {
        self.statement(
            "SELECT tag, canonical, zone FROM {s}.shardid_serials WHERE tag = ? OR shape = ?",
        )
    }

    /// Creates a period's tag (from 1) if its serial tag is registered; parameters `(period
    /// tag, serial tag)`; one row, whether it was created (`NULL`: the serial tag is not
    /// registered).
    pub const fn create_period(&self) -> MysqlStatement<'a> {
        self.statement(
            "SELECT IF(EXISTS (SELECT 1 FROM {s}.shardid_serials WHERE tag = ?), \
             {s}.create_tag(?), NULL)",
        )
    }
}

/// Why a registration of `tag` as `canonical` in `zone` does not fit, from the rows
/// [`MysqlSerialStatements::registered`] returned after [`MysqlSerialStatements::register`]
/// (`(tag, canonical, zone)`), or `None`: the reason of `SERIAL_MISMATCH`, the same words in
/// every client of MySQL's serials.
pub fn registration_problem<'r>(
    rows: impl IntoIterator<Item = (&'r str, &'r str, &'r str)>,
    tag: &str,
    canonical: &str,
    zone: &str,
) -> Option<String> {
    rows.into_iter()
        .find_map(|(other, registered, registered_zone)| {
            if other != tag {
                Some(format!(
                    "has the format of tag {other}, which prints the same serials"
                ))
            } else if registered != canonical || registered_zone != zone {
                Some(format!(
                    "is registered as {registered} in {registered_zone}"
                ))
            } else {
                None
            }
        })
}

#[cfg(test)]
mod tests {
    use std::string::ToString;

    use super::*;

    #[test]
    fn statements_name_the_database_and_take_the_drivers_placeholders() {
        let s = MysqlSerials::new("seg")
            .unwrap()
            .statements(Placeholders::Format);
        assert_eq!(
            s.info().to_string(),
            "SELECT canonical, zone, max_gap FROM seg.shardid_serials WHERE tag = %s"
        );
        assert!(s.create_period().to_string().contains("seg.create_tag(%s)"));
        assert!(MysqlSerials::new("seg; DROP").is_err());
        assert!(
            MysqlSerials::new("seg")
                .unwrap()
                .to_string()
                .contains("UNIQUE KEY")
        );
    }

    #[test]
    fn a_registration_fits_only_the_same_tag_format_and_zone() {
        let canonical = "ORD-{yyyy}{MM}{dd}-{seq:6}/day";
        let same = [("orders", canonical, "UTC")];
        assert_eq!(registration_problem(same, "orders", canonical, "UTC"), None);
        assert_eq!(
            registration_problem(same, "orders", canonical, "Asia/Shanghai").as_deref(),
            Some("is registered as ORD-{yyyy}{MM}{dd}-{seq:6}/day in UTC")
        );
        let other = [("orders", canonical, "UTC"), ("bills", canonical, "UTC")];
        assert_eq!(
            registration_problem(other, "orders", canonical, "UTC").as_deref(),
            Some("has the format of tag bills, which prints the same serials")
        );
    }
}
