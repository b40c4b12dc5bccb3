//! Business serial numbers on SQLite (`shardid::serial`): the registrations' table, rendered
//! with the segments' DDL ([`super::SqliteSegments`]), and the statements of registration and
//! of a period's take, as PostgreSQL's `create_serial` and `take_serial_segment` do them.
//!
//! What SQLite cannot do, and who does it instead: it has no tz database, so the zone is
//! checked by the client (the core's bundled one) and the period (`2026-11-25`, `2026-11`,
//! `2026`, or `''` for a format that never resets) comes from the client's clock in the zone,
//! as it does for PostgreSQL's clients; and it renders no serial itself (no `next_serial`,
//! `render_serial`): rows the database numbers itself take a number from the period's tag
//! ([`super::SqliteSegmentStatements::take`] of size 1) and the client renders it.
//!
//! Registering ([`SqliteSerialStatements::create`]) inserts the registration if the tag has
//! none; then [`SqliteSerialStatements::info`] says what the tag is registered with, which the
//! client compares with its own (`SERIAL_MISMATCH` when they differ). A format another tag
//! already prints (the same `shape`) fails with `UNIQUE constraint failed:
//! shardid_serials.shape`: `SERIAL_MISMATCH` too.
//!
//! Taking a segment of a period, in this order:
//! 1. the segments' take of the period's tag ([`period_tag`]): a row is the segment;
//! 2. no row: the segments' read of the period's tag: a row means exhausted
//!    ([`super::read`]);
//! 3. none: [`SqliteSerialStatements::info`]: no row is `UNKNOWN_TAG`; a period that does
//!    not fit the tag's reset ([`period_fits`]) is `INVALID_ARGUMENT`;
//! 4. else the segments' `create_tag` of the period's tag from 1 (the period's first number),
//!    and the take again.

use core::fmt::{self, Display, Formatter};

use super::SqliteStatement;
use crate::sql::{MAX_SERIAL_TAG_LEN, Placeholders};

/// The registrations' part of the segments' DDL.
pub(super) struct SerialsDdl<'a> {
    pub(super) schema: &'a str,
}

impl Display for SerialsDdl<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = self.schema;
        write!(
            f,
            "
-- Business serial numbers (ORD-20261125-000123): each tag's format and zone, registered once,
-- its pieces a JSON array ('L' and literal text, or a field); the numbers of each period are the
-- rows of the tags tag@period above. Zones are checked by the clients: SQLite has no tz database.
CREATE TABLE IF NOT EXISTS {s}.shardid_serials (
    tag TEXT NOT NULL PRIMARY KEY CONSTRAINT shardid_serial_tag
        CHECK (typeof(tag) = 'text' AND length(CAST(tag AS BLOB)) BETWEEN 1 AND {MAX_SERIAL_TAG_LEN} AND instr(tag, '@') = 0),
    format TEXT NOT NULL,
    canonical TEXT NOT NULL,
    shape TEXT NOT NULL UNIQUE,
    zone TEXT NOT NULL,
    pieces TEXT NOT NULL CONSTRAINT shardid_serial_pieces CHECK (json_valid(pieces) AND json_type(pieces) = 'array'),
    width INTEGER NOT NULL CONSTRAINT shardid_serial_width CHECK (width BETWEEN 1 AND 18),
    resets TEXT NOT NULL CONSTRAINT shardid_serial_resets CHECK (resets IN ('never', 'year', 'month', 'day')),
    max_gap INTEGER NOT NULL DEFAULT 1 CONSTRAINT shardid_serial_max_gap CHECK (max_gap >= 1),
    created_at INTEGER NOT NULL
) WITHOUT ROWID;
"
        )
    }
}

/// The statements a serial client sends besides the segments' ones; each takes its parameters
/// in the order its method says. Render with [`Display`].
#[derive(Clone, Copy, Debug)]
pub struct SqliteSerialStatements<'a> {
    pub(super) schema: &'a str,
    pub(super) placeholders: Placeholders,
}

impl<'a> SqliteSerialStatements<'a> {
    const fn statement(&self, text: &'static str) -> SqliteStatement<'a> {
        SqliteStatement::new(self.schema, self.placeholders, text)
    }

    /// Registers a serial tag whose format has `n` pieces, if it has no registration;
    /// parameters `(tag, format, zone, canonical, shape, pieces..., width, reset, max_gap)`
    /// (from `SerialFormat::registration`); one row when registered, none when it was before
    /// (then compare [`SqliteSerialStatements::info`]).
    pub const fn create(&self, n: usize) -> SqliteStatement<'a> {
        self.statement(
            "INSERT INTO {s}.shardid_serials \
             (tag, format, zone, canonical, shape, pieces, width, resets, max_gap, created_at) \
             VALUES (?, ?, ?, ?, ?, json_array([?]), ?, ?, ?, {now}) \
             ON CONFLICT (tag) DO NOTHING RETURNING tag",
        )
        .list(n)
    }

    /// What a tag is registered with; parameter `(tag)`; one row `(canonical, zone, max_gap,
    /// reset)`, or none: `UNKNOWN_TAG`.
    pub const fn info(&self) -> SqliteStatement<'a> {
        self.statement(
            "SELECT canonical, zone, max_gap, resets FROM {s}.shardid_serials WHERE tag = ?",
        )
    }
}

/// The tag holding a period's numbers, as on PostgreSQL: `tag@2026-11-25`, `tag@2026-11`,
/// `tag@2026`, or `tag` itself for the period `''`. Render it with [`Display`].
#[derive(Clone, Copy, Debug)]
pub struct PeriodTag<'a>(pub &'a str, pub &'a str);

/// The tag holding the numbers of `tag`'s `period`.
pub const fn period_tag<'a>(tag: &'a str, period: &'a str) -> PeriodTag<'a> {
    PeriodTag(tag, period)
}

impl Display for PeriodTag<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)?;
        if !self.1.is_empty() {
            f.write_str("@")?;
            f.write_str(self.1)?;
        }
        Ok(())
    }
}

/// Whether `period` is a period of a tag that resets every `reset` (`day`: `2026-11-25`,
/// `month`: `2026-11`, `year`: `2026`, `never`: `''`).
pub fn period_fits(reset: &str, period: &str) -> bool {
    let shape: &[u8] = match reset {
        "day" => b"dddd-dd-dd",
        "month" => b"dddd-dd",
        "year" => b"dddd",
        "never" => b"",
        _ => return false,
    };
    period.len() == shape.len()
        && period.bytes().zip(shape).all(|(c, s)| match s {
            b'd' => c.is_ascii_digit(),
            s => c == *s,
        })
}
