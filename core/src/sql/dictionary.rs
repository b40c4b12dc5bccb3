//! The PostgreSQL side of the string ↔ ID dictionary ([`crate::dictionary`]): one row per
//! *topic* holding its next ID, one row per string, and the functions that are the contract
//! every client and test uses.
//!
//! - `<schema>.create_topic(topic text)`, `<schema>.drop_topic(topic text)`: a dropped topic is
//!   a tombstone — its strings and IDs stay readable, nothing new is assigned (SQLSTATE
//!   `SI004`), and its name is never used again. An unknown topic is SQLSTATE `SI003`.
//! - `<schema>.dict_id(topic, value) → bigint`, `<schema>.dict_ids(topic, values text[]) →
//!   bigint[]`: get or create, results in the order given, a string repeated in one batch gets
//!   one ID.
//! - `<schema>.dict_lookup(topic, values text[]) → bigint[]`: read only, NULL for strings never
//!   seen; it never assigns.
//! - `<schema>.dict_value(topic, id) → text`, `<schema>.dict_values(topic, ids bigint[]) →
//!   text[]`: NULL for IDs never assigned.
//!
//! Why no sequence: IDs come from the topic row's `next`, advanced by the same transaction that
//! inserts the strings it numbers. A writer first looks its strings up without a lock (the
//! common case once a dictionary is warm); only for strings still missing does it lock the
//! topic row (`FOR NO KEY UPDATE`), look again — a writer that held the lock before it has
//! committed by then, and its strings are found, not numbered twice — then insert the rest
//! numbered `next, next + 1, ...` in the order they first appear, and advance `next`. So:
//! - a rolled-back or cancelled batch gives its numbers back (the row's update rolls back with
//!   the inserts): IDs of a topic are `0..n` with no hole;
//! - concurrent writers of the same new string agree on one ID and burn none;
//! - a call takes one row lock, so no two batches can deadlock (a caller's own transaction
//!   spanning several topics in different orders can, as with any rows);
//! - under REPEATABLE READ or SERIALIZABLE a concurrent writer of the same topic is a
//!   serialization failure (SQLSTATE `40001`): retry the transaction. The clients call in
//!   autocommit, READ COMMITTED.
//!
//! Across a failover or a restore ([`super::failover`]): each topic row records the timeline
//! and system it was last written on, when, its highest rate of new IDs and its largest batch;
//! the first new string after a step back (another timeline or system, or marked `restored`)
//! numbers from above what that rate could have assigned since, past every ID the lost state
//! could have assigned: no ID is ever given to two strings (a string numbered in the lost state
//! gets a new ID, and the topic a hole: its IDs are dense while its state goes forward). Writes
//! of new strings wait for a synchronous standby where one is configured
//! (`synchronous_commit` is raised to `on` for them), so under synchronous replication a
//! string's ID never changes.
//!
//! The lock is held until the caller's transaction ends: call `dict_ids` in a short transaction
//! (the clients do) or new strings of that topic wait for it.

use core::fmt::{self, Display, Formatter};

use super::failover::{
    FLOOR_BATCHES, LOST_WRITES, MARGIN, RATE_WINDOW_MS, SKEW_MS, SYSTEM_ID, TIMELINE,
};
use super::{Placeholders, SchemaStatement, SqlError, check_schema};
use crate::dictionary::{MAX_TOPIC_LEN, MAX_VALUE_LEN};

/// The SQLSTATE of an unknown topic.
pub const UNKNOWN_TOPIC: &str = "SI003";
/// The SQLSTATE of a new string for a dropped topic, or of creating a topic dropped before.
pub const TOPIC_DROPPED: &str = "SI004";

/// The DDL of the dictionary in one schema; render it with [`Display`].
#[derive(Clone, Copy, Debug)]
#[must_use]
pub struct Dictionary<'a> {
    schema: &'a str,
}

impl<'a> Dictionary<'a> {
    /// # Errors
    /// [`SqlError::SchemaName`], as for [`super::Postgres::new`].
    pub fn new(schema: &'a str) -> Result<Self, SqlError> {
        check_schema(schema)?;
        Ok(Self { schema })
    }

    /// The schema.
    pub const fn schema(&self) -> &'a str {
        self.schema
    }

    /// The DDL that removes what this installs (functions, then the tables: the strings
    /// too), leaving the schema. Render it with [`Display`].
    pub const fn uninstall(&self) -> DictionaryUninstall<'a> {
        DictionaryUninstall {
            schema: self.schema,
        }
    }

    /// The statements a client sends, with its placeholders.
    pub const fn statements(&self, placeholders: Placeholders) -> DictionaryStatements<'a> {
        DictionaryStatements {
            schema: self.schema,
            placeholders,
        }
    }
}

/// The DDL that removes the dictionary from a schema ([`Dictionary::uninstall`]).
#[derive(Clone, Copy, Debug)]
#[must_use]
pub struct DictionaryUninstall<'a> {
    schema: &'a str,
}

/// Every function the install creates, with its argument types, dependents first.
const FUNCTIONS: [&str; 16] = [
    "dict_value(text, bigint)",
    "dict_values(text, bigint[])",
    "dict_id(text, text)",
    "dict_ids(text, text[])",
    "dict_lookup(text, text[])",
    "shardid_lock_topic(integer, text)",
    "shardid_topic_written(integer, bigint, bigint, timestamptz)",
    "shardid_find(integer, text[])",
    "shardid_find_values(integer, bigint[])",
    "drop_topic(text)",
    "create_topic(text)",
    "shardid_topic_fenced(text)",
    "shardid_topic_after(text, bigint)",
    "shardid_topic_id(text)",
    "shardid_check_values(text[])",
    "shardid_check_topic(text)",
];

impl Display for DictionaryUninstall<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        super::uninstall::write_uninstall(
            f,
            self.schema,
            "dictionary (its functions, topics and strings)",
            &FUNCTIONS,
            &[
                ("TABLE", "shardid_strings"),
                ("TABLE", "shardid_topics"),
                ("TABLE", "shardid_topic_fence"),
            ],
        )
    }
}

/// The statements a dictionary client sends; each takes its parameters in the order its method
/// says. Render with [`Display`].
#[derive(Clone, Copy, Debug)]
pub struct DictionaryStatements<'a> {
    schema: &'a str,
    placeholders: Placeholders,
}

impl<'a> DictionaryStatements<'a> {
    const fn statement(&self, text: (&'static str, &'static str)) -> SchemaStatement<'a> {
        SchemaStatement::new(self.schema, self.placeholders, text)
    }

    /// Gets or creates IDs; parameters `(topic, values text[])`; one `bigint[]`.
    pub const fn ids(&self) -> SchemaStatement<'a> {
        self.statement(("SELECT ", ".dict_ids(?::text, ?::text[])"))
    }

    /// Looks IDs up, never creating; parameters `(topic, values text[])`; one `bigint[]`.
    pub const fn lookup(&self) -> SchemaStatement<'a> {
        self.statement(("SELECT ", ".dict_lookup(?::text, ?::text[])"))
    }

    /// The strings of IDs; parameters `(topic, ids bigint[])`; one `text[]`.
    pub const fn values(&self) -> SchemaStatement<'a> {
        self.statement(("SELECT ", ".dict_values(?::text, ?::bigint[])"))
    }

    /// Creates a topic if it does not exist; parameter `(topic)`.
    pub const fn create_topic(&self) -> SchemaStatement<'a> {
        self.statement(("SELECT ", ".create_topic(?::text)"))
    }

    /// Drops a topic (a tombstone); parameter `(topic)`.
    pub const fn drop_topic(&self) -> SchemaStatement<'a> {
        self.statement(("SELECT ", ".drop_topic(?::text)"))
    }
}

impl Display for Dictionary<'_> {
    #[allow(clippy::too_many_lines)] // one template, read top to bottom
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = self.schema;
        let version = env!("CARGO_PKG_VERSION");
        let tli = TIMELINE;
        let lost_writes = LOST_WRITES;
        let sysid = SYSTEM_ID;
        let margin = MARGIN;
        let floor = FLOOR_BATCHES;
        let window_ms = RATE_WINDOW_MS;
        let skew_ms = SKEW_MS;
        write!(
            f,
            "\
-- shardid {version}: a string <-> ID dictionary, in schema {s}.
-- Generated by shardid; safe to run again (it replaces the functions and keeps the data).

CREATE SCHEMA IF NOT EXISTS {s};

-- One row per topic: the next ID it assigns; the timeline and system it was last written on and
-- when (the database's clock); the highest rate it assigned IDs at (IDs a second, measured over
-- windows of at least {window_ms} ms: the current one started at window_at and assigned
-- window_n), its largest batch of new strings, and whether an operator marked it restored. A
-- dropped topic keeps its row (a tombstone).
CREATE TABLE IF NOT EXISTS {s}.shardid_topics (
    topic text COLLATE \"C\" PRIMARY KEY,
    topic_id integer GENERATED ALWAYS AS IDENTITY UNIQUE,
    next bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    dropped_at timestamptz
);
-- Added apart: a table of an older version gains them, a new one makes no notice.
ALTER TABLE {s}.shardid_topics ADD COLUMN IF NOT EXISTS tli integer, ADD COLUMN IF NOT EXISTS sysid bigint,
    ADD COLUMN IF NOT EXISTS written_at timestamptz, ADD COLUMN IF NOT EXISTS rate double precision NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS window_at timestamptz, ADD COLUMN IF NOT EXISTS window_n bigint NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS batch bigint NOT NULL DEFAULT 0, ADD COLUMN IF NOT EXISTS restored boolean NOT NULL DEFAULT false,
    ADD COLUMN IF NOT EXISTS started timestamptz, ADD COLUMN IF NOT EXISTS back_at timestamptz,
    ADD COLUMN IF NOT EXISTS back_seen timestamptz;

-- Where a topic created after a step back starts (issue 54): one row, in the schema so that it
-- is in every backup of the topics. `fence`, set by the first topic created after a step back
-- (shardid_topic_fenced), at `fenced_at`, and never lowered; the timeline, system and start it
-- was set on, and whether `shardid restored` marked it, as a topic's row: the step back it has
-- not yet accounted for.
CREATE TABLE IF NOT EXISTS {s}.shardid_topic_fence (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    fence bigint NOT NULL DEFAULT 0,
    fenced_at timestamptz NOT NULL DEFAULT '-infinity',
    tli integer,
    sysid bigint,
    started timestamptz,
    restored boolean NOT NULL DEFAULT false
);
INSERT INTO {s}.shardid_topic_fence (tli, sysid, started) VALUES ({tli}, {sysid}, pg_postmaster_start_time())
    ON CONFLICT DO NOTHING;

-- One row per string of a topic. Written only by the functions below.
CREATE TABLE IF NOT EXISTS {s}.shardid_strings (
    topic_id integer NOT NULL,
    value text COLLATE \"C\" NOT NULL,
    id bigint NOT NULL,
    PRIMARY KEY (topic_id, value),
    UNIQUE (topic_id, id)
);

-- The checks every function makes on its arguments (SQLSTATE 22023, INVALID_ARGUMENT).
CREATE OR REPLACE FUNCTION {s}.shardid_check_topic(topic text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE AS $shardid$
BEGIN
    IF topic IS NULL OR topic = '' OR octet_length(topic) > {MAX_TOPIC_LEN} THEN
        RAISE EXCEPTION 'INVALID_ARGUMENT: a topic is 1 to {MAX_TOPIC_LEN} bytes of text, not %', quote_nullable(left(topic, 40))
            USING ERRCODE = '22023';
    END IF;
END
$shardid$;

CREATE OR REPLACE FUNCTION {s}.shardid_check_values(\"values\" text[]) RETURNS void
    LANGUAGE plpgsql IMMUTABLE AS $shardid$
DECLARE
    bad integer;
BEGIN
    IF \"values\" IS NULL THEN
        RAISE EXCEPTION 'INVALID_ARGUMENT: values must be an array of text, not NULL' USING ERRCODE = '22023';
    END IF;
    SELECT ord INTO bad FROM unnest(\"values\") WITH ORDINALITY AS v(value, ord)
        WHERE v.value IS NULL OR v.value = '' OR octet_length(v.value) > {MAX_VALUE_LEN} LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'INVALID_ARGUMENT: a value is 1 to {MAX_VALUE_LEN} bytes of text; value % is %', bad - 1,
            CASE WHEN \"values\"[bad] IS NULL THEN 'NULL' WHEN \"values\"[bad] = '' THEN 'empty'
                 ELSE octet_length(\"values\"[bad]) || ' bytes long' END
            USING ERRCODE = '22023';
    END IF;
END
$shardid$;

-- The topic's number, for reading (a dropped topic still answers).
CREATE OR REPLACE FUNCTION {s}.shardid_topic_id(topic text) RETURNS integer
    LANGUAGE plpgsql STABLE AS $shardid$
#variable_conflict use_column
DECLARE
    found_id integer;
BEGIN
    PERFORM {s}.shardid_check_topic(shardid_topic_id.topic);
    SELECT t.topic_id INTO found_id FROM {s}.shardid_topics AS t WHERE t.topic = shardid_topic_id.topic;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'UNKNOWN_TOPIC: no topic % in {s}: create it with {s}.create_topic()', quote_literal(shardid_topic_id.topic)
            USING ERRCODE = '{UNKNOWN_TOPIC}';
    END IF;
    RETURN found_id;
END
$shardid$;

-- Where a topic created now starts: the schema's fence (shardid_topic_fence), brought up to
-- date first when the state stepped back since it was last set (the fence's row stepped back
-- past, as a topic's): from the topics stepped back past and those rewritten since (back_at,
-- back_seen), {margin} times the highest rate of any topic from the last write the restored
-- state remembers to now plus {skew_ms} ms, plus {floor} of the largest batch (topics never
-- measured: {lost_writes}), as each topic's own skip (shardid_lock_topic). A topic of the lost
-- state by the same name assigned no ID there.
CREATE OR REPLACE FUNCTION {s}.shardid_topic_fenced(topic text) RETURNS bigint
    LANGUAGE plpgsql VOLATILE AS $shardid$
#variable_conflict use_variable
DECLARE
    clock timestamptz := clock_timestamp();
    here integer := {tli};
    f {s}.shardid_topic_fence;
    last timestamptz;
    top double precision;
    widest bigint;
    unmeasured boolean;
BEGIN
    INSERT INTO {s}.shardid_topic_fence (restored) VALUES (true) ON CONFLICT DO NOTHING; -- a row lost: as marked
    SELECT * INTO f FROM {s}.shardid_topic_fence FOR UPDATE;
    IF (f.tli IS NOT NULL AND f.tli <> here) OR f.restored OR (f.sysid IS NOT NULL AND f.sysid <>
            CASE WHEN f.started = pg_postmaster_start_time() THEN f.sysid ELSE {sysid} END) THEN
        SELECT max(CASE WHEN (tt.tli IS NOT NULL AND tt.tli <> here) OR tt.restored OR (tt.sysid IS NOT NULL AND tt.sysid <>
                             CASE WHEN tt.started = pg_postmaster_start_time() THEN tt.sysid ELSE {sysid} END)
                        THEN coalesce(tt.written_at, tt.created_at) WHEN tt.back_seen > f.fenced_at THEN tt.back_at END),
               max(CASE WHEN tt.window_at IS NULL THEN tt.rate
                        ELSE greatest(tt.rate, tt.window_n / greatest(extract(epoch FROM coalesce(tt.written_at, tt.created_at) - tt.window_at)::float8,
                                                                      {window_ms} / 1000.0)) END),
               max(tt.batch), bool_or(tt.window_at IS NULL AND tt.next > 0)
            INTO last, top, widest, unmeasured
            FROM {s}.shardid_topics AS tt WHERE tt.topic <> shardid_topic_fenced.topic;
        IF last IS NOT NULL THEN
            f.fence := greatest(f.fence, {floor} * greatest(widest, 1)
                + ceil({margin} * top * (greatest(extract(epoch FROM clock - last)::float8, 0) + {skew_ms} / 1000.0))::bigint
                + CASE WHEN unmeasured THEN {lost_writes} ELSE 0 END);
            f.fenced_at := clock;
        END IF;
        UPDATE {s}.shardid_topic_fence AS r SET fence = f.fence, fenced_at = f.fenced_at, tli = here, sysid = {sysid},
            started = pg_postmaster_start_time(), restored = false;
    END IF;
    RETURN f.fence;
END
$shardid$;

-- `shardid restored --after-topic TOPIC=LAST` (issue 54): the operator knows the last ID the
-- topic assigned (the margin added), so its next is right above it (never lower than it is),
-- and the row is no longer stepped back. A topic the restored data lacks is made so, past no
-- fence; a dropped one is left as it is. Returns the topic's next ID.
CREATE OR REPLACE FUNCTION {s}.shardid_topic_after(topic text, last bigint) RETURNS bigint
    LANGUAGE plpgsql VOLATILE AS $shardid$
#variable_conflict use_column
DECLARE
    result bigint;
BEGIN
    PERFORM {s}.shardid_check_topic(shardid_topic_after.topic);
    INSERT INTO {s}.shardid_topics AS t (topic, next, tli, sysid, started, written_at, window_at)
        VALUES (shardid_topic_after.topic, shardid_topic_after.last + 1, {tli}, {sysid}, pg_postmaster_start_time(), clock_timestamp(), clock_timestamp())
        ON CONFLICT (topic) DO UPDATE SET next = CASE WHEN t.dropped_at IS NULL THEN greatest(t.next, shardid_topic_after.last + 1) ELSE t.next END,
            tli = {tli}, sysid = {sysid}, started = pg_postmaster_start_time(), restored = false,
            written_at = clock_timestamp(), window_at = clock_timestamp(), window_n = 0
        RETURNING t.next INTO result;
    RETURN result;
END
$shardid$;

-- Creates a topic (IDs from 0, or after a step back from the schema's fence:
-- shardid_topic_fenced); an existing one is left as it is. A dropped name is refused.
CREATE OR REPLACE FUNCTION {s}.create_topic(topic text) RETURNS void
    LANGUAGE plpgsql VOLATILE AS $shardid$
#variable_conflict use_column
BEGIN
    PERFORM {s}.shardid_check_topic(create_topic.topic);
    INSERT INTO {s}.shardid_topics (topic, tli, sysid, started, written_at, window_at)
        VALUES (create_topic.topic, {tli}, {sysid}, pg_postmaster_start_time(), clock_timestamp(), clock_timestamp()) ON CONFLICT (topic) DO NOTHING;
    IF FOUND THEN
        UPDATE {s}.shardid_topics AS t SET next = {s}.shardid_topic_fenced(create_topic.topic)
            WHERE t.topic = create_topic.topic;
    END IF;
    IF EXISTS (SELECT 1 FROM {s}.shardid_topics AS t WHERE t.topic = create_topic.topic AND t.dropped_at IS NOT NULL) THEN
        RAISE EXCEPTION 'TOPIC_DROPPED: topic % in {s} was dropped; its name is never used again', quote_literal(create_topic.topic)
            USING ERRCODE = '{TOPIC_DROPPED}';
    END IF;
END
$shardid$;

-- Drops a topic: its strings and IDs stay readable, nothing new is assigned, and its name is
-- never used again.
CREATE OR REPLACE FUNCTION {s}.drop_topic(topic text) RETURNS void
    LANGUAGE plpgsql VOLATILE AS $shardid$
#variable_conflict use_column
BEGIN
    UPDATE {s}.shardid_topics AS t SET dropped_at = coalesce(t.dropped_at, now())
        WHERE t.topic_id = {s}.shardid_topic_id(drop_topic.topic);
END
$shardid$;

-- The IDs of `values` in topic number `t`, NULL where unknown: the one lookup every function uses.
CREATE OR REPLACE FUNCTION {s}.shardid_find(t integer, \"values\" text[]) RETURNS bigint[]
    LANGUAGE sql STABLE AS $shardid$
    SELECT coalesce(array_agg(d.id ORDER BY v.ord), '{{}}')
        FROM unnest(\"values\") WITH ORDINALITY AS v(value, ord)
        LEFT JOIN {s}.shardid_strings AS d ON d.topic_id = t AND d.value = v.value
$shardid$;

-- The strings of `ids` in topic number `t`, NULL where unknown.
CREATE OR REPLACE FUNCTION {s}.shardid_find_values(t integer, ids bigint[]) RETURNS text[]
    LANGUAGE sql STABLE AS $shardid$
    SELECT coalesce(array_agg(d.value ORDER BY i.ord), '{{}}')
        FROM unnest(ids) WITH ORDINALITY AS i(id, ord)
        LEFT JOIN {s}.shardid_strings AS d ON d.topic_id = t AND d.id = i.id
$shardid$;

-- Locks topic number `t`'s counter until this transaction ends and returns its next ID:
-- writers of new strings of one topic go one at a time, and the one before has committed when
-- this one looks again (each statement of a VOLATILE function sees what committed before it
-- started). A dropped topic assigns nothing. After a step back (another timeline: a promoted
-- standby, point-in-time recovery; another system: a dump restored into another cluster; or
-- marked restored by an operator) the counter first skips {margin} times what the topic's
-- highest rate assigns from its last remembered write to now plus {skew_ms} ms, plus {floor} of
-- its largest batches ({lost_writes} IDs for a row written before rates were measured): the
-- IDs the lost state assigned become a hole, and no ID is ever given to a second string. The
-- transaction's commit waits for a synchronous standby where one is configured.
CREATE OR REPLACE FUNCTION {s}.shardid_lock_topic(t integer, topic text) RETURNS bigint
    LANGUAGE plpgsql VOLATILE AS $shardid$
DECLARE
    here integer := {tli};
    system bigint;
    clock timestamptz := clock_timestamp();
    r record;
    base bigint;
BEGIN
    SELECT tt.next, tt.dropped_at, tt.tli, tt.sysid, tt.restored, tt.rate, tt.window_at, tt.window_n, tt.batch,
           coalesce(tt.written_at, tt.created_at) AS written_at, tt.started INTO r
        FROM {s}.shardid_topics AS tt WHERE tt.topic_id = t FOR NO KEY UPDATE;
    IF r.dropped_at IS NOT NULL THEN
        RAISE EXCEPTION 'TOPIC_DROPPED: topic % in {s} was dropped: it assigns no new IDs', quote_literal(topic)
            USING ERRCODE = '{TOPIC_DROPPED}';
    END IF;
    base := r.next;
    -- The system identifier, read from the control file only when another run of a server
    -- wrote the row last (its postmaster's start time).
    system := CASE WHEN r.started = pg_postmaster_start_time() AND r.sysid IS NOT NULL THEN r.sysid ELSE {sysid} END;
    IF (r.tli IS NOT NULL AND r.tli <> here) OR (r.sysid IS NOT NULL AND r.sysid <> system) OR r.restored THEN
        base := base + CASE WHEN r.window_at IS NULL THEN {lost_writes}
            ELSE {floor} * greatest(r.batch, 1)
                + ceil({margin} * greatest(r.rate, r.window_n / greatest(extract(epoch FROM r.written_at - r.window_at)::float8, {window_ms} / 1000.0))
                       * (greatest(extract(epoch FROM clock - r.written_at)::float8, 0) + {skew_ms} / 1000.0))::bigint END;
        UPDATE {s}.shardid_topics AS tt SET next = base, tli = here, sysid = system, started = pg_postmaster_start_time(), restored = false,
                back_at = r.written_at, back_seen = clock, written_at = clock, window_at = clock, window_n = 0,
                -- The open window's rate is kept: a topic created later starts past it (shardid_topic_fenced).
                rate = CASE WHEN r.window_at IS NULL THEN r.rate
                    ELSE greatest(r.rate, r.window_n / greatest(extract(epoch FROM r.written_at - r.window_at)::float8, {window_ms} / 1000.0)) END
            WHERE tt.topic_id = t;
    ELSIF r.tli IS NULL OR r.sysid IS NULL OR r.window_at IS NULL OR r.started IS DISTINCT FROM pg_postmaster_start_time() THEN
        -- A row of an older version, or last written by another run of this server: from now
        -- on it records what a step back needs.
        UPDATE {s}.shardid_topics AS tt SET tli = here, sysid = system, started = pg_postmaster_start_time(), written_at = clock,
                window_at = coalesce(tt.window_at, clock)
            WHERE tt.topic_id = t;
    END IF;
    IF current_setting('synchronous_commit') IN ('off', 'local') THEN
        PERFORM set_config('synchronous_commit', 'on', true);
    END IF;
    RETURN base;
END
$shardid$;

-- Records `added` new IDs of topic number `t` assigned at `at`, its counter now `next`: the
-- highest rate (a window of at least {window_ms} ms closes with what it assigned, this batch
-- included, over its length), the largest batch, and when it was last written.
CREATE OR REPLACE FUNCTION {s}.shardid_topic_written(t integer, next bigint, added bigint, at timestamptz) RETURNS void
    LANGUAGE sql VOLATILE AS $shardid$
    UPDATE {s}.shardid_topics AS tt
        SET next = shardid_topic_written.next,
            rate = CASE WHEN tt.window_at IS NOT NULL AND at - tt.window_at >= interval '{window_ms} milliseconds'
                        THEN greatest(tt.rate, (tt.window_n + added) / extract(epoch FROM at - tt.window_at)::float8) ELSE tt.rate END,
            window_at = CASE WHEN tt.window_at IS NULL OR at - tt.window_at >= interval '{window_ms} milliseconds' THEN at ELSE tt.window_at END,
            window_n = CASE WHEN tt.window_at IS NULL THEN added
                            WHEN at - tt.window_at >= interval '{window_ms} milliseconds' THEN 0 ELSE tt.window_n + added END,
            batch = greatest(tt.batch, added),
            written_at = at
        WHERE tt.topic_id = t
$shardid$;

-- The IDs of `values` (NULL for a string never seen): read only.
CREATE OR REPLACE FUNCTION {s}.dict_lookup(topic text, \"values\" text[]) RETURNS bigint[]
    LANGUAGE plpgsql STABLE AS $shardid$
#variable_conflict use_column
DECLARE
    t integer := {s}.shardid_topic_id(dict_lookup.topic);
BEGIN
    PERFORM {s}.shardid_check_values(dict_lookup.\"values\");
    RETURN {s}.shardid_find(t, dict_lookup.\"values\");
END
$shardid$;

-- The IDs of `values`, assigning the next IDs of the topic to strings never seen, in the order
-- they first appear; a string repeated in the batch gets one ID.
CREATE OR REPLACE FUNCTION {s}.dict_ids(topic text, \"values\" text[]) RETURNS bigint[]
    LANGUAGE plpgsql VOLATILE AS $shardid$
#variable_conflict use_column
DECLARE
    t integer := {s}.shardid_topic_id(dict_ids.topic);
    found_ids bigint[];
    base bigint;
    added bigint;
BEGIN
    PERFORM {s}.shardid_check_values(dict_ids.\"values\");
    -- Without a lock first: once warm, most strings are there.
    found_ids := {s}.shardid_find(t, dict_ids.\"values\");
    IF array_position(found_ids, NULL) IS NULL THEN
        RETURN found_ids;
    END IF;
    base := {s}.shardid_lock_topic(t, dict_ids.topic);
    -- Look again, now that writers before this one have committed; number what is still
    -- missing. (No join with the strings here: a plan PL/pgSQL cached while the table was small
    -- would scan the whole topic; shardid_find is planned at each call.)
    found_ids := {s}.shardid_find(t, dict_ids.\"values\");
    INSERT INTO {s}.shardid_strings (topic_id, value, id)
        SELECT t, m.value, base + row_number() OVER (ORDER BY m.ord) - 1
        FROM (SELECT v.value, min(v.ord) AS ord
                FROM unnest(dict_ids.\"values\", found_ids) WITH ORDINALITY AS v(value, id, ord)
                WHERE v.id IS NULL
                GROUP BY v.value) AS m;
    GET DIAGNOSTICS added = ROW_COUNT;
    PERFORM {s}.shardid_topic_written(t, base + added, added, clock_timestamp());
    RETURN {s}.shardid_find(t, dict_ids.\"values\");
END
$shardid$;

-- The ID of one string, assigned if new: dict_ids for one, without arrays.
CREATE OR REPLACE FUNCTION {s}.dict_id(topic text, value text) RETURNS bigint
    LANGUAGE plpgsql VOLATILE AS $shardid$
#variable_conflict use_column
DECLARE
    t integer := {s}.shardid_topic_id(dict_id.topic);
    found_id bigint;
    base bigint;
BEGIN
    IF dict_id.value IS NULL OR dict_id.value = '' OR octet_length(dict_id.value) > {MAX_VALUE_LEN} THEN
        PERFORM {s}.shardid_check_values(ARRAY[dict_id.value]);
    END IF;
    SELECT d.id INTO found_id FROM {s}.shardid_strings AS d WHERE d.topic_id = t AND d.value = dict_id.value;
    IF FOUND THEN
        RETURN found_id;
    END IF;
    base := {s}.shardid_lock_topic(t, dict_id.topic);
    -- Another writer may have added it while this one waited for the lock.
    SELECT d.id INTO found_id FROM {s}.shardid_strings AS d WHERE d.topic_id = t AND d.value = dict_id.value;
    IF FOUND THEN
        RETURN found_id;
    END IF;
    INSERT INTO {s}.shardid_strings (topic_id, value, id) VALUES (t, dict_id.value, base);
    PERFORM {s}.shardid_topic_written(t, base + 1, 1, clock_timestamp());
    RETURN base;
END
$shardid$;

-- The strings of `ids` (NULL for an ID never assigned).
CREATE OR REPLACE FUNCTION {s}.dict_values(topic text, ids bigint[]) RETURNS text[]
    LANGUAGE plpgsql STABLE AS $shardid$
#variable_conflict use_column
DECLARE
    t integer := {s}.shardid_topic_id(dict_values.topic);
    bad integer;
BEGIN
    IF dict_values.ids IS NULL THEN
        RAISE EXCEPTION 'INVALID_ARGUMENT: ids must be an array of bigint, not NULL' USING ERRCODE = '22023';
    END IF;
    SELECT ord INTO bad FROM unnest(dict_values.ids) WITH ORDINALITY AS i(id, ord)
        WHERE i.id IS NULL OR i.id < 0 LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'INVALID_ARGUMENT: an ID is 0 or more; ID % is %', bad - 1, quote_nullable(dict_values.ids[bad])
            USING ERRCODE = '22023';
    END IF;
    RETURN {s}.shardid_find_values(t, dict_values.ids);
END
$shardid$;

-- The string of one ID (NULL if never assigned).
CREATE OR REPLACE FUNCTION {s}.dict_value(topic text, id bigint) RETURNS text
    LANGUAGE sql STABLE AS $shardid$
    SELECT ({s}.dict_values(topic, ARRAY[id]))[1]
$shardid$;
"
        )
    }
}
