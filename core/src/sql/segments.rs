//! The PostgreSQL side of dense IDs from segments ([`crate::segment`]): one row per *tag*
//! holding the next number, and the functions that are the contract every driver and test uses.
//!
//! - `<schema>.create_tag(tag text, first bigint DEFAULT 1)`: a tag must be created; a typo
//!   is an error (SQLSTATE `SI001`), never a new tag.
//! - `<schema>.take_segment(tag text, size bigint)` → `(first, count, stride)`: the IDs
//!   `first, first + stride, ...`, in one `UPDATE ... RETURNING` (its row lock orders
//!   concurrent callers under READ COMMITTED; under REPEATABLE READ a concurrent update is a
//!   serialization failure, SQLSTATE `40001`, to retry). `size` 0 takes the size the row
//!   remembers (the last one asked for).
//! - `<schema>.next_dense_id(tag text)`: one ID, for rows the database inserts itself (a column
//!   default), from the same numbers, never colliding with clients' segments.
//! - `<schema>.give_back(tag text, first bigint, "end" bigint)` → boolean: returns the unused
//!   tail `first..end` of the last segment taken, when nobody took one since (the row's next
//!   number is still `end`): a clean restart then leaves no hole.
//!
//! Across a failover or a restore ([`super::failover`]): each row records the timeline and the
//! system it was last written on, when (`updated_at`, the database's clock) and the highest rate
//! its numbers were handed out at (`rate`, over windows `window_at`/`window_n`); the first take
//! or `next_dense_id`/`next_serial` of a row of another timeline or system, or marked `restored`,
//! first skips what that rate could have handed out since (`shardid_skip`). A segment still
//! grows at most twice per [`super::failover::LOST_WAL_BYTES`] of WAL. `give_back` never
//! rewinds such a row.
//!
//! The DDL also holds business serial numbers' tables and functions (`create_serial`,
//! `next_serial`, ...: [`super::SerialStatements`]), whose periods are tags of this table.
//!
//! Flickr's ticket servers at segment granularity: rendered for server `index` of `servers`,
//! the functions hand out only numbers `≡ index (mod servers)` (stride `servers`), so a client
//! given several servers takes segments from whichever answers, and a server that is down costs
//! only its share.

use core::fmt::{self, Display, Formatter};

use super::failover::{
    FLOOR_BATCHES, LOST_WAL_BYTES, LOST_WRITES, MARGIN, RATE_WINDOW_MS, SKEW_MS, SYSTEM_ID,
    TIMELINE, ZONE_AHEAD_MS,
};
use super::serials::SerialsDdl;
use super::{Placeholders, SchemaStatement, SerialStatements, SqlError, check_schema};

/// The SQLSTATE of an unknown tag.
pub const UNKNOWN_TAG: &str = "SI001";
/// The SQLSTATE of a tag whose numbers would pass 2^63 - 1.
pub const TAG_EXHAUSTED: &str = "SI002";
/// The largest segment one call takes.
pub const MAX_SEGMENT: u64 = 1 << 40;
/// The longest tag, in bytes.
pub const MAX_TAG_LEN: usize = 200;
/// The segment size a tag starts with, until a client asks for another.
pub const DEFAULT_SEGMENT: u64 = 1_000;

/// The DDL of segments in one schema, for one ticket server; render it with [`Display`].
#[derive(Clone, Copy, Debug)]
#[must_use]
pub struct Segments<'a> {
    schema: &'a str,
    servers: u64,
    index: u64,
}

impl<'a> Segments<'a> {
    /// The DDL for one server (stride 1).
    ///
    /// # Errors
    /// [`SqlError::SchemaName`], as for [`super::Postgres::new`].
    pub fn new(schema: &'a str) -> Result<Self, SqlError> {
        check_schema(schema)?;
        Ok(Self {
            schema,
            servers: 1,
            index: 0,
        })
    }

    /// The DDL for server `index` of `servers` (`index < servers <= 1024`).
    ///
    /// # Errors
    /// [`SqlError::Core`] with [`crate::Error::InvalidShardCount`] when the numbers do not fit.
    pub fn ticket_server(mut self, servers: u64, index: u64) -> Result<Self, SqlError> {
        if servers == 0 || servers > 1024 || index >= servers {
            return Err(SqlError::Core(crate::Error::InvalidShardCount {
                count: servers,
                max: 1024,
            }));
        }
        self.servers = servers;
        self.index = index;
        Ok(self)
    }

    /// The schema.
    pub const fn schema(&self) -> &'a str {
        self.schema
    }

    /// The statements a driver sends, with its placeholders.
    pub const fn statements(&self, placeholders: Placeholders) -> SegmentStatements<'a> {
        SegmentStatements {
            schema: self.schema,
            placeholders,
        }
    }

    /// The statements a serial-number driver sends, with its placeholders.
    pub const fn serial_statements(&self, placeholders: Placeholders) -> SerialStatements<'a> {
        SerialStatements {
            schema: self.schema,
            placeholders,
        }
    }
}

/// The DDL that removes what [`Segments`] installed in `schema` (the functions of dense IDs
/// and of serial numbers, the tags, the serial registrations), leaving the schema itself.
/// Render it with [`Display`].
#[derive(Clone, Copy, Debug)]
#[must_use]
pub struct SegmentsUninstall<'a> {
    schema: &'a str,
}

impl<'a> SegmentsUninstall<'a> {
    /// # Errors
    /// [`SqlError::SchemaName`], as for [`Segments::new`].
    pub fn new(schema: &'a str) -> Result<Self, SqlError> {
        check_schema(schema)?;
        Ok(Self { schema })
    }
}

/// Every function the install creates, with its argument types, dependents first.
const FUNCTIONS: [&str; 25] = [
    "next_serial(text, text, text)",
    "render_serial(text, bigint, timestamptz)",
    "take_serial_segment(text, text, bigint)",
    "serial_info(text)",
    "create_serial(text, text, text, text, text, text[], integer, text, integer)",
    "serial_luhn(text)",
    "serial_period(text, timestamp)",
    "serial_period_tag(text, text)",
    "give_back(text, bigint, bigint)",
    "next_dense_id(text)",
    "take_segment(text, bigint)",
    "create_tag(text, bigint)",
    "shardid_fenced(text)",
    "shardid_after(text, bigint)",
    // What take_segment and next_dense_id call: across a failover (super::failover).
    "shardid_bump(text, bigint)",
    "shardid_skip(bigint, double precision, bigint, timestamptz, timestamptz, timestamptz)",
    "shardid_rate(double precision, bigint, timestamptz, bigint, timestamptz)",
    "shardid_window_at(boolean, timestamptz, timestamptz)",
    "shardid_window_n(boolean, bigint, timestamptz, bigint, timestamptz)",
    "shardid_stepped_back(integer, bigint, boolean, integer, bigint)",
    "shardid_system(timestamptz, bigint)",
    "shardid_lost(bigint)",
    "shardid_want(bigint, bigint, pg_lsn, pg_lsn)",
    // Their arguments or results are the registrations' row type: after the functions above.
    "serial_text(SCHEMA.shardid_serials, bigint, timestamp, text)",
    "serial_row(text)",
];

impl Display for SegmentsUninstall<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        super::uninstall::write_uninstall(
            f,
            self.schema,
            "dense IDs and serial numbers (functions, tags, registrations)",
            &FUNCTIONS,
            &[
                ("TABLE", "shardid_serials"),
                ("TABLE", "shardid_tags"),
                ("TABLE", "shardid_tag_fence"),
            ],
        )
    }
}

/// The statements a segment driver sends; each takes its parameters in the order its method
/// says. Render with [`Display`].
#[derive(Clone, Copy, Debug)]
pub struct SegmentStatements<'a> {
    schema: &'a str,
    placeholders: Placeholders,
}

impl<'a> SegmentStatements<'a> {
    const fn statement(&self, text: (&'static str, &'static str)) -> SchemaStatement<'a> {
        SchemaStatement::new(self.schema, self.placeholders, text)
    }

    /// Takes a segment; parameters `(tag, size)`; one row `(first, count, stride)`.
    pub const fn take(&self) -> SchemaStatement<'a> {
        self.statement((
            "SELECT first, count, stride FROM ",
            ".take_segment(?::text, ?::bigint)",
        ))
    }

    /// Gives back an unused tail; parameters `(tag, first, end)`; one boolean.
    pub const fn give_back(&self) -> SchemaStatement<'a> {
        self.statement(("SELECT ", ".give_back(?::text, ?::bigint, ?::bigint)"))
    }

    /// Creates a tag if it does not exist; parameters `(tag, first)`.
    pub const fn create_tag(&self) -> SchemaStatement<'a> {
        self.statement(("SELECT ", ".create_tag(?::text, ?::bigint)"))
    }
}

/// The error of a function of the segments' DDL whose numbers of `tag` (an expression) would
/// pass 2^63 - 1: its `EXCEPTION` clause, the same in every such function.
pub(super) struct Exhausted<'a>(pub(super) &'a str);

impl Display for Exhausted<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let tag = self.0;
        write!(
            f,
            "\
EXCEPTION WHEN numeric_value_out_of_range THEN
    RAISE EXCEPTION 'TAG_EXHAUSTED: the numbers of tag % would pass 2^63 - 1', quote_nullable({tag})
        USING ERRCODE = '{TAG_EXHAUSTED}';"
        )
    }
}

/// The error of a function of the segments' DDL given a `tag` (an expression) never created
/// in schema `s`, naming the call that creates it.
struct UnknownTag<'a> {
    s: &'a str,
    tag: &'a str,
}

impl Display for UnknownTag<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let Self { s, tag } = self;
        write!(
            f,
            "        \
        RAISE EXCEPTION 'UNKNOWN_TAG: no tag % in {s}: create it with {s}.create_tag()', quote_nullable({tag})
            USING ERRCODE = '{UNKNOWN_TAG}';"
        )
    }
}

/// What every write of a tag's row sets alike besides `next` (`take_segment`'s and
/// `shardid_bump`'s), `taken` numbers handed out: the rate and its window, and the timeline,
/// system and start the row was last written on, which the next write compares to tell a
/// promoted standby or a restored backup (`shardid_stepped_back`). One text, so that the two
/// writes cannot drift apart.
struct Bookkeeping<'a> {
    s: &'a str,
    taken: &'a dyn Display,
}

impl Display for Bookkeeping<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let Self { s, taken } = self;
        let back = Backward(s);
        let window_ms = RATE_WINDOW_MS;
        write!(
            f,
            "            \
            rate = CASE WHEN {back} AND t.window_at IS NOT NULL
                        -- The open window's rate is kept when a step back starts a new one: a
                        -- tag created later skips by it (shardid_fenced).
                        THEN greatest(t.rate, t.window_n / greatest(extract(epoch FROM t.updated_at - t.window_at)::float8, {window_ms} / 1000.0))
                        ELSE {s}.shardid_rate(t.rate, t.window_n, t.window_at, {taken}, clock) END,
            window_at = {s}.shardid_window_at({back}, t.window_at, clock),
            window_n = {s}.shardid_window_n({back}, t.window_n,
                                            t.window_at, {taken}, clock),
            back_at = CASE WHEN {back} THEN t.updated_at ELSE t.back_at END,
            back_seen = CASE WHEN {back} THEN clock ELSE t.back_seen END,
            tli = here,
            sysid = {s}.shardid_system(t.started, t.sysid),
            started = pg_postmaster_start_time(),
            restored = false,
            updated_at = clock"
        )
    }
}

/// Whether the row's state stepped back past this server's (schema `.0`): the expression
/// every write of a tag's row tests.
struct Backward<'a>(&'a str);

impl Display for Backward<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = self.0;
        write!(
            f,
            "{s}.shardid_stepped_back(t.tli, t.sysid, t.restored, here, {s}.shardid_system(t.started, t.sysid))"
        )
    }
}

/// The numbers `take_segment` hands out: the size it wants (schema `.0`).
struct Wanted<'a>(&'a str);

impl Display for Wanted<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.shardid_want(take_segment.size, t.step, t.grown_at, at)",
            self.0
        )
    }
}

impl Display for Segments<'_> {
    #[allow(clippy::too_many_lines)] // one template, read top to bottom
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = self.schema;
        let n = self.servers;
        let i = self.index;
        let version = env!("CARGO_PKG_VERSION");
        let tli = TIMELINE;
        let lost_writes = LOST_WRITES;
        let lost_wal = LOST_WAL_BYTES;
        let sysid = SYSTEM_ID;
        let margin = MARGIN;
        let floor = FLOOR_BATCHES;
        let window_ms = RATE_WINDOW_MS;
        let skew_ms = SKEW_MS;
        let back = Backward(s);
        let exhausted_take = Exhausted("take_segment.tag");
        let exhausted_next = Exhausted("next_dense_id.tag");
        let unknown_take = UnknownTag {
            s,
            tag: "take_segment.tag",
        };
        let unknown_next = UnknownTag {
            s,
            tag: "next_dense_id.tag",
        };
        let wanted = Wanted(s);
        let zone_ahead_h = ZONE_AHEAD_MS / 3_600_000;
        let kept_by_take = Bookkeeping { s, taken: &wanted };
        let kept_by_bump = Bookkeeping {
            s,
            taken: &"shardid_bump.k",
        };
        write!(
            f,
            "\
-- shardid {version}: dense IDs from segments, in schema {s}.
-- Ticket server {i} of {n}: every number it hands out is {i} modulo {n}.
-- Generated by shardid; safe to run again (it replaces the functions and keeps the tags).

CREATE SCHEMA IF NOT EXISTS {s};

-- One row per tag: the next number this server hands out, the segment size last handed out,
-- when it was last written (the database's clock), the timeline and system it was last written
-- on, where in the WAL the size last grew, the highest rate its numbers were handed out at
-- (numbers a second, measured over windows of at least {window_ms} ms: the current one started
-- at window_at and has handed out window_n), and whether an operator marked it restored. All but
-- the first four are added apart, so that a table of an older version gains them and a new one
-- makes no notice of a column that already exists.
CREATE TABLE IF NOT EXISTS {s}.shardid_tags (
    tag text PRIMARY KEY,
    next bigint NOT NULL,
    step bigint NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE {s}.shardid_tags ADD COLUMN IF NOT EXISTS tli integer, ADD COLUMN IF NOT EXISTS grown_at pg_lsn,
    ADD COLUMN IF NOT EXISTS sysid bigint, ADD COLUMN IF NOT EXISTS rate double precision NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS window_at timestamptz, ADD COLUMN IF NOT EXISTS window_n bigint NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS restored boolean NOT NULL DEFAULT false, ADD COLUMN IF NOT EXISTS started timestamptz,
    ADD COLUMN IF NOT EXISTS back_at timestamptz, ADD COLUMN IF NOT EXISTS back_seen timestamptz;

-- What a tag created after a step back skips (issue 54): one row, in the schema so that it is
-- in every backup of the tags. `fence` numbers (a multiple of the stride), set by the first tag
-- created after a step back (shardid_fenced), at `fenced_at`, and never lowered; the timeline,
-- system and start it was set on, and whether `shardid restored` marked it, as a tag's row:
-- the step back it has not yet accounted for.
CREATE TABLE IF NOT EXISTS {s}.shardid_tag_fence (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    fence bigint NOT NULL DEFAULT 0,
    fenced_at timestamptz NOT NULL DEFAULT '-infinity',
    tli integer,
    sysid bigint,
    started timestamptz,
    restored boolean NOT NULL DEFAULT false
);
INSERT INTO {s}.shardid_tag_fence (tli, sysid, started) VALUES ({tli}, {sysid}, pg_postmaster_start_time())
    ON CONFLICT DO NOTHING;

-- The system identifier of this cluster, read from its control file only when the row was last
-- written by another run of a server (`started`, its postmaster's start time): the row's own
-- `sysid` otherwise, which this very server wrote.
-- (VOLATILE as pg_control_system(), so PostgreSQL inlines it; the CASE reads the file only
-- when its branch is taken.)
CREATE OR REPLACE FUNCTION {s}.shardid_system(started timestamptz, sysid bigint) RETURNS bigint
    LANGUAGE sql VOLATILE AS $shardid$
    SELECT CASE WHEN started = pg_postmaster_start_time() AND sysid IS NOT NULL THEN sysid ELSE {sysid} END
$shardid$;

-- Whether a row last written on timeline `tli` of system `sysid`, or marked restored, may be
-- behind what was handed out, read on timeline `here` of system `system`: the database's state
-- stepped back (a promoted standby, point-in-time recovery, a dump restored elsewhere).
CREATE OR REPLACE FUNCTION {s}.shardid_stepped_back(tli integer, sysid bigint, restored boolean, here integer, system bigint)
    RETURNS boolean LANGUAGE sql IMMUTABLE AS $shardid$
    SELECT (tli IS NOT NULL AND tli <> here) OR (sysid IS NOT NULL AND sysid <> system) OR coalesce(restored, false)
$shardid$;

-- What a tag may have handed out since its row was last written at `last`, read at `at` after a
-- step back: {margin} times what its highest rate (the closed windows' `rate`, or the open
-- window's) hands out from `last` to `at` plus {skew_ms} ms of clock skew, plus {floor} segments
-- of twice its last size. A row never measured (written before rates were) skips as a
-- failover did before: shardid_lost(step), written out.
CREATE OR REPLACE FUNCTION {s}.shardid_skip(step bigint, rate double precision, window_n bigint,
        window_at timestamptz, last timestamptz, at timestamptz)
    RETURNS bigint LANGUAGE sql IMMUTABLE AS $shardid$
    SELECT CASE WHEN window_at IS NULL THEN {n} * {lost_writes} * 2 * greatest(step, {DEFAULT_SEGMENT})
        ELSE {n} * ({floor} * 2 * greatest(step, 1)
            + ceil({margin} * greatest(rate, window_n / greatest(extract(epoch FROM last - window_at)::float8, {window_ms} / 1000.0))
                   * (greatest(extract(epoch FROM at - last)::float8, 0) + {skew_ms} / 1000.0))::bigint) END
$shardid$;

-- The highest rate after `taken` more numbers at `at`: a window of at least {window_ms} ms closes
-- with what it handed out (this take included) over its length.
CREATE OR REPLACE FUNCTION {s}.shardid_rate(rate double precision, window_n bigint, window_at timestamptz, taken bigint, at timestamptz)
    RETURNS double precision LANGUAGE sql IMMUTABLE AS $shardid$
    SELECT CASE WHEN window_at IS NOT NULL AND at - window_at >= interval '{window_ms} milliseconds'
        THEN greatest(rate, (window_n + taken) / extract(epoch FROM at - window_at)::float8) ELSE rate END
$shardid$;

-- The window's start and count after `taken` more numbers at `at` (a new window after a step back).
CREATE OR REPLACE FUNCTION {s}.shardid_window_at(back boolean, window_at timestamptz, at timestamptz)
    RETURNS timestamptz LANGUAGE sql IMMUTABLE AS $shardid$
    SELECT CASE WHEN back OR window_at IS NULL OR at - window_at >= interval '{window_ms} milliseconds' THEN at ELSE window_at END
$shardid$;
CREATE OR REPLACE FUNCTION {s}.shardid_window_n(back boolean, window_n bigint, window_at timestamptz, taken bigint, at timestamptz)
    RETURNS bigint LANGUAGE sql IMMUTABLE AS $shardid$
    SELECT CASE WHEN back OR window_at IS NULL THEN taken
        WHEN at - window_at >= interval '{window_ms} milliseconds' THEN 0 ELSE window_n + taken END
$shardid$;

-- What a row written before rates were measured skips after a step back (a promoted standby's
-- lost WAL, {lost_writes} takes of twice a last segment of `step` numbers: the most {lost_wal}
-- bytes of WAL hold).
CREATE OR REPLACE FUNCTION {s}.shardid_lost(step bigint) RETURNS bigint
    LANGUAGE sql IMMUTABLE AS $shardid$
    SELECT {n} * {lost_writes} * 2 * greatest(step, {DEFAULT_SEGMENT})
$shardid$;

-- The size of a take asked for `size` (0: the last) of a tag whose last segment had `step`
-- numbers and whose size last grew at WAL position `grown_at`, with the WAL at `at`: at most
-- twice the last (or {DEFAULT_SEGMENT}), and larger than the last at most once per {lost_wal}
-- bytes of WAL, so a promoted standby's lost WAL held no segment larger than twice the size
-- its row records.
CREATE OR REPLACE FUNCTION {s}.shardid_want(size bigint, step bigint, grown_at pg_lsn, at pg_lsn) RETURNS bigint
    LANGUAGE sql IMMUTABLE AS $shardid$
    -- One expression, no FROM: PostgreSQL inlines it into the statement that calls it.
    SELECT CASE WHEN (CASE WHEN size > 0 THEN size WHEN step > 0 THEN step ELSE {DEFAULT_SEGMENT} END)
                     <= greatest(step, {DEFAULT_SEGMENT})
                THEN (CASE WHEN size > 0 THEN size WHEN step > 0 THEN step ELSE {DEFAULT_SEGMENT} END)
                WHEN grown_at IS NULL OR at - grown_at >= {lost_wal}
                THEN least(CASE WHEN size > 0 THEN size WHEN step > 0 THEN step ELSE {DEFAULT_SEGMENT} END,
                           2 * greatest(step, {DEFAULT_SEGMENT}))
                ELSE greatest(step, {DEFAULT_SEGMENT}) END
$shardid$;

-- What a tag created now skips (a multiple of {n}): the schema's fence (shardid_tag_fence),
-- brought up to date first when the state stepped back since it was last set (the fence's row
-- stepped back past, as a tag's): from the rows stepped back past and those rewritten since
-- (back_at, back_seen), {margin} times the
-- highest rate of any tag from the last handout the restored state remembers to now plus
-- {skew_ms} ms, plus {floor} segments of twice the largest last size (rows never measured:
-- {lost_writes} of them), as each row's own skip (shardid_skip). A serial period that began
-- after the fence was set (its earliest start in any zone, {zone_ahead_h} h before midnight UTC,
-- more than {skew_ms} ms after) skips nothing: the lost state never issued from it.
CREATE OR REPLACE FUNCTION {s}.shardid_fenced(tag text) RETURNS bigint
    LANGUAGE plpgsql VOLATILE AS $shardid$
#variable_conflict use_variable
DECLARE
    clock timestamptz := clock_timestamp();
    here integer := {tli};
    f {s}.shardid_tag_fence;
    last timestamptz;
    top double precision;
    widest bigint;
    unmeasured boolean;
    period text;
BEGIN
    INSERT INTO {s}.shardid_tag_fence (restored) VALUES (true) ON CONFLICT DO NOTHING; -- a row lost: as marked
    SELECT * INTO f FROM {s}.shardid_tag_fence FOR UPDATE;
    IF {s}.shardid_stepped_back(f.tli, f.sysid, f.restored, here, {s}.shardid_system(f.started, f.sysid)) THEN
        SELECT max(CASE WHEN {s}.shardid_stepped_back(t.tli, t.sysid, t.restored, here, {s}.shardid_system(t.started, t.sysid))
                        THEN t.updated_at WHEN t.back_seen > f.fenced_at THEN t.back_at END),
               max(CASE WHEN t.window_at IS NULL THEN t.rate
                        ELSE greatest(t.rate, t.window_n / greatest(extract(epoch FROM t.updated_at - t.window_at)::float8, {window_ms} / 1000.0)) END),
               max(t.step), bool_or(t.window_at IS NULL AND t.step > 0)
            INTO last, top, widest, unmeasured
            FROM {s}.shardid_tags AS t WHERE t.tag <> shardid_fenced.tag;
        IF last IS NOT NULL THEN
            f.fence := greatest(f.fence, {n} * ({floor} * 2 * greatest(widest, 1)
                + ceil({margin} * top * (greatest(extract(epoch FROM clock - last)::float8, 0) + {skew_ms} / 1000.0))::bigint
                + CASE WHEN unmeasured THEN {lost_writes} * 2 * greatest(widest, {DEFAULT_SEGMENT}) ELSE 0 END));
            f.fenced_at := clock;
        END IF;
        UPDATE {s}.shardid_tag_fence AS r SET fence = f.fence, fenced_at = f.fenced_at, tli = here,
            sysid = {s}.shardid_system(r.started, r.sysid), started = pg_postmaster_start_time(), restored = false;
    END IF;
    IF f.fence = 0 THEN
        RETURN 0;
    END IF;
    -- A serial's period (tag@2026-12-08, @2026-12, @2026) that began after the fence was set.
    period := substr(tag, strpos(tag, '@') + 1);
    IF strpos(tag, '@') > 0 AND period ~ '^[0-9]{{4}}(-[0-9]{{2}}(-[0-9]{{2}})?)?$'
        AND EXISTS (SELECT 1 FROM {s}.shardid_serials AS r WHERE r.tag = split_part(shardid_fenced.tag, '@', 1))
        AND (rpad(period, 10, CASE length(period) WHEN 4 THEN '-01-01' ELSE '-01' END) || ' 00:00:00+00')::timestamptz
            - interval '{zone_ahead_h} hours' > f.fenced_at + interval '{skew_ms} milliseconds' THEN
        RETURN 0;
    END IF;
    RETURN f.fence;
END
$shardid$;

-- `shardid restored --after TAG=LAST` (issue 54): the operator knows the last number handed
-- out of the tag (the margin added), so its next is this server's first number above `last`
-- (never lower than it is), and the row is no longer stepped back: no skip by its rate. A tag
-- the restored data lacks is made so, past no fence. Returns the tag's next number.
CREATE OR REPLACE FUNCTION {s}.shardid_after(tag text, last bigint) RETURNS bigint
    LANGUAGE plpgsql VOLATILE AS $shardid$
#variable_conflict use_column
DECLARE
    first bigint := shardid_after.last + 1 + ((({i} - (shardid_after.last + 1) % {n}) % {n}) + {n}) % {n};
    result bigint;
BEGIN
    INSERT INTO {s}.shardid_tags AS t (tag, next, tli, sysid, started, window_at)
        VALUES (shardid_after.tag, first, {tli}, {sysid}, pg_postmaster_start_time(), clock_timestamp())
        ON CONFLICT (tag) DO UPDATE SET next = greatest(t.next, first), tli = {tli}, sysid = {sysid},
            started = pg_postmaster_start_time(), restored = false, window_at = clock_timestamp(), window_n = 0,
            updated_at = clock_timestamp()
        RETURNING t.next INTO result;
    RETURN result;
END
$shardid$;

-- Creates a tag whose first number is the first at or above `first` that this server hands out;
-- an existing tag is left as it is.
CREATE OR REPLACE FUNCTION {s}.create_tag(tag text, first bigint DEFAULT 1) RETURNS void
    LANGUAGE plpgsql VOLATILE AS $shardid$
#variable_conflict use_column
BEGIN
    IF create_tag.tag IS NULL OR create_tag.tag = '' OR octet_length(create_tag.tag) > {MAX_TAG_LEN} THEN
        RAISE EXCEPTION 'INVALID_ARGUMENT: a tag is 1 to {MAX_TAG_LEN} bytes of text, not %', quote_nullable(create_tag.tag)
            USING ERRCODE = '22023';
    END IF;
    IF create_tag.first IS NULL OR create_tag.first < 0 THEN
        RAISE EXCEPTION 'INVALID_ARGUMENT: first must be 0 or more, not %', quote_nullable(create_tag.first)
            USING ERRCODE = '22023';
    END IF;
    INSERT INTO {s}.shardid_tags (tag, next, tli, sysid, started, window_at)
        VALUES (create_tag.tag, create_tag.first + ((({i} - create_tag.first % {n}) % {n}) + {n}) % {n}, {tli}, {sysid},
                pg_postmaster_start_time(), clock_timestamp())
        ON CONFLICT (tag) DO NOTHING;
    IF FOUND THEN
        -- A new row (only then: take_serial_segment calls this at every take): after a step
        -- back, past what a tag of this name in the lost state could have handed out.
        UPDATE {s}.shardid_tags AS t SET next = t.next + {s}.shardid_fenced(create_tag.tag)
            WHERE t.tag = create_tag.tag;
    END IF;
END
$shardid$;

-- Takes the next `size` numbers of the tag (0: as many as last time): first, first + stride, ...
-- A segment grows at most to twice the last, and at most once per {lost_wal} bytes of WAL, so a
-- promoted standby's lost WAL held no segment larger than twice the size its row records.
CREATE OR REPLACE FUNCTION {s}.take_segment(tag text, size bigint)
    RETURNS TABLE (first bigint, count bigint, stride bigint)
    LANGUAGE plpgsql VOLATILE AS $shardid$
#variable_conflict use_column
DECLARE
    at pg_lsn := pg_current_wal_lsn();
    -- The timeline, from the same WAL position.
    here integer := ('x' || left(pg_walfile_name(at), 8))::bit(32)::int;
    clock timestamptz := clock_timestamp();
BEGIN
    IF take_segment.size IS NULL OR take_segment.size < 0 OR take_segment.size > {MAX_SEGMENT} THEN
        RAISE EXCEPTION 'INVALID_ARGUMENT: size must be in 0..={MAX_SEGMENT}, not %', quote_nullable(take_segment.size)
            USING ERRCODE = '22023';
    END IF;
    -- One statement, its row lock ordering concurrent takes: every expression reads the row
    -- as it is (the latest version, when a concurrent take updated it first). A row the
    -- database's state stepped back past (shardid_stepped_back) first skips shardid_skip().
    UPDATE {s}.shardid_tags AS t
        SET step = {wanted},
            next = t.next + CASE WHEN {back}
                                 THEN {s}.shardid_skip(t.step, t.rate, t.window_n, t.window_at, t.updated_at, clock) ELSE 0 END
                + {n} * {wanted},
            grown_at = CASE WHEN {wanted}
                                 > greatest(t.step, {DEFAULT_SEGMENT}) THEN at ELSE t.grown_at END,
{kept_by_take}
        WHERE t.tag = take_segment.tag
        RETURNING t.next - {n} * t.step, t.step INTO first, count;
    IF NOT FOUND THEN
{unknown_take}
    END IF;
    stride := {n};
    RETURN NEXT;
{exhausted_take}
END
$shardid$;

-- Takes `k` numbers of the tag one at a time, for the database's own IDs (next_dense_id,
-- next_serial): the first of them, or NULL for an unknown tag. Leaves the remembered segment
-- size alone; skips as take_segment does after a step back, and measures the rate alike.
CREATE OR REPLACE FUNCTION {s}.shardid_bump(tag text, k bigint) RETURNS bigint
    LANGUAGE plpgsql VOLATILE AS $shardid$
#variable_conflict use_column
DECLARE
    here integer := {tli};
    clock timestamptz := clock_timestamp();
    taken bigint;
BEGIN
    UPDATE {s}.shardid_tags AS t
        SET next = t.next + CASE WHEN {back}
                                 THEN {s}.shardid_skip(t.step, t.rate, t.window_n, t.window_at, t.updated_at, clock) ELSE 0 END
                + {n} * shardid_bump.k,
{kept_by_bump}
        WHERE t.tag = shardid_bump.tag
        RETURNING t.next - {n} * shardid_bump.k INTO taken;
    RETURN taken;
END
$shardid$;

-- One number of the tag, for rows the database inserts itself: DEFAULT {s}.next_dense_id('orders').
-- Leaves the remembered segment size alone.
CREATE OR REPLACE FUNCTION {s}.next_dense_id(tag text) RETURNS bigint
    LANGUAGE plpgsql VOLATILE AS $shardid$
#variable_conflict use_column
DECLARE
    taken bigint;
BEGIN
    taken := {s}.shardid_bump(next_dense_id.tag, 1);
    IF taken IS NULL THEN
{unknown_next}
    END IF;
    RETURN taken;
{exhausted_next}
END
$shardid$;

-- Gives back the unused tail first..end of the last segment taken: only if nobody took a
-- segment since (the row still reads `end`), on this timeline (a promoted standby's row may
-- read `end` while the lost WAL handed out more) and system, not marked restored, and the tail
-- is this server's numbers.
CREATE OR REPLACE FUNCTION {s}.give_back(tag text, first bigint, \"end\" bigint) RETURNS boolean
    LANGUAGE plpgsql VOLATILE AS $shardid$
#variable_conflict use_column
BEGIN
    IF give_back.first IS NULL OR give_back.\"end\" IS NULL OR give_back.first > give_back.\"end\"
        OR (give_back.\"end\" - give_back.first) % {n} <> 0 OR ((give_back.first % {n}) + {n}) % {n} <> {i} THEN
        RETURN false;
    END IF;
    UPDATE {s}.shardid_tags AS t SET next = give_back.first, updated_at = now()
        WHERE t.tag = give_back.tag AND t.next = give_back.\"end\" AND t.tli = {tli}
            AND t.sysid = {s}.shardid_system(t.started, t.sysid) AND NOT t.restored;
    RETURN FOUND;
END
$shardid$;

"
        )?;
        SerialsDdl {
            schema: s,
            servers: n,
        }
        .fmt(f)
    }
}
