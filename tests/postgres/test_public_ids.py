"""Public IDs inside PostgreSQL (shardid.sql.public_ids_sql): every conformance vector gives the
same text, ID or error as the core, texts cross between the database and the library, the
derivation runs once per statement, and the keys never reach an error message."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import psycopg
import psycopg.sql
import pytest
from conftest import load

import shardid
from shardid.sql import public_ids_sql, public_ids_sql_uninstall

FILE = load("public_ids.json")
SCHEMA = "pub"
KEY = "30313233343536373839616263646566"  # b"0123456789abcdef"


def keys_of(spec: dict[str, Any]) -> str | None:
    """The keys of a vector's spec as text (VERSION:HEX pairs), when the current key is the
    highest version (the rule of keys as text); None otherwise."""
    pairs = [(spec["key_version"], spec["key"])] + [(k["key_version"], k["key"]) for k in spec["old_keys"]]
    if any(v >= spec["key_version"] for v, _ in pairs[1:]):
        return None
    return ",".join(f"{v}:{k}" for v, k in pairs)


def text_of(args: dict[str, Any]) -> str:
    if "text" in args:
        return str(args["text"])
    return str(args["text_repeat"]["text"]) * int(args["text_repeat"]["times"])


def runnable(case: dict[str, Any]) -> bool:
    spec = case["ids"]
    if case["op"] not in ("encode", "decode") or spec["layout"] != "instagram" or keys_of(spec) is None:
        return False
    # PostgreSQL's text holds no NUL.
    return case["op"] == "encode" or "\0" not in text_of(case["args"])


CASES = [c for c in FILE["cases"] if runnable(c)]


@pytest.fixture(scope="module")
def db(cluster: Any) -> Any:
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        with conn.transaction():
            conn.execute(public_ids_sql(SCHEMA).encode())  # type: ignore[call-overload]
    return cluster


@pytest.fixture(scope="module")
def shared(db: Any) -> Any:
    """One connection for the vector cases (hundreds of them: a connection each would cost
    more than the cases)."""
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        yield conn


def test_most_vectors_run_here() -> None:
    # The rest: other layouts (Discord's IDs above 2^63 do not fit a bigint), the key-less
    # shape check, and texts holding NUL.
    assert len(CASES) > 0.8 * len(FILE["cases"]), (len(CASES), len(FILE["cases"]))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_vector(shared: psycopg.Connection[Any], case: dict[str, Any]) -> None:
    conn = shared
    spec, args, expect = case["ids"], case["args"], case["expect"]
    params = {"keys": keys_of(spec), "prefix": spec["prefix"], "encoding": spec["encoding"]}
    if case["op"] == "encode":
        query = f"SELECT {SCHEMA}.shardid_public_encode(%(id)s::bigint, %(keys)s, %(prefix)s, %(encoding)s)"
        params["id"] = int(args["id"])
        if params["id"] > 2**63 - 1:
            return  # not a bigint: the value never reaches the function
    else:
        query = f"SELECT {SCHEMA}.shardid_public_decode(%(text)s, %(keys)s, %(prefix)s, %(encoding)s)"
        params["text"] = text_of(args)
    if "ok" in expect:
        (got,) = conn.execute(query, params).fetchone()  # type: ignore[misc]
        assert str(got) == expect["ok"]
        return
    with pytest.raises(psycopg.Error) as info:
        conn.execute(query, params)
    assert info.value.diag.message_primary == f"{expect['error']}: {expect['message']}"
    assert KEY not in str(info.value)


@pytest.mark.parametrize("case", FILE["keys_text"], ids=lambda c: c["name"])
def test_keys_as_text(shared: psycopg.Connection[Any], case: dict[str, Any]) -> None:
    conn = shared
    query = f"SELECT {SCHEMA}.shardid_public_encode(%(id)s, %(keys)s, %(prefix)s, %(encoding)s)"
    params = {"id": int(case["id"]), "keys": case["keys"], "prefix": case["prefix"], "encoding": case["encoding"]}
    expect = case["expect"]
    if "ok" in expect:
        assert conn.execute(query, params).fetchone() == (expect["ok"],)
        return
    with pytest.raises(psycopg.Error) as info:
        conn.execute(query, params)
    assert info.value.diag.message_primary == f"{expect['error']}: {expect['message']}"
    assert info.value.sqlstate == "22023"
    assert case["keys"].strip() == "" or case["keys"] not in str(info.value)


@pytest.mark.parametrize("encoding", ["base32", "base32check", "base58", "base62"])
def test_texts_cross_between_the_database_and_the_library(db: Any, conn: psycopg.Connection[Any], encoding: str) -> None:
    keys = f"3:{KEY},1:00112233445566778899aabbccddeeff"
    ids = shardid.PublicIds.from_keys(keys, "note", encoding)  # type: ignore[arg-type]
    gen = shardid.Generator(shardid.Layout.INSTAGRAM, 11)
    made = [gen.next_id() for _ in range(300)] + [0, 1, 2**63 - 1]
    rows = conn.execute(
        f"SELECT id, {SCHEMA}.shardid_public_encode(id, %(keys)s, 'note', %(encoding)s) FROM unnest(%(ids)s::bigint[]) AS id",
        {"keys": keys, "encoding": encoding, "ids": made},
    ).fetchall()
    assert [(i, ids.encode(i)) for i in made] == rows
    texts = [ids.encode(i) for i in made]
    back = conn.execute(
        f"SELECT {SCHEMA}.shardid_public_decode(t, %(keys)s, 'note', %(encoding)s) FROM unnest(%(texts)s::text[]) AS t",
        {"keys": keys, "encoding": encoding, "texts": texts},
    ).fetchall()
    assert [r[0] for r in back] == made
    # The router pattern works in PostgreSQL's regular expressions too.
    pattern = ids.pattern
    matched = conn.execute("SELECT bool_and(t ~ %(p)s) FROM unnest(%(texts)s::text[]) AS t", {"p": f"^{pattern}$", "texts": texts})
    assert matched.fetchone() == (True,)


def test_the_keys_are_derived_once_per_statement(db: Any, conn: psycopg.Connection[Any]) -> None:
    """The SQL wrappers are inlined and the derivation folded into a constant: the plan calls
    shardid_public_encode_with on a constant array, for a literal and for a bound parameter
    of a prepared statement alike."""
    query = f"EXPLAIN (VERBOSE, COSTS OFF) SELECT {SCHEMA}.shardid_public_encode(id, %s, 'note') FROM generate_series(1, 3) AS id"
    plan = "\n".join(r[0] for r in conn.execute(query, (KEY,)).fetchall())
    folded = re.compile(r"shardid_public_encode_with\(\(id\)::bigint, '\{[0-9,]+\}'::bigint\[\]")
    assert folded.search(plan), plan
    assert "shardid_public_material" not in plan, plan
    # A prepared statement run more than 5 times (when PostgreSQL may switch to a generic
    # plan, where the parameter is no constant) keeps a custom plan: the derivation is costed.
    conn.execute(f"PREPARE encode_notes(text) AS SELECT {SCHEMA}.shardid_public_encode(id, $1, 'note') FROM generate_series(1, 3) AS id")
    execute = psycopg.sql.SQL("EXECUTE encode_notes({})").format(psycopg.sql.Literal(KEY))
    for _ in range(8):
        rows = conn.execute(execute).fetchall()
        assert rows[0] == (shardid.PublicIds.from_keys(KEY, "note").encode(1),)
    plan = "\n".join(r[0] for r in conn.execute(psycopg.sql.SQL("EXPLAIN (VERBOSE, COSTS OFF) ") + execute).fetchall())
    assert folded.search(plan), plan
    conn.execute("DEALLOCATE encode_notes")


def test_errors_name_no_key_and_no_decoded_value(db: Any, conn: psycopg.Connection[Any]) -> None:
    other = shardid.PublicIds.from_keys("0:" + "ab" * 16, "note")
    refused = 0
    for n in range(200):
        text = other.encode(10**15 + n)
        try:
            (got,) = conn.execute(f"SELECT {SCHEMA}.shardid_public_decode(%s, %s, 'note')", (text, KEY)).fetchone()  # type: ignore[misc]
        except psycopg.Error as e:
            refused += 1
            assert e.diag.message_primary.startswith("PUBLIC_ID_MISMATCH: ")
            assert re.search(r"\d{5}", str(e)) is None and KEY not in str(e)
        else:
            assert got != 10**15 + n
    assert 60 < refused < 140  # a 63-bit layout refuses half of the values
    # NULL in, NULL out.
    assert conn.execute(f"SELECT {SCHEMA}.shardid_public_decode(NULL, %s, 'note')", (KEY,)).fetchone() == (None,)


def test_installing_again_and_uninstalling(db: Any, conn: psycopg.Connection[Any]) -> None:
    with conn.transaction():
        conn.execute(public_ids_sql("pub_again").encode())  # type: ignore[call-overload]
        conn.execute(public_ids_sql("pub_again").encode())  # type: ignore[call-overload]
    assert conn.execute("SELECT pub_again.shardid_public_encode(5, %s, 'note')", (KEY,)).fetchone() == (
        shardid.PublicIds.from_keys(KEY, "note").encode(5),
    )
    with conn.transaction():
        conn.execute(public_ids_sql_uninstall("pub_again").encode())  # type: ignore[call-overload]
    left = conn.execute("SELECT count(*) FROM pg_proc WHERE pronamespace = 'pub_again'::regnamespace").fetchone()
    assert left == (0,)


def test_the_command_line_prints_the_same_ddl() -> None:
    script = [sys.executable, "-m", "shardid", "sql", "--schema", SCHEMA, "--public-ids"]
    done = subprocess.run(script, capture_output=True, text=True, check=True)
    assert done.stdout == public_ids_sql(SCHEMA)
    done = subprocess.run([*script, "--layout", "twitter"], capture_output=True, text=True, check=True)
    assert done.stdout == public_ids_sql(SCHEMA, shardid.Layout.TWITTER)
