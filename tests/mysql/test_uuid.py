"""The UUIDv7 bridge in MariaDB: shardid_to_uuid (16 bytes, for a BINARY(16) column),
shardid_to_uuid_text and shardid_from_uuid (bytes or text) of the emitted DDL give every vector
of uuid.json byte for byte as the clients do, keep order and round-trip IDs made by next_id(),
and refuse what the clients refuse, with their words."""

from __future__ import annotations

import uuid
from typing import Any

import pymysql
import pytest
from conftest import install, one, rows
from vectors import LAYOUTS, load

import shardid
from shardid.sql import mysql

I64_MAX = 2**63 - 1


def schema_of(name: str) -> str:
    return f"u_{name}"


def installable() -> dict[str, shardid.Layout]:
    """The vector layouts the MySQL family's DDL takes (a signed BIGINT with a spare bit)."""
    found = {}
    for name, layout in LAYOUTS.items():
        try:
            mysql(layout, 0, schema_of(name))
        except ValueError:
            continue
        found[name] = layout
    return found


INSTALLABLE = installable()
CASES = [
    c
    for c in load("uuid.json")["cases"]
    if c["layout"] in INSTALLABLE
    and int(c["args"].get("id", "0")) <= I64_MAX
    and (c["op"] == "to_uuid" or int(c["expect"].get("ok", "0")) <= I64_MAX)
]


@pytest.fixture(scope="module")
def uuid_db(server: Any, conn: Any) -> Any:
    for name, layout in INSTALLABLE.items():
        install(conn, mysql(layout, 0, schema_of(name)))
    return server


def test_most_vectors_run_here() -> None:
    assert {"instagram", "twitter", "sonyflake"} <= set(INSTALLABLE)
    assert len(CASES) > 60


@pytest.fixture(scope="module")
def conn(server: Any) -> Any:
    from conftest import open_conn

    c = open_conn(server)
    yield c
    c.close()


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_vector(uuid_db: Any, conn: Any, case: dict[str, Any]) -> None:
    s = schema_of(case["layout"])
    expect = case["expect"]
    if case["op"] == "to_uuid":
        queries = [(f"SELECT {s}.shardid_to_uuid_text(%s)", int(case["args"]["id"]))]
        if "ok" in expect:
            got = one(conn, f"SELECT {s}.shardid_to_uuid(%s)", int(case["args"]["id"]))
            assert got == uuid.UUID(expect["ok"]).bytes
    else:
        text = case["args"]["uuid"]
        queries = [(f"SELECT {s}.shardid_from_uuid(%s)", text)]
        try:
            queries.append((f"SELECT {s}.shardid_from_uuid(%s)", uuid.UUID(text).bytes))  # the 16 bytes
        except ValueError:
            pass  # not text Python reads either: only the text form is asked
        if len(text) == 36:
            queries.append((f"SELECT {s}.shardid_from_uuid(%s)", text.upper()))
    for query, arg in queries:
        if "ok" in expect:
            assert str(one(conn, query, arg)) == expect["ok"], (query, arg)
            continue
        with pytest.raises(pymysql.err.MySQLError) as info:
            one(conn, query, arg)
        code, message = info.value.args
        assert message == f"{expect['error']}: {expect['message']}", (query, arg, message)
        if expect["error"] == "INVALID_ARGUMENT":
            assert code == 1644  # SIGNAL's error; SQLSTATE 22023 below
            with conn.cursor() as cur:
                cur.execute("GET DIAGNOSTICS CONDITION 1 @state = RETURNED_SQLSTATE")
                cur.execute("SELECT @state")
                assert cur.fetchone()[0] == "22023"


@pytest.mark.parametrize("name", ["instagram", "twitter", "sonyflake"])
def test_database_ids_round_trip_in_order_as_the_library_makes_them(conn: Any, name: str) -> None:
    layout = getattr(shardid.Layout, name.upper())
    schema = f"uuidm_{name}"
    install(conn, mysql(layout, 3, schema))
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {schema}.t (id BIGINT PRIMARY KEY, u BINARY(16) NULL, KEY (u))")
        for _ in range(10):
            # (Not `SELECT id, to_uuid(id) FROM (SELECT next_id() AS id ...)`: MariaDB merges the
            # derived table and calls next_id() once per reference, pairing an ID with another's UUID.)
            cur.execute(f"INSERT INTO {schema}.t (id) SELECT {schema}.next_id() FROM {schema}.seq_1_to_300")
        cur.execute(f"UPDATE {schema}.t SET u = {schema}.shardid_to_uuid(id)")
    got = rows(conn, f"SELECT id, u, {schema}.shardid_from_uuid(u), {schema}.shardid_to_uuid_text(id) FROM {schema}.t ORDER BY u")
    ids = [r[0] for r in got]
    assert ids == sorted(ids) and len(set(ids)) == 3000, "ORDER BY the BINARY(16) column is ORDER BY id"
    for id_, raw, back, text in got:
        u = layout.to_uuid(id_)
        assert (raw, back, text) == (u.bytes, id_, str(u))
    # A UUID of another layout, and one the server made itself (MariaDB's UUID() is v1), are refused.
    with pytest.raises(pymysql.err.MySQLError, match="INVALID_ARGUMENT: uuid"):
        one(conn, f"SELECT {schema}.shardid_from_uuid(UUID())")
    with pytest.raises(pymysql.err.MySQLError, match="INVALID_ARGUMENT: uuid was made for another layout"):
        other = shardid.Layout.DISCORD if name != "twitter" else shardid.Layout.INSTAGRAM
        one(conn, f"SELECT {schema}.shardid_from_uuid(%s)", str(other.to_uuid(other.compose(1_700_000_000_000, 1, 1))))
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE {schema}")


def tampered(good: uuid.UUID) -> dict[str, str]:
    """``good`` with one thing changed for each refusal the bridge makes."""
    b = bytearray(good.bytes)

    def with_(i: int, value: int) -> str:
        c = bytearray(b)
        c[i] = value
        return str(uuid.UUID(bytes=bytes(c)))

    return {
        "version 4": with_(6, (b[6] & 0x0F) | 0x40),
        "variant": with_(8, b[8] & 0x3F),
        "no marker": with_(7, b[7] ^ 0x80),  # a marker no layout has
        "time": with_(5, b[5] ^ 0x01),  # the UUID's millisecond is not the ID's
        "top bit": with_(7, b[7] | 0x02),  # an ID with bit 63 set, which the layout never makes
        "not text": str(good).replace("-", ""),
        "braces": "{" + str(good)[:34] + "}",
        "junk": "zz" + str(good)[2:],
        "short": str(good)[:35],
    }


@pytest.mark.parametrize("name", ["instagram", "twitter", "sonyflake"])
def test_refusals_are_the_libraries_own(uuid_db: Any, conn: Any, name: str) -> None:
    """Each refusal of the SQL has the library's words for the same input, checked in the same
    order (a UUID with two faults names the first the library checks)."""
    layout = LAYOUTS[name]
    good = layout.to_uuid(layout.compose(1_700_000_000_000, 3, 5))
    s = schema_of(name)
    for what, text in tampered(good).items():
        with pytest.raises(shardid.InvalidArgumentError) as lib:
            layout.from_uuid(text)
        with pytest.raises(pymysql.err.MySQLError) as sql:
            one(conn, f"SELECT {s}.shardid_from_uuid(%s)", text)
        assert sql.value.args[1] == f"INVALID_ARGUMENT: {lib.value}", (what, text)
        if len(text) == 36 and text[0] != "{" and not text.startswith("zz"):
            with pytest.raises(pymysql.err.MySQLError) as raw:
                one(conn, f"SELECT {s}.shardid_from_uuid(%s)", uuid.UUID(text).bytes)
            assert raw.value.args[1] == sql.value.args[1], what
