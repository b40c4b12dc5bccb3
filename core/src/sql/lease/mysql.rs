//! The lease's statements on MySQL 8 and MariaDB 10.6 or later (Galera clusters included).
//!
//! `@name` stands for a parameter and `{t}` for the table; `{srv}` for the expression naming the
//! server ([`crate::sql::Dialect::server_identity`]) and the origin of the table's data
//! ([`crate::sql::failover::MysqlOrigin`]: a dump restored into a fresh server with the same
//! `server_id` makes the table anew), `{now}` for the server's clock in Unix
//! milliseconds, `{jump}` for the ceiling a row last written by another server jumps to, and
//! `{epoch}`, `{unit}`, `{skew}`, `{maxunits}`, `{shardbits}` for the layout's numbers, written
//! into the SQL as literals (signed: the `mysql` crate sends its `u64` parameters unsigned, and a
//! difference of two unsigned numbers below 0 is an error).
//!
//! What MySQL lacks, and what stands in for it:
//! - No `UPDATE ... RETURNING`: a statement that writes answers with its reply's *last insert
//!   ID*, which `LAST_INSERT_ID(expr)` sets to `expr` for the row it writes (PyMySQL's
//!   `lastrowid`, mysql2's `insertId`, the `mysql` crate's `last_insert_id()`); a statement
//!   that writes no row leaves it at 0. The drivers answer such a statement with the row
//!   `(affected rows, last insert ID)`, and only the last insert ID decides: the affected rows
//!   of an `UPDATE` count the rows *changed* unless the client set `CLIENT_FOUND_ROWS` (mysql2
//!   and Django do, PyMySQL and the `mysql` crate do not), and a renewal may change nothing.
//!   Every guarded write sets it to the new ceiling plus one, so it is never 0 when the row
//!   still held the token.
//! - No data-modifying CTE, and `SKIP LOCKED` only on `SELECT`: a claim is one single-table
//!   `UPDATE ... ORDER BY shard LIMIT 1` of the first free row of the range, whose last insert
//!   ID carries both the shard and its ceiling (`(ceiling << shard_bits | shard) + 1`: the
//!   layout's time and shard fields fit 64 bits). Instead of skipping a row another claimant
//!   is writing, it waits for that claimant's statement to commit (autocommit: a moment), then
//!   reads the row again and moves on when it was taken. Only when no row of the range is free
//!   does a second statement insert the first shard that has no row yet, and only when there
//!   is none a third counts the held rows (every shard held, or retry).
//! - No `'infinity'`: a session lease's row expires at `9999-12-31 23:59:59`.
//! - Advisory locks are `GET_LOCK` (names at most 64 characters: `shardid <16 hex digits of
//!   the table's and layout's hash> <shard>`), held by the connection until it ends, and
//!   re-entrant within it: a lock the connection already holds is refused as held
//!   (`IS_USED_LOCK(...) = CONNECTION_ID()`), since only another lease on the same server
//!   session can have taken it. On a Galera cluster `GET_LOCK` locks one node only (two nodes
//!   grant the same lock), so a session lease there is refused before it takes any.
//!
//! Times are `DATETIME(6)` in UTC (`UTC_TIMESTAMP(6)`), so no session time zone or daylight
//! saving change moves an expiry. Error numbers stand in for SQLSTATEs: the drivers feed
//! MySQL's number (`1146`) as the code.

/// Creates the table if it is missing. Strings are bytes (`VARBINARY`): no collation compares
/// two tokens or layouts as equal.
pub(crate) const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS {t} (\
    layout VARBINARY(255) NOT NULL, shard BIGINT NOT NULL, ceiling BIGINT NOT NULL DEFAULT 0, \
    holder VARBINARY(1024) NULL, taken_at DATETIME(6) NULL, token VARBINARY(64) NULL, \
    expires_at DATETIME(6) NULL, server VARBINARY(255) NULL, \
    PRIMARY KEY (layout, shard)) ENGINE = InnoDB";

/// When a session lease's row expires: never.
pub(super) const NEVER: &str = "'9999-12-31 23:59:59'";

/// The expiry of a lease renewed now.
const EXPIRY: &str = "UTC_TIMESTAMP(6) + INTERVAL @ttl * 1000 MICROSECOND";

/// The ceiling of a row to write by this server: on a row last written by another one (a
/// promoted replica, which may have lost the last ceiling writes) or before its table was
/// restored from a dump, at least the time unit of the server's clock plus `{skew}` ms.
pub(super) const JUMP: &str = "IF(server IS NOT NULL AND server <> {srv}, \
    GREATEST(ceiling, ({now} + {skew} - {epoch}) DIV {unit}), ceiling)";

/// The floor of a claimed row after a restore (issue 54), as PostgreSQL's `FENCED`: a row last
/// taken before the mark (`{mark}`, Unix ms; 0: none) is raised to `{floor}` (0: no mark
/// and no step back seen). Both are written in as literals, as the layout's numbers.
pub(super) const FENCED: &str = "IF(taken_at IS NULL \
    OR TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', taken_at) DIV 1000 < {mark}, {floor}, 0)";

/// The table's fence row (issue 54; see PostgreSQL's `FENCE`), read before the lease's first
/// claim: `(the mark's time in Unix ms or NULL, whether the fence was written by another
/// server or before the table's data was restored, the server's clock)`, or no row, and then
/// [`ADD_FENCE`].
pub(super) const FENCE: &str = "SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', taken_at) DIV 1000, \
    IF(server IS NOT NULL AND server <> {srv}, 1, 0), {now} FROM {t} WHERE layout = '' AND shard = -1";

/// Adds the fence row, recording this server and the origin of the table's data, when
/// [`FENCE`] found none (a duplicate is ignored: another lease added it).
pub(super) const ADD_FENCE: &str =
    "INSERT IGNORE INTO {t} (layout, shard, ceiling, server) VALUES ('', -1, 0, {srv})";

/// `shardid restored`'s mark in the lease table `{t}` (issue 54): the fence row's `taken_at`
/// set to the server's clock, the row made if missing.
#[cfg(feature = "std")]
pub(crate) const MARK: &str = "INSERT INTO {t} (layout, shard, ceiling, taken_at) \
    VALUES ('', -1, 0, UTC_TIMESTAMP(6)) ON DUPLICATE KEY UPDATE taken_at = UTC_TIMESTAMP(6)";

/// A row the caller may take: never taken or released, expired by the server's clock, or held
/// by a session lease whose lock nobody holds any more.
const FREE: &str = "(expires_at IS NULL OR expires_at <= UTC_TIMESTAMP(6) OR (expires_at = {never} \
    AND IS_USED_LOCK(CONCAT(@lockprefix, shard)) IS NULL))";

/// Claims the first free row of the range. The last insert ID is
/// `(ceiling << shard_bits | shard) + 1` (the ceiling capped at the layout's last time unit:
/// a generator above it makes nothing either way), or 0 when no row was free.
pub(super) const CLAIM: [&str; 5] = [
    "UPDATE {t} SET ceiling = (LAST_INSERT_ID((LEAST(GREATEST({jump}, {fenced}), {maxunits}) << {shardbits} | shard) + 1) - 1) \
     >> {shardbits}, token = @token, holder = @holder, taken_at = UTC_TIMESTAMP(6), server = {srv}, \
     expires_at = ",
    EXPIRY,
    " WHERE layout = @sig AND shard >= @first AND shard < @end AND ",
    FREE,
    " ORDER BY shard LIMIT 1",
];

/// After a [`CLAIM`] found no free row: inserts the first shard of the range that has no row
/// (its last insert ID the shard plus one; none inserted, 0). Two claimants inserting the same
/// shard: the second fails with a duplicate key, and claims again.
pub(super) const INSERT: [&str; 3] = [
    "INSERT INTO {t} (layout, shard, ceiling, token, holder, taken_at, expires_at, server) \
     SELECT @sig, MIN(c.s), {floor} + 0 * LAST_INSERT_ID(MIN(c.s) + 1), @token, @holder, UTC_TIMESTAMP(6), ",
    EXPIRY,
    ", {srv} FROM (SELECT CAST(@first AS SIGNED) AS s UNION ALL SELECT shard + 1 FROM {t} \
     WHERE layout = @sig AND shard >= @first AND shard < @end - 1) AS c \
     LEFT JOIN {t} AS x ON x.layout = @sig AND x.shard = c.s WHERE x.shard IS NULL \
     HAVING MIN(c.s) IS NOT NULL",
];

/// After an [`INSERT`] found every shard with a row: how many of the range are held.
pub(super) const HELD: [&str; 2] = [
    "SELECT COUNT(*) FROM {t} WHERE layout = @sig AND shard >= @first AND shard < @end AND NOT ",
    FREE,
];

/// Tries the shard's lock: 1 granted, 0 held by another session (or already by this one, which
/// only another lease behind a shared server session can have taken), -2 refused on a Galera
/// node; the connection's ID, and the server session's identity for the process-wide check
/// that no two lease connections share one (`{server}`: the server alone, not the origin of the
/// table's data, which a first lease may read before the table exists).
pub(super) const TRY_LOCK: &str = "SELECT IF({galera}, -2, IF(IS_USED_LOCK(CONCAT(@lockprefix, @shard)) = CONNECTION_ID(), 0, \
    GET_LOCK(CONCAT(@lockprefix, @shard), 0))), CONNECTION_ID(), CONCAT_WS(' ', @@hostname, @@port, {server}, CONNECTION_ID())";

/// Gives back a lock taken by [`TRY_LOCK`] whose row an expiring lease holds.
pub(super) const UNLOCK: &str = "SELECT RELEASE_LOCK(CONCAT(@lockprefix, @shard))";

/// Marks the shard taken by a session lease once its lock is held, when its row is free (a
/// session holder whose lock this session now holds is gone); the last insert ID the
/// recorded ceiling plus one, 0 when the row is missing or an expiring lease holds it.
pub(super) const SESSION_CLAIM: &str = "UPDATE {t} SET ceiling = CAST(LAST_INSERT_ID(GREATEST({jump}, {fenced}) + 1) AS SIGNED) - 1, \
    token = @token, holder = @holder, taken_at = UTC_TIMESTAMP(6), server = {srv}, expires_at = {never} \
    WHERE layout = @sig AND shard = @shard \
    AND (expires_at IS NULL OR expires_at <= UTC_TIMESTAMP(6) OR expires_at = {never})";

/// After a [`SESSION_CLAIM`] updated nothing: adds the shard's row. A duplicate key: an
/// expiring lease holds it.
pub(super) const SESSION_INSERT: &str = "INSERT INTO {t} \
    (layout, shard, ceiling, token, holder, taken_at, expires_at, server) \
    VALUES (@sig, @shard, {floor}, @token, @holder, UTC_TIMESTAMP(6), {never}, {srv})";

/// Extends an expiring lease by its time to live from the server's clock, only while the row
/// holds the lease's token (last insert ID 0: taken over). The last insert ID is the server's
/// clock in Unix milliseconds (never 0), for [`super::LeaseProtocol`] to compare with the
/// client's in the same round trip.
pub(super) const RENEW: [&str; 1] = ["UPDATE {t} SET ceiling = {jump}, server = {srv}, \
     expires_at = UTC_TIMESTAMP(6) + INTERVAL (@ttl * 1000 + 0 * LAST_INSERT_ID({now})) MICROSECOND \
     WHERE layout = @sig AND shard = @shard AND token = @token"];

/// The server's clock in Unix milliseconds, read before a claim: the claim's answer (its last
/// insert ID) has no room for it.
pub(super) const CLOCK: &str = "SELECT {now}";

/// Raises an expiring lease's ceiling (and renews it), only while the row holds its token.
pub(super) const RECORD: [&str; 3] = [
    "UPDATE {t} SET ceiling = CAST(LAST_INSERT_ID(GREATEST({jump}, @units) + 1) AS SIGNED) - 1, \
     server = {srv}, expires_at = ",
    EXPIRY,
    " WHERE layout = @sig AND shard = @shard AND token = @token",
];

/// Raises a session lease's ceiling, only while the row holds its token and this statement
/// runs on the connection that took the lock and still holds it.
pub(super) const SESSION_RECORD: &str = "UPDATE {t} \
    SET ceiling = CAST(LAST_INSERT_ID(GREATEST({jump}, @units) + 1) AS SIGNED) - 1, server = {srv} \
    WHERE layout = @sig AND shard = @shard AND token = @token AND CONNECTION_ID() = @pid \
    AND IS_USED_LOCK(CONCAT(@lockprefix, @shard)) = CONNECTION_ID()";

/// Frees the shard at once, if the row still holds the lease's token.
pub(super) const RELEASE: &str = "UPDATE {t} SET ceiling = CAST(LAST_INSERT_ID({jump} + 1) AS SIGNED) - 1, \
    server = {srv}, token = NULL, holder = NULL, expires_at = NULL \
    WHERE layout = @sig AND shard = @shard AND token = @token";

/// `ER_NO_SUCH_TABLE`: the table is missing.
pub(super) const NO_SUCH_TABLE: &str = "1146";
/// `ER_TABLE_EXISTS_ERROR`: a concurrent session made the table first.
pub(super) const TABLE_EXISTS: &str = "1050";
/// `ER_DUP_ENTRY`: another claimant inserted the shard's row first.
pub(super) const DUPLICATE_KEY: &str = "1062";
/// Whether the error `code` rolled a statement back whole: the MySQL family's one rule
/// ([`crate::sql::mysql::rolled_back`]); a claim that was is sent again.
pub(super) fn rolled_back(code: &str) -> bool {
    code.parse().is_ok_and(crate::sql::mysql::rolled_back)
}

/// Whether a held lease's statement (a renewal, a ceiling's record, a release) that failed with
/// the error `code` is sent again: [`rolled_back`], and what a Galera node answers while the
/// cluster evicts a node or while it is outside the primary component:
/// `ER_ERROR_DURING_COMMIT` (1180, "Error while appending streaming replication fragment
/// (provider status: Not connected to Primary Component)": the write set was not replicated,
/// so the statement was rolled back) and `ER_UNKNOWN_COM_ERROR` (1047, "WSREP has not yet
/// prepared node for application use": the statement was not run).
pub(super) fn resent(code: &str) -> bool {
    rolled_back(code) || matches!(code, "1180" | "1047")
}
