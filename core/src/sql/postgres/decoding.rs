//! The decoding functions of the DDL.

use core::fmt::{self, Formatter};

use super::Postgres;
use super::fragments::Units;
use crate::layout::mask;
use crate::sql::Literal;
use crate::uuid;

impl Postgres<'_> {
    /// The decoding functions: `IMMUTABLE`, so they can back indexes and range scans.
    #[allow(clippy::too_many_lines)] // one template, read top to bottom
    pub(super) fn write_decoding(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let l = &self.layout;
        let s = self.schema;
        let epoch = l.epoch_ms();
        let unit = l.unit_ms();
        let time_shift = l.time_shift();
        let seq_mask = l.max_sequence();
        let max_id = l.max_id();
        let expires = l.expires_at_ms();
        let ms_units = Units {
            ms: "ms",
            epoch_ms: epoch,
            unit_ms: unit,
            floored: false,
        };
        let shard_shift = l.shard_shift();
        let sequence_shift = l.sequence_shift();
        let max_shard = l.max_shard();
        let low_mask = mask(time_shift);
        write!(
            f,
            "\
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

"
        )?;
        self.write_uuid(f)
    }

    /// The UUIDv7 bridge ([`crate::uuid`]), byte for byte the core's: `unix_ts_ms` the ID's
    /// time, then version 7, the layout's marker and the ID's top two bits, the variant and
    /// the ID's low 62 bits.
    ///
    /// Both are one SQL expression the planner inlines into the query (no function call per
    /// row): `LANGUAGE sql`, no `FROM`, nothing but immutable built-ins, and not `STRICT`,
    /// because PostgreSQL inlines a `STRICT` function only when its body has no `CASE`, and a
    /// refusal needs one. A `NULL` still gives `NULL` (its own branch, never the raiser's).
    /// Bytes move through `int8send`, `uuid_send`, `get_byte` and `encode(…, 'hex')` (the
    /// fewest calls and allocations per value PostgreSQL 13 has: no bytea to bigint cast
    /// before 18), since an inlined expression is evaluated anew at each use of a value.
    /// `from_uuid`'s fast path is one test, "the UUID is the bridge's of the ID its bits hold";
    /// only a UUID that fails it reaches `shardid_uuid_refused`, PL/pgSQL that names why in
    /// the core's order (a call PostgreSQL does not fold into a plan where it is not reached,
    /// its argument being the UUID). Kept out of the expression so that it stays small: an
    /// argument PostgreSQL will not substitute several times (volatile, or costly: a nested
    /// `to_uuid(…)`) makes it call the function instead, building the expression anew at
    /// each call.
    fn write_uuid(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let l = &self.layout;
        let s = self.schema;
        let epoch = l.epoch_ms();
        let unit = l.unit_ms();
        let time_shift = l.time_shift();
        let max_id = l.max_id();
        let marker = self.uuid_marker;
        let version_and_marker = 0x7000 | (u64::from(marker) << 2);
        let max_ts = uuid::MAX_UNIX_TS_MS;
        let reason = |r: &'static str| Literal(r);
        let (not_7, variant, no_marker, other, mismatch, past) = (
            reason(uuid::NOT_VERSION_7),
            reason(uuid::NOT_RFC_VARIANT),
            reason(uuid::NO_MARKER),
            reason(uuid::OTHER_LAYOUT),
            reason(uuid::TIME_MISMATCH),
            reason(uuid::PAST_UUID_TIME),
        );
        // The presets' markers and the custom ones' range: another layout's, not no marker.
        let (presets, custom) = ((0x2C1, 0x2C4), (0x100, 0x1FF));
        // The ID's time in Unix ms, of an ID expression.
        let time = |id: &str| alloc::format!("({epoch} + ({id} >> {time_shift}) * {unit})");
        // The ID a UUID's bits hold: bit 62 is the last of rand_a (bit 63, the one before, must
        // be 0: the test below compares it), bits 61..0 rand_b's after the variant.
        let held = "(((get_byte(uuid_send(u), 7) & 1)::bigint << 62) | (('x' || encode(substring(uuid_send(u) from 9 for 8), 'hex'))::bit(64)::bigint & 4611686018427387903))";
        // Only a custom layout can outlive UUIDv7's 48-bit milliseconds (the presets' SQL has
        // no such test): past it, to_uuid refuses the ID and from_uuid the UUID, whose time
        // shifted into 48 bits would otherwise lose its top.
        let outlives = l.expires_at_ms() > max_ts;
        let (to_past_test, to_past) = if outlives {
            (
                alloc::format!(" AND {} <= {max_ts}", time("id")),
                alloc::format!(
                    "\n        WHEN id BETWEEN 0 AND {max_id} THEN {s}.shardid_raise('INVALID_ARGUMENT', 'id ' || id::text || ' ' || {past})::text::uuid"
                ),
            )
        } else {
            (alloc::string::String::new(), alloc::string::String::new())
        };
        let from_past = if outlives {
            alloc::format!("\n            AND {} <= {max_ts}", time(held))
        } else {
            alloc::string::String::new()
        };
        // An ID past the layout's bits is refused before its time is computed (which could
        // overflow a bigint); every ID of 63 bits is the layout's.
        let from_max = if max_id < i64::MAX.unsigned_abs() {
            alloc::format!("{held} <= {max_id}\n            AND ")
        } else {
            alloc::string::String::new()
        };
        let to_time = time("id");
        let from_time = time(held);
        write!(
            f,
            "\
-- The UUIDv7 of an ID: its time the ID's, the layout's marker and the whole ID in its random
-- bits, so shardid_from_uuid gives the ID back and UUIDs sort as their IDs do. Not STRICT so
-- that it is inlined into the query (NULL gives NULL all the same).
CREATE OR REPLACE FUNCTION {s}.shardid_to_uuid(id bigint) RETURNS uuid
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $shardid$
    SELECT CASE
        WHEN id BETWEEN 0 AND {max_id}{to_past_test} THEN
            encode(int8send(({to_time} << 16) | {version_and_marker} | (id >> 62))
                || int8send((id & 4611686018427387903) | (-9223372036854775807 - 1)), 'hex')::uuid{to_past}
        WHEN id IS NOT NULL THEN
            {s}.shardid_raise('INVALID_ID', id::text || ' is not a valid ID for this layout')::text::uuid
    END
$shardid$;

-- Why a UUID that shardid_from_uuid's test refused is not the bridge's (INVALID_ARGUMENT), in
-- the libraries' order; called by shardid_from_uuid only.
CREATE OR REPLACE FUNCTION {s}.shardid_uuid_refused(u uuid) RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $shardid$
DECLARE
    b bytea := uuid_send(u);
    marker int := ((get_byte(b, 6) & 15) << 6) | (get_byte(b, 7) >> 2);
BEGIN
    RETURN {s}.shardid_raise('INVALID_ARGUMENT', 'uuid ' || CASE
        WHEN get_byte(b, 6) >> 4 <> 7 THEN {not_7}
        WHEN get_byte(b, 8) >> 6 <> 2 THEN {variant}
        WHEN marker <> {marker} AND (marker BETWEEN {} AND {} OR marker BETWEEN {} AND {}) THEN {other}
        WHEN marker <> {marker} THEN {no_marker}
        ELSE {mismatch}
    END);
END
$shardid$;

-- The ID a UUID made by shardid_to_uuid (in any language) holds; INVALID_ARGUMENT for any
-- other UUID. Not STRICT so that it is inlined into the query (NULL gives NULL all the same):
-- a UUID is the bridge's when its first 8 bytes are those of the ID its bits hold and its
-- variant RFC 9562's.
CREATE OR REPLACE FUNCTION {s}.shardid_from_uuid(u uuid) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $shardid$
    SELECT CASE
        WHEN {from_max}substring(uuid_send(u) from 1 for 8)
                = int8send(({from_time} << 16) | {version_and_marker} | (get_byte(uuid_send(u), 7) & 1))
            AND (get_byte(uuid_send(u), 8) >> 6) = 2{from_past}
        THEN {held}
        ELSE {s}.shardid_uuid_refused(u)
    END
$shardid$;

",
            presets.0, presets.1, custom.0, custom.1,
        )
    }
}
