//! The lease's statements in PostgreSQL's dialect.
//!
//! `@name` stands for a parameter and `{t}` for the table (always `"schema"."table"`, quoted: never
//! found through `search_path`, see [`CHECK_TABLE`]), `{tli}` for the server's timeline,
//! `{sysid}` for its cluster's system identifier and `{jump}` for the ceiling a row of another
//! timeline or cluster jumps to; every parameter is cast, so a
//! driver may send it untyped (node-postgres sends text) or as whatever integer type it picks
//! (psycopg sends `int2` for small numbers).
//!
//! Across a failover ([`crate::sql::failover`]): every write records the timeline and the
//! cluster's system identifier, and a row last written on another timeline (a promoted standby,
//! point-in-time recovery: either may have lost the holder's last ceiling writes or claims) or
//! in another cluster (a `pg_dump` restored elsewhere: a new provider, an upgrade by dump, while
//! the old cluster's holders went on) first has its ceiling raised to the time unit of the
//! database's clock plus `@skew` milliseconds: above every ID a holder dated by a clock at most
//! that far ahead, whatever ceiling was lost. Without the system identifier a holder on a host
//! whose clock is behind, first on the restored cluster, repeated IDs the old cluster's holder
//! handed out after the dump (`tests/postgres/test_dump_restore.py`'s `probe_lease`).

/// Who owns the lease table, read before the lease's first write to it (and again after it
/// made the table). Returns one row: the table's schema (the one named; with none named, the
/// one where `search_path` finds a table of that name, else `current_schema()`, where it is
/// then made: where earlier versions found or made it, so a fleet upgraded one process at a
/// time keeps one table), the owner's name (`NULL`: no such table), whether the current user
/// is the owner or a member of it (`pg_auth_members`, followed; not `pg_has_role`, which
/// says yes to a superuser for every role), and the current user.
///
/// Why: where another role may create tables in a schema the lease uses (`public` up to
/// PostgreSQL 14, by default), its table of that name, with a trigger, would run that role's
/// code as the lease's user at the lease's first write, and could zero the ceilings. A table
/// not owned by the lease's user's roles is refused before any write. A plain `SELECT`: behind
/// a transaction pooler it needs no session state. From then on every statement names the
/// schema, so no later `search_path` lookup can find another table.
pub(super) const CHECK_TABLE: &str = "SELECT coalesce(n.nspname, {schema}), \
    pg_get_userbyid(c.relowner), c.relowner IN (WITH RECURSIVE mine(r) AS \
    (SELECT oid FROM pg_roles WHERE rolname = current_user UNION \
    SELECT m.roleid FROM pg_auth_members AS m JOIN mine ON m.member = mine.r) SELECT r FROM mine), \
    current_user::text FROM (SELECT) AS one LEFT JOIN pg_class AS c ON c.oid = to_regclass(@name::text) \
    LEFT JOIN pg_namespace AS n ON n.oid = c.relnamespace";

/// The database's clock in Unix milliseconds, which the claims and the renewal return beside
/// their answer, for [`super::LeaseProtocol`] to compare with the client's (no extra round
/// trip): `now()`, the statement's start in autocommit, read after the client sent it.
const NOW_MS: &str = "floor(extract(epoch FROM now()) * 1000)::bigint";

/// Creates the table if it is missing. Concurrent sessions may fail with one of
/// [`super::LOST_CREATE_RACE`]: the table then exists.
pub(super) const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS {t} (\
    layout text NOT NULL, shard bigint NOT NULL, ceiling bigint NOT NULL DEFAULT 0, \
    holder text, taken_at timestamptz, token text, expires_at timestamptz, tli integer, \
    sysid bigint, PRIMARY KEY (layout, shard))";

/// Adds the columns a table made by shardid 0.1 (session leases only) lacks.
pub(super) const UPGRADE_TABLE: &str = "ALTER TABLE {t} \
    ADD COLUMN IF NOT EXISTS token text, ADD COLUMN IF NOT EXISTS expires_at timestamptz, \
    ADD COLUMN IF NOT EXISTS tli integer, ADD COLUMN IF NOT EXISTS sysid bigint";

/// The ceiling of a row to write on this timeline of this cluster: on a row last written on
/// another timeline or in another cluster, at least the time unit of the database's clock plus
/// `@skew` ms. (A row of an older shardid, with no system identifier yet, is judged by its
/// timeline alone, once.)
pub(super) const JUMP: &str = "CASE WHEN ({r}tli IS NOT NULL AND {r}tli <> {tli}) \
    OR ({r}sysid IS NOT NULL AND {r}sysid <> {sysid}) THEN greatest({r}ceiling, \
    (floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint + @skew::bigint - @epoch::bigint) \
    / @unit::bigint) ELSE {r}ceiling END";

/// The floor of a claimed row after a restore (issue 54): a row last taken before the
/// mark `shardid restored` left in the table's fence row ([`FENCE`], `@mark`, Unix ms; 0: none)
/// is raised to `@floor`, the time unit of the database's clock plus the failover rule's skew
/// when the fence was read (0: no mark and no step back seen). A row taken since is its own.
pub(super) const FENCED: &str = "CASE WHEN {r}taken_at IS NULL \
    OR floor(extract(epoch FROM {r}taken_at) * 1000)::bigint < @mark::bigint THEN @floor::bigint ELSE 0 END";

/// The table's fence row (issue 54), read before the lease's first claim: `(the mark's time in
/// Unix ms or NULL, whether the fence was written on another timeline or in another cluster,
/// the database's clock)`, or no row. The fence is the row of layout `''` (no layout's
/// signature: no claim, count or status reads it) and shard -1, in the lease table itself, so
/// it is in every backup that has the table's rows: `shardid restored` sets its `taken_at` to
/// the database's clock ([`MARK`]), and its `tli` and `sysid` are those of the first claim
/// that found no fence, which this statement adds (seen by the next lease's read, not this
/// one's: a table without a fence has no restore to account for).
pub(super) const FENCE: &str = "WITH added AS (INSERT INTO {t} (layout, shard, ceiling, tli, sysid) \
    VALUES ('', -1, 0, {tli}, {sysid}) ON CONFLICT DO NOTHING RETURNING 1) \
    SELECT floor(extract(epoch FROM taken_at) * 1000)::bigint, \
    coalesce((tli IS NOT NULL AND tli <> {tli}) OR (sysid IS NOT NULL AND sysid <> {sysid}), false), \
    floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint \
    FROM {t} WHERE layout = '' AND shard = -1";

/// `shardid restored`'s mark in the lease table `{t}` (issue 54): the fence row's `taken_at`
/// set to the database's clock, the row made if missing; a query returning no row, as every
/// statement of a status.
#[cfg(feature = "std")]
pub(crate) const MARK: &str = "WITH m AS (INSERT INTO {t} AS l (layout, shard, ceiling, taken_at) \
    VALUES ('', -1, 0, now()) ON CONFLICT (layout, shard) DO UPDATE SET taken_at = now() \
    RETURNING 1) SELECT 1 FROM m WHERE false";

/// A row the caller may take: never taken or released (`expires_at` null), expired by the
/// database's clock, or held by a session lease (`'infinity'`) whose advisory lock no session
/// holds any more.
const FREE: &str = "(expires_at IS NULL OR expires_at <= now() OR (expires_at = 'infinity' \
    AND NOT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' \
    AND classid = hashtext(@key::text)::oid AND objid = shard::oid AND objsubid = 2)))";

/// Claims the first free shard of the range in one statement: an existing free row (locked
/// with `SKIP LOCKED`, so concurrent claimants take different rows), else the first shard with
/// no row yet (`ON CONFLICT DO NOTHING` against a concurrent insert of the same shard).
/// Returns one row: the shard taken and its ceiling (both null when none was taken), how many
/// shards of the range were held by live leases when the statement started, and the
/// database's clock ([`NOW_MS`]).
pub(super) const CLAIM: [&str; 7] = [
    "WITH free AS (SELECT shard FROM {t} WHERE layout = @sig::text \
     AND shard >= @first::bigint AND shard < @end::bigint AND ",
    FREE,
    " ORDER BY shard LIMIT 1 FOR UPDATE SKIP LOCKED), \
     reused AS (UPDATE {t} AS l SET token = @token::text, holder = @holder::text, \
     taken_at = now(), expires_at = now() + @ttl::bigint * interval '1 millisecond', \
     ceiling = greatest({jump l.}, {fenced l.}), tli = {tli}, sysid = {sysid} \
     FROM free WHERE l.layout = @sig::text AND l.shard = free.shard \
     RETURNING l.shard, l.ceiling), \
     added AS (INSERT INTO {t} (layout, shard, ceiling, token, holder, taken_at, expires_at, tli, sysid) \
     SELECT @sig::text, s, @floor::bigint, @token::text, @holder::text, now(), \
     now() + @ttl::bigint * interval '1 millisecond', {tli}, {sysid} \
     FROM generate_series(@first::bigint, @end::bigint - 1) AS s \
     WHERE NOT EXISTS (SELECT FROM reused) \
     AND NOT EXISTS (SELECT FROM {t} WHERE layout = @sig::text AND shard = s) \
     LIMIT 1 ON CONFLICT DO NOTHING RETURNING shard, ceiling) \
     SELECT taken.shard, taken.ceiling, (SELECT count(*) FROM {t} WHERE layout = @sig::text \
     AND shard >= @first::bigint AND shard < @end::bigint AND NOT ",
    FREE,
    ") AS held, ",
    NOW_MS,
    " FROM (SELECT) AS one \
     LEFT JOIN (SELECT * FROM reused UNION ALL SELECT * FROM added) AS taken ON true",
];

/// Tries the shard's advisory lock; returns whether it was granted, and the server session
/// that holds it (its process ID, and the server's identity for the process-wide check that
/// no two lease connections share one session).
pub(super) const TRY_LOCK: &str = "SELECT pg_try_advisory_lock(hashtext(@key::text), @shard::int), \
    pg_backend_pid(), concat_ws(' ', inet_server_addr(), inet_server_port(), \
    pg_postmaster_start_time(), pg_backend_pid())";

/// Gives back a lock taken by [`TRY_LOCK`] whose row an expiring lease holds.
pub(super) const UNLOCK: &str = "SELECT pg_advisory_unlock(hashtext(@key::text), @shard::int)";

/// Marks the shard taken by a session lease once its lock is held: the row is added, or taken
/// over when free (a session holder whose lock this session now holds is gone); a row an
/// expiring lease holds is left alone (no row returned). Returns the recorded ceiling and the
/// database's clock ([`NOW_MS`]).
pub(super) const SESSION_CLAIM: [&str; 2] = [
    "INSERT INTO {t} AS l \
    (layout, shard, ceiling, token, holder, taken_at, expires_at, tli, sysid) \
    VALUES (@sig::text, @shard::bigint, @floor::bigint, @token::text, @holder::text, now(), 'infinity', {tli}, {sysid}) \
    ON CONFLICT (layout, shard) DO UPDATE SET token = excluded.token, holder = excluded.holder, \
    taken_at = now(), expires_at = 'infinity', ceiling = greatest({jump l.}, {fenced l.}), tli = {tli}, sysid = {sysid} \
    WHERE l.expires_at IS NULL OR l.expires_at <= now() OR l.expires_at = 'infinity' \
    RETURNING l.ceiling, ",
    NOW_MS,
];

/// Extends an expiring lease by its time to live from the database's clock, only while the
/// row still holds the lease's token: one row updated, `(shard, the database's clock)`, or
/// none when the lease was taken over.
pub(super) const RENEW: [&str; 2] = [
    "UPDATE {t} \
    SET expires_at = now() + @ttl::bigint * interval '1 millisecond', ceiling = {jump}, \
    tli = {tli}, sysid = {sysid} \
    WHERE layout = @sig::text AND shard = @shard::bigint AND token = @token::text \
    RETURNING shard, ",
    NOW_MS,
];

/// Raises an expiring lease's ceiling (and renews it), only while the row holds its token.
pub(super) const RECORD: &str = "UPDATE {t} SET ceiling = greatest({jump}, @units::bigint), \
    expires_at = now() + @ttl::bigint * interval '1 millisecond', tli = {tli}, sysid = {sysid} \
    WHERE layout = @sig::text AND shard = @shard::bigint AND token = @token::text \
    RETURNING shard";

/// Raises a session lease's ceiling, only while the row holds its token and this statement
/// runs in the server session that took the lock and still holds it: behind a transaction
/// pooler, a statement on another server session updates nothing, and the lease is lost.
pub(super) const SESSION_RECORD: &str = "UPDATE {t} \
    SET ceiling = greatest({jump}, @units::bigint), tli = {tli}, sysid = {sysid} \
    WHERE layout = @sig::text AND shard = @shard::bigint AND token = @token::text \
    AND pg_backend_pid() = @pid::int AND EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' \
    AND pid = pg_backend_pid() AND classid = hashtext(@key::text)::oid \
    AND objid = @shard::bigint::oid AND objsubid = 2) RETURNING shard";

/// Frees the shard at once, if the row still holds the lease's token.
pub(super) const RELEASE: &str = "UPDATE {t} SET token = NULL, holder = NULL, expires_at = NULL, \
    ceiling = {jump}, tli = {tli}, sysid = {sysid} \
    WHERE layout = @sig::text AND shard = @shard::bigint AND token = @token::text \
    RETURNING shard";

/// `undefined_table`: the table is missing.
pub(super) const UNDEFINED_TABLE: &str = "42P01";
/// `undefined_column`: a table of an older shardid.
pub(super) const UNDEFINED_COLUMN: &str = "42703";
/// `duplicate_column`: a concurrent upgrade added the column first.
pub(super) const DUPLICATE_COLUMN: &str = "42701";
