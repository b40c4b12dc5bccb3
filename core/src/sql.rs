//! PostgreSQL DDL that makes and reads the same IDs as the library, inside the database.
//!
//! [`Postgres`] renders, for one layout, shard and schema, what Instagram's PL/pgSQL
//! `next_id()` did, without its flaw: `nextval() % 1024` repeats IDs as soon as more than 1,024
//! calls fall in one millisecond. The emitted `<schema>.next_id()` keeps the core generator's
//! rules instead — a unit that runs out is waited for (or borrowed), a clock that went back
//! further than the tolerance is an error — so it can back a column default however many
//! sessions insert at once.
//!
//! How it stays fast without a per-ID lock: like Instagram's, the common path is one `nextval()`
//! on a shared sequence. Two sequences take turns, one for even time units and one for odd ones,
//! and each counts in *strides* of `2^stride` values per unit, of which only the first
//! `2^sequence_bits` are IDs: a value is used only when it falls in the unit the caller's clock
//! reads, so a unit that runs out can never wrap. Moving a counter up to a new unit takes
//! `setval`, which could move it back under a concurrent `nextval`; it is done under an advisory
//! lock, once per unit for all sessions (by the unit's first caller, for the *next* unit), and
//! lands far enough above what the counter read that it cannot: every value between a counter's
//! units is refused by every caller, and each server process refuses at most one of them before
//! it queues on the lock, so a stride wider than the server's process count cannot be crossed.
//!
//! Rendering writes into any [`core::fmt::Write`]: `format!("{}", ddl)` or `write!(out, "{ddl}")`.

use core::fmt::{self, Display, Formatter};

use crate::layout::mask;

mod lease;
use crate::{Error, FieldOrder, Layout, Options};
pub use lease::{
    Acquire, Action, Fed, LOST_CREATE_RACE, LeaseSignature, Param, Params, Placeholders,
    PostgresLease, Statement,
};

/// The longest schema name accepted: PostgreSQL truncates identifiers beyond 63 bytes without a
/// word, and 40 leaves room for names derived from the schema.
pub const MAX_SCHEMA_LEN: usize = 40;

/// First key of the two-key advisory lock the emitted functions take (`'SHID'`); the second is
/// a hash of the schema name. Two-key locks are a key space of their own, apart from
/// applications' one-key `pg_advisory_lock(bigint)` calls.
const LOCK_CLASS: i32 = 0x5348_4944;

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
}

impl Display for SqlError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Self::Core(error) => error.fmt(f),
            Self::SchemaName { reason } => write!(f, "invalid schema name: {reason}"),
            Self::TableName { reason } => write!(f, "invalid table name: {reason}"),
        }
    }
}

impl core::error::Error for SqlError {}

impl From<Error> for SqlError {
    fn from(error: Error) -> Self {
        Self::Core(error)
    }
}

/// The PostgreSQL DDL for one layout, shard and schema; render it with [`Display`].
///
/// It creates, in `schema` (idempotently: re-running it upgrades the functions and keeps the
/// counters):
/// - `shardid_counter_even` and `shardid_counter_odd`, sequences shared by every session, and
///   `shardid_ready(unit)`, which moves them to a new time unit;
/// - `next_id()`, for a column default: unique, increasing per session, never outside the
///   layout (errors `TIMESTAMP_BEFORE_EPOCH`, `TIMESTAMP_PAST_EXPIRY`, `CLOCK_MOVED_BACKWARDS`);
/// - decoding, `IMMUTABLE` and `PARALLEL SAFE` so they can back indexes and range scans:
///   `shardid_timestamp(id) -> timestamptz`, `shardid_timestamp_ms(id)`, `shardid_shard(id)`,
///   `shardid_sequence(id)`, `shardid_min_id_at(timestamptz)`, `shardid_max_id_at(timestamptz)`
///   and their `_ms` twins taking Unix milliseconds.
///
/// PostgreSQL's `bigint` is signed, so an unsigned 64-bit layout (Discord's) is served up to
/// 2^63 - 1: its SQL functions expire when the top bit would be needed (2084 for Discord).
#[derive(Clone, Copy, Debug)]
#[must_use]
pub struct Postgres<'a> {
    /// The layout as the database can hold it: signed.
    layout: Layout,
    shard: u64,
    schema: &'a str,
    options: Options,
    /// log2 of the values each time unit takes on its counter (see [`stride_shift`]).
    stride: u32,
}

impl<'a> Postgres<'a> {
    /// Checks the arguments; the generator options are the core's defaults.
    ///
    /// # Errors
    /// - [`SqlError::Core`] with [`Error::ShardOutOfRange`], or [`Error::InvalidLayout`] when
    ///   the layout's epoch or expiry does not fit a `bigint` of milliseconds.
    /// - [`SqlError::SchemaName`]: `schema` must match `[a-z_][a-z0-9_]*`, be at most
    ///   [`MAX_SCHEMA_LEN`] bytes and not start with `pg_`.
    pub fn new(layout: Layout, shard: u64, schema: &'a str) -> Result<Self, SqlError> {
        if shard > layout.max_shard() {
            return Err(Error::ShardOutOfRange {
                shard,
                max: layout.max_shard(),
            }
            .into());
        }
        check_schema(schema)?;
        let layout = Layout::builder()
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
            return Err(Error::InvalidLayout {
                reason: "PostgreSQL needs the layout's last millisecond to fit a bigint",
            }
            .into());
        }
        let stride = stride_shift(&layout).ok_or(Error::InvalidLayout {
            reason: "PostgreSQL needs the time and sequence bits to leave two spare bits in a bigint",
        })?;
        Ok(Self {
            layout,
            shard,
            schema,
            options: Options::new(),
            stride,
        })
    }

    /// Sets how the emitted `next_id()` treats a clock that moved back and a time unit that
    /// ran out, as [`Options`] does for the core's generator.
    pub const fn options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }
}

fn check_schema(schema: &str) -> Result<(), SqlError> {
    identifier_problem(schema).map_or(Ok(()), |reason| Err(SqlError::SchemaName { reason }))
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

/// How many bits of a counter value a time unit spans: `2^stride` values per unit, of which the
/// first `2^sequence_bits` are IDs and the rest a buffer that no caller ever accepts. 16 bits
/// (at least one more than the sequence) make the buffer between a counter's two units at least
/// 98,304 values, far more than a server's processes (the emitted SQL checks). `None` when the
/// time bits and the stride would not fit a bigint with a unit to spare.
fn stride_shift(layout: &Layout) -> Option<u32> {
    let time_bits = u32::from(layout.time_bits());
    let seq_bits = u32::from(layout.sequence_bits());
    let stride = (seq_bits + 1).max(16_u32.min(62_u32.saturating_sub(time_bits)));
    (time_bits + stride <= 62).then_some(stride)
}

/// FNV-1a: a stable 32-bit hash of the schema name for the advisory lock's second key.
fn lock_key(schema: &str) -> i32 {
    let hash = schema.bytes().fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    });
    i32::from_ne_bytes(hash.to_ne_bytes())
}

/// `(<expr> - epoch) / unit` with the division left out for millisecond units. With `floored`,
/// a time before the epoch gives a negative unit (SQL's division truncates towards zero, which
/// would put the last unit before the epoch at 0).
struct Units<'a> {
    ms: &'a str,
    epoch_ms: u64,
    unit_ms: u64,
    floored: bool,
}

impl Display for Units<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (ms, epoch) = (self.ms, self.epoch_ms);
        match self.unit_ms {
            1 => write!(f, "({ms} - {epoch})"),
            unit if self.floored => {
                write!(f, "(({ms} - {epoch}) / {unit} - ({ms} < {epoch})::int)")
            }
            unit => write!(f, "(({ms} - {epoch}) / {unit})"),
        }
    }
}

/// The advisory lock around a counter's move to a new unit, released by an error or a cancel too
/// (the exception block): `{lock}` before the statements, `{unlock}` after them.
struct Locked<'a> {
    key: i32,
    body: &'a dyn Display,
    indent: &'a str,
}

impl Display for Locked<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (key, i) = (self.key, self.indent);
        write!(
            f,
            "\
{i}BEGIN
{i}    PERFORM pg_advisory_lock({LOCK_CLASS}, {key});
{body}\
{i}    PERFORM pg_advisory_unlock({LOCK_CLASS}, {key});
{i}EXCEPTION WHEN OTHERS OR query_canceled THEN
{i}    IF EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory'
{i}            AND pid = pg_backend_pid() AND classid = {LOCK_CLASS}::int::oid
{i}            AND objid = ({key})::int::oid AND objsubid = 2) THEN
{i}        PERFORM pg_advisory_unlock({LOCK_CLASS}, {key});
{i}    END IF;
{i}    RAISE;
{i}END;
",
            body = self.body,
        )
    }
}

/// The counter sequence of the time unit held in the PL/pgSQL variable `var`.
struct CounterOf<'a> {
    schema: &'a str,
    var: &'a str,
}

impl Display for CounterOf<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (s, var) = (self.schema, self.var);
        write!(
            f,
            "CASE WHEN {var} & 1 = 0 THEN '{s}.shardid_counter_even'::regclass \
             ELSE '{s}.shardid_counter_odd'::regclass END"
        )
    }
}

impl Display for Postgres<'_> {
    #[allow(clippy::too_many_lines)] // one template, read top to bottom
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let l = &self.layout;
        let s = self.schema;
        let epoch = l.epoch_ms();
        let unit = l.unit_ms();
        let time_shift = l.time_shift();
        let seq_mask = l.max_sequence();
        let shard_value = self.shard << l.shard_shift();
        let max_units = l.max_time_units();
        let max_id = l.max_id();
        let expires = l.expires_at_ms();
        let tolerance = self.options.backwards_tolerance_ms;
        let borrow = self.options.max_borrow_units;
        let stride = self.stride;
        // Values between the end of one unit's IDs on a counter and the start of its next unit.
        let buffer = (2u64 << stride) - (seq_mask + 1);
        let key = lock_key(s);
        let signature = Signature(l);
        let now_units = Units {
            ms: "now_ms",
            epoch_ms: epoch,
            unit_ms: unit,
            floored: true,
        };
        let ms_units = Units {
            ms: "ms",
            epoch_ms: epoch,
            unit_ms: unit,
            floored: false,
        };
        let now_counter = CounterOf {
            schema: s,
            var: "now_units",
        };
        let t_counter = CounterOf {
            schema: s,
            var: "t",
        };
        // The ID of the counter value in `v`, written out with the layout's constants.
        let id = IdOf {
            stride,
            time_shift,
            shard_value,
            seq_mask,
            sequence_shift: l.sequence_shift(),
        };
        let clock = "floor(date_part('epoch', clock_timestamp()) * 1000)";
        let prepare = format_args!("                PERFORM {s}.shardid_ready(now_units + 1);\n");
        let prepare = Locked {
            key,
            body: &prepare,
            indent: "            ",
        };
        let take = format_args!(
            "            SELECT greatest(e.last_value, o.last_value) INTO last
                FROM {s}.shardid_counter_even e, {s}.shardid_counter_odd o;
            last_units := last >> {stride};
            IF last >= ({max_units} << {stride}) + {seq_mask} THEN
                verdict := 'expired';
            ELSIF last_units > now_units + {borrow} THEN
                -- IDs were made ahead of this clock: it went back. Within the tolerance, wait
                -- for it to catch up; the counters of the units in between have moved on.
                verdict := CASE WHEN {epoch} + last_units * {unit} - now_ms > {tolerance}
                    THEN 'backwards' ELSE 'wait' END;
                until_ms := {epoch} + (last_units - {borrow}) * {unit};
            ELSE
                t := now_units;
                LOOP
                    IF t > {max_units} THEN
                        verdict := 'expired';
                        EXIT;
                    END IF;
                    PERFORM {s}.shardid_ready(t);
                    v := nextval({t_counter});
                    IF v - (t << {stride}) BETWEEN 0 AND {seq_mask} THEN
                        IF v - (t << {stride}) = 0 AND t < {max_units} THEN
                            PERFORM {s}.shardid_ready(t + 1);
                        END IF;
                        EXIT;
                    END IF;
                    -- Every ID of unit t is taken: borrow the next unit, or wait for it.
                    IF t + 1 > now_units + {borrow} THEN
                        verdict := 'wait';
                        until_ms := {epoch} + (t + 1 - {borrow}) * {unit};
                        EXIT;
                    END IF;
                    t := t + 1;
                END LOOP;
            END IF;
"
        );
        let take = Locked {
            key,
            body: &take,
            indent: "        ",
        };
        let version = env!("CARGO_PKG_VERSION");
        write!(
            f,
            "\
-- shardid {version}: IDs for shard {shard} made inside PostgreSQL, in schema {s}.
-- Layout: {signature}.
-- Generated by shardid; safe to run again (it replaces the functions and keeps the counters).
-- Needs PostgreSQL 12 or later. Callers of {s}.next_id() need USAGE on the schema and
-- SELECT and UPDATE on {s}.shardid_counter_even and {s}.shardid_counter_odd.

CREATE SCHEMA IF NOT EXISTS {s};

-- The counters of even and odd time units, shared by every session. Unit t owns the values
-- from t << {stride}; the first {per_unit} of them are its IDs, the rest are never used.
CREATE SEQUENCE IF NOT EXISTS {s}.shardid_counter_even AS bigint MINVALUE 0 START 0;
CREATE SEQUENCE IF NOT EXISTS {s}.shardid_counter_odd AS bigint MINVALUE 0 START 0;

-- One schema, one layout: the counters mean nothing under another one.
DO $shardid$
DECLARE
    installed text := obj_description('{s}.shardid_counter_even'::regclass, 'pg_class');
BEGIN
    IF installed IS NULL THEN
        COMMENT ON SEQUENCE {s}.shardid_counter_even IS 'shardid {signature}';
    ELSIF installed <> 'shardid {signature}' THEN
        RAISE EXCEPTION 'schema {s} already holds shardid state for another layout (%)', installed
            USING ERRCODE = '42710', HINT = 'Install this layout in a schema of its own.';
    END IF;
END
$shardid$;

-- Raises the library's error kinds as SQL errors: the message starts with the kind's code.
CREATE OR REPLACE FUNCTION {s}.shardid_raise(code text, message text) RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $shardid$
BEGIN
    RAISE EXCEPTION USING
        MESSAGE = code || ': ' || message,
        ERRCODE = CASE code
            WHEN 'INVALID_ID' THEN '22003'
            WHEN 'CLOCK_MOVED_BACKWARDS' THEN '55000'
            ELSE '22008'
        END;
END
$shardid$;

CREATE OR REPLACE FUNCTION {s}.shardid_timestamp_ms(id bigint) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $shardid$
    SELECT CASE WHEN id BETWEEN 0 AND {max_id} THEN {epoch} + (id >> {time_shift}) * {unit}
        ELSE {s}.shardid_raise('INVALID_ID', id || ' is not a valid ID for this layout') END
$shardid$;

CREATE OR REPLACE FUNCTION {s}.shardid_timestamp(id bigint) RETURNS timestamptz
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $shardid$
    SELECT (timestamp '1970-01-01 00:00:00'
        + ({s}.shardid_timestamp_ms(id) / 1000) * interval '1 second'
        + ({s}.shardid_timestamp_ms(id) % 1000) * interval '1 millisecond') AT TIME ZONE 'UTC'
$shardid$;

CREATE OR REPLACE FUNCTION {s}.shardid_shard(id bigint) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $shardid$
    SELECT CASE WHEN id BETWEEN 0 AND {max_id} THEN (id >> {shard_shift}) & {max_shard}
        ELSE {s}.shardid_raise('INVALID_ID', id || ' is not a valid ID for this layout') END
$shardid$;

CREATE OR REPLACE FUNCTION {s}.shardid_sequence(id bigint) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $shardid$
    SELECT CASE WHEN id BETWEEN 0 AND {max_id} THEN (id >> {sequence_shift}) & {seq_mask}
        ELSE {s}.shardid_raise('INVALID_ID', id || ' is not a valid ID for this layout') END
$shardid$;

CREATE OR REPLACE FUNCTION {s}.shardid_min_id_at_ms(ms bigint) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $shardid$
    SELECT CASE
        WHEN ms < {epoch} THEN {s}.shardid_raise('TIMESTAMP_BEFORE_EPOCH',
            'timestamp ' || ms || ' ms is before the layout''s epoch {epoch} ms')
        WHEN ms > {expires} THEN {s}.shardid_raise('TIMESTAMP_PAST_EXPIRY',
            'timestamp ' || ms || ' ms is past the layout''s last representable time {expires} ms')
        ELSE {ms_units} << {time_shift}
    END
$shardid$;

CREATE OR REPLACE FUNCTION {s}.shardid_max_id_at_ms(ms bigint) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $shardid$
    SELECT {s}.shardid_min_id_at_ms(ms) | {low_mask}
$shardid$;

-- Unix milliseconds of a timestamptz, floored: exact, whatever the session's time zone.
CREATE OR REPLACE FUNCTION {s}.shardid_unix_ms(ts timestamptz) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $shardid$
    SELECT floor(extract(epoch FROM ts - timestamptz '1970-01-01 00:00:00+00') * 1000)::bigint
$shardid$;

CREATE OR REPLACE FUNCTION {s}.shardid_min_id_at(ts timestamptz) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $shardid$
    SELECT {s}.shardid_min_id_at_ms({s}.shardid_unix_ms(ts))
$shardid$;

CREATE OR REPLACE FUNCTION {s}.shardid_max_id_at(ts timestamptz) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $shardid$
    SELECT {s}.shardid_max_id_at_ms({s}.shardid_unix_ms(ts))
$shardid$;

-- Makes the counter of time unit t ready for it: moves it to just below t << {stride} unless it
-- is there already. Callers hold the advisory lock, so two sessions never move one counter.
-- setval() could still move it back under a nextval() made meanwhile by a session that does not
-- hold the lock; such a value lies between the counter's units, where nobody accepts it, and
-- each server process makes at most one before it queues on the lock. So the new value is at
-- least that many above what was read; when unit t cannot have that room, its counter skips
-- to unit t + 2 and unit t is waited out.
CREATE OR REPLACE FUNCTION {s}.shardid_ready(t bigint) RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE AS $shardid$
DECLARE
    counter regclass := {t_counter};
    last bigint := coalesce(pg_sequence_last_value(counter), -1);
    processes bigint;
BEGIN
    IF last >= (t << {stride}) - 1 THEN
        RETURN;
    END IF;
    processes := current_setting('max_connections')::bigint
        + current_setting('autovacuum_max_workers')::bigint
        + current_setting('max_worker_processes')::bigint
        + current_setting('max_wal_senders')::bigint + 1;
    IF processes >= {buffer} THEN
        RAISE EXCEPTION 'shardid: this server allows % processes, more than the % values the layout leaves between two time units of a counter', processes, {buffer}
            USING ERRCODE = '55000';
    END IF;
    IF greatest(last, ((t - 2) << {stride}) + {seq_mask}) + processes < (t << {stride}) - 1 THEN
        PERFORM setval(counter, (t << {stride}) - 1, true);
    ELSE
        PERFORM setval(counter, ((t + 2) << {stride}) - 1, true);
    END IF;
END
$shardid$;

-- A new ID for shard {shard}: use as a column default, DEFAULT {s}.next_id().
--
-- Unique for the shard however many sessions call it: an ID is a value of its time unit's
-- counter, and only the unit's first {per_unit} values are IDs. A unit that runs out is waited
-- for (or borrowed, up to {borrow} unit(s) ahead); a clock set back more than {tolerance} ms
-- behind the last ID made is an error.
CREATE OR REPLACE FUNCTION {s}.next_id() RETURNS bigint
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE AS $shardid$
DECLARE
    now_ms bigint := {clock};
    now_units bigint := {now_units};
    v bigint := nextval({now_counter});
    t bigint;
    last bigint;
    last_units bigint;
    verdict text;
    until_ms bigint;
BEGIN
    -- The common path: a value of this unit's counter that is one of the unit's IDs.
    IF v - (now_units << {stride}) BETWEEN 1 AND {seq_mask} AND now_units <= {max_units} THEN
        RETURN {id};
    END IF;
    IF v - (now_units << {stride}) = 0 AND now_units <= {max_units} THEN
        -- The unit's first ID: make the next unit's counter ready now, off everyone's path.
        IF now_units < {max_units} THEN
{prepare}        END IF;
        RETURN {id};
    END IF;

    -- The counter is not at this unit yet, or the unit ran out, or the clock is off.
    LOOP
        now_ms := {clock};
        IF now_ms < {epoch} THEN
            PERFORM {s}.shardid_raise('TIMESTAMP_BEFORE_EPOCH',
                'timestamp ' || now_ms || ' ms is before the layout''s epoch {epoch} ms');
        END IF;
        now_units := {now_units};
        IF now_units > {max_units} THEN
            PERFORM {s}.shardid_raise('TIMESTAMP_PAST_EXPIRY',
                'timestamp ' || now_ms || ' ms is past the layout''s last representable time {expires} ms');
        END IF;
        verdict := NULL;
{take}        IF verdict IS NULL THEN
            RETURN {id};
        ELSIF verdict = 'expired' THEN
            PERFORM {s}.shardid_raise('TIMESTAMP_PAST_EXPIRY',
                'every ID of the layout up to its last representable time {expires} ms is used');
        ELSIF verdict = 'backwards' THEN
            PERFORM {s}.shardid_raise('CLOCK_MOVED_BACKWARDS', 'clock moved backwards: '
                || {epoch} + last_units * {unit} - now_ms || ' ms behind the last issued ID (tolerance {tolerance} ms)');
        END IF;
        -- Every ID of this unit is taken (or the clock is behind): wait, as Snowflake does.
        PERFORM pg_sleep(greatest(until_ms - now_ms, 0) / 1000.0);
    END LOOP;
END
$shardid$;
",
            shard = self.shard,
            shard_shift = l.shard_shift(),
            sequence_shift = l.sequence_shift(),
            max_shard = l.max_shard(),
            low_mask = mask(time_shift),
            per_unit = seq_mask + 1,
        )
    }
}

/// The layout's defining numbers, recorded on the even counter.
struct Signature<'a>(&'a Layout);

impl Display for Signature<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let l = self.0;
        let order = match l.order() {
            FieldOrder::TimeShardSequence => "time|shard|sequence",
            FieldOrder::TimeSequenceShard => "time|sequence|shard",
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

/// The SQL expression for the ID of the counter value in the PL/pgSQL variable `v`.
struct IdOf {
    stride: u32,
    time_shift: u32,
    shard_value: u64,
    seq_mask: u64,
    sequence_shift: u32,
}

impl Display for IdOf {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "((v >> {}) << {})", self.stride, self.time_shift)?;
        if self.shard_value != 0 {
            write!(f, " | {}", self.shard_value)?;
        }
        match self.sequence_shift {
            0 => write!(f, " | (v & {})", self.seq_mask),
            n => write!(f, " | ((v & {}) << {n})", self.seq_mask),
        }
    }
}

/// The DDL that removes what [`Postgres`] installed in `schema` (its functions and its state),
/// leaving the schema itself and anything else in it. Render it with [`Display`].
#[derive(Clone, Copy, Debug)]
#[must_use]
pub struct PostgresUninstall<'a> {
    schema: &'a str,
}

impl<'a> PostgresUninstall<'a> {
    /// # Errors
    /// [`SqlError::SchemaName`], as for [`Postgres::new`].
    pub fn new(schema: &'a str) -> Result<Self, SqlError> {
        check_schema(schema)?;
        Ok(Self { schema })
    }
}

/// Every function the install creates, with its argument types, dependents first.
const FUNCTIONS: [&str; 12] = [
    "next_id()",
    "shardid_ready(bigint)",
    "shardid_max_id_at(timestamptz)",
    "shardid_min_id_at(timestamptz)",
    "shardid_unix_ms(timestamptz)",
    "shardid_max_id_at_ms(bigint)",
    "shardid_min_id_at_ms(bigint)",
    "shardid_sequence(bigint)",
    "shardid_shard(bigint)",
    "shardid_timestamp(bigint)",
    "shardid_timestamp_ms(bigint)",
    "shardid_raise(text, text)",
];

impl Display for PostgresUninstall<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = self.schema;
        writeln!(
            f,
            "-- Removes shardid's functions and state from schema {s}."
        )?;
        for function in FUNCTIONS {
            writeln!(f, "DROP FUNCTION IF EXISTS {s}.{function};")?;
        }
        writeln!(f, "DROP SEQUENCE IF EXISTS {s}.shardid_counter_even;")?;
        writeln!(f, "DROP SEQUENCE IF EXISTS {s}.shardid_counter_odd;")
    }
}
