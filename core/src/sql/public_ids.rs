//! The DDL of public IDs inside PostgreSQL ([`crate::PublicIds`] in PL/pgSQL): the same text for
//! the same keys, prefix, encoding and ID as every other language.
//!
//! ```sql
//! SELECT app.shardid_public_encode(id, $1, 'note') FROM notes;            -- 'note_0923h26jsg2d8g'
//! SELECT * FROM notes WHERE id = app.shardid_public_decode($2, $1, 'note');
//! ```
//!
//! `$1` is the keys as text (`PublicIds::from_keys`: 32 hex digits, or `VERSION:HEX` pairs);
//! bind it as a parameter (it is a secret: keep it out of logged statement text). The functions
//! are written in plain PL/pgSQL, with no extension: Speck64/128 works on 32-bit words, which a
//! `bigint` holds with room for every sum, masked back to 32 bits. Deriving the round keys from
//! the keys costs about a millisecond; `shardid_public_encode` and `_decode` are SQL functions
//! that PostgreSQL inlines, so with the keys a constant or a bound parameter they are derived
//! once per statement, not per row (`shardid_public_material` is costed so that the planner
//! keeps custom plans for prepared statements).
//!
//! PostgreSQL's `bigint` is signed: the functions serve IDs up to 2^63 - 1 (an unsigned layout
//! such as Discord's is served as signed, as [`super::Postgres`] does), and a text whose ID is
//! above is refused (`PUBLIC_ID_MISMATCH`).

use core::fmt::{self, Display, Formatter};

use super::{SqlError, check_schema};
use crate::public::{
    KEY_VERSION_RANGE, KEY_VERSION_TAKEN, KEYS_FORMAT, MAX_KEY_VERSION, MAX_KEYS, PREFIX_RULE,
    TOO_MANY_KEYS,
};
use crate::{Encoding, ErrorKind, Layout};

/// The DDL of `<schema>.shardid_public_encode(id, keys, prefix, encoding)` and
/// `<schema>.shardid_public_decode(text, keys, prefix, encoding)` for IDs of one layout; render
/// it with [`Display`]. Safe to run again (it replaces the functions).
#[derive(Clone, Copy, Debug)]
#[must_use]
pub struct PostgresPublicIds<'a> {
    schema: &'a str,
    /// The largest ID: the layout's, at most 2^63 - 1.
    max_id: u64,
}

impl<'a> PostgresPublicIds<'a> {
    /// The DDL for IDs of `layout` in `schema`.
    ///
    /// # Errors
    /// [`SqlError::SchemaName`], as for [`super::Postgres::new`].
    pub fn new(layout: Layout, schema: &'a str) -> Result<Self, SqlError> {
        check_schema(schema)?;
        Ok(Self {
            schema,
            max_id: layout.max_id().min(i64::MAX.unsigned_abs()),
        })
    }

    /// The DDL that removes these functions again.
    pub const fn uninstall(&self) -> PostgresPublicIdsUninstall<'a> {
        PostgresPublicIdsUninstall {
            schema: self.schema,
        }
    }
}

/// Every function the install creates, with its argument types, dependents first.
const FUNCTIONS: [&str; 9] = [
    "shardid_public_encode(bigint, text, text, text)",
    "shardid_public_decode(text, text, text, text)",
    "shardid_public_encode_with(bigint, bigint[], text, text)",
    "shardid_public_decode_with(text, bigint[], text, text)",
    "shardid_public_material(text, text)",
    "shardid_public_mac(bigint[], integer, integer, bytea)",
    "shardid_speck_encrypt(bigint[], bigint, bigint)",
    "shardid_speck_schedule(bigint, bigint, bigint, bigint)",
    "shardid_public_raise(text, text)",
];

/// The DDL that removes what [`PostgresPublicIds`] installed; render it with [`Display`].
#[derive(Clone, Copy, Debug)]
#[must_use]
pub struct PostgresPublicIdsUninstall<'a> {
    schema: &'a str,
}

impl Display for PostgresPublicIdsUninstall<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = self.schema;
        writeln!(
            f,
            "-- Removes shardid's public-ID functions from schema {s}."
        )?;
        for function in FUNCTIONS {
            writeln!(f, "DROP FUNCTION IF EXISTS {s}.{function};")?;
        }
        Ok(())
    }
}

/// A SQL string literal of `text` (quotes doubled).
struct Literal<'a>(&'a str);

impl Display for Literal<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("'")?;
        for (i, part) in self.0.split('\'').enumerate() {
            if i > 0 {
                f.write_str("''")?;
            }
            f.write_str(part)?;
        }
        f.write_str("'")
    }
}

/// A SQL expression of `kind`'s message, each `{field}` replaced by the SQL expression given
/// for it: the core's template, so the database words each error as every language does.
struct Message<'a> {
    kind: ErrorKind,
    fields: &'a [(&'a str, &'a str)],
}

impl Display for Message<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut rest = self.kind.template();
        f.write_str("'")?;
        while let Some(open) = rest.find('{') {
            f.write_str(&rest[..open].replace('\'', "''"))?;
            let after = &rest[open + 1..];
            let close = after.find('}').unwrap_or(after.len());
            let name = &after[..close];
            let value = self
                .fields
                .iter()
                .find(|(n, _)| *n == name)
                .map_or("''", |(_, v)| v);
            write!(f, "' || {value} || '")?;
            rest = after.get(close + 1..).unwrap_or("");
        }
        f.write_str(&rest.replace('\'', "''"))?;
        f.write_str("'")
    }
}

/// `PERFORM <schema>.shardid_public_raise('<CODE>', <message>)`.
struct Raise<'a> {
    schema: &'a str,
    kind: ErrorKind,
    fields: &'a [(&'a str, &'a str)],
}

impl Display for Raise<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "PERFORM {}.shardid_public_raise('{}', {})",
            self.schema,
            self.kind.code(),
            Message {
                kind: self.kind,
                fields: self.fields
            }
        )
    }
}

/// An `INVALID_ARGUMENT` raise for `argument` with `reason`: the message `<argument> <reason>`.
struct Invalid<'a> {
    schema: &'a str,
    argument: &'a str,
    reason: &'a str,
}

impl Display for Invalid<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "PERFORM {}.shardid_public_raise('INVALID_ARGUMENT', {} || ' ' || {})",
            self.schema,
            Literal(self.argument),
            Literal(self.reason)
        )
    }
}

/// The alphabets, as the encoder writes them.
fn alphabet(encoding: Encoding) -> &'static str {
    core::str::from_utf8(encoding.alphabet()).unwrap_or_default()
}

impl Display for PostgresPublicIds<'_> {
    #[allow(clippy::too_many_lines)] // one template, read top to bottom
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = self.schema;
        let max_id = self.max_id;
        let max_hi = max_id >> 32;
        let version = env!("CARGO_PKG_VERSION");
        let b32 = alphabet(Encoding::Base32);
        let b58 = alphabet(Encoding::Base58);
        let b62 = alphabet(Encoding::Base62);
        let check = "0123456789abcdefghjkmnpqrstvwxyz*~$=u";
        let keys_format = Invalid {
            schema: s,
            argument: "keys",
            reason: KEYS_FORMAT,
        };
        let too_many = Invalid {
            schema: s,
            argument: "keys",
            reason: TOO_MANY_KEYS,
        };
        let version_range = Invalid {
            schema: s,
            argument: "key_version",
            reason: KEY_VERSION_RANGE,
        };
        let version_taken = Invalid {
            schema: s,
            argument: "key_version",
            reason: KEY_VERSION_TAKEN,
        };
        let prefix_rule = Invalid {
            schema: s,
            argument: "prefix",
            reason: PREFIX_RULE,
        };
        let unknown_encoding = Invalid {
            schema: s,
            argument: "encoding",
            reason: Encoding::UNKNOWN,
        };
        let invalid_id = Raise {
            schema: s,
            kind: ErrorKind::InvalidId,
            fields: &[("id", "id")],
        };
        let prefix_error = Raise {
            schema: s,
            kind: ErrorKind::PublicIdPrefix,
            fields: &[],
        };
        let alphabet_error = Raise {
            schema: s,
            kind: ErrorKind::PublicIdAlphabet,
            fields: &[("position", "head + i - 1")],
        };
        let length_error = Raise {
            schema: s,
            kind: ErrorKind::PublicIdLength,
            fields: &[("expected", "expected")],
        };
        let overflow_error = Raise {
            schema: s,
            kind: ErrorKind::PublicIdOverflow,
            fields: &[],
        };
        let check_error = Raise {
            schema: s,
            kind: ErrorKind::PublicIdCheck,
            fields: &[],
        };
        let version_error = Raise {
            schema: s,
            kind: ErrorKind::UnknownKeyVersion,
            fields: &[("version", "version")],
        };
        let mismatch_error = Raise {
            schema: s,
            kind: ErrorKind::PublicIdMismatch,
            fields: &[],
        };
        // 2^32 mod 37 and 2^65 mod 37, for the check symbol of a value held as two halves.
        let two32 = (1u64 << 32) % 37;
        let two65 = ((1u128 << 65) % 37) as u64;
        let max_version = MAX_KEY_VERSION;
        let max_keys = MAX_KEYS;
        write!(
            f,
            "\
-- shardid {version}: public IDs inside PostgreSQL, in schema {s}: the same text as every
-- other language for the same keys, prefix, encoding and ID. IDs up to {max_id}.
-- Generated by shardid; safe to run again. Plain PL/pgSQL, no extension; PostgreSQL 12 or later.
--   SELECT {s}.shardid_public_encode(id, $1, 'note') FROM notes;       -- $1: the keys as text
--   SELECT * FROM notes WHERE id = {s}.shardid_public_decode($2, $1, 'note');
-- The keys are a secret: bind them as a parameter, never write them into logged SQL.

CREATE SCHEMA IF NOT EXISTS {s};

-- Raises the library's error kinds as SQL errors: the message starts with the kind's code.
CREATE OR REPLACE FUNCTION {s}.shardid_public_raise(code text, message text) RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $shardid$
BEGIN
    RAISE EXCEPTION USING
        MESSAGE = code || ': ' || message,
        ERRCODE = CASE code
            WHEN 'INVALID_ID' THEN '22003'
            WHEN 'INVALID_ARGUMENT' THEN '22023'
            ELSE '22P02'
        END;
END
$shardid$;

-- Speck64/128's round keys from its key words k0, l0, l1, l2 (each 0 .. 2^32 - 1).
CREATE OR REPLACE FUNCTION {s}.shardid_speck_schedule(k bigint, l0 bigint, l1 bigint, l2 bigint)
    RETURNS bigint[] LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $shardid$
DECLARE
    l bigint[] := ARRAY[l0, l1, l2];
    rk bigint[] := '{{}}';
    nl bigint;
BEGIN
    FOR i IN 0..26 LOOP
        rk := rk || k;
        nl := ((k + (((l[i % 3 + 1] >> 8) | (l[i % 3 + 1] << 24)) & 4294967295)) & 4294967295) # i;
        l[i % 3 + 1] := nl;
        k := (((k << 3) | (k >> 29)) & 4294967295) # nl;
    END LOOP;
    RETURN rk;
END
$shardid$;

-- One Speck64/128 block, as its halves {{x, y}}, under round keys rk.
CREATE OR REPLACE FUNCTION {s}.shardid_speck_encrypt(rk bigint[], x bigint, y bigint)
    RETURNS bigint[] LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $shardid$
BEGIN
    FOR i IN 1..27 LOOP
        x := (((((x >> 8) | (x << 24)) & 4294967295) + y) & 4294967295) # rk[i];
        y := (((y << 3) | (y >> 29)) & 4294967295) # x;
    END LOOP;
    RETURN ARRAY[x, y];
END
$shardid$;

-- CBC-MAC under the master round keys of message j: the block 'shard' j version length, then
-- the prefix's bytes 8 at a time, little-endian, zero-padded (shardid::public).
CREATE OR REPLACE FUNCTION {s}.shardid_public_mac(master bigint[], j integer, version integer, prefix bytea)
    RETURNS bigint[] LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $shardid$
DECLARE
    n integer := length(prefix);
    padded bytea := prefix || '\\x0000000000000000'::bytea;
    h bigint[];
    lo bigint;
    hi bigint;
BEGIN
    -- 's' 'h' 'a' 'r', then 'd' j version length.
    h := {s}.shardid_speck_encrypt(master,
        100 | (j << 8) | (version << 16) | (n << 24), 115 | (104 << 8) | (97 << 16) | (114 << 24));
    FOR b IN 0..(n + 7) / 8 - 1 LOOP
        lo := get_byte(padded, 8 * b) | (get_byte(padded, 8 * b + 1) << 8)
            | (get_byte(padded, 8 * b + 2) << 16) | (get_byte(padded, 8 * b + 3)::bigint << 24);
        hi := get_byte(padded, 8 * b + 4) | (get_byte(padded, 8 * b + 5) << 8)
            | (get_byte(padded, 8 * b + 6) << 16) | (get_byte(padded, 8 * b + 7)::bigint << 24);
        h := {s}.shardid_speck_encrypt(master, h[1] # hi, h[2] # lo);
    END LOOP;
    RETURN h;
END
$shardid$;

-- The keys (as text: 32 hex digits, or VERSION:HEX pairs separated by commas) made ready for
-- a prefix: per key, its version then its 27 round keys, the current (highest) key first. The
-- same rules and errors as shardid::PublicIds::from_keys. Expensive (~1 ms): the functions
-- below are inlined so that it runs once per statement; its cost keeps prepared statements on
-- custom plans, where a bound parameter is a constant.
CREATE OR REPLACE FUNCTION {s}.shardid_public_material(keys text, prefix text)
    RETURNS bigint[] LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE COST 1000000 AS $shardid$
DECLARE
    items text[] := string_to_array(keys, ',');
    versions integer[] := '{{}}';
    hexes text[] := '{{}}';
    item text;
    v text;
    hex text;
    key bytea;
    word bigint[];
    master bigint[];
    a bigint[];
    b bigint[];
    material bigint[] := '{{}}';
    prefix_bytes bytea;
BEGIN
    IF coalesce(array_length(items, 1), 0) = 0 THEN
        {keys_format};
    END IF;
    FOREACH item IN ARRAY items LOOP
        item := btrim(item, E' \\t\\n\\f\\r');
        IF strpos(item, ':') > 0 THEN
            v := split_part(item, ':', 1);
            hex := substr(item, length(v) + 2);
            IF v !~ '^[0-9]{{1,2}}$' THEN
                {keys_format};
            END IF;
        ELSIF array_length(items, 1) = 1 THEN
            v := '0';
            hex := item;
        ELSE
            {keys_format};
        END IF;
        IF coalesce(array_length(versions, 1), 0) = {max_keys} THEN
            {too_many};
        END IF;
        IF hex !~ '^[0-9a-fA-F]{{32}}$' THEN
            {keys_format};
        END IF;
        versions := versions || v::integer;
        hexes := hexes || hex;
    END LOOP;
    -- The current key first: the highest version.
    SELECT array_agg(x.v ORDER BY x.v DESC), array_agg(x.h ORDER BY x.v DESC)
        INTO versions, hexes FROM unnest(versions, hexes) AS x(v, h);
    IF versions[1] > {max_version} THEN
        {version_range};
    END IF;
    IF prefix !~ '^([a-z]([a-z0-9_]{{0,61}}[a-z0-9])?)?$' THEN
        {prefix_rule};
    END IF;
    FOR i IN 2..coalesce(array_length(versions, 1), 0) LOOP
        IF versions[i] = versions[i - 1] THEN
            {version_taken};
        END IF;
    END LOOP;
    prefix_bytes := convert_to(prefix, 'UTF8');
    FOR i IN 1..array_length(versions, 1) LOOP
        key := decode(hexes[i], 'hex');
        word := ARRAY[0, 4, 8, 12];
        FOR w IN 1..4 LOOP
            word[w] := get_byte(key, word[w]::integer) | (get_byte(key, word[w]::integer + 1) << 8)
                | (get_byte(key, word[w]::integer + 2) << 16)
                | (get_byte(key, word[w]::integer + 3)::bigint << 24);
        END LOOP;
        master := {s}.shardid_speck_schedule(word[1], word[2], word[3], word[4]);
        a := {s}.shardid_public_mac(master, 0, versions[i], prefix_bytes);
        b := {s}.shardid_public_mac(master, 1, versions[i], prefix_bytes);
        material := material || versions[i]::bigint
            || {s}.shardid_speck_schedule(a[2], a[1], b[2], b[1]);
    END LOOP;
    RETURN material;
END
$shardid$;

-- The public ID of id under prepared keys (shardid_public_material) and the same prefix.
CREATE OR REPLACE FUNCTION {s}.shardid_public_encode_with(id bigint, material bigint[], prefix text, encoding text)
    RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $shardid$
DECLARE
    x bigint;
    y bigint;
    version integer := material[1];
    alphabet text;
    radix integer;
    body text;
    rest bigint;
    r bigint;
    t bigint;
BEGIN
    IF id < 0 OR id > {max_id} THEN
        {invalid_id};
    END IF;
    x := id >> 32;
    y := id & 4294967295;
    FOR i IN 2..28 LOOP
        x := (((((x >> 8) | (x << 24)) & 4294967295) + y) & 4294967295) # material[i];
        y := (((y << 3) | (y >> 29)) & 4294967295) # x;
    END LOOP;
    IF encoding = 'base32' OR encoding = 'base32check' THEN
        alphabet := '{b32}';
        -- The top 4 bits, then 12 digits of 5 from the low 60.
        body := substr(alphabet, version + 1, 1) || substr(alphabet, (x >> 28)::integer + 1, 1);
        rest := ((x & 268435455) << 32) | y;
        FOR i IN REVERSE 11..0 LOOP
            body := body || substr(alphabet, ((rest >> (5 * i)) & 31)::integer + 1, 1);
        END LOOP;
        IF encoding = 'base32check' THEN
            -- The whole body's number (version * 2^65 + value) modulo 37.
            body := body || substr('{check}',
                ((version * {two65} + ((x % 37) * {two32} + y % 37)) % 37)::integer + 1, 1);
        END IF;
    ELSE
        IF encoding = 'base58' THEN
            alphabet := '{b58}';
            radix := 58;
        ELSIF encoding = 'base62' THEN
            alphabet := '{b62}';
            radix := 62;
        ELSE
            {unknown_encoding};
        END IF;
        -- 11 digits by long division of the halves.
        body := '';
        FOR i IN 1..11 LOOP
            r := x % radix;
            x := x / radix;
            t := (r << 32) | y;
            y := t / radix;
            body := substr(alphabet, (t % radix)::integer + 1, 1) || body;
        END LOOP;
        body := substr(alphabet, version + 1, 1) || body;
    END IF;
    RETURN CASE WHEN prefix = '' THEN body ELSE prefix || '_' || body END;
END
$shardid$;

-- The ID of a public ID under prepared keys and the same prefix, or the error every language
-- gives (never the decoded value of a text that is refused).
CREATE OR REPLACE FUNCTION {s}.shardid_public_decode_with(public_id text, material bigint[], prefix text, encoding text)
    RETURNS bigint LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $shardid$
DECLARE
    head integer := CASE WHEN prefix = '' THEN 0 ELSE length(prefix) + 1 END;
    body text;
    expected integer;
    digits integer;
    alphabet text;
    radix integer;
    folded text;
    d integer;
    version integer;
    checked integer;
    overflow boolean := false;
    x bigint := 0;
    y bigint := 0;
    k integer := -1;
BEGIN
    IF encoding = 'base32' OR encoding = 'base32check' THEN
        alphabet := '{b32}';
        radix := 32;
        digits := 13;
        -- Either case, and Crockford's look-alikes (i and l read as 1, o as 0): ASCII only.
        folded := translate(public_id, 'IiLlOoABCDEFGHJKMNPQRSTUVWXYZ', '111100abcdefghjkmnpqrstuvwxyz');
    ELSIF encoding = 'base58' THEN
        alphabet := '{b58}';
        radix := 58;
        digits := 11;
        folded := public_id;
    ELSIF encoding = 'base62' THEN
        alphabet := '{b62}';
        radix := 62;
        digits := 11;
        folded := public_id;
    ELSE
        {unknown_encoding};
    END IF;
    expected := 1 + digits + (encoding = 'base32check')::integer;
    IF head > 0 AND (length(public_id) < head OR substr(public_id, head, 1) <> '_'
            OR (CASE WHEN radix = 32
                THEN translate(substr(public_id, 1, head - 1), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
                ELSE substr(public_id, 1, head - 1) END) <> prefix) THEN
        {prefix_error};
    END IF;
    body := substr(folded, head + 1);
    -- One pass: the first symbol outside the alphabet among those the body should have, the
    -- version, and the value's halves (x, y), whose overflow is reported after the length.
    FOR i IN 1..least(length(body), expected) LOOP
        IF i > 1 + digits THEN
            d := strpos('{check}', substr(body, i, 1)) - 1;
        ELSE
            d := strpos(alphabet, substr(body, i, 1)) - 1;
        END IF;
        IF d < 0 THEN
            {alphabet_error};
        ELSIF i = 1 THEN
            version := d;
        ELSIF i > 1 + digits THEN
            checked := d;
        ELSIF radix = 32 THEN
            -- The first digit holds the top 4 bits: 16 and up spell 2^64 and more.
            overflow := overflow OR (i = 2 AND d >= 16);
            x := ((x << 5) | (y >> 27)) & 4294967295;
            y := ((y << 5) | d) & 4294967295;
        ELSE
            y := y * radix + d;
            x := x * radix + (y >> 32);
            y := y & 4294967295;
            overflow := overflow OR x > 4294967295;
            x := x & 4294967295;
        END IF;
    END LOOP;
    IF length(body) <> expected THEN
        {length_error};
    END IF;
    IF overflow THEN
        {overflow_error};
    END IF;
    IF checked IS NOT NULL
            AND checked <> (version * {two65} + ((x % 37) * {two32} + y % 37)) % 37 THEN
        {check_error};
    END IF;
    FOR j IN 0..coalesce(array_length(material, 1), 0) / 28 - 1 LOOP
        IF material[28 * j + 1] = version THEN
            k := 28 * j + 1;
        END IF;
    END LOOP;
    IF k < 0 THEN
        {version_error};
    END IF;
    FOR i IN REVERSE 27..1 LOOP
        y := (((y # x) >> 3) | ((y # x) << 29)) & 4294967295;
        x := (((((x # material[k + i]) - y) & 4294967295) << 8)
            | ((((x # material[k + i]) - y) & 4294967295) >> 24)) & 4294967295;
    END LOOP;
    IF x > {max_hi} OR ((x << 32) | y) > {max_id} THEN
        {mismatch_error};
    END IF;
    RETURN (x << 32) | y;
END
$shardid$;

-- The public ID of id under keys (as text) and prefix: 'note_0923h26jsg2d8g'.
CREATE OR REPLACE FUNCTION {s}.shardid_public_encode(id bigint, keys text, prefix text, encoding text DEFAULT 'base32')
    RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $shardid$
    SELECT {s}.shardid_public_encode_with(id, {s}.shardid_public_material(keys, prefix), prefix, encoding)
$shardid$;

-- The ID a public ID stands for under keys (as text) and prefix.
CREATE OR REPLACE FUNCTION {s}.shardid_public_decode(public_id text, keys text, prefix text, encoding text DEFAULT 'base32')
    RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $shardid$
    SELECT {s}.shardid_public_decode_with(public_id, {s}.shardid_public_material(keys, prefix), prefix, encoding)
$shardid$;
"
        )
    }
}
