"""``shardid status`` against the tests' server: a held lease, two tags and a topic; the rows
in the text, the ``--json`` schema, ``--check``'s exit status, a server that is down; Python's
command line, Python's API and Node's command line (the same bytes: the core renders both)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

import shardid
from shardid import status
from shardid.sql import dictionary as dictionary_sql
from shardid.sql import segments as segments_sql
from shardid.postgres import lease

ROOT = Path(__file__).resolve().parents[2]
NODE_CLI = ROOT / "bindings-node" / "cli.js"
DB = "status_db"


def python_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shardid", "status", *args], capture_output=True, text=True, timeout=60, check=False
    )


def node_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["node", str(NODE_CLI), "status", *args], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.fixture(scope="module")
def url(cluster: Any) -> Iterator[str]:
    """A database with two tags (one taken from), a topic of three strings, and a lease held on
    shard 0 of Twitter's layout for the module's tests."""
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DB}")
        conn.execute(f"CREATE DATABASE {DB}")
    url = f"postgresql://postgres@127.0.0.1:{cluster.port}/{DB}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(segments_sql("seg").encode())  # type: ignore[call-overload]
        conn.execute(dictionary_sql("dict").encode())  # type: ignore[call-overload]
        conn.execute("SELECT seg.create_tag('orders')")
        conn.execute("SELECT * FROM seg.take_segment('orders', 2000)")
        conn.execute("SELECT seg.create_tag('invoices', 100)")
        conn.execute("SELECT dict.create_topic('urls')")
        conn.execute("SELECT dict.dict_ids('urls', ARRAY['/a', '/b', '/c'])")
    # An hour's time to live: no renewal moves the expiry between two runs of a test.
    held = lease(shardid.Layout.TWITTER, url, range(0, 4), ttl_ms=3_600_000)
    yield url
    held.close()


def test_text_shows_every_row(url: str) -> None:
    done = python_cli(url)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("database  postgres (server clock ")
    lines = out.splitlines()
    lease_row = next(line for line in lines if line.lstrip().startswith("twitter"))
    assert re.search(rf"twitter\s+0\s+\S+ pid {os.getpid()}\s+\d{{4}}-\d\d-\d\dT.*\s+held$", lease_row), lease_row
    orders = next(line for line in lines if line.lstrip().startswith("orders"))
    # next 2001 after a segment of 2000 from 1 (twice the first size, the most a take grows);
    # a segment of 2000 a minute is 33.333 a second.
    assert orders.split()[:3] == ["orders", "2001", "2000"], orders
    assert orders.split()[4] == "33.333", orders
    invoices = next(line for line in lines if line.lstrip().startswith("invoices"))
    assert invoices.split()[:3] == ["invoices", "100", "0"] and invoices.split()[-1] == "never", invoices
    topic = next(line for line in lines if line.lstrip().startswith("urls"))
    assert topic.split() == ["urls", "3", "2"], topic
    layouts = [line.split()[:2] for line in lines if line.lstrip().startswith(("instagram", "twitter")) and "epoch_ms=" in line]
    assert layouts == [["instagram", "option"], ["twitter", "leases"]], out
    assert lines[-1] == "warnings: none"


def test_json_schema(url: str) -> None:
    done = python_cli(url, "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert list(doc) == ["version", "database", "now", "now_ms", "leases", "tags", "topics", "layouts", "warnings"]
    assert doc["version"] == 1 and doc["database"] == "postgres" and isinstance(doc["now_ms"], int)
    for name, table in [("leases", "shardid_leases"), ("tags", "seg.shardid_tags"), ("topics", "dict.shardid_topics")]:
        assert list(doc[name]) == ["table", "present", "rows"]
        assert doc[name]["table"] == table and doc[name]["present"] is True
    (held,) = doc["leases"]["rows"]
    types = {k: type(v).__name__ for k, v in held.items()}
    assert types == {
        "layout": "str", "signature": "str", "shard": "int", "holder": "str", "since": "str", "ceiling": "int",
        "ceiling_time": "str", "expires": "str", "session": "bool", "state": "str",
    }
    assert (held["layout"], held["shard"], held["state"]) == ("twitter", 0, "held")
    assert held["holder"] == f"{socket.gethostname()} pid {os.getpid()}"
    assert held["expires"] > doc["now"] > held["since"]
    invoices, orders = doc["tags"]["rows"]
    assert {k: type(v).__name__ for k, v in orders.items()} == {
        "tag": "str", "next": "str", "segment": "int", "stride": "int", "last_take": "str",
        "per_second": "float", "years_left": "float", "years_left_text": "str", "runs_out": "NoneType",
    }
    assert (orders["tag"], orders["next"], orders["segment"], orders["per_second"]) == ("orders", "2001", 2000, 33.333)
    # (2^63 - 2002) numbers at 33.333 a second: about 8.8 billion years, after the year 9999.
    assert 8.7e9 < orders["years_left"] < 8.8e9
    # As a person reads them (the text's column, the Django admin's): capped, not 8768310738.8.
    assert (orders["years_left_text"], invoices["years_left_text"]) == ("> 1,000", "never")
    assert (invoices["tag"], invoices["next"], invoices["per_second"], invoices["years_left"]) == ("invoices", "100", 0, None)
    assert doc["topics"]["rows"] == [{"topic": "urls", "strings": 3, "last_id": "2", "dropped": False}]
    assert [(x["name"], x["source"], x["warning"]) for x in doc["layouts"]] == [
        ("instagram", "option", False),
        ("twitter", "leases", False),
    ]
    assert doc["layouts"][0]["runs_out_ms"] == shardid.Layout.INSTAGRAM.expires_at_ms
    assert doc["warnings"] == []


def test_check_exit_status(url: str) -> None:
    assert python_cli(url, "--check").returncode == 0
    # A custom layout of 33 bits of milliseconds from now runs out in 99 days.
    epoch = int(time.time() * 1000)
    done = python_cli(url, "--check", "--epoch-ms", str(epoch), "--bits", "33,10,20")
    assert done.returncode == 1, done.stderr
    assert re.search(r"^warning: layout custom runs out on \S+, in 0\.3 years$", done.stdout, re.M), done.stdout
    # Without --check the same warning exits 0.
    assert python_cli(url, "--epoch-ms", str(epoch), "--bits", "33,10,20").returncode == 0


def test_absent_tables_are_reported_absent(cluster: Any) -> None:
    done = python_cli(f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres", "--schema", "nothing_here", "--table", "no_leases")
    assert done.returncode == 0, done.stderr
    assert "leases (no_leases): absent (not installed)" in done.stdout
    assert "tags (nothing_here.shardid_tags): absent (not installed)" in done.stdout
    assert "topics (nothing_here.shardid_topics): absent (not installed)" in done.stdout


def test_a_server_that_is_down_or_refuses_is_exit_2_with_one_line(cluster: Any) -> None:
    closed = socket_port()
    for cli in (python_cli, node_cli):
        done = cli(f"postgresql://postgres@127.0.0.1:{closed}/postgres")
        assert done.returncode == 2 and done.stdout == "", done
        assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"shardid: status: 127.0.0.1:{closed}/postgres: "), done.stderr
        assert "refused" in done.stderr.lower(), done.stderr
        done = cli(f"postgresql://postgres:secret@127.0.0.1:{cluster.port}/no_such_db")
        assert done.returncode == 2 and "no_such_db" in done.stderr and "does not exist" in done.stderr, done.stderr
        assert "secret" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
        done = cli("http://example.invalid/")
        assert done.returncode == 2 and done.stderr == 'shardid: status: "http" is not a database URL: postgresql://, postgres://, mysql://, mariadb:// or sqlite:///\n'


def socket_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def masked(text: str) -> str:
    """The report without the server's clock, which moves between two runs."""
    text = re.sub(r"server clock [^)]*", "server clock ...", text)
    return re.sub(r'"now":"[^"]*","now_ms":\d+', '"now":...', text)


def test_node_prints_the_same_bytes(url: str) -> None:
    for args in ([url], [url, "--json"]):
        py, node = python_cli(*args), node_cli(*args)
        assert (py.returncode, node.returncode) == (0, 0), (py.stderr, node.stderr)
        assert masked(node.stdout) == masked(py.stdout)
        assert masked(node.stdout) != node.stdout  # the mask took the clock, nothing else


def test_python_api(url: str, cluster: Any) -> None:
    report = status.read(url)
    assert report.database == "postgres" and isinstance(report.now, datetime)
    assert [(x.layout, x.shard, x.holder, x.state) for x in report.leases.rows] == [
        ("twitter", 0, f"{socket.gethostname()} pid {os.getpid()}", "held")
    ]
    assert [(t.tag, t.next, t.segment, t.years_left is None, t.years_left_text) for t in report.tags.rows] == [
        ("invoices", 100, 0, True, "never"),
        ("orders", 2001, 2000, False, "> 1,000"),
    ]
    assert [(t.topic, t.strings, t.last_id) for t in report.topics.rows] == [("urls", 3, 2)]
    assert report.warnings == ()
    assert masked(report.text) == masked(python_cli(url).stdout)
    # On a connection the caller has (left open), with a layout that runs out soon.
    near = shardid.Layout(epoch_ms=int(time.time() * 1000), time_bits=33, shard_bits=10, sequence_bits=20)
    with psycopg.connect(url, autocommit=True) as conn:
        report = status.read(conn, layout=near)
        assert not conn.closed
    assert report.layouts[0].warning and report.layouts[0].name == "custom"
    assert len(report.warnings) == 1
    with pytest.raises(shardid.DatabaseUnreachableError):
        status.read(f"postgresql://postgres@127.0.0.1:{socket_port()}/postgres")
    with pytest.raises(shardid.InvalidArgumentError):
        status.read(url, schema="Not-A-Name")


def test_libpq_strings_are_pythons_and_node_says_so(cluster: Any) -> None:
    done = python_cli(cluster.dsn, "--schema", "nothing_here")
    assert done.returncode == 0 and done.stdout.startswith("database  postgres"), done.stderr
    done = node_cli(cluster.dsn)
    assert done.returncode == 2 and "is not a postgresql:// URL" in done.stderr and done.stderr.count("\n") == 1, done
