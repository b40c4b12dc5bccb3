//! PostgreSQL DDL that makes and reads the same IDs as the library, inside the database.
//!
//! [`Postgres`] renders, for one layout, shard and schema, what Instagram's PL/pgSQL
//! `next_id()` did, without its flaw: `nextval() % 1024` repeats IDs as soon as more than 1,024
//! calls fall in one millisecond. The emitted `<schema>.next_id()` keeps the core generator's
//! rule instead — one shared *slot* counter (`time_unit << sequence_bits | sequence`) that only
//! moves forward, `slot = max(state, now)`, borrow or wait when a unit runs out — so it can back
//! a column default however many sessions insert at once.
//!
//! How it stays fast and safe without a per-ID lock: PostgreSQL has no atomic "fetch-max" on a
//! sequence, so the shared state (a sequence used as a register) only changes under an
//! advisory lock, and each session takes a *block* of slots at a time (1, then doubling up to a
//! quarter of a time unit while it keeps using them). The block lives in two session-private
//! places: a temporary sequence that counts through it (never rolled back, like `nextval`) and
//! a setting that holds its last slot (rolled back with a transaction, which only ever makes
//! the block look used up). The common path is then one `nextval` on a temporary sequence and
//! two comparisons; the lock is taken once per block.
//!
//! Rendering writes into any [`core::fmt::Write`]: `format!("{}", ddl)` or `write!(out, "{ddl}")`.

use core::fmt::{self, Display, Formatter};

use crate::layout::mask;
use crate::{Error, FieldOrder, Layout, Options};

/// The longest schema name accepted: the names derived from it (`shardid_<schema>_block`,
/// `shardid.<schema>_block_last`) must stay within PostgreSQL's 63-byte identifiers, which it
/// would otherwise truncate without a word.
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
}

impl Display for SqlError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Self::Core(error) => error.fmt(f),
            Self::SchemaName { reason } => write!(f, "invalid schema name: {reason}"),
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
/// state):
/// - `shardid_state`, a sequence: the last slot handed out, shared by every session;
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
        Ok(Self {
            layout,
            shard,
            schema,
            options: Options::new(),
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
    let bytes = schema.as_bytes();
    let reason = match bytes.first() {
        None => Some("it is empty"),
        Some(_) if bytes.len() > MAX_SCHEMA_LEN => Some("it is longer than 40 bytes"),
        Some(b'0'..=b'9') => Some("it starts with a digit"),
        Some(_) if schema.starts_with("pg_") => Some("names starting with pg_ are reserved"),
        Some(_)
            if !bytes
                .iter()
                .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_')) =>
        {
            Some("only a-z, 0-9 and _ are allowed")
        }
        Some(_) => None,
    };
    match reason {
        Some(reason) => Err(SqlError::SchemaName { reason }),
        None => Ok(()),
    }
}

/// FNV-1a: a stable 32-bit hash of the schema name for the advisory lock's second key.
fn lock_key(schema: &str) -> i32 {
    let hash = schema.bytes().fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    });
    i32::from_ne_bytes(hash.to_ne_bytes())
}

/// `(<expr> - epoch) / unit` with the division left out for millisecond units.
struct Units<'a> {
    ms: &'a str,
    epoch_ms: u64,
    unit_ms: u64,
}

impl Display for Units<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.unit_ms {
            1 => write!(f, "({} - {})", self.ms, self.epoch_ms),
            unit => write!(f, "(({} - {}) / {unit})", self.ms, self.epoch_ms),
        }
    }
}

impl Display for Postgres<'_> {
    #[allow(clippy::too_many_lines)] // one template, read top to bottom
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let l = &self.layout;
        let s = self.schema;
        let epoch = l.epoch_ms();
        let unit = l.unit_ms();
        let seq_bits = u32::from(l.sequence_bits());
        let time_shift = l.time_shift();
        let seq_mask = l.max_sequence();
        let shard_value = self.shard << l.shard_shift();
        let max_units = l.max_time_units();
        let max_slot = (max_units << seq_bits) | seq_mask;
        let max_id = l.max_id();
        let expires = l.expires_at_ms();
        let tolerance = self.options.backwards_tolerance_ms;
        let borrow = self.options.max_borrow_units;
        let max_block = (1u64 << seq_bits).div_ceil(4).clamp(1, 256);
        let key = lock_key(s);
        let signature = Signature(l);
        let now_units = Units {
            ms: "now_ms",
            epoch_ms: epoch,
            unit_ms: unit,
        };
        let ms_units = Units {
            ms: "ms",
            epoch_ms: epoch,
            unit_ms: unit,
        };
        // The ID of a slot, written out with the layout's constants.
        let id = IdOf {
            seq_bits,
            time_shift,
            shard_value,
            seq_mask,
            sequence_shift: l.sequence_shift(),
        };
        let version = env!("CARGO_PKG_VERSION");
        write!(
            f,
            "\
-- shardid {version}: IDs for shard {shard} made inside PostgreSQL, in schema {s}.
-- Layout: {signature}.
-- Generated by shardid; safe to run again (it replaces the functions and keeps the state).
-- Needs PostgreSQL 12 or later. Callers of {s}.next_id() need USAGE on the schema,
-- SELECT and UPDATE on {s}.shardid_state and the TEMPORARY privilege on the database.

CREATE SCHEMA IF NOT EXISTS {s};

-- The last slot (time unit << {seq_bits} | sequence) handed out to any session. Used as a
-- register: read and set only under the advisory lock in next_id(), never with nextval().
CREATE SEQUENCE IF NOT EXISTS {s}.shardid_state AS bigint MINVALUE 0 MAXVALUE {max_slot} START 0;

-- One schema, one layout: the state means nothing under another one.
DO $shardid$
DECLARE
    installed text := obj_description('{s}.shardid_state'::regclass, 'pg_class');
BEGIN
    IF installed IS NULL THEN
        COMMENT ON SEQUENCE {s}.shardid_state IS 'shardid {signature}';
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

-- A new ID for shard {shard}: use as a column default, DEFAULT {s}.next_id().
--
-- Unique for the shard however many sessions call it: slots come from blocks that only one
-- session holds, and blocks come from {s}.shardid_state under an advisory lock, at or after
-- the clock's time unit. A unit that runs out is waited for (or borrowed, up to {borrow}
-- unit(s) ahead); a clock set back more than {tolerance} ms behind the last block is an error.
-- Not for PREPARE TRANSACTION: the session's block lives in a temporary sequence.
CREATE OR REPLACE FUNCTION {s}.next_id() RETURNS bigint
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE AS $shardid$
DECLARE
    slot bigint := nextval(to_regclass('pg_temp.shardid_{s}_block'));
    now_ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000);
    now_units bigint;
    block_last bigint := nullif(current_setting('shardid.{s}_block_last', true), '')::bigint;
    block_size bigint;
    state_last bigint;
    state_called boolean;
    units bigint;
    last_units bigint;
    verdict text;
    until_ms bigint;
BEGIN
    -- The common path: the session's block has a slot left, and it is not from a past unit.
    IF slot <= block_last AND slot >= {now_units} << {seq_bits} THEN
        RETURN {id};
    END IF;

    -- The next block: twice as many slots as this session used of its last one (1 to
    -- {max_block}), so a busy session locks rarely and an idle one wastes little.
    block_size := coalesce(nullif(current_setting('shardid.{s}_block_size', true), '')::bigint, 1);
    block_size := least(greatest(2 * least(slot - (block_last - block_size + 1), {max_block}), 1),
        {max_block});
    block_size := coalesce(block_size, 1);

    LOOP
        now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000);
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
        BEGIN
            -- Inside the block so that an error or a cancel can never leave the lock held.
            PERFORM pg_advisory_lock({LOCK_CLASS}, {key});
            SELECT last_value, is_called INTO state_last, state_called FROM {s}.shardid_state;
            IF NOT state_called THEN
                slot := state_last;
            ELSIF state_last < {max_slot} THEN
                slot := state_last + 1;
            ELSE
                verdict := 'expired';
            END IF;
            IF verdict IS NULL THEN
                -- The core's rule: the first free slot, never before the clock's unit.
                slot := greatest(slot, now_units << {seq_bits});
                units := slot >> {seq_bits};
                IF units > now_units THEN
                    -- Ahead of the clock: a unit that ran out, or a clock that went back.
                    -- A slot with sequence 0 was reached by running out of the unit before.
                    last_units := units - CASE WHEN slot & {seq_mask} = 0 THEN 1 ELSE 0 END;
                    IF last_units > now_units + {borrow}
                        AND {epoch} + last_units * {unit} - now_ms > {tolerance} THEN
                        verdict := 'backwards';
                        until_ms := {epoch} + last_units * {unit} - now_ms;
                    ELSIF slot & {seq_mask} = 0 AND units > now_units + {borrow} THEN
                        verdict := 'wait';
                        until_ms := {epoch} + (units - {borrow}) * {unit};
                    END IF;
                END IF;
            END IF;
            IF verdict IS NULL THEN
                block_last := least(slot + block_size - 1, slot | {seq_mask});
                PERFORM setval('{s}.shardid_state', block_last, true);
            END IF;
            PERFORM pg_advisory_unlock({LOCK_CLASS}, {key});
        EXCEPTION WHEN OTHERS OR query_canceled THEN
            IF EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory'
                    AND pid = pg_backend_pid() AND classid = {LOCK_CLASS}::int::oid
                    AND objid = ({key})::int::oid AND objsubid = 2) THEN
                PERFORM pg_advisory_unlock({LOCK_CLASS}, {key});
            END IF;
            RAISE;
        END;
        EXIT WHEN verdict IS NULL;
        IF verdict = 'expired' THEN
            PERFORM {s}.shardid_raise('TIMESTAMP_PAST_EXPIRY',
                'every ID of the layout up to its last representable time {expires} ms is used');
        ELSIF verdict = 'backwards' THEN
            PERFORM {s}.shardid_raise('CLOCK_MOVED_BACKWARDS', 'clock moved backwards: '
                || until_ms || ' ms behind the last issued ID (tolerance {tolerance} ms)');
        END IF;
        -- Every slot of this unit is taken: wait for the next one, as Snowflake does.
        PERFORM pg_sleep(greatest(until_ms - now_ms, 0) / 1000.0);
    END LOOP;

    -- Hand the block to this session: the sequence first, so that a setting left behind by an
    -- error or a rollback can only point below it.
    IF to_regclass('pg_temp.shardid_{s}_block') IS NULL THEN
        CREATE TEMPORARY SEQUENCE IF NOT EXISTS shardid_{s}_block AS bigint MINVALUE 0;
    END IF;
    PERFORM setval(to_regclass('pg_temp.shardid_{s}_block'), slot, true);
    PERFORM set_config('shardid.{s}_block_last', block_last::text, false);
    PERFORM set_config('shardid.{s}_block_size', block_size::text, false);
    RETURN {id};
END
$shardid$;
",
            shard = self.shard,
            shard_shift = l.shard_shift(),
            sequence_shift = l.sequence_shift(),
            max_shard = l.max_shard(),
            low_mask = mask(time_shift),
        )
    }
}

/// The layout's defining numbers, recorded on the state sequence.
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

/// The SQL expression for the ID of the PL/pgSQL variable `slot`.
struct IdOf {
    seq_bits: u32,
    time_shift: u32,
    shard_value: u64,
    seq_mask: u64,
    sequence_shift: u32,
}

impl Display for IdOf {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "((slot >> {}) << {})", self.seq_bits, self.time_shift)?;
        if self.shard_value != 0 {
            write!(f, " | {}", self.shard_value)?;
        }
        match self.sequence_shift {
            0 => write!(f, " | (slot & {})", self.seq_mask),
            n => write!(f, " | ((slot & {}) << {n})", self.seq_mask),
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
const FUNCTIONS: [&str; 11] = [
    "next_id()",
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
        writeln!(f, "DROP SEQUENCE IF EXISTS {s}.shardid_state;")
    }
}
