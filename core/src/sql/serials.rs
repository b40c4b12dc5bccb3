//! The PostgreSQL side of business serial numbers (`shardid::serial`, feature `serial`):
//! rendered with the segments' DDL ([`super::Segments`]), in the same schema, on the same rows.
//!
//! - `<schema>.create_serial(tag, format, zone, canonical, shape, pieces, width, reset,
//!   max_gap)`: registers a serial tag, once: its format as the core parsed it (the clients
//!   and `python -m shardid.sql --serial` render this call; the database keeps the parsed
//!   pieces and only renders), checked again here, and a zone of the server's tz database. A
//!   tag registered with another format or zone, or a format another tag already prints (its
//!   `shape`: the format without its reset), is SQLSTATE `SI134` (`SERIAL_MISMATCH`): two
//!   tags printing one format would print the same serials.
//! - `<schema>.serial_info(tag)` → `(canonical, zone, max_gap)`: what a client checks its own
//!   format and zone against when it connects.
//! - `<schema>.take_serial_segment(tag, period, size)` → `(first, count, stride)`: a segment of
//!   the period's tag (`orders@2026-11-25`, created on first use; `orders` itself for a format
//!   that never resets).
//! - `<schema>.next_serial(tag, format, zone)` → text: one serial for rows the database inserts
//!   itself (`DEFAULT seg.next_serial('orders', 'ORD-{yyyy}{MM}{dd}-{seq:6}', 'Asia/Shanghai')`),
//!   from the same period rows as the clients' segments, rendered alike.
//! - `<schema>.render_serial(tag, number, at)` → text: the serial of a number at a time, for
//!   tests and replay (the clients' `render`).
//!
//! The period is the local date of `clock_timestamp()` in the zone, by PostgreSQL's own tz
//! rules (`AT TIME ZONE`); the fields and the period come from that one instant. Errors: an
//! unregistered tag is `SI001` (`UNKNOWN_TAG`), a number past the width `SI133`
//! (`SERIAL_OVERFLOW`), a zone the server does not know `SI131` (`UNKNOWN_TIME_ZONE`), pieces
//! that are not a serial format `SI130` (`INVALID_SERIAL_FORMAT`).

use core::fmt::{self, Display, Formatter};

use super::{MAX_TAG_LEN, Placeholders, SchemaStatement, UNKNOWN_TAG};

/// The SQLSTATE of pieces that are not a serial format (`INVALID_SERIAL_FORMAT`).
pub const INVALID_SERIAL_FORMAT: &str = "SI130";
/// The SQLSTATE of a zone the server does not know (`UNKNOWN_TIME_ZONE`).
pub const UNKNOWN_TIME_ZONE: &str = "SI131";
/// The SQLSTATE of a number past the format's width (`SERIAL_OVERFLOW`).
pub const SERIAL_OVERFLOW: &str = "SI133";
/// The SQLSTATE of a tag registered with another format or zone (`SERIAL_MISMATCH`).
pub const SERIAL_MISMATCH: &str = "SI134";
/// The longest serial tag, in bytes: room for `@2026-11-25` within a tag.
pub const MAX_SERIAL_TAG_LEN: usize = MAX_TAG_LEN - 11;
const _: () = assert!(MAX_SERIAL_TAG_LEN == 189);

/// The serials' part of the segments' DDL, for server `index` of `servers`.
pub(super) struct SerialsDdl<'a> {
    pub(super) schema: &'a str,
    pub(super) servers: u64,
}

/// The statements a serial driver sends; each takes its parameters in the order its method
/// says. Render with [`Display`].
#[derive(Clone, Copy, Debug)]
pub struct SerialStatements<'a> {
    pub(super) schema: &'a str,
    pub(super) placeholders: Placeholders,
}

impl<'a> SerialStatements<'a> {
    const fn statement(&self, text: (&'static str, &'static str)) -> SchemaStatement<'a> {
        SchemaStatement::new(self.schema, self.placeholders, text)
    }

    /// What a tag is registered with; parameter `(tag)`; one row `(canonical, zone, max_gap)`.
    pub const fn info(&self) -> SchemaStatement<'a> {
        self.statement((
            "SELECT canonical, zone, max_gap FROM ",
            ".serial_info(?::text)",
        ))
    }

    /// Takes a segment of a period; parameters `(tag, period, size)`; one row `(first, count,
    /// stride)`.
    pub const fn take(&self) -> SchemaStatement<'a> {
        self.statement((
            "SELECT first, count, stride FROM ",
            ".take_serial_segment(?::text, ?::text, ?::bigint)",
        ))
    }

    /// Gives back an unused tail of a period; parameters `(period tag, first, end)`; one
    /// boolean (the segments' `give_back`).
    pub const fn give_back(&self) -> SchemaStatement<'a> {
        self.statement(("SELECT ", ".give_back(?::text, ?::bigint, ?::bigint)"))
    }

    /// Registers a serial tag; parameters `(tag, format, zone, canonical, shape, pieces,
    /// width, reset, max_gap)` from `shardid::serial::SerialFormat::registration` (feature
    /// `serial`).
    pub const fn create(&self) -> SchemaStatement<'a> {
        self.statement((
            "SELECT ",
            ".create_serial(?::text, ?::text, ?::text, ?::text, ?::text, ?::text[], ?::integer, ?::text, ?::integer)",
        ))
    }

    /// One serial made by the database; parameters `(tag, format, zone)`; one text.
    pub const fn next(&self) -> SchemaStatement<'a> {
        self.statement(("SELECT ", ".next_serial(?::text, ?::text, ?::text)"))
    }

    /// The serial of a number at a time; parameters `(tag, number, at timestamptz)`; one text.
    pub const fn render(&self) -> SchemaStatement<'a> {
        self.statement((
            "SELECT ",
            ".render_serial(?::text, ?::bigint, ?::timestamptz)",
        ))
    }
}

impl Display for SerialsDdl<'_> {
    #[allow(clippy::too_many_lines)] // one template, read top to bottom
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = self.schema;
        let n = self.servers;
        let exhausted = super::segments::Exhausted("period_tag");
        write!(
            f,
            "\
-- Business serial numbers (ORD-20261125-000123): each tag's format and zone, registered once
-- by create_serial(); the numbers of each period are the rows of the tags tag@period.
CREATE TABLE IF NOT EXISTS {s}.shardid_serials (
    tag text PRIMARY KEY,
    format text NOT NULL,
    canonical text NOT NULL,
    shape text NOT NULL UNIQUE,
    zone text NOT NULL,
    pieces text[] NOT NULL,
    width integer NOT NULL,
    resets text NOT NULL,
    max_gap integer NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Registers a serial tag with a format the core parsed (pieces: 'L' and literal text, or a
-- field), once. The arguments are rendered by shardid (the clients, python -m shardid.sql --serial).
CREATE OR REPLACE FUNCTION {s}.create_serial(tag text, format text, zone text, canonical text,
        shape text, pieces text[], width integer, resets text, max_gap integer DEFAULT 1)
    RETURNS void LANGUAGE plpgsql VOLATILE AS $shardid$
#variable_conflict use_variable
DECLARE
    known {s}.shardid_serials;
BEGIN
    IF tag IS NULL OR tag = '' OR octet_length(tag) > {MAX_SERIAL_TAG_LEN} OR strpos(tag, '@') > 0 THEN
        RAISE EXCEPTION 'INVALID_ARGUMENT: a serial tag is 1 to {MAX_SERIAL_TAG_LEN} bytes of text without @, not %', quote_nullable(tag)
            USING ERRCODE = '22023';
    END IF;
    IF format IS NULL OR canonical IS NULL OR shape IS NULL OR pieces IS NULL
        OR width IS NULL OR width NOT BETWEEN 1 AND 18
        OR resets IS NULL OR resets NOT IN ('never', 'year', 'month', 'day')
        OR max_gap IS NULL OR max_gap < 1
        OR (SELECT count(*) FROM unnest(pieces) AS p WHERE p = 'seq') <> 1
        OR EXISTS (SELECT 1 FROM unnest(pieces) AS p
                   WHERE p IS NULL OR (p NOT LIKE 'L_%' AND p NOT IN ('yyyy', 'yy', 'MM', 'dd', 'HH', 'ww', 'seq', 'check'))) THEN
        RAISE EXCEPTION 'INVALID_SERIAL_FORMAT: invalid serial format at character 0: % is not a format as shardid parses it (register it through a client or python -m shardid.sql --serial)', quote_nullable(format)
            USING ERRCODE = '{INVALID_SERIAL_FORMAT}';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_timezone_names AS z WHERE z.name = zone) THEN
        RAISE EXCEPTION 'UNKNOWN_TIME_ZONE: unknown time zone %: not a name of this server''s tz database', zone
            USING ERRCODE = '{UNKNOWN_TIME_ZONE}';
    END IF;
    SELECT * INTO known FROM {s}.shardid_serials AS r WHERE r.tag = create_serial.tag;
    IF NOT FOUND THEN
        SELECT * INTO known FROM {s}.shardid_serials AS r WHERE r.shape = create_serial.shape;
        IF FOUND THEN
            RAISE EXCEPTION 'SERIAL_MISMATCH: serial tag % would print the serials of tag % (%): give each tag a format of its own', tag, known.tag, known.canonical
                USING ERRCODE = '{SERIAL_MISMATCH}';
        END IF;
        INSERT INTO {s}.shardid_serials (tag, format, canonical, shape, zone, pieces, width, resets, max_gap)
            VALUES (tag, format, canonical, shape, zone, pieces, width, resets, max_gap)
            ON CONFLICT DO NOTHING;
        SELECT * INTO known FROM {s}.shardid_serials AS r WHERE r.tag = create_serial.tag;
    END IF;
    IF known.canonical IS DISTINCT FROM canonical OR known.zone IS DISTINCT FROM zone OR known.max_gap IS DISTINCT FROM max_gap THEN
        RAISE EXCEPTION 'SERIAL_MISMATCH: serial tag % is registered with format % in %, max_gap %', tag, known.canonical, known.zone, known.max_gap
            USING ERRCODE = '{SERIAL_MISMATCH}';
    END IF;
END
$shardid$;

-- A registered serial tag, or UNKNOWN_TAG.
CREATE OR REPLACE FUNCTION {s}.serial_row(tag text) RETURNS {s}.shardid_serials
    LANGUAGE plpgsql STABLE AS $shardid$
#variable_conflict use_variable
DECLARE
    known {s}.shardid_serials;
BEGIN
    SELECT * INTO known FROM {s}.shardid_serials AS r WHERE r.tag = serial_row.tag;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'UNKNOWN_TAG: no serial tag % in {s}: create it with {s}.create_serial()', quote_nullable(tag)
            USING ERRCODE = '{UNKNOWN_TAG}';
    END IF;
    RETURN known;
END
$shardid$;

CREATE OR REPLACE FUNCTION {s}.serial_info(tag text, OUT canonical text, OUT zone text, OUT max_gap integer)
    LANGUAGE sql STABLE AS $shardid$
    SELECT r.canonical, r.zone, r.max_gap FROM {s}.serial_row(tag) AS r
$shardid$;

-- The tag holding a period's numbers: tag@2026-11-25, tag@2026-11, tag@2026, or tag itself.
CREATE OR REPLACE FUNCTION {s}.serial_period_tag(tag text, period text) RETURNS text
    LANGUAGE sql IMMUTABLE AS $shardid$
    SELECT CASE WHEN period = '' THEN tag ELSE tag || '@' || period END
$shardid$;

-- The period of a local time: 2026-11-25, 2026-11, 2026, or '' (never).
CREATE OR REPLACE FUNCTION {s}.serial_period(resets text, local_time timestamp) RETURNS text
    LANGUAGE sql STABLE AS $shardid$
    SELECT CASE resets WHEN 'day' THEN to_char(local_time, 'YYYY-MM-DD') WHEN 'month' THEN to_char(local_time, 'YYYY-MM')
                       WHEN 'year' THEN to_char(local_time, 'YYYY') ELSE '' END
$shardid$;

-- A segment of a period's tag, created on first use.
CREATE OR REPLACE FUNCTION {s}.take_serial_segment(tag text, period text, size bigint)
    RETURNS TABLE (first bigint, count bigint, stride bigint)
    LANGUAGE plpgsql VOLATILE AS $shardid$
#variable_conflict use_variable
DECLARE
    known {s}.shardid_serials := {s}.serial_row(tag);
    period_tag text := {s}.serial_period_tag(tag, period);
    pattern text;
BEGIN
    pattern := CASE known.resets WHEN 'day' THEN '^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}$'
        WHEN 'month' THEN '^[0-9]{{4}}-[0-9]{{2}}$' WHEN 'year' THEN '^[0-9]{{4}}$' ELSE '^$' END;
    IF period IS NULL OR period !~ pattern THEN
        RAISE EXCEPTION 'INVALID_ARGUMENT: period % is not a period of tag % (it resets every %)', quote_nullable(period), tag, known.resets
            USING ERRCODE = '22023';
    END IF;
    PERFORM {s}.create_tag(period_tag);
    RETURN QUERY SELECT t.first, t.count, t.stride FROM {s}.take_segment(period_tag, size) AS t;
END
$shardid$;

-- The Luhn check digit of a string of digits.
CREATE OR REPLACE FUNCTION {s}.serial_luhn(digits text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT AS $shardid$
DECLARE
    total integer := 0;
    d integer;
    len integer := length(digits);
BEGIN
    FOR i IN 1..len LOOP
        d := ascii(substr(digits, len - i + 1, 1)) - 48;
        IF i % 2 = 1 THEN
            d := d * 2;
            IF d > 9 THEN d := d - 9; END IF;
        END IF;
        total := total + d;
    END LOOP;
    RETURN ((10 - total % 10) % 10)::text;
END
$shardid$;

-- The serial of a number at a local time, by a registered format.
CREATE OR REPLACE FUNCTION {s}.serial_text(known {s}.shardid_serials, number bigint, local_time timestamp, period_tag text)
    RETURNS text LANGUAGE plpgsql STABLE AS $shardid$
DECLARE
    out text := '';
    digits text := '';
    piece text;
    v text;
BEGIN
    IF number > 10::numeric ^ known.width - 1 THEN
        RAISE EXCEPTION 'SERIAL_OVERFLOW: no serial number left in %: the format holds numbers up to %', period_tag, (10::numeric ^ known.width - 1)::bigint
            USING ERRCODE = '{SERIAL_OVERFLOW}';
    END IF;
    IF number < 1 THEN
        RAISE EXCEPTION 'INVALID_SERIAL: invalid serial at character 0: 0 is not a serial number: numbers start at 1'
            USING ERRCODE = '22023';
    END IF;
    IF 'yy' = ANY (known.pieces) AND NOT 'yyyy' = ANY (known.pieces) AND extract(year FROM local_time) NOT BETWEEN 2000 AND 2099 THEN
        RAISE EXCEPTION 'INVALID_ARGUMENT: unix_ms must fall in the years 2000-2099 (local) for a format showing the year as {{yy}}'
            USING ERRCODE = '22023';
    END IF;
    FOREACH piece IN ARRAY known.pieces LOOP
        IF piece LIKE 'L_%' THEN
            out := out || substr(piece, 2);
            CONTINUE;
        END IF;
        v := CASE piece
            WHEN 'yyyy' THEN to_char(local_time, 'YYYY')
            WHEN 'yy' THEN to_char(local_time, 'YY')
            WHEN 'MM' THEN to_char(local_time, 'MM')
            WHEN 'dd' THEN to_char(local_time, 'DD')
            WHEN 'HH' THEN to_char(local_time, 'HH24')
            WHEN 'ww' THEN to_char(local_time, 'IW')
            WHEN 'seq' THEN lpad(number::text, known.width, '0')
            WHEN 'check' THEN {s}.serial_luhn(digits)
        END;
        out := out || v;
        digits := digits || v;
    END LOOP;
    RETURN out;
END
$shardid$;

-- The serial of a number at a time, by tag: for tests and replay (what the clients' render gives).
CREATE OR REPLACE FUNCTION {s}.render_serial(tag text, number bigint, issued_at timestamptz) RETURNS text
    LANGUAGE plpgsql STABLE AS $shardid$
#variable_conflict use_variable
DECLARE
    known {s}.shardid_serials := {s}.serial_row(tag);
    local_time timestamp;
BEGIN
    IF issued_at IS NULL OR issued_at < '1970-01-02 00:00:00+00' OR issued_at > '9999-12-30 00:00:00+00' THEN
        RAISE EXCEPTION 'INVALID_ARGUMENT: unix_ms must be between 1970-01-02 and 9999-12-30 (Unix ms 86400000..=253402128000000)'
            USING ERRCODE = '22023';
    END IF;
    local_time := issued_at AT TIME ZONE known.zone;
    RETURN {s}.serial_text(known, number, local_time,
        {s}.serial_period_tag(tag, {s}.serial_period(known.resets, local_time)));
END
$shardid$;

-- One serial, for rows the database inserts itself:
-- DEFAULT {s}.next_serial('orders', 'ORD-{{yyyy}}{{MM}}{{dd}}-{{seq:6}}', 'Asia/Shanghai').
-- The format and zone must be the tag's (a default written with another one is refused).
CREATE OR REPLACE FUNCTION {s}.next_serial(tag text, format text, zone text) RETURNS text
    LANGUAGE plpgsql VOLATILE AS $shardid$
#variable_conflict use_variable
DECLARE
    known {s}.shardid_serials := {s}.serial_row(tag);
    local_time timestamp;
    period_tag text;
    gap bigint := 1;
    taken bigint;
BEGIN
    IF (format IS DISTINCT FROM known.format AND format IS DISTINCT FROM known.canonical) OR zone IS DISTINCT FROM known.zone THEN
        RAISE EXCEPTION 'SERIAL_MISMATCH: serial tag % is registered with format % in %, not % in %', tag, known.canonical, known.zone, format, zone
            USING ERRCODE = '{SERIAL_MISMATCH}';
    END IF;
    -- One instant for the period and the fields.
    local_time := clock_timestamp() AT TIME ZONE known.zone;
    period_tag := {s}.serial_period_tag(tag, {s}.serial_period(known.resets, local_time));
    IF known.max_gap > 1 THEN
        gap := 1 + floor(random() * known.max_gap)::bigint;
    END IF;
    LOOP
        -- The last of `gap` numbers; a step back first skips, as take_segment does.
        taken := {s}.shardid_bump(period_tag, gap) + {n} * (gap - 1);
        EXIT WHEN taken IS NOT NULL;
        PERFORM {s}.create_tag(period_tag); -- the period's first number
    END LOOP;
    RETURN {s}.serial_text(known, taken, local_time, period_tag);
{exhausted}
END
$shardid$;
",
        )
    }
}
