"""One behaviour contract for the database clients (issue 41): the same failure is the same error
in every client. Each cell runs one client — Python sync, Python asyncio, Node, Rust — on one
database — PostgreSQL direct, PostgreSQL through PgBouncer in transaction mode — and asserts:

- a server that is down is ``DATABASE_UNREACHABLE``, within the client's wait;
- after ``close()`` a call is ``CLOSED``;
- an unregistered serial tag names the call that creates it in that language;
- the server's own message survives into the error (Rust's driver errors included);
- serials behind a transaction pooler: four Rust ``Serials`` at once through a pool of 3 server
  connections all connect, and hand out distinct serials (the Rust client sent named prepared
  statements, which PgBouncer runs on whichever server session is free).

A cell that cannot apply is skipped, and says why in its id."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

import shardid
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
