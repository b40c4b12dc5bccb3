//! Dense IDs from segments on MySQL and MariaDB ([`crate::segment`]): the table, the stored
//! functions for SQL users, and the plain statements and steps of a client's fetch.
//!
//! A client's fetch ([`MysqlFetch`]) is one statement once the client knows the tag's stride:
//!
//! ```sql
//! UPDATE seg.shardid_tags SET step = ?, next = CAST(LAST_INSERT_ID(next) AS SIGNED) + stride * ?, ...
//!     WHERE tag = ?
//! ```
//!
//! `LAST_INSERT_ID(next)` records the row's old `next` (the segment's first ID) while the row
//! moves on by `size` IDs (in signed arithmetic: passing 2^63 - 1 is an error, error 1690,
//! whatever the `sql_mode`; unsigned, as `LAST_INSERT_ID()` is, a non-strict mode clamps the
//! column at 2^63 - 1 and every later take hands out that number again); the driver reads it from the reply (PyMySQL `cursor.lastrowid`,
//! mysql2 `insertId`, the `mysql` crate's `last_insert_id()`), with no second round trip, and
//! the row lock orders concurrent takes under any isolation level. A tag that does not exist
//! updates no row and leaves `LAST_INSERT_ID()` at a stale value: the row count says so
//! ([`MysqlFetch::took`]). The first fetch of a client (size 0: the size the row remembers)
//! reads the row first, for the remembered size and the stride.
//!
//! For SQL users: `<db>.create_tag(tag)` (from 1) and `<db>.create_tag_from(tag, first)` (MySQL
//! has no default arguments), returning whether the tag was created; `<db>.next_dense_id(tag)`
//! for rows the database numbers itself (a trigger), from the same numbers. Errors carry the
//! same SQLSTATEs as on PostgreSQL (`SI001` unknown tag, `SI002` exhausted, `22023` bad
//! argument).
//!
//! Across a failover or a restore ([`crate::sql::failover`]): each row records the server that
//! last wrote it, the origin of its table's data ([`MysqlOrigin`]), when it was last written
//! and the highest rate its numbers were handed out at; the first write of a row that stepped
//! back (another server: a promoted replica, which may lack the last takes; another origin: a
//! `mysqldump` restored into another server; or marked `restored` by an operator) first moves
//! the tag past what that rate could have handed out since, with [`MARGIN`] and [`SKEW_MS`],
//! plus [`FLOOR_BATCHES`] segments of twice its last size, as on PostgreSQL (a row written
//! before rates were recorded: [`LOST_WRITES`] segments of twice its last size). For the floor
//! to hold, a tag's segments may grow (beyond its last size, to at most twice it) only once the
//! tag moved on by [`LOST_WRITES`] segments since they last grew (`grown_at`): so no lost take
//! was larger than twice the size the row records. (PostgreSQL measures that in WAL; MySQL has
//! no position a statement can read.) A take asking more is refused (no row updated): the
//! client reads the row, which says the largest size it allows now, and takes again, at most
//! that. A busy tag thus grows by one doubling per [`LOST_WRITES`] takes, taking more, smaller
//! segments meanwhile (one short `UPDATE` each).

use alloc::string::ToString as _;
use core::fmt::{self, Display, Formatter};

use super::{Dialect, MysqlStatement};
use crate::segment::Segment;
use crate::sql::failover::{
    FLOOR_BATCHES, LOST_WRITES, MARGIN, MYSQL_NOW_MS, MysqlOrigin, RATE_WINDOW_MS, SKEW_MS,
    ZONE_AHEAD_MS,
};
use crate::sql::{
    DEFAULT_SEGMENT, MAX_SEGMENT, MAX_TAG_LEN, Placeholders, SqlError, TAG_EXHAUSTED, UNKNOWN_TAG,
    check_schema,
};

// The fragments of the statements below, as literals (the statements are `&'static str`s);
// their numbers are the constants of `crate::sql::failover` (checked below and by a test).

/// Whether the row may be behind what was handed out: another server wrote it last (a promoted
/// replica), its table's data has another origin (a dump restored into another server), or an
/// operator marked it restored. Never NULL.
macro_rules! back {
    () => {
        "COALESCE(server IS NOT NULL AND server <> {srv} OR origin IS NOT NULL AND origin <> {tags_origin} OR restored, FALSE)"
    };
}

/// The first assignment of a write: `restored` becomes whether the row stepped back
/// ([`back!`]), which the later assignments read (MySQL assigns left to right, each expression
/// reading the columns assigned before it) and the last one clears. The origin, a query of
/// `information_schema` that costs about as much as the rest of the statement, is so read once
/// a write, not in each expression that asks.
macro_rules! mark {
    () => {
        concat!(
            "restored = ",
            back!(),
            ", ",
            // What a tag created later skips (issue 54: the fence, `FenceTrigger`) needs of a
            // row that stepped back: its last write before, and when the step back was seen.
            "back_ms = IF(restored, written_ms, back_ms), back_seen_ms = IF(restored, ",
            now!(),
            ", back_seen_ms), "
        )
    };
}

/// What a row that stepped back skips (before its stride): [`MARGIN`] times what its highest
/// rate hands out from its last write to now plus [`SKEW_MS`], plus [`FLOOR_BATCHES`] segments
/// of twice its last size; a row written before rates were recorded, [`LOST_WRITES`] segments
/// of twice its last size. An absurd rate overflows the tag's numbers: `TAG_EXHAUSTED`, never a
/// smaller skip.
macro_rules! skip {
    () => {
        concat!(
            "IF(window_ms IS NULL OR written_ms IS NULL, stride * 10485 * 2 * GREATEST(step, 1000), ",
            "stride * (4 * 2 * GREATEST(step, 1) + CAST(CEIL(4 * GREATEST(rate, window_n * 1000 / ",
            "GREATEST(written_ms - window_ms, 1000)) * (GREATEST(",
            now!(),
            " - written_ms, 0) + 2000) / 1000) AS SIGNED)))"
        )
    };
}

/// Where a take starts: the row's `next`, moved past what a step back may have lost (in a
/// statement that reads the row; one that writes it reads [`marked_base!`] after [`mark!`]).
macro_rules! base {
    () => {
        concat!("IF(", back!(), ", next + ", skip!(), ", next)")
    };
}

/// [`base!`] after [`mark!`].
macro_rules! marked_base {
    () => {
        concat!("IF(restored, next + ", skip!(), ", next)")
    };
}

/// The rate, window and marks of a row after it handed out `$taken` numbers (per ticket
/// server) now: a window of at least [`RATE_WINDOW_MS`] closes with what it handed out over its
/// length, and the highest such rate is kept; a row that stepped back starts a new window.
/// After [`mark!`] and `next` (which read the old marks), in this order. The origin is read
/// again only when the row stepped back or never recorded one: otherwise it is the row's.
macro_rules! written {
    ($taken:literal) => {
        concat!(
            // A row that stepped back keeps its open window's rate (a tag created later skips
            // by it) and starts a new window.
            "rate = IF(restored, IF(window_ms IS NULL OR written_ms IS NULL, rate, GREATEST(rate, ",
            "window_n * 1000 / GREATEST(written_ms - window_ms, 1000))), ",
            "IF(window_ms IS NOT NULL AND ", now!(), " - window_ms >= 1000, ",
            "GREATEST(rate, (window_n + ", $taken, ") * 1000 / (", now!(), " - window_ms)), rate)), ",
            "window_n = IF(restored OR window_ms IS NULL, ", $taken, ", IF(", now!(),
            " - window_ms >= 1000, 0, window_n + ", $taken, ")), ",
            "window_ms = IF(restored OR window_ms IS NULL OR ", now!(), " - window_ms >= 1000, ",
            now!(), ", window_ms), ",
            "server = {srv}, origin = IF(restored, {tags_origin}, COALESCE(origin, {tags_origin})), ",
            "restored = FALSE, written_ms = ", now!(), ", updated_at = CURRENT_TIMESTAMP(6)"
        )
    };
}

// The numbers written into the fragments above are these constants.
const _: () = assert!(
    LOST_WRITES == 10_485
        && DEFAULT_SEGMENT == 1_000
        && MARGIN == 4
        && FLOOR_BATCHES == 4
        && RATE_WINDOW_MS == 1_000
        && SKEW_MS == 2_000
);

/// The fence of the tags or the topics of one database (issue 54) and the trigger that keeps
/// it: a one-row table, in the database so that it is in every backup, whose `fence` a tag or
/// topic created after a step back starts past (`next` plus the fence; a serial's period that
/// began more than [`SKEW_MS`] after the fence was set, at the earliest [`ZONE_AHEAD_MS`]
/// before midnight UTC, starts as it is), and the server, origin and mark it was set on, as a
/// row's. The first row created (`BEFORE INSERT`, so any insert: the stored functions' and the
/// clients') after a step back the fence has not accounted for sets it: [`MARGIN`] times the
/// highest rate of any row, from the last write the restored rows remember (a row stepped back
/// past: its `written_ms`; one written since: `back_ms`, seen at `back_seen_ms`) to now plus
/// [`SKEW_MS`], plus [`FLOOR_BATCHES`] of the largest handouts (rows never measured: [`LOST_WRITES`]
/// of them), times the stride; it is never lowered. Not on TiDB (no triggers).
pub(super) struct FenceTrigger<'a> {
    pub(super) schema: &'a str,
    /// `shardid_tags` or `shardid_topics`.
    pub(super) table: &'a str,
    /// `tag` or `topic`: the key column, and the fence table's name (`shardid_tag_fence`).
    pub(super) name: &'a str,
    /// The stride (the tags' ticket servers; 1 for the topics).
    pub(super) servers: u64,
    pub(super) srv: &'a str,
    pub(super) origin: &'a str,
}

impl Display for FenceTrigger<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let Self {
            schema: s,
            table,
            name,
            servers: n,
            srv,
            origin,
        } = self;
        let zone_ahead_ms = ZONE_AHEAD_MS;
        // The floor: segments of twice a tag's last size, or a topic's largest batch.
        let (floor, widest, lost, created) = if *name == "tag" {
            (
                "4 * 2 * GREATEST(widest, 1)",
                "MAX(step)",
                "10485 * 2 * GREATEST(widest, 1000)",
                "UNIX_TIMESTAMP(updated_at) * 1000",
            )
        } else {
            (
                "4 * GREATEST(widest, 1)",
                "MAX(batch)",
                "10485",
                "UNIX_TIMESTAMP(created_at) * 1000",
            )
        };
        let period = if *name == "tag" {
            format_args!(
                "
    IF f_fence > 0 AND LOCATE('@', NEW.tag) > 0 AND EXISTS (SELECT 1 FROM information_schema.tables
            WHERE table_schema = '{s}' AND table_name = 'shardid_serials') THEN
        -- A serial's period that began after the fence was set: the lost state never issued from it.
        SET f_period = CONVERT(SUBSTRING_INDEX(NEW.tag, '@', -1) USING utf8mb4);
        IF LENGTH(f_period) IN (4, 7, 10) AND EXISTS (SELECT 1 FROM {s}.shardid_serials
                WHERE CAST(tag AS BINARY) = SUBSTRING_INDEX(NEW.tag, '@', 1))
            AND TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', CAST(CONCAT(f_period,
                CASE LENGTH(f_period) WHEN 4 THEN '-01-01' WHEN 7 THEN '-01' ELSE '' END) AS DATETIME)) DIV 1000
                - {zone_ahead_ms} > f_at + 2000 THEN
            SET f_fence = 0;
        END IF;
    END IF;"
            )
        } else {
            format_args!("")
        };
        write!(
            f,
            "\
CREATE TABLE IF NOT EXISTS {s}.shardid_{name}_fence (
    one TINYINT NOT NULL PRIMARY KEY,
    fence BIGINT NOT NULL DEFAULT 0,
    fenced_ms BIGINT NULL,
    server VARBINARY(255) NULL,
    origin VARBINARY(64) NULL,
    restored BOOLEAN NOT NULL DEFAULT FALSE
) ENGINE = InnoDB$$

INSERT IGNORE INTO {s}.shardid_{name}_fence (one, server, origin) VALUES (1, {srv}, {origin})$$

DROP TRIGGER IF EXISTS {s}.shardid_{name}_created$$

CREATE TRIGGER {s}.shardid_{name}_created BEFORE INSERT ON {s}.{table} FOR EACH ROW
BEGIN
    DECLARE f_fence BIGINT DEFAULT 0;
    DECLARE f_at BIGINT;
    DECLARE f_back BOOLEAN DEFAULT TRUE;
    DECLARE here_origin VARBINARY(64);
    DECLARE last_ms BIGINT;
    DECLARE top DOUBLE;
    DECLARE widest BIGINT;
    DECLARE unmeasured BOOLEAN;
    DECLARE f_period VARCHAR(16);
    SET here_origin = {origin};
    INSERT IGNORE INTO {s}.shardid_{name}_fence (one, restored) VALUES (1, TRUE); -- a row lost: as marked
    SELECT fence, fenced_ms, COALESCE(server IS NOT NULL AND server <> {srv} OR origin IS NOT NULL
            AND origin <> here_origin OR restored, FALSE)
        INTO f_fence, f_at, f_back FROM {s}.shardid_{name}_fence WHERE one = 1 FOR UPDATE;
    IF f_back THEN
        SELECT MAX(IF(COALESCE(server IS NOT NULL AND server <> {srv} OR origin IS NOT NULL AND origin <> here_origin
                      OR restored, FALSE), COALESCE(written_ms, {created}),
                      IF(back_seen_ms > COALESCE(f_at, -1), back_ms, NULL))),
               MAX(IF(window_ms IS NULL OR written_ms IS NULL, rate,
                      GREATEST(rate, window_n * 1000 / GREATEST(written_ms - window_ms, 1000)))),
               {widest}, MAX(window_ms IS NULL AND next > 1)
            INTO last_ms, top, widest, unmeasured
            FROM {s}.{table} WHERE {name} <> NEW.{name};
        IF last_ms IS NOT NULL THEN
            SET f_fence = GREATEST(f_fence, {n} * ({floor} + CAST(CEIL(4 * top
                * (GREATEST({MYSQL_NOW_MS} - last_ms, 0) + 2000) / 1000) AS SIGNED) + IF(unmeasured, {lost}, 0)));
            SET f_at = {MYSQL_NOW_MS};
        END IF;
        UPDATE {s}.shardid_{name}_fence SET fence = f_fence, fenced_ms = f_at, server = {srv}, origin = here_origin,
            restored = FALSE WHERE one = 1;
    END IF;{period}
    SET NEW.next = NEW.next + f_fence;
END$$
"
        )
    }
}

/// The DDL of segments in one database, for one ticket server; render it with [`Display`].
#[derive(Clone, Copy, Debug)]
#[must_use]
pub struct MysqlSegments<'a> {
    schema: &'a str,
    servers: u64,
    index: u64,
    dialect: Dialect,
}

impl<'a> MysqlSegments<'a> {
    /// The DDL for one server (stride 1).
    ///
    /// # Errors
    /// [`SqlError::SchemaName`], as for [`super::Mysql::new`].
    pub fn new(schema: &'a str) -> Result<Self, SqlError> {
        check_schema(schema)?;
        Ok(Self {
            schema,
            servers: 1,
            index: 0,
            dialect: Dialect::Mysql,
        })
    }

    /// The DDL and statements for the server `dialect` names ([`Dialect::Mysql`] by default,
    /// which MariaDB runs too; [`Dialect::Mariadb`] names a Galera cluster as one server).
    pub const fn dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }

    /// The DDL for server `index` of `servers` (`index < servers <= 1024`), as
    /// [`crate::sql::Segments::ticket_server`].
    ///
    /// # Errors
    /// [`SqlError::Core`] with [`crate::Error::InvalidShardCount`] when the numbers do not fit.
    pub fn ticket_server(mut self, servers: u64, index: u64) -> Result<Self, SqlError> {
        if servers == 0 || servers > 1024 || index >= servers {
            return Err(SqlError::Core(crate::Error::InvalidShardCount {
                count: servers,
                max: 1024,
            }));
        }
        self.servers = servers;
        self.index = index;
        Ok(self)
    }

    /// The database.
    pub const fn schema(&self) -> &'a str {
        self.schema
    }

    /// The statements a client sends, with its driver's placeholders.
    pub const fn statements(&self, placeholders: Placeholders) -> MysqlSegmentStatements<'a> {
        MysqlSegmentStatements {
            schema: self.schema,
            placeholders,
            dialect: self.dialect,
        }
    }
}

/// The statements a segment client sends; each takes its parameters in the order its method
/// says. Render with [`Display`].
#[derive(Clone, Copy, Debug)]
pub struct MysqlSegmentStatements<'a> {
    schema: &'a str,
    placeholders: Placeholders,
    dialect: Dialect,
}

impl<'a> MysqlSegmentStatements<'a> {
    const fn statement(&self, text: &'static str) -> MysqlStatement<'a> {
        MysqlStatement::new(self.schema, self.placeholders, self.dialect, text)
    }

    /// Reads a tag's remembered size, its stride and the largest segment a take may have now;
    /// parameter `(tag)`; one row `(step, stride, largest)`, or none for an unknown tag.
    pub const fn read(&self) -> MysqlStatement<'a> {
        self.statement(concat!(
            "SELECT step, stride, IF(",
            "(grown_at IS NULL OR ",
            base!(),
            " - grown_at >= stride * 10485 * 2 * GREATEST(step, 1000))",
            ", 2, 1) * GREATEST(step, 1000) FROM {s}.shardid_tags WHERE tag = ?"
        ))
    }

    /// Takes a segment; parameters `(size, size, size, tag, size, size)`; the segment's first
    /// ID is the reply's last insert ID, and the row count 1. 0 rows: the tag does not exist,
    /// or may not take a segment that large now (read it, and take at most what it says).
    pub const fn take(&self) -> MysqlStatement<'a> {
        self.statement(concat!(
            "UPDATE {s}.shardid_tags SET ",
            mark!(),
            "grown_at = IF(? > GREATEST(step, 1000), ",
            marked_base!(),
            ", grown_at), next = CAST(LAST_INSERT_ID(",
            marked_base!(),
            ") AS SIGNED) + stride * ?, step = ?, ",
            written!("step"),
            " WHERE tag = ? AND (? <= GREATEST(step, 1000) OR ? <= 2 * GREATEST(step, 1000) AND ",
            "(grown_at IS NULL OR ",
            base!(),
            " - grown_at >= stride * 10485 * 2 * GREATEST(step, 1000)))"
        ))
    }

    /// Gives back an unused tail `first..end` of the last segment taken, if nobody took one
    /// since and the row did not step back (a promoted replica's or a restored row may read
    /// `end` while the lost takes handed out more); parameters `(first, tag, end, first,
    /// first)`; row count 1 when given back.
    pub const fn give_back(&self) -> MysqlStatement<'a> {
        self.statement(concat!(
            "UPDATE {s}.shardid_tags SET next = ?, updated_at = CURRENT_TIMESTAMP(6) ",
            "WHERE tag = ? AND next = ? AND next > ? AND MOD(next - ?, stride) = 0 ",
            "AND NOT ",
            back!(),
            " AND server IS NOT NULL"
        ))
    }

    /// Creates a tag (from 1) if it does not exist; parameter `(tag)`; one boolean, whether
    /// it was created. A stored function: not on TiDB.
    pub const fn create_tag(&self) -> MysqlStatement<'a> {
        self.statement("SELECT {s}.create_tag(?)")
    }
}

/// What a [`MysqlFetch`] sends next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FetchStep {
    /// [`MysqlSegmentStatements::read`] with `(tag)`, then [`MysqlFetch::read`].
    Read,
    /// [`MysqlSegmentStatements::take`] with `(size, size, size, tag, size, size)`, then
    /// [`MysqlFetch::took`].
    Take {
        /// The segment's size.
        size: u64,
    },
}

/// Why a fetch on MySQL gave no segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FetchError {
    /// The tag does not exist (SQLSTATE [`UNKNOWN_TAG`], as on PostgreSQL).
    UnknownTag,
    /// The server's row or reply is not a segment (a stride of 0, a negative number, a tag
    /// near 2^63 - 1: [`TAG_EXHAUSTED`]).
    Unusable,
}

impl FetchError {
    /// The SQLSTATE PostgreSQL's `take_segment` raises for the same case.
    pub const fn sqlstate(self) -> &'static str {
        match self {
            Self::UnknownTag => UNKNOWN_TAG,
            Self::Unusable => TAG_EXHAUSTED,
        }
    }
}

impl Display for FetchError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::UnknownTag => "UNKNOWN_TAG: the tag does not exist",
            Self::Unusable => "the server's answer is not a usable segment",
        })
    }
}

impl core::error::Error for FetchError {}

/// The steps of one segment fetch on MySQL: [`MysqlFetch::step`] says what to send, the
/// results go back in. The allocator's fetch (its `size`, 0 for the size the row remembers)
/// and the stride a client learnt from the server before (`None` at first) go in.
///
/// A take the row refuses as too large (or of a tag that does not exist: 0 rows either way)
/// is followed by a read, which says the largest size allowed now (or that there is no such
/// tag), and a take of at most that; refused again (another client's take changed the row in
/// between), the next take is of at most [`DEFAULT_SEGMENT`], which no row refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MysqlFetch {
    size: u64,
    stride: Option<u64>,
    refused: u8,
    read: bool,
    rolled_back: u8,
}

/// How many times one fetch sends a step again that the server rolled back
/// ([`MysqlFetch::rolled_back`]).
pub const ROLLED_BACK_RETRIES: u8 = 10;

impl MysqlFetch {
    /// A fetch of `size` IDs (0: the size the row remembers) from a server whose stride the
    /// client knows (`None`: not yet).
    pub const fn new(size: u64, stride: Option<u64>) -> Self {
        Self {
            size,
            stride,
            refused: 0,
            read: false,
            rolled_back: 0,
        }
    }

    /// The server answered the last step with MySQL error `code`: whether to send the same
    /// step again. A deadlock or a lock wait timeout (1213, 1205) rolls the autocommit
    /// statement back whole, so nothing was taken and sending it again is safe; on a Galera
    /// cluster two nodes taking from one tag at the same moment get 1213 about half the time.
    /// At most [`ROLLED_BACK_RETRIES`] times per fetch; any other error is the driver's to
    /// report (the allocator retries the fetch after its backoff).
    pub fn rolled_back(&mut self, code: u16) -> bool {
        if super::rolled_back(code) && self.rolled_back < ROLLED_BACK_RETRIES {
            self.rolled_back += 1;
            return true;
        }
        false
    }

    /// What to send now.
    pub const fn step(&self) -> FetchStep {
        match self.stride {
            Some(_) if self.size > 0 && (self.refused == 0 || self.read) => {
                FetchStep::Take { size: self.size }
            }
            _ => FetchStep::Read,
        }
    }

    /// The stride learnt (for the client to keep for its next fetches from this server).
    pub const fn stride(&self) -> Option<u64> {
        self.stride
    }

    /// The row [`FetchStep::Read`] returned, `(step, stride, largest)`, or `None` for no row.
    ///
    /// # Errors
    /// [`FetchError::UnknownTag`] for no row; [`FetchError::Unusable`] for a row no shardid
    /// DDL makes.
    pub fn read(&mut self, row: Option<(i64, i64, i64)>) -> Result<(), FetchError> {
        let (step, stride, largest) = row.ok_or(FetchError::UnknownTag)?;
        let stride = u64::try_from(stride).map_err(|_| FetchError::Unusable)?;
        let step = u64::try_from(step).map_err(|_| FetchError::Unusable)?;
        let largest = u64::try_from(largest).map_err(|_| FetchError::Unusable)?;
        if stride == 0 || stride > 1024 || step > MAX_SEGMENT || largest < DEFAULT_SEGMENT {
            return Err(FetchError::Unusable);
        }
        self.stride = Some(stride);
        if self.size == 0 {
            self.size = if step > 0 { step } else { DEFAULT_SEGMENT };
        }
        self.size = self.size.min(largest);
        if self.refused > 1 {
            self.size = self.size.min(DEFAULT_SEGMENT);
        }
        self.read = true;
        Ok(())
    }

    /// The segment of [`FetchStep::Take`]'s reply: its row count and last insert ID, or `None`
    /// when the row refused it (read it next: [`MysqlFetch::step`]).
    ///
    /// # Errors
    /// [`FetchError::Unusable`] when the step was not a take, or the row refused a take of at
    /// most [`DEFAULT_SEGMENT`] after a read (no shardid row does).
    pub fn took(&mut self, rows: u64, first: u64) -> Result<Option<Segment>, FetchError> {
        let FetchStep::Take { size } = self.step() else {
            return Err(FetchError::Unusable);
        };
        if rows == 0 {
            // No such tag, or too large a segment (the last insert ID is another statement's).
            if self.refused > 1 {
                return Err(FetchError::Unusable);
            }
            self.refused += 1;
            self.read = false;
            return Ok(None);
        }
        let stride = self.stride.unwrap_or(1);
        if rows != 1 || first > i64::MAX as u64 {
            return Err(FetchError::Unusable);
        }
        Ok(Some(Segment {
            first,
            count: size,
            stride,
        }))
    }
}

impl Display for MysqlSegments<'_> {
    #[allow(clippy::too_many_lines)] // one template, read top to bottom
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = self.schema;
        let n = self.servers;
        let i = self.index;
        let version = env!("CARGO_PKG_VERSION");
        let srv = self
            .dialect
            .server_identity()
            .unwrap_or(crate::sql::failover::MYSQL_SERVER);
        let origin = MysqlOrigin {
            schema: Some(s),
            table: "shardid_tags",
            galera: self.dialect == Dialect::Mariadb,
        }
        .to_string();
        let fill = |text: &str| text.replace("{srv}", srv).replace("{tags_origin}", &origin);
        let mark = fill(mark!());
        let base = fill(marked_base!());
        let written = fill(written!("1"));
        let fence = FenceTrigger {
            schema: s,
            table: "shardid_tags",
            name: "tag",
            servers: n,
            srv,
            origin: &origin,
        };
        write!(
            f,
            "\
-- shardid {version}: dense IDs from segments, in database {s} (MySQL 8, MariaDB 10.6 and later).
-- Ticket server {i} of {n}: every number it hands out is {i} modulo {n}.
-- Generated by shardid; safe to run again (it replaces the functions and keeps the tags).
-- Run it with the mysql or mariadb command line, which reads the DELIMITER lines (a driver
-- sends the statements between the $$ one at a time). With binary logging on, creating
-- functions that write needs log_bin_trust_function_creators = 1 (or SUPER). The clients need
-- only the table (TiDB, which has no stored functions, runs the CREATE TABLE alone).
DELIMITER $$

CREATE DATABASE IF NOT EXISTS {s}$$

-- One row per tag: the next number, the segment size last asked for, the stride (the number
-- of ticket servers), the server that wrote the row last (a replica promoted after a failover
-- is another), where `next` stood when the segments last grew, and what a step back needs:
-- the origin of the table's data when the row was last written (its creation second, or a
-- Galera cluster's state UUID: a dump restored into another server reads another), when it
-- was last written (Unix ms, the server's clock), the highest rate its numbers were handed out
-- at (numbers a second per ticket server, over windows of at least {RATE_WINDOW_MS} ms: the current one
-- started at window_ms and has handed out window_n), and whether an operator marked it
-- restored (`shardid restored`). Tags are bytes, compared as such.
CREATE TABLE IF NOT EXISTS {s}.shardid_tags (
    tag VARBINARY({MAX_TAG_LEN}) NOT NULL PRIMARY KEY,
    next BIGINT NOT NULL,
    step BIGINT NOT NULL DEFAULT 0,
    stride BIGINT NOT NULL DEFAULT 1,
    updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    server VARBINARY(255) NULL,
    grown_at BIGINT NULL,
    origin VARBINARY(64) NULL,
    written_ms BIGINT NULL,
    rate DOUBLE NOT NULL DEFAULT 0,
    window_ms BIGINT NULL,
    window_n BIGINT NOT NULL DEFAULT 0,
    restored BOOLEAN NOT NULL DEFAULT FALSE,
    back_ms BIGINT NULL,
    back_seen_ms BIGINT NULL
) ENGINE = InnoDB$$

-- A table of an older version gains the columns of a step back (MySQL has no ADD COLUMN IF
-- NOT EXISTS); its rows then skip by count once, as before.
DROP PROCEDURE IF EXISTS {s}.shardid_upgrade_tags$$

CREATE PROCEDURE {s}.shardid_upgrade_tags()
BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = '{s}'
            AND table_name = 'shardid_tags' AND column_name = 'restored') THEN
        ALTER TABLE {s}.shardid_tags ADD COLUMN origin VARBINARY(64) NULL, ADD COLUMN written_ms BIGINT NULL,
            ADD COLUMN rate DOUBLE NOT NULL DEFAULT 0, ADD COLUMN window_ms BIGINT NULL,
            ADD COLUMN window_n BIGINT NOT NULL DEFAULT 0, ADD COLUMN restored BOOLEAN NOT NULL DEFAULT FALSE;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = '{s}'
            AND table_name = 'shardid_tags' AND column_name = 'back_ms') THEN
        ALTER TABLE {s}.shardid_tags ADD COLUMN back_ms BIGINT NULL, ADD COLUMN back_seen_ms BIGINT NULL;
    END IF;
END$$

CALL {s}.shardid_upgrade_tags()$$

DROP PROCEDURE {s}.shardid_upgrade_tags$$

{fence}

-- Creates a tag whose first number is the first at or above `first` that this server hands
-- out; returns whether it was created (an existing tag is left as it is).
DROP FUNCTION IF EXISTS {s}.create_tag_from$$

CREATE FUNCTION {s}.create_tag_from(p_tag VARBINARY(1024), p_first BIGINT) RETURNS BOOLEAN
    NOT DETERMINISTIC MODIFIES SQL DATA
BEGIN
    DECLARE created BOOLEAN DEFAULT TRUE;
    DECLARE CONTINUE HANDLER FOR 1062 SET created = FALSE;
    IF p_tag IS NULL OR LENGTH(p_tag) = 0 OR LENGTH(p_tag) > {MAX_TAG_LEN} THEN
        SIGNAL SQLSTATE '22023' SET MESSAGE_TEXT = 'INVALID_ARGUMENT: a tag is 1 to {MAX_TAG_LEN} bytes of text';
    END IF;
    IF p_first IS NULL OR p_first < 0 THEN
        SIGNAL SQLSTATE '22023' SET MESSAGE_TEXT = 'INVALID_ARGUMENT: first must be 0 or more';
    END IF;
    INSERT INTO {s}.shardid_tags (tag, next, stride, server, origin, written_ms, window_ms)
        VALUES (p_tag, p_first + MOD(MOD({i} - MOD(p_first, {n}), {n}) + {n}, {n}), {n}, {srv}, {origin},
                {MYSQL_NOW_MS}, {MYSQL_NOW_MS});
    RETURN created;
END$$

DROP FUNCTION IF EXISTS {s}.create_tag$$

CREATE FUNCTION {s}.create_tag(p_tag VARBINARY(1024)) RETURNS BOOLEAN
    NOT DETERMINISTIC MODIFIES SQL DATA
    RETURN {s}.create_tag_from(p_tag, 1)$$

-- One number of the tag, for rows the database inserts itself (a BEFORE INSERT trigger:
-- SET NEW.n = {s}.next_dense_id('orders')). Leaves the remembered segment size alone. On a row
-- that stepped back (another server wrote it last, its data has another origin, or it is marked
-- restored), first past what its highest rate could have handed out since its last write, as
-- the clients' takes do; and it measures the rate alike.
DROP FUNCTION IF EXISTS {s}.next_dense_id$$

CREATE FUNCTION {s}.next_dense_id(p_tag VARBINARY(1024)) RETURNS BIGINT
    NOT DETERMINISTIC MODIFIES SQL DATA
BEGIN
    DECLARE EXIT HANDLER FOR 1690
        SIGNAL SQLSTATE '{TAG_EXHAUSTED}' SET MESSAGE_TEXT = 'TAG_EXHAUSTED: the numbers of the tag would pass 2^63 - 1';
    -- LAST_INSERT_ID() is unsigned: back to signed, so that passing 2^63 - 1 is error 1690
    -- whatever the sql_mode (unsigned, a non-strict mode would clamp the column to 2^63 - 1,
    -- and every later take would hand out that number again).
    UPDATE {s}.shardid_tags SET {mark}next = CAST(LAST_INSERT_ID({base}) AS SIGNED) + stride,
        {written} WHERE tag = p_tag;
    IF ROW_COUNT() = 0 THEN
        SIGNAL SQLSTATE '{UNKNOWN_TAG}' SET MESSAGE_TEXT = 'UNKNOWN_TAG: no such tag in {s}: create it with {s}.create_tag()';
    END IF;
    RETURN LAST_INSERT_ID();
END$$

DELIMITER ;
"
        )
    }
}
