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
    /// the ID's low 62 bits. `to_uuid` is plain SQL (inlined into queries); `from_uuid`
    /// PL/pgSQL, so each refusal is raised only when reached.
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
        // Only a custom layout can outlive UUIDv7's 48-bit milliseconds; the presets' SQL has
        // no such branch. The message holds the ID, so it is not a constant PostgreSQL could
        // fold (and raise) while planning.
        let (open, close) = if l.expires_at_ms() > max_ts {
            (
                "CASE WHEN {s}.shardid_timestamp_ms(id) > {max_ts} THEN {s}.shardid_raise('INVALID_ARGUMENT', 'id ' || id || ' ' || {past})::text::uuid ELSE ",
                " END",
            )
        } else {
            ("", "")
        };
        let open = open
            .replace("{s}", s)
            .replace("{max_ts}", &alloc::format!("{max_ts}"))
            .replace("{past}", &alloc::format!("{past}"));
        write!(
            f,
            "\
-- The UUIDv7 of an ID: its time the ID's, the layout's marker and the whole ID in its random
-- bits, so shardid_from_uuid gives the ID back and UUIDs sort as their IDs do.
CREATE OR REPLACE FUNCTION {s}.shardid_to_uuid(id bigint) RETURNS uuid
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $shardid$
    SELECT {open}(lpad(to_hex(({s}.shardid_timestamp_ms(id) << 16) | {version_and_marker} | (id >> 62)), 16, '0')
        || lpad(to_hex((id & 4611686018427387903) | (-9223372036854775807 - 1)), 16, '0'))::uuid{close}
$shardid$;

-- The ID a UUID made by shardid_to_uuid (in any language) holds; INVALID_ARGUMENT for any
-- other UUID.
CREATE OR REPLACE FUNCTION {s}.shardid_from_uuid(u uuid) RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $shardid$
DECLARE
    h text := replace(u::text, '-', '');
    hi bigint := ('x' || substr(h, 1, 16))::bit(64)::bigint;
    lo bigint := ('x' || substr(h, 17, 16))::bit(64)::bigint;
    marker bigint := (hi >> 2) & 1023;
    id bigint := ((hi & 3) << 62) | (lo & 4611686018427387903);
BEGIN
    IF (hi >> 12) & 15 <> 7 THEN
        PERFORM {s}.shardid_raise('INVALID_ARGUMENT', 'uuid ' || {not_7});
    ELSIF (lo >> 62) & 3 <> 2 THEN
        PERFORM {s}.shardid_raise('INVALID_ARGUMENT', 'uuid ' || {variant});
    ELSIF marker <> {marker} AND (marker BETWEEN {} AND {} OR marker BETWEEN {} AND {}) THEN
        PERFORM {s}.shardid_raise('INVALID_ARGUMENT', 'uuid ' || {other});
    ELSIF marker <> {marker} THEN
        PERFORM {s}.shardid_raise('INVALID_ARGUMENT', 'uuid ' || {no_marker});
    ELSIF (hi & 2) <> 0 OR id > {max_id}
        OR {epoch} + (id >> {time_shift}) * {unit} <> (hi >> 16) & {max_ts} THEN
        PERFORM {s}.shardid_raise('INVALID_ARGUMENT', 'uuid ' || {mismatch});
    END IF;
    RETURN id;
END
$shardid$;

",
            presets.0, presets.1, custom.0, custom.1,
        )
    }
}
