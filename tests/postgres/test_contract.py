"""One behaviour contract for the database clients (issue 41): the same failure is the same error
in every client. Each cell runs one client — Python sync, Python asyncio, Node, Rust — and,
where a server is needed, one database — PostgreSQL direct, PostgreSQL through PgBouncer in
transaction mode — and asserts:

- a server that is down is ``DATABASE_UNREACHABLE``, within the client's wait (dense IDs,
  serials);
- a URL no driver takes (``postgresql+psycopg://``, ``nonsense``) is ``INVALID_ARGUMENT`` at
  once, naming the schemes taken (the core's one rule, ``Dialect::of_url``);
- after ``close()`` serials are ``CLOSED``;
- an unregistered serial tag names the call that creates it in that language;
- a leased generator's IDs are counted with every generator's (``shardid_ids_total``);
- Rust: the server's own message survives into the error, and serials work behind a
  transaction pooler (four ``Serials`` at once through a pool of 3 server connections all
  connect and hand out distinct serials: the client sent named prepared statements).

MariaDB's cells live with its server in tests/mysql (serials are PostgreSQL's only). A cell that
cannot apply is skipped, and says why in its id."""

from __future__ import annotations

import asyncio
import json
import tempfile
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

import shardid
from shardid._shardid import _collect
from shardid.dictionary import Dictionary
from shardid.postgres import lease, lease_async
from shardid.segments import AsyncDenseIds, DenseIds, Serials, create_serial
from shardid.sql import segments

FORMAT = "C-{yyyy}{MM}{dd}-{seq:6}"
ZONE = "UTC"
NODE = Path(__file__).with_name("contract_node.mjs")
ROOT = Path(__file__).resolve().parents[2]


def serials_example() -> str:
    binary = os.environ.get("SHARDID_SERIALS_EXAMPLE")
    if binary:
        return binary
    subprocess.run(
        ["cargo", "build", "-q", "-p", "shardid", "--features", "serial,postgres", "--example", "serials"], cwd=ROOT, check=True
    )
    return str(ROOT / "target" / "debug" / "examples" / "serials")


def segments_example() -> str:
    binary = os.environ.get("SHARDID_SEGMENTS_EXAMPLE")
    if binary:
        return binary
    subprocess.run(["cargo", "build", "-q", "-p", "shardid", "--features", "postgres", "--example", "segments"], cwd=ROOT, check=True)
    return str(ROOT / "target" / "debug" / "examples" / "segments")


def last_json(out: str) -> Any:
    return json.loads(out.strip().splitlines()[-1])


def down_url() -> str:
    """A PostgreSQL URL of a port where nothing listens: a server that is down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"postgresql://postgres@127.0.0.1:{port}/postgres"


def dsn_of(url: str) -> str:
    """The libpq key=value string of a ``postgresql://user@host:port/db`` URL (the Rust examples
    take either)."""
    rest = url.split("://", 1)[1]
    user, rest = rest.split("@", 1)
    hostport, db = rest.split("/", 1)
    host, port = hostport.split(":")
    return f"host={host} port={port} user={user} dbname={db}"


@pytest.fixture(scope="module")
def schema(cluster: Any, pooler: Any) -> str:
    """The segments' DDL in schema ``contract`` of the databases ``postgres`` (direct) and
    ``pooled`` (behind the pooler), with the serial tag ``c`` and the dense tag ``d``."""
    for dbname in ("postgres", "pooled"):
        with psycopg.connect(cluster.dsn.replace("dbname=postgres", f"dbname={dbname}"), autocommit=True) as conn:
            with conn.transaction():
                conn.execute(segments("contract").encode())
            create_serial(conn, "c", FORMAT, zone=ZONE, schema="contract")
            conn.execute("SELECT contract.create_tag('d')")
    return "contract"


@pytest.fixture(params=["direct", "pgbouncer-tx"])
def url(request: pytest.FixtureRequest, cluster: Any, pooler: Any, schema: str) -> str:
    if request.param == "direct":
        return f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres"
    return pooler.url("pooled_tx")


# --- Rust: serials behind a transaction pooler, and the server's own message ------------------


def test_rust_serials_through_a_transaction_pooler(pooler: Any, schema: str) -> None:
    """Four Serials::connect at once through PgBouncer (3 server connections): each statement
    may run on another server session, so none may be a named prepared statement."""
    dsn = pooler.dsn("pooled_tx")
    runs = [
        subprocess.Popen([serials_example(), "next", dsn, schema, "c", FORMAT, ZONE, "300"], stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    results = []
    for r in runs:
        out, _ = r.communicate(timeout=120)
        results.append(last_json(out))
    assert all("serials" in r for r in results), results
    every = [s for r in results for s in r["serials"]]
    assert len(every) == 1200 and len(set(every)) == 1200


def test_rust_errors_keep_the_servers_message(cluster: Any, schema: str) -> None:
    # A schema that does not exist: the server's words, not the driver's "db error".
    created = last_json(
        subprocess.run(
            [serials_example(), "create", cluster.dsn, "no_such_schema", "c", FORMAT, ZONE], capture_output=True, text=True, timeout=60
        ).stdout
    )
    assert created["code"] == "DATABASE", created
    assert 'schema "no_such_schema" does not exist' in created["message"], created
    # A server that is down: the system's reason, as DATABASE_UNREACHABLE.
    down = last_json(
        subprocess.run(
            [serials_example(), "next", dsn_of(down_url()), schema, "c", FORMAT, ZONE, "1"], capture_output=True, text=True, timeout=60
        ).stdout
    )
    assert down["code"] == "DATABASE_UNREACHABLE", down
    assert "refused" in down["message"].lower(), down


# --- The contract, cell by cell -----------------------------------------------------------------

CLIENTS = ["python", "python-asyncio", "node", "rust"]
# What a cell cannot do, and why (the reason is in the test's id).
NO_ASYNC_SERIALS = "python-asyncio: no asyncio Serials exist"


def node(*args: str) -> Any:
    done = subprocess.run(["node", str(NODE), *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return last_json(done.stdout)


def rust(binary: str, *args: str) -> Any:
    done = subprocess.run([binary, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return last_json(done.stdout)


def outcome(call: Any) -> dict[str, Any]:
    """What ``call()`` raised (code, message, ms), as the Node and Rust drivers print it."""
    started = time.monotonic()
    try:
        result = call()
        if asyncio.iscoroutine(result):
            asyncio.run(result)
    except shardid.ShardIdError as e:
        return {"code": e.code, "message": str(e), "ms": (time.monotonic() - started) * 1000}
    return {"ok": True}


async def async_dense(url: str, tag: str, **options: Any) -> None:
    async with AsyncDenseIds(url, tag, schema="contract", **options) as ids:
        await ids.next_id()


# The clients' wait for a segment in these cells, ms.
WAIT_MS = 500


@pytest.mark.parametrize("client", CLIENTS)
def test_a_server_that_is_down_is_database_unreachable_within_the_wait(client: str) -> None:
    dead = down_url()
    if client == "python":
        got = {
            "dense": outcome(lambda: DenseIds(dead, "d", wait_ms=WAIT_MS).next_id()),
            "serials": outcome(lambda: Serials(dead, "c", FORMAT, zone=ZONE, wait_ms=WAIT_MS)),
            "createSerial": outcome(lambda: create_serial(dead, "c", FORMAT, zone=ZONE)),
        }
    elif client == "python-asyncio":
        got = {"dense": outcome(lambda: async_dense(dead, "d", wait_ms=WAIT_MS))}
    elif client == "node":
        got = node("unreachable", dead, str(WAIT_MS))
    else:
        got = {
            "dense": rust(segments_example(), dsn_of(dead), "next", "contract", "d"),
            "serials": rust(serials_example(), "next", dsn_of(dead), "contract", "c", FORMAT, ZONE, "1"),
            "createSerial": rust(serials_example(), "create", dsn_of(dead), "contract", "c", FORMAT, ZONE),
        }
    for call, seen in got.items():
        assert seen.get("code") == "DATABASE_UNREACHABLE", (client, call, seen)
        assert "refused" in seen["message"].lower(), (client, call, seen)
        # Within the wait (and a little for the process and the event loop).
        assert seen.get("ms", 0) < WAIT_MS + 700, (client, call, seen)


BAD_URLS = ["postgresql+psycopg://postgres@127.0.0.1:1/postgres", "nonsense"]


@pytest.mark.parametrize("bad", BAD_URLS, ids=["scheme", "no-url"])
@pytest.mark.parametrize("client", CLIENTS)
def test_a_url_no_driver_takes_is_invalid_argument_at_once(client: str, bad: str) -> None:
    if client == "python":
        got = {
            "dense": outcome(lambda: DenseIds(bad, "d")),
            "serials": outcome(lambda: Serials(bad, "c", FORMAT, zone=ZONE)),
            "createSerial": outcome(lambda: create_serial(bad, "c", FORMAT, zone=ZONE)),
            "dictionary": outcome(lambda: Dictionary(bad, "t")),
            "lease": outcome(lambda: lease(shardid.Layout.TWITTER, bad, range(0, 4))),
        }
    elif client == "python-asyncio":
        got = {
            "dense": outcome(lambda: async_dense(bad, "d")),
            "lease": outcome(lambda: lease_async(shardid.Layout.TWITTER, bad, range(0, 4))),
        }
    elif client == "node":
        got = node("badurl", bad)
    else:
        got = {
            "dense": rust(segments_example(), bad, "next", "contract", "d"),
            "serials": rust(serials_example(), "next", bad, "contract", "c", FORMAT, ZONE, "1"),
        }
    for call, seen in got.items():
        assert seen.get("code") == "INVALID_ARGUMENT", (client, call, seen)
        assert "not a database URL: postgresql://, postgres://, mysql://, mariadb:// or sqlite:///" in seen["message"], (client, call, seen)
        assert seen.get("ms", 0) < 500, (client, call, seen)


def cells(*skips: tuple[str, str]) -> list[Any]:
    """The clients, with those that cannot apply skipped with their reason in the id."""
    reasons = dict(skips)
    return [
        pytest.param(c, id=f"{c}-skipped: {reasons[c]}", marks=pytest.mark.skip(reason=reasons[c])) if c in reasons else c
        for c in CLIENTS
    ]


@pytest.mark.parametrize("client", cells(("python-asyncio", NO_ASYNC_SERIALS)))
def test_serials_after_close_are_closed(client: str, url: str, schema: str) -> None:
    if client == "python":
        s = Serials(url, "c", FORMAT, zone=ZONE, schema=schema)
        s.next_serial()
        s.close()
        got = {"next": outcome(s.next_serial)}
    elif client == "node":
        got = node("closed", url, schema)
    else:
        got = {"next": rust(serials_example(), "closed", dsn_of(url), schema, "c", FORMAT, ZONE)}
    for call, seen in got.items():
        assert seen.get("code") == "CLOSED", (client, call, seen)
        assert seen["message"] == "Serials of tag c was closed: make a new one", (client, call, seen)


CREATING_CALL = {"python": "create_serial", "node": "createSerial", "rust": "create_serial"}


@pytest.mark.parametrize("client", cells(("python-asyncio", NO_ASYNC_SERIALS)))
def test_an_unregistered_serial_tag_names_the_call_that_creates_it(client: str, url: str, schema: str) -> None:
    if client == "python":
        seen = outcome(lambda: Serials(url, "never_created", FORMAT, zone=ZONE, schema=schema))
    elif client == "node":
        seen = node("unknown", url, schema)["serials"]
    else:
        seen = rust(serials_example(), "next", dsn_of(url), schema, "never_created", FORMAT, ZONE, "1")
    assert seen.get("code") == "UNKNOWN_TAG", (client, seen)
    assert seen["message"] == f"no tag never_created: create it first ({CREATING_CALL[client]})", (client, seen)


def generator_ids() -> dict[tuple[str, str], int]:
    """``shardid_ids_total`` of each (layout, shard) in this process's live figures."""
    return {(labels[0], labels[1]): values[0] for family, labels, values in _collect() if family == "generator"}


def counted(before: dict[tuple[str, str], int], layout: str, shard: int) -> int:
    """The IDs of (layout, shard) counted since ``before`` (other cells' generators of the same
    layout and shard may still live in this process)."""
    key = (layout, str(shard))
    return generator_ids().get(key, 0) - before.get(key, 0)


@pytest.mark.parametrize("client", cells(("rust", "rust: core/tests/lease_stats.rs counts a leased generator in the core itself")))
def test_a_leased_generators_ids_are_counted(client: str, url: str) -> None:
    before = generator_ids()
    if client == "python":
        with lease(shardid.Layout.SONYFLAKE, url, range(0, 4), table="contract_py") as held:
            for _ in range(5):
                held.next_id()
            assert held.stats() is not None
            assert counted(before, "SONYFLAKE", held.shard) == 5
        with tempfile.TemporaryDirectory() as directory:
            locked = shardid.lease(shardid.Layout.DISCORD, directory, range(0, 4))
            locked.next_ids(7)
            assert counted(before, "DISCORD", locked.shard) == 7
            locked.close()
    elif client == "python-asyncio":

        async def run() -> None:
            held = await lease_async(shardid.Layout.SONYFLAKE, url, range(4, 8), table="contract_async")
            for _ in range(5):
                await held.next_id()
            # An asynchronous lease records a ceiling between two draws of an ID: the draw not
            # handed out counts as skipped, not as an ID.
            assert held.stats()["ceiling_writes"] >= 1
            assert counted(before, "SONYFLAKE", held.shard) == 5
            await held.close()

        asyncio.run(run())
    else:
        got = node("stats", url)
        # As the asyncio lease: a draw not handed out (a ceiling to record first) is skipped.
        assert got["ceilingWrites"] >= 1 and got["ids"] == [5], got
