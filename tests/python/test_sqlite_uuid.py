"""The UUIDv7 bridge in SQLite's SQL (issue 62): shardid.sqlite.uuid_functions registers
shardid_to_uuid (16 bytes, a BLOB), shardid_to_uuid_text and shardid_from_uuid (either) on a
sqlite3 connection. Every vector of uuid.json a SQLite connection can be asked gives the same
bytes, text, ID or refusal as the library; BLOB and TEXT columns sort as the IDs; a refusal
fails the statement, never a wrong ID."""

from __future__ import annotations

import sqlite3
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from vectors import LAYOUTS, load

import shardid
from shardid.sql import mysql
from shardid.sqlite import UUID_FUNCTIONS, uuid_functions

I64_MAX = 2**63 - 1
# The cases with a layout (a connection's functions are of one layout) whose IDs are SQLite
# INTEGERs (signed 64-bit: an ID past 2^63 - 1 cannot be one, in or out).
CASES = [
    c
    for c in load("uuid.json")["cases"]
    if c["layout"] is not None
    and int(c["args"].get("id", "0")) <= I64_MAX
    and int(c["expect"].get("ok", "0") if c["op"] == "from_uuid" else "0") <= I64_MAX
]


def connection(layout: shardid.Layout) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    uuid_functions(conn, layout)
    return conn


@pytest.fixture
def refusals() -> Iterator[list[BaseException]]:
    """The exceptions the functions raised: sqlite3 reports them as OperationalError without
    their reason, and hands them to sys.unraisablehook under enable_callback_tracebacks."""
    caught: list[BaseException] = []
    hook = sys.unraisablehook
    sys.unraisablehook = lambda raised: caught.append(raised.exc_value)  # type: ignore[arg-type]
    sqlite3.enable_callback_tracebacks(True)
    try:
        yield caught
    finally:
        sqlite3.enable_callback_tracebacks(False)
        sys.unraisablehook = hook


def test_most_vectors_run_here() -> None:
    assert len(CASES) > 60
    assert {c["layout"] for c in CASES} == set(LAYOUTS)
    assert sum("error" in c["expect"] for c in CASES) >= 5


def refused(conn: sqlite3.Connection, query: str, value: Any, caught: list[BaseException]) -> BaseException:
    caught.clear()
    with pytest.raises(sqlite3.OperationalError, match="user-defined function raised exception"):
        conn.execute(query, (value,)).fetchone()
    assert len(caught) == 1
    return caught[0]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_vector(case: dict[str, Any], refusals: list[BaseException]) -> None:
    conn = connection(LAYOUTS[case["layout"]])
    expect = case["expect"]
    if case["op"] == "to_uuid":
        id_ = int(case["args"]["id"])
        if "ok" in expect:
            text, blob = conn.execute("SELECT shardid_to_uuid_text(?), shardid_to_uuid(?)", (id_, id_)).fetchone()
            assert (text, blob) == (expect["ok"], uuid.UUID(expect["ok"]).bytes)
            return
        queries = ["SELECT shardid_to_uuid_text(?)", "SELECT shardid_to_uuid(?)"]
        values = [id_, id_]
    else:
        text = case["args"]["uuid"]
        queries, values = ["SELECT shardid_from_uuid(?)"], [text]
        # The 16 bytes as a BLOB too, where the text is one the core reads (8-4-4-4-12).
        if "is not UUID text" not in expect.get("message", ""):
            queries.append(queries[0])
            values.append(uuid.UUID(text).bytes)
        if "ok" in expect:
            for query, value in zip(queries, values):
                assert conn.execute(query, (value,)).fetchone() == (int(expect["ok"]),)
            return
    for query, value in zip(queries, values):
        err = refused(conn, query, value, refusals)
        assert isinstance(err, shardid.ShardIdError) and err.code == expect["error"], (query, err)
        assert str(err) == expect["message"]


def test_null_gives_null_and_a_blob_of_another_length_is_refused(refusals: list[BaseException]) -> None:
    conn = connection(shardid.Layout.TWITTER)
    assert conn.execute(
        "SELECT shardid_to_uuid(NULL), shardid_to_uuid_text(NULL), shardid_from_uuid(NULL)"
    ).fetchone() == (None, None, None)
    err = refused(conn, "SELECT shardid_from_uuid(?)", b"\x01" * 15, refusals)
    assert isinstance(err, shardid.InvalidArgumentError) and str(err) == "uuid must be 16 bytes"


def test_another_layouts_uuid_and_sqlite_s_own_random_text_are_refused(refusals: list[BaseException]) -> None:
    """Refused, not read as a wrong ID: a UUID of another preset (its marker), one not made by
    the bridge (random bits where the marker goes), one of another version."""
    twitter = connection(shardid.Layout.TWITTER)
    made = connection(shardid.Layout.INSTAGRAM).execute("SELECT shardid_to_uuid(?)", (2**40,)).fetchone()[0]
    err = refused(twitter, "SELECT shardid_from_uuid(?)", made, refusals)
    assert str(err) == "uuid was made for another layout"
    random_v7 = bytearray(made)
    random_v7[6:16] = bytes.fromhex("7a3f9c21d4e5f60718ab")
    random_v7[8] = 0x80 | (random_v7[8] & 0x3F)
    err = refused(twitter, "SELECT shardid_from_uuid(?)", bytes(random_v7), refusals)
    assert isinstance(err, shardid.InvalidArgumentError)
    err = refused(twitter, "SELECT shardid_from_uuid(?)", str(uuid.uuid4()), refusals)
    assert str(err) == "uuid is not a UUIDv7"


@pytest.mark.parametrize("name", ["instagram", "twitter", "discord", "sonyflake"])
def test_blob_and_text_columns_sort_as_the_ids_and_read_back(name: str) -> None:
    layout = getattr(shardid.Layout, name.upper())
    generator = shardid.Generator(layout, shard=3)
    ids = [generator.next_id() for _ in range(3000)]
    conn = connection(layout)
    conn.execute("CREATE TABLE t (id INTEGER, b BLOB, s TEXT)")
    conn.executemany("INSERT INTO t (id) VALUES (?)", [(i,) for i in reversed(ids)])
    conn.execute("UPDATE t SET b = shardid_to_uuid(id), s = shardid_to_uuid_text(id)")
    conn.execute("CREATE INDEX t_b ON t (shardid_to_uuid(id))")  # deterministic: an index may use it
    assert [r[0] for r in conn.execute("SELECT id FROM t ORDER BY b")] == sorted(ids)
    assert [r[0] for r in conn.execute("SELECT id FROM t ORDER BY s")] == sorted(ids)
    rows = conn.execute("SELECT id, b, s, shardid_from_uuid(b), shardid_from_uuid(s) FROM t").fetchall()
    for id_, b, s, from_b, from_s in rows:
        assert (b, s, from_b, from_s) == (layout.to_uuid(id_).bytes, str(layout.to_uuid(id_)), id_, id_)


def test_the_names_are_the_mysql_familys() -> None:
    ddl = mysql(shardid.Layout.INSTAGRAM, shard=1, schema="s")
    for name in UUID_FUNCTIONS:
        assert f"FUNCTION s.{name}(" in ddl.replace("`", ""), name


def test_a_layout_is_required() -> None:
    with pytest.raises(shardid.InvalidArgumentError, match="layout must be a shardid.Layout"):
        uuid_functions(sqlite3.connect(":memory:"), "instagram")  # type: ignore[arg-type]
