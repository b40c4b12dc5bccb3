//! The decoding functions of the DDL.

use core::fmt::{self, Formatter};

use super::Postgres;
use super::fragments::Units;
use crate::layout::mask;

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
        )
    }
}
