//! `next_id()`: the counters' move to a new unit and the ID a session takes.

use core::fmt::{self, Formatter};

use super::Postgres;
use super::fragments::{CounterOf, IdOf, Locked, Units};
use super::{LOCK_CLASS, lock_key};
use crate::sql::failover::{SKEW_MS, TIMELINE};

impl Postgres<'_> {
    /// `shardid_ready`, which moves a counter to a new unit, and `next_id()`.
    #[allow(clippy::too_many_lines)] // one template, read top to bottom
    pub(super) fn write_next_id(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let l = &self.layout;
        let s = self.schema;
        let epoch = l.epoch_ms();
        let unit = l.unit_ms();
        let time_shift = l.time_shift();
        let seq_mask = l.max_sequence();
        let shard_value = self.shard << l.shard_shift();
        let max_units = l.max_time_units();
        let expires = l.expires_at_ms();
        let tolerance = self.options.backwards_tolerance_ms;
        let borrow = self.options.max_borrow_units;
        let stride = self.stride;
        // Values between the end of one unit's IDs on a counter and the start of its next unit.
        let buffer = (2u64 << stride) - (seq_mask + 1);
        let key = lock_key(s);
        let now_units = Units {
            ms: "now_ms",
            epoch_ms: epoch,
            unit_ms: unit,
            floored: true,
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
        let shard = self.shard;
        let per_unit = seq_mask + 1;
        let tli = TIMELINE;
        let skew = SKEW_MS;
        let units_of_now = Units {
            ms: "now_ms",
            epoch_ms: epoch,
            unit_ms: unit,
            floored: true,
        };
        write!(
            f,
            "\
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

-- Before a session's first ID on a server: on a new timeline (a promoted standby, which may
-- have lost the old primary's last counter writes, however replication was set up: a
-- nextval() served from a sequence's cache writes no WAL, so its commit never waits for a
-- standby), the first caller sets a floor: the units up to this server's clock plus {skew} ms
-- (the most the old primary's clock may have been ahead) and the units borrowed beyond it.
-- Every session waits until its clock is past the floor, then remembers it checked: a server
-- session never changes timeline (on a standby, next_id() fails before it can remember).
CREATE OR REPLACE FUNCTION {s}.shardid_on_timeline() RETURNS boolean
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE AS $shardid$
DECLARE
    here integer := {tli};
    was integer;
    floor_at bigint;
    now_ms bigint;
BEGIN
    SELECT t.tli, t.floor_units INTO was, floor_at FROM {s}.shardid_timeline AS t;
    IF was IS DISTINCT FROM here THEN
        PERFORM pg_advisory_xact_lock({LOCK_CLASS}, {key});
        SELECT t.tli, t.floor_units INTO was, floor_at FROM {s}.shardid_timeline AS t;
        IF was IS DISTINCT FROM here THEN
            now_ms := {clock} + {skew};
            floor_at := {units_of_now} + {borrow};
            UPDATE {s}.shardid_timeline SET tli = here, floor_units = floor_at;
            IF NOT FOUND THEN
                INSERT INTO {s}.shardid_timeline VALUES (here, floor_at);
            END IF;
        END IF;
    END IF;
    -- No floor (-1: installed on this timeline), or past it: go on. A clock further behind the
    -- floor than it was set ahead (it stepped back since) is an error, not a wait.
    LOOP
        now_ms := {clock};
        EXIT WHEN floor_at < 0 OR {units_of_now} > floor_at;
        IF {epoch} + (floor_at + 1) * {unit} - now_ms > {skew} + ({borrow} + 1) * {unit} + 1000 THEN
            PERFORM {s}.shardid_raise('CLOCK_MOVED_BACKWARDS', 'clock moved backwards: '
                || {epoch} + (floor_at + 1) * {unit} - now_ms || ' ms behind the first ID this server may make after its promotion');
        END IF;
        PERFORM pg_sleep(least(0.1, greatest(0.001, ({epoch} + (floor_at + 1) * {unit} - now_ms) / 1000.0)));
    END LOOP;
    PERFORM set_config('shardid.{s}', here::text, false);
    RETURN true;
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
    checked boolean := CASE WHEN current_setting('shardid.{s}', true) IS NOT NULL THEN true
                            ELSE {s}.shardid_on_timeline() END;
    now_ms bigint := {clock};
    now_units bigint := {now_units};
    v bigint := nextval({now_counter});
    t bigint;
    last bigint;
    last_units bigint;
    verdict text;
    until_ms bigint;
    spin_ms bigint;
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
        -- pg_sleep() sleeps whole milliseconds and wakes late, so waiting out the rest of a
        -- used-up unit with it took 2-3 ms and one statement made IDs at a third of the
        -- layout's rate: sleep all but the last millisecond, then read the clock until it is
        -- there (or has gone back, which the next turn of the loop judges).
        IF until_ms - now_ms > 1 THEN
            PERFORM pg_sleep((until_ms - now_ms - 1) / 1000.0);
        END IF;
        LOOP
            spin_ms := {clock};
            EXIT WHEN spin_ms >= until_ms OR spin_ms < now_ms;
        END LOOP;
    END LOOP;
END
$shardid$;
"
        )
    }
}
