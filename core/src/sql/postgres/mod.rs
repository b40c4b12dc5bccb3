//! The DDL of `<schema>.next_id()` and the decoding functions for one layout and shard.
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

use core::fmt::{self, Display, Formatter};

use super::{Signature, SqlError, signed_layout};
use crate::{Error, Layout, Options};

mod decoding;
mod fragments;
mod next_id;

/// First key of the two-key advisory lock the emitted functions take (`'SHID'`); the second is
/// a hash of the schema name. Two-key locks are a key space of their own, apart from
/// applications' one-key `pg_advisory_lock(bigint)` calls.
pub(super) const LOCK_CLASS: i32 = 0x5348_4944;

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
///   and their `_ms` twins taking Unix milliseconds;
/// - the UUIDv7 bridge ([`crate::uuid`]): `shardid_to_uuid(id) -> uuid` and
///   `shardid_from_uuid(uuid) -> bigint`, the same bytes as every language's, both inlined
///   into the query by the planner, and `shardid_uuid_refused(uuid)`, which names why a UUID
///   `shardid_from_uuid` refused is not the bridge's.
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
    /// The UUIDv7 bridge's marker of the layout as given (Discord's is its preset's, though
    /// the database holds it signed).
    uuid_marker: u16,
}

impl<'a> Postgres<'a> {
    /// Checks the arguments; the generator options are the core's defaults.
    ///
    /// # Errors
    /// - [`SqlError::Core`] with [`Error::ShardOutOfRange`], or [`Error::InvalidLayout`] when
    ///   the layout's epoch or expiry does not fit a `bigint` of milliseconds.
    /// - [`SqlError::SchemaName`]: `schema` must match `[a-z_][a-z0-9_]*`, be at most
    ///   [`MAX_SCHEMA_LEN`](super::MAX_SCHEMA_LEN) bytes and not start with `pg_`.
    pub fn new(layout: Layout, shard: u64, schema: &'a str) -> Result<Self, SqlError> {
        let uuid_marker = crate::uuid::marker(&layout);
        let layout = signed_layout(
            layout,
            shard,
            schema,
            "PostgreSQL needs the layout's last millisecond to fit a bigint",
        )?;
        let stride = stride_shift(&layout).ok_or(Error::InvalidLayout {
            reason: "PostgreSQL needs the time and sequence bits to leave two spare bits in a bigint",
        })?;
        Ok(Self {
            layout,
            shard,
            schema,
            options: Options::new(),
            stride,
            uuid_marker,
        })
    }

    /// Sets how the emitted `next_id()` treats a clock that moved back and a time unit that
    /// ran out, as [`Options`] does for the core's generator.
    pub const fn options(mut self, options: Options) -> Self {
        self.options = options;
        self
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
pub(super) fn lock_key(schema: &str) -> i32 {
    let hash = schema.bytes().fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    });
    i32::from_ne_bytes(hash.to_ne_bytes())
}

impl Display for Postgres<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.write_header(f)?;
        self.write_decoding(f)?;
        self.write_next_id(f)
    }
}

impl Postgres<'_> {
    /// The header, the counters, the layout check and the error helper.
    #[allow(clippy::too_many_lines)] // one template, read top to bottom
    pub(super) fn write_header(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let l = &self.layout;
        let s = self.schema;
        let seq_mask = l.max_sequence();
        let stride = self.stride;
        let signature = Signature(l);
        let shard = self.shard;
        let per_unit = seq_mask + 1;
        let version = env!("CARGO_PKG_VERSION");
        let tli = super::failover::TIMELINE;
        write!(
            f,
            "\
-- shardid {version}: IDs for shard {shard} made inside PostgreSQL, in schema {s}.
-- Layout: {signature}.
-- Generated by shardid; safe to run again (it replaces the functions and keeps the counters).
-- Needs PostgreSQL 12 or later. Callers of {s}.next_id() need USAGE on the schema, SELECT and
-- UPDATE on {s}.shardid_counter_even and {s}.shardid_counter_odd, and SELECT, INSERT and UPDATE
-- on {s}.shardid_timeline.

CREATE SCHEMA IF NOT EXISTS {s};

-- The counters of even and odd time units, shared by every session. Unit t owns the values
-- from t << {stride}; the first {per_unit} of them are its IDs, the rest are never used.
CREATE SEQUENCE IF NOT EXISTS {s}.shardid_counter_even AS bigint MINVALUE 0 START 0;
CREATE SEQUENCE IF NOT EXISTS {s}.shardid_counter_odd AS bigint MINVALUE 0 START 0;

-- The timeline the counters were last used on, and the last time unit in which this timeline
-- makes no ID: on a promoted standby (a new timeline) that may have lost the old primary's last
-- counter writes, the units the old primary could have used ({s}.shardid_on_timeline()).
CREATE TABLE IF NOT EXISTS {s}.shardid_timeline (tli integer NOT NULL, floor_units bigint NOT NULL);
INSERT INTO {s}.shardid_timeline SELECT {tli}, -1 WHERE NOT EXISTS (SELECT FROM {s}.shardid_timeline);

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
            WHEN 'INVALID_ARGUMENT' THEN '22023'
            WHEN 'CLOCK_MOVED_BACKWARDS' THEN '55000'
            ELSE '22008'
        END;
END
$shardid$;

"
        )
    }
}
