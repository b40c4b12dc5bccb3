//! The string ↔ ID dictionary on MySQL and MariaDB ([`crate::dictionary`]): the tables, the
//! stored functions for SQL users, and the plain statements of a client.
//!
//! IDs of a topic are dense, from 0, as on PostgreSQL, and for the same reason: no
//! `AUTO_INCREMENT` (each duplicate, rollback and multi-row insert burns values), but the topic
//! row's `next`, advanced by the transaction that inserts the strings it numbers. A client:
//!
//! 1. looks its strings up without a lock, in autocommit ([`MysqlDictionaryStatements::find`]:
//!    no row at all means no such topic); once a dictionary is warm that is all;
//! 2. for strings still missing, in one transaction: locks the topic row
//!    ([`MysqlDictionaryStatements::lock`], `FOR UPDATE`: writers of one topic go one at a
//!    time; a dropped topic assigns nothing), looks again *with a locking read*
//!    ([`MysqlDictionaryStatements::recheck`]) — under REPEATABLE READ, MySQL's default, a plain
//!    read would see the transaction's first snapshot and miss strings a writer committed while
//!    this one waited for the lock —, numbers what is still missing `next, next + 1, ...` in the
//!    order the strings first appear ([`assign_new`]), inserts them and moves `next` on, and
//!    commits. A rolled-back batch gives its numbers back; concurrent writers of one new string
//!    agree on one ID.
//! 3. A deadlock (1213) or lock wait timeout (1205) rolls the transaction back whole: it is
//!    safe to run again. Under REPEATABLE READ the locking read takes gap locks, which writers
//!    of two topics whose strings are neighbours in the index can deadlock on; READ COMMITTED
//!    takes none.
//!
//! Across a failover or a restore ([`crate::sql::failover`]): each topic row records the
//! server that last wrote it, the origin of its table's data ([`MysqlOrigin`]), when, its
//! largest batch and the highest rate it assigned IDs at; a writer of new strings on a row
//! that stepped back (another server: a promoted replica, which may lack the last strings
//! numbered; another origin: a `mysqldump` restored into another server; or marked `restored`)
//! starts past what that rate could have assigned since, as on PostgreSQL: the locking read
//! ([`MysqlDictionaryStatements::lock`]) returns that start. The IDs skipped are a hole; no ID
//! ever names a second string.
//!
//! The lookups name their index (`FORCE INDEX`): with few rows in the table's statistics the
//! optimizers of MariaDB 10.11 chose to read every string of the topic (`ref` on `topic_id`)
//! rather than probe for each value — a batch's latency then grew with the topic, and the
//! locking re-check locked the whole topic's strings.
//!
//! Lists go into `IN (...)` and `VALUES` with one placeholder per value (`[...]` groups of
//! [`super::MysqlStatement`]), so the clients need no JSON functions (TiDB has no
//! `JSON_TABLE`). Prepared statements take at most 65,535 placeholders: a client that
//! prepares (the `mysql` crate) sends lists of at most [`MAX_PREPARED_LIST`].

use alloc::string::ToString as _;
use core::fmt::{self, Display, Formatter};

use super::{Dialect, MysqlStatement};
use crate::dictionary::{MAX_TOPIC_LEN, MAX_VALUE_LEN};
use crate::sql::failover::{
    FLOOR_BATCHES, LOST_WRITES, MARGIN, MYSQL_NOW_MS, MysqlOrigin, RATE_WINDOW_MS, SKEW_MS,
};
use crate::sql::{Placeholders, SqlError, TOPIC_DROPPED, UNKNOWN_TOPIC, check_schema};

/// The longest list a client that prepares its statements sends in one: an insert of that many
/// strings takes three placeholders each, and a prepared statement at most 65,535.
pub const MAX_PREPARED_LIST: usize = 20_000;

// The fragments of the statements below, as literals; their numbers are the constants of
// `crate::sql::failover` (checked below), the rule the tags follow too (`super::segments`).

/// Whether the topic's row may be behind what was assigned: another server wrote it last (a
/// promoted replica), its table's data has another origin (a dump restored into another
/// server), or an operator marked it restored. Never NULL.
macro_rules! back {
    () => {
        "COALESCE(server IS NOT NULL AND server <> {srv} OR origin IS NOT NULL AND origin <> {topics_origin} OR restored, FALSE)"
    };
}

/// The first ID a writer gives new strings: the row's `next`, after a step back first past
/// [`MARGIN`] times what the topic's highest rate assigns from its last write to now plus
/// [`SKEW_MS`], plus [`FLOOR_BATCHES`] of its largest batches ([`LOST_WRITES`] IDs for a row
/// written before rates were recorded). An absurd rate overflows: an error, never a smaller
/// skip.
macro_rules! base {
    () => {
        concat!(
            "IF(",
            back!(),
            ", next + IF(window_ms IS NULL OR written_ms IS NULL, 10485, ",
            "4 * GREATEST(batch, 1) + CAST(CEIL(4 * GREATEST(rate, window_n * 1000 / ",
            "GREATEST(written_ms - window_ms, 1000)) * (GREATEST(",
            now!(),
            " - written_ms, 0) + 2000) / 1000) AS SIGNED)), next)"
        )
    };
}

/// The assignments of a write of the topic's row moving `next` to `$next`: where it stood
/// (`prior`), then the largest batch, the highest rate (a window of at least
/// [`RATE_WINDOW_MS`] closes with what it assigned over its length) and the marks. MySQL
/// assigns left to right, each expression reading the columns assigned before it; a row that
/// stepped back starts a new window (its first batch, beyond the skip, is not counted).
/// `restored` is assigned first, whether the row stepped back, which the later assignments
/// read and the last one clears: the origin, a query of `information_schema`, is so read once a
/// write (again only when the row stepped back or never recorded one).
macro_rules! written {
    ($next:literal) => {
        concat!(
            "restored = ", back!(), ", ",
            // What a topic created later starts past (issue 54: the fence) needs of a row that
            // stepped back: its last write before, when the step back was seen, and its open
            // window's rate, kept.
            "back_ms = IF(restored, written_ms, back_ms), back_seen_ms = IF(restored, ", now!(),
            ", back_seen_ms), prior = next, next = ", $next, ", ",
            "batch = IF(restored, batch, GREATEST(batch, next - prior)), ",
            "rate = IF(restored, IF(window_ms IS NULL OR written_ms IS NULL, rate, GREATEST(rate, ",
            "window_n * 1000 / GREATEST(written_ms - window_ms, 1000))), ",
            "IF(window_ms IS NOT NULL AND ", now!(), " - window_ms >= 1000, ",
            "GREATEST(rate, (window_n + next - prior) * 1000 / (", now!(), " - window_ms)), rate)), ",
            "window_n = IF(restored, 0, IF(window_ms IS NULL, next - prior, IF(", now!(),
            " - window_ms >= 1000, 0, window_n + next - prior))), ",
            "window_ms = IF(restored OR window_ms IS NULL OR ", now!(), " - window_ms >= 1000, ",
            now!(), ", window_ms), ",
            "server = {srv}, origin = IF(restored, {topics_origin}, COALESCE(origin, {topics_origin})), ",
            "restored = FALSE, written_ms = ", now!()
        )
    };
}

const _: () = assert!(
    LOST_WRITES == 10_485
        && MARGIN == 4
        && FLOOR_BATCHES == 4
        && RATE_WINDOW_MS == 1_000
        && SKEW_MS == 2_000
);

/// The DDL of the dictionary in one database; render it with [`Display`].
#[derive(Clone, Copy, Debug)]
#[must_use]
pub struct MysqlDictionary<'a> {
    schema: &'a str,
    dialect: Dialect,
}

impl<'a> MysqlDictionary<'a> {
    /// # Errors
    /// [`SqlError::SchemaName`], as for [`super::Mysql::new`].
    pub fn new(schema: &'a str) -> Result<Self, SqlError> {
        check_schema(schema)?;
        Ok(Self {
            schema,
            dialect: Dialect::Mysql,
        })
    }

    /// The DDL and statements for the server `dialect` names ([`Dialect::Mysql`] by default,
    /// which MariaDB runs too; [`Dialect::Mariadb`] names a Galera cluster as one server).
    pub const fn dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }

    /// The database.
    pub const fn schema(&self) -> &'a str {
        self.schema
    }

    /// The statements a client sends, with its driver's placeholders.
    pub const fn statements(&self, placeholders: Placeholders) -> MysqlDictionaryStatements<'a> {
        MysqlDictionaryStatements {
            schema: self.schema,
            placeholders,
            dialect: self.dialect,
        }
    }
}

/// The statements a dictionary client sends; each takes its parameters in the order its method
/// says. Those taking a list render `n` placeholders for it. Render with [`Display`].
#[derive(Clone, Copy, Debug)]
pub struct MysqlDictionaryStatements<'a> {
    schema: &'a str,
    placeholders: Placeholders,
    dialect: Dialect,
}

impl<'a> MysqlDictionaryStatements<'a> {
    const fn statement(&self, text: &'static str) -> MysqlStatement<'a> {
        MysqlStatement::new(self.schema, self.placeholders, self.dialect, text)
    }

    /// Looks `n` strings up, without a lock; parameters `(values..., topic)`; rows
    /// `(topic_id, value, id)`, `value` and `id` NULL in the one row of a topic none of whose
    /// strings was found. No row: no such topic.
    pub const fn find(&self, n: usize) -> MysqlStatement<'a> {
        self.statement(
            "SELECT t.topic_id, s.value, s.id FROM {s}.shardid_topics AS t \
             LEFT JOIN {s}.shardid_strings AS s FORCE INDEX (PRIMARY) \
             ON s.topic_id = t.topic_id AND s.value IN ([?]) \
             WHERE t.topic = ?",
        )
        .list(n)
    }

    /// The strings of `n` IDs; parameters `(ids..., topic)`; rows `(topic_id, id, value)` as
    /// [`MysqlDictionaryStatements::find`].
    pub const fn find_values(&self, n: usize) -> MysqlStatement<'a> {
        self.statement(
            "SELECT t.topic_id, s.id, s.value FROM {s}.shardid_topics AS t \
             LEFT JOIN {s}.shardid_strings AS s FORCE INDEX (shardid_strings_id) \
             ON s.topic_id = t.topic_id AND s.id IN ([?]) \
             WHERE t.topic = ?",
        )
        .list(n)
    }

    /// In the writer's transaction, locks the topic's row; parameter `(topic)`; one row
    /// `(topic_id, next, dropped, moved)`, or none: no such topic. `next` is the first ID new
    /// strings get: after a step back (`moved`: another server wrote the row last, its data has
    /// another origin, or it is marked restored), already past what the topic's rate could
    /// have assigned since ([`crate::sql::failover`]).
    pub const fn lock(&self) -> MysqlStatement<'a> {
        self.statement(concat!(
            "SELECT topic_id, ",
            base!(),
            ", dropped_at IS NOT NULL, ",
            back!(),
            " FROM {s}.shardid_topics WHERE topic = ? FOR UPDATE"
        ))
    }

    /// After [`MysqlDictionaryStatements::lock`], looks `n` strings up again with a locking
    /// read; parameters `(topic_id, values...)`; rows `(value, id)` of those found.
    pub const fn recheck(&self, n: usize) -> MysqlStatement<'a> {
        self.statement(
            "SELECT value, id FROM {s}.shardid_strings FORCE INDEX (PRIMARY) \
             WHERE topic_id = ? AND value IN ([?]) FOR UPDATE",
        )
        .list(n)
    }

    /// Inserts `n` new strings; parameters `(topic_id, value, id)` for each.
    pub const fn insert(&self, n: usize) -> MysqlStatement<'a> {
        self.statement("INSERT INTO {s}.shardid_strings (topic_id, value, id) VALUES [(?, ?, ?)]")
            .list(n)
    }

    /// Moves the topic's next ID on, in the writer's transaction; parameters `(next, topic)`.
    /// By the primary key, as every lock of a topic's row is taken: through the `topic_id`
    /// index it would lock that index's entry too, and a writer locking in the other order
    /// (that entry first) would deadlock with this one.
    /// It records what a step back needs: the largest batch, the highest rate, the origin.
    pub const fn advance(&self) -> MysqlStatement<'a> {
        self.statement(concat!(
            "UPDATE {s}.shardid_topics SET ",
            written!("?"),
            " WHERE topic = ?"
        ))
    }

    /// Creates a topic if it does not exist; parameter `(topic)`. Then
    /// [`MysqlDictionaryStatements::state`] says whether it was dropped before.
    pub const fn create_topic(&self) -> MysqlStatement<'a> {
        self.statement(
            "INSERT INTO {s}.shardid_topics (topic, server, origin, written_ms, window_ms) \
             VALUES (?, {srv}, {topics_origin}, (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', \
             UTC_TIMESTAMP(6)) DIV 1000), (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', \
             UTC_TIMESTAMP(6)) DIV 1000)) ON DUPLICATE KEY UPDATE topic = topic",
        )
    }

    /// Drops a topic (a tombstone); parameter `(topic)`. Then
    /// [`MysqlDictionaryStatements::state`] says whether it exists.
    pub const fn drop_topic(&self) -> MysqlStatement<'a> {
        self.statement(
            "UPDATE {s}.shardid_topics SET dropped_at = COALESCE(dropped_at, CURRENT_TIMESTAMP(6)) \
             WHERE topic = ?",
        )
    }

    /// Whether a topic was dropped; parameter `(topic)`; one row `(dropped)`, or none: no such
    /// topic.
    pub const fn state(&self) -> MysqlStatement<'a> {
        self.statement("SELECT dropped_at IS NOT NULL FROM {s}.shardid_topics WHERE topic = ?")
    }
}

/// The first ID a writer gives new strings of a topic whose locked row
/// ([`MysqlDictionaryStatements::lock`]) reads `next`: `next` itself, which the statement
/// already moved past what a step back may have lost (`moved` says it did). Kept so that the
/// clients' code reads the same for every version of the statement.
pub const fn topic_base(next: u64, moved: bool) -> u64 {
    let _ = moved;
    next
}

/// How many times in all the dictionary's transaction that numbers new strings runs when the
/// server rolls it back whole ([`super::rolled_back`]).
pub const ASSIGN_ATTEMPTS: u32 = 5;

/// Whether the dictionary's transaction that numbers new strings, which failed with the MySQL
/// error `code` at its `attempt`-th run (from 1), runs again: rolled back whole
/// ([`super::rolled_back`]), at most [`ASSIGN_ATTEMPTS`] runs in all. Rust's, Python's and
/// Node's clients ask it.
pub const fn assign_again(code: u16, attempt: u32) -> bool {
    super::rolled_back(code) && attempt < ASSIGN_ATTEMPTS
}

/// The IDs the strings still missing after the locked re-check get: `answers` holds, for each
/// string looked for (distinct, in the order they first appear), its ID if found; each `None`
/// gets the topic's next ID in turn, from `base`. Yields `(index in answers, new ID)`; the
/// topic's next ID is then `base` plus how many were yielded.
pub fn assign_new(answers: &[Option<u64>], base: u64) -> impl Iterator<Item = (usize, u64)> + '_ {
    answers
        .iter()
        .enumerate()
        .filter(|(_, answer)| answer.is_none())
        .zip(base..)
        .map(|((i, _), id)| (i, id))
}

impl Display for MysqlDictionary<'_> {
    #[allow(clippy::too_many_lines)] // one template, read top to bottom
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = self.schema;
        let version = env!("CARGO_PKG_VERSION");
        let srv = self
            .dialect
            .server_identity()
            .unwrap_or(crate::sql::failover::MYSQL_SERVER);
        let origin = MysqlOrigin {
            schema: Some(s),
            table: "shardid_topics",
            galera: self.dialect == Dialect::Mariadb,
        }
        .to_string();
        let fill = |text: &str| {
            text.replace("{srv}", srv)
                .replace("{topics_origin}", &origin)
        };
        let base = fill(base!());
        let written = fill(written!("base + 1"));
        let fence = super::segments::FenceTrigger {
            schema: s,
            table: "shardid_topics",
            name: "topic",
            servers: 1,
            srv,
            origin: &origin,
        };
        write!(
            f,
            "\
-- shardid {version}: a string <-> ID dictionary, in database {s} (MySQL 8, MariaDB 10.6 and later).
-- Generated by shardid; safe to run again (it replaces the functions and keeps the data).
-- Run it with the mysql or mariadb command line, which reads the DELIMITER lines (a driver
-- sends the statements between the $$ one at a time). With binary logging on, creating
-- functions that write needs log_bin_trust_function_creators = 1 (or SUPER). The clients need
-- only the tables (TiDB, which has no stored functions, runs the CREATE TABLEs alone).
DELIMITER $$

CREATE DATABASE IF NOT EXISTS {s}$$

-- One row per topic: the next ID it assigns, the server that wrote the row last (a replica
-- promoted after a failover is another), and what a step back needs: the origin of the
-- table's data when the row was last written (its creation second, or a Galera cluster's state
-- UUID: a dump restored into another server reads another), when (Unix ms, the server's
-- clock), where `next` stood before (prior), its largest batch of new strings, the highest
-- rate it assigned IDs at (IDs a second, over windows of at least {RATE_WINDOW_MS} ms: the current one
-- started at window_ms and assigned window_n), and whether an operator marked it restored
-- (`shardid restored`). A dropped topic keeps its row (a tombstone). Topics and strings are
-- bytes, compared as such (no collation folds two into one).
CREATE TABLE IF NOT EXISTS {s}.shardid_topics (
    topic VARBINARY({MAX_TOPIC_LEN}) NOT NULL PRIMARY KEY,
    topic_id INT NOT NULL AUTO_INCREMENT UNIQUE,
    next BIGINT NOT NULL DEFAULT 0,
    created_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    dropped_at TIMESTAMP(6) NULL DEFAULT NULL,
    server VARBINARY(255) NULL,
    origin VARBINARY(64) NULL,
    written_ms BIGINT NULL,
    prior BIGINT NULL,
    batch BIGINT NOT NULL DEFAULT 0,
    rate DOUBLE NOT NULL DEFAULT 0,
    window_ms BIGINT NULL,
    window_n BIGINT NOT NULL DEFAULT 0,
    restored BOOLEAN NOT NULL DEFAULT FALSE,
    back_ms BIGINT NULL,
    back_seen_ms BIGINT NULL
) ENGINE = InnoDB$$

-- A table of an older version gains the columns of a step back (MySQL has no ADD COLUMN IF
-- NOT EXISTS); its rows then skip by count once, as before.
DROP PROCEDURE IF EXISTS {s}.shardid_upgrade_topics$$

CREATE PROCEDURE {s}.shardid_upgrade_topics()
BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = '{s}'
            AND table_name = 'shardid_topics' AND column_name = 'restored') THEN
        ALTER TABLE {s}.shardid_topics ADD COLUMN origin VARBINARY(64) NULL, ADD COLUMN written_ms BIGINT NULL,
            ADD COLUMN prior BIGINT NULL, ADD COLUMN batch BIGINT NOT NULL DEFAULT 0,
            ADD COLUMN rate DOUBLE NOT NULL DEFAULT 0, ADD COLUMN window_ms BIGINT NULL,
            ADD COLUMN window_n BIGINT NOT NULL DEFAULT 0, ADD COLUMN restored BOOLEAN NOT NULL DEFAULT FALSE;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = '{s}'
            AND table_name = 'shardid_topics' AND column_name = 'back_ms') THEN
        ALTER TABLE {s}.shardid_topics ADD COLUMN back_ms BIGINT NULL, ADD COLUMN back_seen_ms BIGINT NULL;
    END IF;
END$$

CALL {s}.shardid_upgrade_topics()$$

DROP PROCEDURE {s}.shardid_upgrade_topics$$

-- Where a topic created after a step back starts (issue 54): the fence and its trigger.
{fence}

-- One row per string of a topic. Written only by the clients' statements and the functions.
CREATE TABLE IF NOT EXISTS {s}.shardid_strings (
    topic_id INT NOT NULL,
    value VARBINARY({MAX_VALUE_LEN}) NOT NULL,
    id BIGINT NOT NULL,
    PRIMARY KEY (topic_id, value),
    UNIQUE KEY shardid_strings_id (topic_id, id)
) ENGINE = InnoDB ROW_FORMAT = DYNAMIC$$

-- Creates a topic (IDs from 0); returns whether it was created. A dropped name is refused.
DROP FUNCTION IF EXISTS {s}.create_topic$$

CREATE FUNCTION {s}.create_topic(p_topic VARBINARY(1024)) RETURNS BOOLEAN
    NOT DETERMINISTIC MODIFIES SQL DATA
BEGIN
    DECLARE created BOOLEAN DEFAULT TRUE;
    DECLARE CONTINUE HANDLER FOR 1062 SET created = FALSE;
    IF p_topic IS NULL OR LENGTH(p_topic) = 0 OR LENGTH(p_topic) > {MAX_TOPIC_LEN} THEN
        SIGNAL SQLSTATE '22023' SET MESSAGE_TEXT = 'INVALID_ARGUMENT: a topic is 1 to {MAX_TOPIC_LEN} bytes of text';
    END IF;
    INSERT INTO {s}.shardid_topics (topic, server, origin, written_ms, window_ms)
        VALUES (p_topic, {srv}, {origin}, {MYSQL_NOW_MS}, {MYSQL_NOW_MS});
    IF EXISTS (SELECT 1 FROM {s}.shardid_topics WHERE topic = p_topic AND dropped_at IS NOT NULL) THEN
        SIGNAL SQLSTATE '{TOPIC_DROPPED}' SET MESSAGE_TEXT = 'TOPIC_DROPPED: the topic was dropped; its name is never used again';
    END IF;
    RETURN created;
END$$

-- Drops a topic: its strings and IDs stay readable, nothing new is assigned, and its name is
-- never used again.
DROP FUNCTION IF EXISTS {s}.drop_topic$$

CREATE FUNCTION {s}.drop_topic(p_topic VARBINARY(1024)) RETURNS BOOLEAN
    NOT DETERMINISTIC MODIFIES SQL DATA
BEGIN
    IF NOT EXISTS (SELECT 1 FROM {s}.shardid_topics WHERE topic = p_topic) THEN
        SIGNAL SQLSTATE '{UNKNOWN_TOPIC}' SET MESSAGE_TEXT = 'UNKNOWN_TOPIC: no such topic: create it with create_topic()';
    END IF;
    UPDATE {s}.shardid_topics SET dropped_at = COALESCE(dropped_at, CURRENT_TIMESTAMP(6)) WHERE topic = p_topic;
    RETURN TRUE;
END$$

-- The ID of one string, assigned (the topic's next) if new: the clients' protocol for one
-- string, as a function. Call it in a short transaction: the topic's row stays locked until
-- the transaction ends.
DROP FUNCTION IF EXISTS {s}.dict_id$$

CREATE FUNCTION {s}.dict_id(p_topic VARBINARY(1024), p_value VARBINARY(4096)) RETURNS BIGINT
    NOT DETERMINISTIC MODIFIES SQL DATA
BEGIN
    DECLARE t INT;
    DECLARE base BIGINT;
    DECLARE dropped BOOLEAN;
    DECLARE found_id BIGINT;
    IF p_value IS NULL OR LENGTH(p_value) = 0 OR LENGTH(p_value) > {MAX_VALUE_LEN} THEN
        SIGNAL SQLSTATE '22023' SET MESSAGE_TEXT = 'INVALID_ARGUMENT: a value is 1 to {MAX_VALUE_LEN} bytes of text';
    END IF;
    SELECT topic_id INTO t FROM {s}.shardid_topics WHERE topic = p_topic;
    IF t IS NULL THEN
        SIGNAL SQLSTATE '{UNKNOWN_TOPIC}' SET MESSAGE_TEXT = 'UNKNOWN_TOPIC: no such topic: create it with create_topic()';
    END IF;
    SELECT id INTO found_id FROM {s}.shardid_strings WHERE topic_id = t AND value = p_value;
    IF found_id IS NOT NULL THEN
        RETURN found_id;
    END IF;
    -- Locked by its primary key, as the clients lock it: one order, no deadlock between them.
    -- After a step back, base is already past what the topic's rate could have assigned since.
    SELECT {base}, dropped_at IS NOT NULL INTO base, dropped
        FROM {s}.shardid_topics WHERE topic = p_topic FOR UPDATE;
    IF dropped THEN
        SIGNAL SQLSTATE '{TOPIC_DROPPED}' SET MESSAGE_TEXT = 'TOPIC_DROPPED: the topic was dropped: it assigns no new IDs';
    END IF;
    -- Another writer may have added it while this one waited for the lock: a locking read
    -- sees it whatever the isolation level.
    SELECT id INTO found_id FROM {s}.shardid_strings WHERE topic_id = t AND value = p_value FOR UPDATE;
    IF found_id IS NOT NULL THEN
        RETURN found_id;
    END IF;
    INSERT INTO {s}.shardid_strings (topic_id, value, id) VALUES (t, p_value, base);
    UPDATE {s}.shardid_topics SET {written} WHERE topic = p_topic;
    RETURN base;
END$$

-- The string of one ID (NULL if never assigned).
DROP FUNCTION IF EXISTS {s}.dict_value$$

CREATE FUNCTION {s}.dict_value(p_topic VARBINARY(1024), p_id BIGINT) RETURNS VARBINARY({MAX_VALUE_LEN})
    NOT DETERMINISTIC READS SQL DATA
BEGIN
    DECLARE t INT;
    DECLARE found VARBINARY({MAX_VALUE_LEN});
    SELECT topic_id INTO t FROM {s}.shardid_topics WHERE topic = p_topic;
    IF t IS NULL THEN
        SIGNAL SQLSTATE '{UNKNOWN_TOPIC}' SET MESSAGE_TEXT = 'UNKNOWN_TOPIC: no such topic: create it with create_topic()';
    END IF;
    SELECT value INTO found FROM {s}.shardid_strings WHERE topic_id = t AND id = p_id;
    RETURN found;
END$$

DELIMITER ;
"
        )
    }
}
