"""One behaviour contract for the database clients (issue 41): the same failure is the same error
in every client. Each cell runs one client — Python sync, Python asyncio, Node, Rust — on one
database — PostgreSQL direct, PostgreSQL through PgBouncer in transaction mode, MariaDB (one
throwaway server, tests/mysql/server.py, started at the first cell that needs it), SQLite (files in
a temporary directory) — for one system — dense IDs, serials, the dictionary, leases — and
asserts:

- a database that is down is ``DATABASE_UNREACHABLE``, within the client's wait, saying why
  (``refused``; on SQLite a missing directory, a directory, a file that is not a SQLite
  database, with the path; in Python the driver's error is the cause);
- a URL no driver takes (``postgresql+nosuch://``, ``nonsense``, and ``sqlite://host/x.db``,
  ``sqlite:///:memory:`` ...) is ``INVALID_ARGUMENT`` at once, naming the URLs taken (the core's
  one rule, ``Dialect::of_url``);
- after ``close()``: ``CLOSED``;
- an unregistered tag or topic names the call that creates it in that language;
- ``stats()`` is there and counts (a leased generator's IDs in ``shardid_ids_total`` too);
- SQLite: a write lock held past the busy timeout is the driver's own busy error;
- Rust: the server's own message survives into the error, and serials work behind a
  transaction pooler (four ``Serials`` at once through a pool of 3 server connections all
  connect and hand out distinct serials: the client sent named prepared statements).

Node and Rust run one process per (database, system) group (``contract_node.mjs group``,
``core/examples/contract.rs``) that makes every call of the group and prints one JSON object;
Python makes the same calls in this process. A cell that cannot apply is skipped, and one the
product is known to get wrong is ``xfail(strict=True)``; either says why in its id.

PYTEST_DONT_REWRITE: every assertion says what it saw (pytest's rewriting of these asserts once
crashed the run, "AST constructor recursion depth mismatch", on CPython 3.11, where a failed cell
should have been reported)."""

from __future__ import annotations

import asyncio
import json
import tempfile
import re
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
from shardid.segments import AsyncDenseIds, AsyncSerials, DenseIds, Serials, create_serial, create_tag
from shardid.sql import dictionary as dictionary_ddl
from shardid.sql import mysql_serials, segments
from examples import example

FORMAT = "C-{yyyy}{MM}{dd}-{seq:6}"
ZONE = "UTC"
NODE = Path(__file__).with_name("contract_node.mjs")
ROOT = Path(__file__).resolve().parents[2]


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
    """The segments' and the dictionary's DDL in schema ``contract`` of the databases ``postgres``
    (direct) and ``pooled`` (behind the pooler), with the serial tag ``c``, the dense tag ``d``
    and the topic ``t``."""
    for dbname in ("postgres", "pooled"):
        with psycopg.connect(cluster.dsn.replace("dbname=postgres", f"dbname={dbname}"), autocommit=True) as conn:
            with conn.transaction():
                conn.execute(segments("contract").encode())
                conn.execute(dictionary_ddl("contract").encode())
            create_serial(conn, "c", FORMAT, zone=ZONE, schema="contract")
            conn.execute("SELECT contract.create_tag('d')")
            conn.execute("SELECT contract.create_topic('t')")
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
        subprocess.Popen([example("serials"), "next", dsn, schema, "c", FORMAT, ZONE, "300"], stdout=subprocess.PIPE, text=True)
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
            [example("serials"), "create", cluster.dsn, "no_such_schema", "c", FORMAT, ZONE], capture_output=True, text=True, timeout=60
        ).stdout
    )
    assert created["code"] == "DATABASE", created
    assert 'schema "no_such_schema" does not exist' in created["message"], created
    # A server that is down: the system's reason, as DATABASE_UNREACHABLE.
    down = last_json(
        subprocess.run(
            [example("serials"), "next", dsn_of(down_url()), schema, "c", FORMAT, ZONE, "1"], capture_output=True, text=True, timeout=60
        ).stdout
    )
    assert down["code"] == "DATABASE_UNREACHABLE", down
    assert "refused" in down["message"].lower(), down


# --- The contract, cell by cell -----------------------------------------------------------------

CLIENTS = ["python", "python-asyncio", "node", "rust"]


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
        return {"code": e.code, "message": str(e), "ms": (time.monotonic() - started) * 1000, "cause": cause_of(e)}
    return {"ok": True}


def cause_of(e: BaseException) -> str | None:
    """The package of the driver's error an error was raised from (``sqlite3``, ``psycopg``)."""
    return type(e.__cause__).__module__.split(".")[0] if e.__cause__ is not None else None


async def async_serial(url: str, tag: str, **options: Any) -> None:
    async with AsyncSerials(url, tag, FORMAT, zone=ZONE, **options) as s:
        await s.next_serial()


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
        got = {
            "dense": outcome(lambda: async_dense(dead, "d", wait_ms=WAIT_MS)),
            "serials": outcome(lambda: async_serial(dead, "c", wait_ms=WAIT_MS)),
        }
    elif client == "node":
        got = node("unreachable", dead, str(WAIT_MS))
    else:
        got = {
            "dense": rust(example("segments"), dsn_of(dead), "next", "contract", "d"),
            "serials": rust(example("serials"), "next", dsn_of(dead), "contract", "c", FORMAT, ZONE, "1"),
            "createSerial": rust(example("serials"), "create", dsn_of(dead), "contract", "c", FORMAT, ZONE),
        }
    for call, seen in got.items():
        assert seen.get("code") == "DATABASE_UNREACHABLE", (client, call, seen)
        assert "refused" in seen["message"].lower(), (client, call, seen)
        # Within the wait (and a little for the process and the event loop).
        assert seen.get("ms", 0) < WAIT_MS + 700, (client, call, seen)


# postgresql+nosuch://: a driver no client runs (the Python clients take SQLAlchemy's postgresql+psycopg://).
BAD_URLS = ["postgresql+nosuch://postgres@127.0.0.1:1/postgres", "nonsense"]


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
            "serials": outcome(lambda: AsyncSerials(bad, "c", FORMAT, zone=ZONE)),
            "lease": outcome(lambda: lease_async(shardid.Layout.TWITTER, bad, range(0, 4))),
        }
    elif client == "node":
        got = node("badurl", bad)
    else:
        got = {
            "dense": rust(example("segments"), bad, "next", "contract", "d"),
            "serials": rust(example("serials"), "next", bad, "contract", "c", FORMAT, ZONE, "1"),
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


@pytest.mark.parametrize("client", CLIENTS)
def test_serials_after_close_are_closed(client: str, url: str, schema: str) -> None:
    if client == "python":
        s = Serials(url, "c", FORMAT, zone=ZONE, schema=schema)
        s.next_serial()
        s.close()
        got = {"next": outcome(s.next_serial)}
    elif client == "python-asyncio":

        async def closed() -> dict[str, Any]:
            s = AsyncSerials(url, "c", FORMAT, zone=ZONE, schema=schema)
            await s.next_serial()
            await s.close()
            return await aoutcome(s.next_serial)

        got = {"next": asyncio.run(closed())}
    elif client == "node":
        got = node("closed", url, schema)
    else:
        got = {"next": rust(example("serials"), "closed", dsn_of(url), schema, "c", FORMAT, ZONE)}
    for call, seen in got.items():
        assert seen.get("code") == "CLOSED", (client, call, seen)
        assert seen["message"] == "Serials of tag c was closed: make a new one", (client, call, seen)


CREATING_CALL = {"python": "create_serial", "python-asyncio": "create_serial", "node": "createSerial", "rust": "create_serial"}


@pytest.mark.parametrize("client", CLIENTS)
def test_an_unregistered_serial_tag_names_the_call_that_creates_it(client: str, url: str, schema: str) -> None:
    if client == "python":
        seen = outcome(lambda: Serials(url, "never_created", FORMAT, zone=ZONE, schema=schema))
    elif client == "python-asyncio":
        seen = outcome(lambda: async_serial(url, "never_created", schema=schema))
    elif client == "node":
        seen = node("unknown", url, schema)["serials"]
    else:
        seen = rust(example("serials"), "next", dsn_of(url), schema, "never_created", FORMAT, ZONE, "1")
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


# --- Every database × every system ----------------------------------------------------------------
#
# The cells below run per (database, system, client). Node and Rust run one process per
# (database, system) group that makes every call of the group and prints one JSON object
# (``{"down": {case: outcome}, "closed": outcome, "unknown": outcome, "stats": {...}}``);
# Python makes the same calls in this process. The tests then read their part of the group.

DATABASES = ["postgres", "pgbouncer-tx", "mariadb", "sqlite"]
SYSTEMS = ["dense", "serials", "dictionary", "lease"]
# What the message of an unregistered tag or topic names: the call that creates it.
CREATES = {
    ("dense", "python"): "create_tag",
    ("dense", "python-asyncio"): "create_tag",
    ("dense", "node"): "createTag",
    ("dense", "rust"): "create_tag",
    ("serials", "python"): "create_serial",
    ("serials", "python-asyncio"): "create_serial",
    ("serials", "node"): "createSerial",
    ("serials", "rust"): "create_serial",
    ("dictionary", "python"): "Dictionary.create",
    ("dictionary", "python-asyncio"): "AsyncDictionary.create",
    ("dictionary", "node"): "Dictionary.create",
    ("dictionary", "rust"): "Dictionary::create",
}
LEASE_MODULE = {"postgres": "shardid.postgres", "pgbouncer-tx": "shardid.postgres", "mariadb": "shardid.mysql", "sqlite": "shardid.sqlite"}

# Why a cell cannot apply (its id says so), or what it is known to get wrong (xfail, strict).
SKIPS: dict[tuple[str, str, str, str], str] = {}
XFAILS: dict[tuple[str, str, str, str], str] = {}


def _why(assertion: str, database: str, system: str, client: str) -> tuple[str, str] | None:
    """(``skip`` or ``xfail``, the reason) of one cell, or None when it runs and must pass."""
    if assertion == "down" and database == "pgbouncer-tx":
        return "skip", "pgbouncer-tx: a pooler that is down is a server that is down (the postgres cell)"
    if assertion == "unknown" and system == "lease":
        return "skip", "lease: nothing to register (the table of leases is made on first use)"
    if assertion == "closed" and system == "dictionary" and client == "rust":
        return "skip", "rust: a Dictionary has no close() (dropped, it closes: nothing can be called after)"
    return None


def grid(assertion: str) -> list[Any]:
    """Every (database, system, client) of one assertion, the cells that cannot apply skipped and
    those known to fail marked, each with its reason in the id."""
    out = []
    for database in DATABASES:
        for system in SYSTEMS:
            for client in CLIENTS:
                why = _why(assertion, database, system, client)
                cell = f"{database}-{system}-{client}"
                if why is None:
                    out.append(pytest.param(database, system, client, id=cell))
                elif why[0] == "skip":
                    out.append(pytest.param(database, system, client, id=f"{cell}-skipped: {why[1]}", marks=pytest.mark.skip(reason=why[1])))
                else:
                    out.append(pytest.param(database, system, client, id=f"{cell}-known: {why[1]}", marks=pytest.mark.xfail(reason=why[1], strict=True)))
    return out


def _mariadb_harness() -> Any:
    """tests/mysql/server.py, imported under its own name (tests/postgres has modules of its own
    on the path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mariadb_server", ROOT / "tests" / "mysql" / "server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def mariadb() -> Any:
    """One throwaway MariaDB for the suite, started at the first MariaDB cell: database
    ``contract`` with the segments', the serials' and the dictionary's DDL, the dense tag ``d``
    and the topic ``t``."""
    with _mariadb_harness().Server() as server:
        server.sql("CREATE DATABASE contract")
        server.sql(segments("contract", dialect="mysql"), "contract")
        server.sql(dictionary_ddl("contract", dialect="mysql"), "contract")
        # The serials' registrations, and the serial tag every client's cells take from.
        server.sql(mysql_serials("contract"), "contract")
        server.sql("SELECT contract.create_tag('d'); SELECT contract.create_topic('t');", "contract")
        create_serial(server.url_for("contract"), "c", FORMAT, zone=ZONE, schema="contract")
        yield server


def dead_mysql_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"mysql://root@127.0.0.1:{port}/contract"


@pytest.fixture(scope="session")
def sqlite_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """``live``: a SQLite file with the dense tag ``d``, the serial tag ``c`` and the topic ``t``;
    the others, files no client can use (each is DATABASE_UNREACHABLE): a missing directory, a
    file that is not a SQLite database, a directory. (A read-only file: tests/python/test_sqlite.py,
    not as root, who writes to read-only files: a file that can be read is no cell of "down".)"""
    directory = tmp_path_factory.mktemp("contract-sqlite")
    live = f"sqlite:///{directory / 'live.db'}"
    create_tag(live, "d")
    create_serial(live, "c", FORMAT, zone=ZONE)
    Dictionary(live, "t").create()
    (directory / "garbage.db").write_bytes(b"this is not a SQLite database, not at all: " * 100)
    (directory / "a-directory.db").mkdir()
    files = {
        "live": live,
        "missing-directory": f"sqlite:///{directory / 'no' / 'such' / 'dir.db'}",
        "not-a-database": f"sqlite:///{directory / 'garbage.db'}",
        "a-directory": f"sqlite:///{directory / 'a-directory.db'}",
    }
    return files


def sqlite_path(url: str) -> str:
    """The file a ``sqlite:///`` URL names."""
    return url.removeprefix("sqlite://")[1:]


class Place:
    """Where a cell runs: the live URL and schema, and the URLs of a database that is down (by
    case)."""

    def __init__(self, database: str, url: str, schema: str, down: dict[str, str]) -> None:
        self.database, self.url, self.schema, self.down = database, url, schema, down


@pytest.fixture(scope="module")
def place_of(request: pytest.FixtureRequest) -> Any:
    """The Place of a database, its server started (or its files made) at the first cell that
    needs it."""
    made: dict[str, Place] = {}

    def place(database: str) -> Place:
        if database not in made:
            if database in ("postgres", "pgbouncer-tx"):
                cluster = request.getfixturevalue("cluster")
                pooler = request.getfixturevalue("pooler")
                request.getfixturevalue("schema")
                live = f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres" if database == "postgres" else pooler.url("pooled_tx")
                made[database] = Place(database, live, "contract", {"refused": down_url()})
            elif database == "mariadb":
                server = request.getfixturevalue("mariadb")
                made[database] = Place(database, server.url_for("contract"), "contract", {"refused": dead_mysql_url()})
            else:
                files = dict(request.getfixturevalue("sqlite_files"))
                made[database] = Place(database, files.pop("live"), "main", files)
        return made[database]

    return place


def python_group(client: str, place: Place, system: str) -> dict[str, Any]:
    """What Python (sync or asyncio) does in each part of the contract for one system."""
    if client == "python-asyncio":
        return asyncio.run(python_async_group(place, system))
    url, schema = place.url, place.schema
    out: dict[str, Any] = {}
    if system == "dense":
        out["down"] = {}
        for case, u in place.down.items():
            out["down"][case] = outcome(lambda u=u: DenseIds(u, "d", schema=schema, wait_ms=WAIT_MS).next_id())
            out["down"][f"{case}-create"] = outcome(lambda u=u: create_tag(u, "d", schema=schema))
        ids = DenseIds(url, "d", schema=schema)
        ids.next_ids(5)
        stats = ids.stats()
        out["stats"] = {"fetches": stats["fetches"], "remaining": stats.get("remaining")}
        ids.close()
        out["closed"] = outcome(ids.next_id)
        out["unknown"] = outcome(lambda: DenseIds(url, "never_created", schema=schema, wait_ms=WAIT_MS).next_id())
    elif system == "serials":
        out["down"] = {}
        for case, u in place.down.items():
            out["down"][case] = outcome(lambda u=u: Serials(u, "c", FORMAT, zone=ZONE, schema=schema, wait_ms=WAIT_MS))
            out["down"][f"{case}-create"] = outcome(lambda u=u: create_serial(u, "c", FORMAT, zone=ZONE, schema=schema))
        s = Serials(url, "c", FORMAT, zone=ZONE, schema=schema)
        s.next_serial()
        stats = s.stats()
        out["stats"] = {"fetches": stats["fetches"], "remaining": stats.get("remaining")}
        s.close()
        out["closed"] = outcome(s.next_serial)
        out["unknown"] = outcome(lambda: Serials(url, "never_created", FORMAT, zone=ZONE, schema=schema))
    elif system == "dictionary":
        out["down"] = {}
        for case, u in place.down.items():
            out["down"][case] = outcome(lambda u=u: Dictionary(u, "t", schema=schema).id("a"))
            out["down"][f"{case}-create"] = outcome(lambda u=u: Dictionary(u, "t", schema=schema).create())
        d = Dictionary(url, "t", schema=schema)
        d.ids(["a", "b"])
        d.id("a")
        stats = d.stats()
        out["stats"] = {"calls": stats["id_hits"] + stats["id_misses"]}
        d.close()
        out["closed"] = outcome(lambda: d.id("c"))
        out["unknown"] = outcome(lambda: Dictionary(url, "never_created", schema=schema).id("a"))
    else:
        import importlib

        take = importlib.import_module(LEASE_MODULE[place.database]).lease
        table = f"contract_{client.replace('-', '_')}"
        out["down"] = {case: outcome(lambda u=u: take(shardid.Layout.TWITTER, u, range(0, 4), table=table)) for case, u in place.down.items()}
        before = generator_ids()
        held = take(shardid.Layout.SONYFLAKE, url, range(0, 4), table=table)
        for _ in range(5):
            held.next_id()
        out["stats"] = {"present": held.stats() is not None, "ids": counted(before, "SONYFLAKE", held.shard)}
        held.close()
        out["closed"] = outcome(held.next_id)
    return out


async def aoutcome(call: Any) -> dict[str, Any]:
    started = time.monotonic()
    try:
        await call()
    except shardid.ShardIdError as e:
        return {"code": e.code, "message": str(e), "ms": (time.monotonic() - started) * 1000, "cause": cause_of(e)}
    return {"ok": True}


async def python_async_group(place: Place, system: str) -> dict[str, Any]:
    """As python_group, on an event loop."""
    from shardid.dictionary import AsyncDictionary

    url, schema = place.url, place.schema
    out: dict[str, Any] = {}
    if system in ("serials", "dense"):

        def make(u: str, tag: str) -> Any:
            if system == "serials":
                return AsyncSerials(u, tag, FORMAT, zone=ZONE, schema=schema, wait_ms=WAIT_MS)
            return AsyncDenseIds(u, tag, schema=schema, wait_ms=WAIT_MS)

        def call(client: Any) -> Any:
            return client.next_serial() if system == "serials" else client.next_id()

        async def one(u: str, tag: str) -> None:
            async with make(u, tag) as client:
                await call(client)

        tag = "c" if system == "serials" else "d"
        out["down"] = {case: await aoutcome(lambda u=u: one(u, tag)) for case, u in place.down.items()}
        client = make(url, tag)
        for _ in range(5):
            await call(client)
        stats = client.stats()
        out["stats"] = {"fetches": stats["fetches"], "remaining": stats.get("remaining")}
        await client.close()
        out["closed"] = await aoutcome(lambda: call(client))
        out["unknown"] = await aoutcome(lambda: one(url, "never_created"))
    elif system == "dictionary":

        async def word(u: str, topic: str) -> None:
            async with AsyncDictionary(u, topic, schema=schema) as d:
                await d.id("a")

        async def create(u: str) -> None:
            async with AsyncDictionary(u, "t", schema=schema) as d:
                await d.create()

        out["down"] = {}
        for case, u in place.down.items():
            out["down"][case] = await aoutcome(lambda u=u: word(u, "t"))
            out["down"][f"{case}-create"] = await aoutcome(lambda u=u: create(u))
        d = AsyncDictionary(url, "t", schema=schema)
        await d.ids(["a", "b"])
        await d.id("a")
        stats = d.stats()
        out["stats"] = {"calls": stats["id_hits"] + stats["id_misses"]}
        await d.close()
        out["closed"] = await aoutcome(lambda: d.id("c"))
        out["unknown"] = await aoutcome(lambda: word(url, "never_created"))
    elif system == "lease":
        import importlib

        take = importlib.import_module(LEASE_MODULE[place.database]).lease_async
        table = "contract_python_asyncio"
        out["down"] = {case: await aoutcome(lambda u=u: take(shardid.Layout.TWITTER, u, range(0, 4), table=table)) for case, u in place.down.items()}
        before = generator_ids()
        held = await take(shardid.Layout.SONYFLAKE, url, range(4, 8), table=table)
        for _ in range(5):
            await held.next_id()
        out["stats"] = {"present": held.stats() is not None, "ids": counted(before, "SONYFLAKE", held.shard)}
        await held.close()
        out["closed"] = await aoutcome(held.next_id)
    return out


@pytest.fixture(scope="module")
def group(place_of: Any) -> Any:
    """The outcome of one (database, system, client) group, run once and kept for its cells."""
    done: dict[tuple[str, str, str], dict[str, Any]] = {}

    def run(database: str, system: str, client: str) -> dict[str, Any]:
        key = (database, system, client)
        if key not in done:
            place = place_of(database)
            if client in ("python", "python-asyncio"):
                done[key] = python_group(client, place, system)
            elif client == "node":
                done[key] = node("group", json.dumps({"database": database, "system": system, "url": place.url, "schema": place.schema, "down": place.down, "waitMs": WAIT_MS}))
            else:
                done[key] = rust_group(place, system)
        return done[key]

    return run


def rust_group(place: Place, system: str) -> dict[str, Any]:
    """core/examples/contract.rs: the group's calls in one process."""
    down = [f"{case}={u}" for case, u in place.down.items()]
    return rust(example("contract"), place.database, system, place.url, place.schema, *down)  # type: ignore[no-any-return]


@pytest.mark.parametrize(("database", "system", "client"), grid("down"))
def test_down_is_database_unreachable_within_the_wait(group: Any, place_of: Any, database: str, system: str, client: str) -> None:
    got = group(database, system, client)["down"]
    assert got, "no case"
    for case, seen in got.items():
        assert seen.get("code") == "DATABASE_UNREACHABLE", (case, seen)
        if database != "sqlite":
            # The system's reason, whatever the driver's words.
            assert "refused" in seen["message"].lower(), (case, seen)
        else:
            # SQLite's words and the file's path.
            path = sqlite_path(place_of(database).down[case.removesuffix("-create")])
            assert path in seen["message"], (case, seen)
        if client.startswith("python"):
            # The driver's error is the cause (sqlite3's, psycopg's, PyMySQL's or aiomysql's).
            assert seen["cause"] in {"sqlite": ("sqlite3",), "mariadb": ("pymysql", "aiomysql")}.get(database, ("psycopg",)), (case, seen)
        assert seen.get("ms", 0) < WAIT_MS + 700, (case, seen)


@pytest.mark.parametrize(("database", "system", "client"), grid("closed"))
def test_after_close_is_closed(group: Any, database: str, system: str, client: str) -> None:
    seen = group(database, system, client)["closed"]
    assert seen.get("code") == "CLOSED", seen
    what = {"dense": "DenseIds of tag d", "serials": "Serials of tag c", "dictionary": "the Dictionary of topic t"}.get(system, r"the lease on shard \d+")
    assert re.fullmatch(f"{what} was closed: make a new one", seen["message"]), seen


@pytest.mark.parametrize(("database", "system", "client"), grid("unknown"))
def test_unregistered_names_the_call_that_creates_it(group: Any, database: str, system: str, client: str) -> None:
    seen = group(database, system, client)["unknown"]
    kind, what = ("UNKNOWN_TOPIC", "topic") if system == "dictionary" else ("UNKNOWN_TAG", "tag")
    assert seen.get("code") == kind, seen
    assert seen["message"] == f"no {what} never_created: create it first ({CREATES[system, client]})", seen


@pytest.mark.parametrize(("database", "system", "client"), grid("stats"))
def test_stats_present_and_ids_counted(group: Any, database: str, system: str, client: str) -> None:
    stats = group(database, system, client)["stats"]
    if system in ("dense", "serials"):
        # A segment was fetched for the IDs (the serial), and its rest is what is left.
        assert stats["fetches"] >= 1 and stats["remaining"] is not None, stats
    elif system == "dictionary":
        # ids(["a", "b"]) then id("a"): three strings asked, each a hit or a miss.
        assert stats["calls"] == 3, stats
    else:
        assert stats["present"] and stats["ids"] == 5, stats


# --- SQLite: a URL no driver takes, a lock held past the busy timeout -----------------------------

BAD_SQLITE_URLS = ["sqlite://", "sqlite:///:memory:", "sqlite://host/x.db", "sqlite:///x.db?mode=ro"]


@pytest.mark.parametrize("bad", BAD_SQLITE_URLS, ids=["no-path", "in-memory", "host", "query"])
@pytest.mark.parametrize("client", CLIENTS)
def test_a_sqlite_url_no_driver_takes_is_invalid_argument_at_once(client: str, bad: str) -> None:
    from shardid.dictionary import AsyncDictionary
    from shardid.sqlite import lease as sqlite_lease
    from shardid.sqlite import lease_async as sqlite_lease_async

    if client == "python":
        calls = {
            "dense": lambda: DenseIds(bad, "d"),
            "dictionary": lambda: Dictionary(bad, "t"),
            "serials": lambda: Serials(bad, "c", FORMAT, zone=ZONE),
            "createTag": lambda: create_tag(bad, "d"),
            "createSerial": lambda: create_serial(bad, "c", FORMAT, zone=ZONE),
            "lease": lambda: sqlite_lease(shardid.Layout.TWITTER, bad, range(0, 4)),
        }
        got = {}
        for call, make in calls.items():
            with pytest.raises(shardid.InvalidArgumentError) as e:
                make()
            if call != "lease":
                assert e.value.argument == "conninfo", (call, e.value)
            got[call] = outcome(make)
    elif client == "python-asyncio":
        got = {
            "dense": outcome(lambda: async_dense(bad, "d")),
            "dictionary": outcome(lambda: AsyncDictionary(bad, "t")),
            "lease": outcome(lambda: sqlite_lease_async(shardid.Layout.TWITTER, bad, range(0, 4))),
        }
    elif client == "node":
        got = node("badurl", bad)
    else:
        got = rust(example("contract"), "badurl", bad)
    for call, seen in got.items():
        assert seen.get("code") == "INVALID_ARGUMENT", (client, call, seen)
        assert "sqlite:///relative/path.db or sqlite:////absolute/path.db" in seen["message"], (client, call, seen)
        assert seen.get("ms", 0) < 500, (client, call, seen)


# No client takes a busy timeout of the caller's: Python's is a module constant (set here as
# tests do), Node's and Rust's the core's default of 5 s, too long for a cell.
NO_BUSY_OPTION = {
    "node": "node: no busy-timeout option (5 s; tests/js/sqlite.test.mjs holds the lock past the dialect's own opener's)",
    "rust": "rust: no busy-timeout option (5 s; core/src/segment/sqlite.rs holds the lock past the driver's open(path, 50))",
}


@pytest.mark.parametrize("client", cells(*NO_BUSY_OPTION.items()))
def test_sqlite_a_lock_held_past_the_busy_timeout_is_the_drivers_busy_error(
    client: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from shardid import _sqlite
    from shardid.dictionary import AsyncDictionary

    url = f"sqlite:///{tmp_path / 'busy.db'}"
    create_tag(url, "orders")
    Dictionary(url, "urls").create()
    monkeypatch.setattr(_sqlite, "BUSY_TIMEOUT_MS", 100)
    holder = sqlite3.connect(sqlite_path(url), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process's writer, stuck
    try:
        # sqlite3's own error, the database's refusal of the statement (as the Rust driver
        # reports it, and as a lock wait timeout is PyMySQL's): not a lost connection.
        if client == "python":
            with Dictionary(url, "urls") as d, pytest.raises(sqlite3.OperationalError, match="locked"):
                d.id("/new")
            with DenseIds(url, "orders", wait_ms=400) as ids:
                with pytest.raises(shardid.SegmentUnavailableError, match="locked") as e:
                    ids.next_id()
                assert isinstance(e.value.__cause__, sqlite3.OperationalError)
        else:

            async def run() -> None:
                async with AsyncDictionary(url, "urls") as d:
                    with pytest.raises(sqlite3.OperationalError, match="locked"):
                        await d.id("/new")
                async with AsyncDenseIds(url, "orders", wait_ms=400) as ids:
                    with pytest.raises(shardid.SegmentUnavailableError, match="locked") as e:
                        await ids.next_id()
                    assert isinstance(e.value.__cause__, sqlite3.OperationalError)

            asyncio.run(run())
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with Dictionary(url, "urls") as d:
        assert d.id("/new") == 0  # and once the lock is gone, on
