"""Every client on a server whose SQL mode has NO_BACKSLASH_ESCAPES (issue 60, finding 3).

Under that mode a backslash is an ordinary character in a string literal, so a driver that
escapes a quote as \\' on the client ends the literal there: Node's mysql2 `query` did, and a
dictionary lookup of "') OR SLEEP(2) -- " ran the SLEEP (4 s, one per row) and strings with
backslashes were stored with two. The mode is set for this module on the suite's one server
(globally: every new session of every client gets it) and restored after. Node (mysql2),
Python (PyMySQL, and aiomysql for the asyncio clients) and Rust (the `mysql` crate) run the
injection, and strings with quotes and backslashes through the dictionary, a dense-ID tag and a
serial format, each checked against the bytes the server stored and the other clients'
answers."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest
from conftest import install, one, rows
from examples import example
from test_async import no_blocking_mysql  # noqa: F401 - a fixture: the asyncio clients on aiomysql
from test_dictionary import setup as setup_dictionary

from shardid.dictionary import AsyncDictionary, Dictionary
from shardid.segments import AsyncDenseIds, DenseIds, Serials, create_serial
from shardid.sql import mysql_serials, segments

NODE = Path(__file__).with_name("nbe_node.mjs")

# Would sleep 2 s for each row it runs on if a client let it out of its literal.
INJECTION = "') OR SLEEP(2) -- "
# The strings of the topic it is looked up in: 12 rows, 24 s of SLEEP were it run.
ROWS = list("abcdefghijkl")
# Quotes, backslashes and both, as data.
STRINGS = [
    "it's",
    "back\\slash",
    "\\'",
    "'\\",
    "\\\\",
    "'; DROP TABLE x; --",
    'double "quote"',
    "\\' OR 1=1 -- ",
    "tab\tand\\n",
    "é\\'ü",
]
# Far under the 24 s the SLEEPs would take, and above what a busy machine takes for a lookup.
QUICK_S = 5.0
# PyMySQL's own connect, for this module's set-up and checks: the asyncio tests' fixture
# (no_blocking_mysql) makes pymysql.connect refuse, so that the clients under test use aiomysql.
_connect = pymysql.connect


def open_conn(server: Any) -> Any:
    return _connect(host="127.0.0.1", port=server.port, user="root", autocommit=True)


@pytest.fixture(scope="module")
def nbe(server: Any) -> Iterator[Any]:
    """The suite's server with NO_BACKSLASH_ESCAPES in its global SQL mode for this module."""
    admin = open_conn(server)
    before = one(admin, "SELECT @@GLOBAL.sql_mode")
    with admin.cursor() as cur:
        cur.execute("SET GLOBAL sql_mode = CONCAT_WS(',', NULLIF(@@GLOBAL.sql_mode, ''), 'NO_BACKSLASH_ESCAPES')")
    try:
        yield server
    finally:
        with admin.cursor() as cur:
            cur.execute("SET GLOBAL sql_mode = %s", (before,))
        admin.close()


def one_statement(conn: Any, sql: str) -> None:
    with conn.cursor() as cur:
        cur.execute(sql)


def node(url: str, mode: str, **args: Any) -> Any:
    done = subprocess.run(["node", str(NODE), url, mode, json.dumps(args)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def rust(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([example(name), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_the_mode_is_on_in_every_new_session(nbe: Any) -> None:
    """The premise: in a new session a backslash escapes nothing (two characters here)."""
    conn = open_conn(nbe)
    try:
        assert "NO_BACKSLASH_ESCAPES" in one(conn, "SELECT @@SESSION.sql_mode")
        assert one(conn, "SELECT LENGTH('\\\\')") == 2
    finally:
        conn.close()


def test_the_injection_is_a_string_never_found_in_every_client(nbe: Any) -> None:
    conn = open_conn(nbe)
    setup_dictionary(conn, "dict_nbe", "words")
    url = nbe.url_for("dict_nbe")
    # Rows for the injected SLEEP to run on, were it run.
    with Dictionary(url, "words", schema="dict_nbe") as words:
        assert words.ids(ROWS) == list(range(len(ROWS)))

    # Node's statements as the server received them (the general log, for this call only).
    for statement in ("SET GLOBAL log_output = 'TABLE'", "TRUNCATE mysql.general_log", "SET GLOBAL general_log = 1"):
        one_statement(conn, statement)
    try:
        got = node(url, "lookup", schema="dict_nbe", topic="words", values=[INJECTION, "a"])
    finally:
        one_statement(conn, "SET GLOBAL general_log = 0")
    logged = [
        arg.decode(errors="replace") if isinstance(arg, bytes) else str(arg)
        for (arg,) in rows(conn, "SELECT argument FROM mysql.general_log WHERE command_type = 'Query'")
    ]
    one_statement(conn, "SET GLOBAL log_output = 'FILE'")
    assert got["answer"] == [None, "0"]
    assert got["ms"] < QUICK_S * 1000, got
    # The value reached the server as data only: its hex digits, never its text.
    assert any(INJECTION.encode().hex() in arg.lower() for arg in logged), logged
    assert not any("SLEEP(2)" in arg for arg in logged), logged

    with Dictionary(url, "words", schema="dict_nbe", cache_size=0) as words:
        start = time.monotonic()
        assert words.lookup([INJECTION, "b"]) == [None, 1]
        assert time.monotonic() - start < QUICK_S

    # Rust assigns it (its lookup first): a string like any other, stored as it is.
    start = time.monotonic()
    assigned = json.loads(rust("mysql_dictionary", url, "id", "dict_nbe", "words", INJECTION).stdout.strip().splitlines()[-1])
    assert time.monotonic() - start < QUICK_S + 5.0  # the program's own start included
    stored = rows(conn, "SELECT d.value, d.id FROM dict_nbe.shardid_strings d JOIN dict_nbe.shardid_topics t USING (topic_id) WHERE t.topic = 'words'")
    assert sorted((v.decode(), i) for v, i in stored) == sorted([*zip(ROWS, range(len(ROWS))), (INJECTION, assigned["id"])])
    # Node finds it now, by the same bytes.
    assert node(url, "lookup", schema="dict_nbe", topic="words", values=[INJECTION])["answer"] == [str(assigned["id"])]
    conn.close()


def test_the_injection_is_a_string_never_found_in_the_asyncio_clients(nbe: Any, no_blocking_mysql: None) -> None:
    conn = open_conn(nbe)
    setup_dictionary(conn, "dict_nbe_async", "words")
    url = nbe.url_for("dict_nbe_async")
    install(conn, segments("seg_nbe_async", dialect="mysql"))
    one(conn, "SELECT seg_nbe_async.create_tag(%s)", INJECTION)

    async def run() -> tuple[list[int | None], list[int | None], list[int]]:
        async with AsyncDictionary(url, "words", schema="dict_nbe_async", cache_size=0) as words:
            assert await words.ids(ROWS) == list(range(len(ROWS)))
            start = time.monotonic()
            found = await words.lookup([INJECTION, "b"])
            assert time.monotonic() - start < QUICK_S
            assigned = await words.ids([INJECTION])
        ids = AsyncDenseIds(nbe.url_for("seg_nbe_async"), INJECTION, schema="seg_nbe_async", min_size=10, max_size=10)
        try:
            taken = [await ids.next_id() for _ in range(3)]
        finally:
            await ids.close()
        return found, assigned, taken

    found, assigned, taken = asyncio.run(run())
    assert found == [None, 1] and assigned == [len(ROWS)] and taken == [1, 2, 3]
    stored = rows(conn, "SELECT d.value FROM dict_nbe_async.shardid_strings d WHERE d.id = %s", len(ROWS))
    assert stored == [(INJECTION.encode(),)]
    assert rows(conn, "SELECT tag, next FROM seg_nbe_async.shardid_tags") == [(INJECTION.encode(), 4)]
    conn.close()


def test_strings_with_quotes_and_backslashes_are_stored_and_read_back_as_they_are(nbe: Any) -> None:
    conn = open_conn(nbe)
    setup_dictionary(conn, "dict_nbe_rt", "words")
    url = nbe.url_for("dict_nbe_rt")
    got = node(url, "ids", schema="dict_nbe_rt", topic="words", values=STRINGS)
    assert got["values"] == STRINGS
    ids = [int(i) for i in got["ids"]]
    assert len(set(ids)) == len(STRINGS)
    # What the server holds: the strings' own bytes, one row each.
    stored = rows(conn, "SELECT d.value, d.id FROM dict_nbe_rt.shardid_strings d JOIN dict_nbe_rt.shardid_topics t USING (topic_id) WHERE t.topic = 'words'")
    assert sorted((v.decode(), i) for v, i in stored) == sorted(zip(STRINGS, ids))
    # Every other client finds the same strings under the same IDs, and makes no new one.
    with Dictionary(url, "words", schema="dict_nbe_rt", cache_size=0) as words:
        assert words.ids(STRINGS) == ids
        assert words.values(ids) == STRINGS
    for value, expected in zip(STRINGS, ids):
        out = rust("mysql_dictionary", url, "id", "dict_nbe_rt", "words", value).stdout.strip().splitlines()[-1]
        assert json.loads(out) == {"id": expected}, value
    assert one(conn, "SELECT COUNT(*) FROM dict_nbe_rt.shardid_strings") == len(STRINGS)
    conn.close()


def test_strings_with_quotes_and_backslashes_in_the_asyncio_clients(nbe: Any, no_blocking_mysql: None) -> None:
    conn = open_conn(nbe)
    setup_dictionary(conn, "dict_nbe_art", "words")
    url = nbe.url_for("dict_nbe_art")

    async def run() -> tuple[list[int], list[str | None]]:
        async with AsyncDictionary(url, "words", schema="dict_nbe_art", cache_size=0) as words:
            ids = await words.ids(STRINGS)
            return ids, await words.values(ids)

    ids, values = asyncio.run(run())
    assert values == STRINGS and ids == list(range(len(STRINGS)))
    stored = rows(conn, "SELECT value, id FROM dict_nbe_art.shardid_strings")
    assert sorted((v.decode(), i) for v, i in stored) == sorted(zip(STRINGS, ids))
    # Node reads the same strings under the same IDs.
    assert node(url, "ids", schema="dict_nbe_art", topic="words", values=STRINGS)["ids"] == [str(i) for i in ids]
    conn.close()


def test_a_dense_id_tag_with_quotes_and_backslashes(nbe: Any) -> None:
    conn = open_conn(nbe)
    install(conn, segments("seg_nbe", dialect="mysql"))
    url = nbe.url_for("seg_nbe")
    tag = "o'k\\'); --\\"
    got = [int(i) for i in node(url, "dense", schema="seg_nbe", tag=tag, n=25)["ids"]]
    assert got == list(range(1, 26))
    # The tag is one row, under its own bytes; the rest of Node's last segment was given back.
    assert rows(conn, "SELECT tag, next FROM seg_nbe.shardid_tags") == [(tag.encode(), 26)]
    with DenseIds(url, tag, schema="seg_nbe", min_size=10, max_size=10) as ids:
        assert [ids.next_id() for _ in range(3)] == [26, 27, 28]
    out = rust("mysql_segments", url, "first", "seg_nbe", tag).stdout.strip().splitlines()[-1]
    assert json.loads(out) == {"first": 29}
    assert [r[0] for r in rows(conn, "SELECT tag FROM seg_nbe.shardid_tags")] == [tag.encode()]
    conn.close()


def test_a_serial_format_with_quotes_and_backslashes(nbe: Any) -> None:
    conn = open_conn(nbe)
    install(conn, segments("ser_nbe", dialect="mysql"))
    install(conn, mysql_serials("ser_nbe"))
    url = nbe.url_for("ser_nbe")
    fmt = "O'R\\D-{yyyy}{MM}{dd}-{seq:6}"
    from_node = node(url, "serials", schema="ser_nbe", tag="nbe", format=fmt, zone="UTC", n=3)["serials"]
    # Registered as written: Python and Rust open the tag with the same format, no mismatch.
    create_serial(url, "nbe", fmt, zone="UTC", schema="ser_nbe")
    with Serials(url, "nbe", fmt, zone="UTC", schema="ser_nbe", min_size=10, max_size=10) as serials:
        from_python = [serials.next_serial() for _ in range(3)]
    at = str(int(time.time() * 1000))
    from_rust = rust("mysql_serials", "take", url, "ser_nbe", "nbe", fmt, "UTC", "1", "3", at).stdout.split()
    everything = from_node + from_python + from_rust
    assert len(everything) == 9 and len(set(everything)) == 9, everything
    assert all(s.startswith("O'R\\D-") for s in everything), everything
    assert rows(conn, "SELECT tag, format FROM ser_nbe.shardid_serials") == [("nbe", fmt)]
    conn.close()
