"""``shardid status`` against the tests' MariaDB: a held lease, two tags and a topic; the rows,
the ``--json`` schema, ``--check``'s exit status, a server that is down; Python's command line
and API and Node's command line print the same bytes (the core renders both)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import install, open_conn

import shardid
from shardid import status
from shardid.sql import dictionary as dictionary_sql
from shardid.sql import segments as segments_sql
from shardid.mysql import lease

ROOT = Path(__file__).resolve().parents[2]
NODE_CLI = ROOT / "bindings-node" / "cli.js"


def cli(program: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "shardid"] if program == "python" else ["node", str(NODE_CLI)]
    return subprocess.run([*command, "status", *args], capture_output=True, text=True, timeout=60, check=False)


@pytest.fixture(scope="module")
def url(server: Any) -> Iterator[str]:
    """Database status_db (the leases), seg_status (two tags, one taken from) and dict_status
    (a topic of three strings), and a lease held on shard 0 of Twitter's layout."""
    conn = open_conn(server)
    with conn.cursor() as cur:
        for db in ("status_db", "seg_status", "dict_status"):
            cur.execute(f"DROP DATABASE IF EXISTS {db}")
        cur.execute("CREATE DATABASE status_db")
        install(conn, segments_sql("seg_status", dialect="mariadb"))
        install(conn, dictionary_sql("dict_status", dialect="mariadb"))
        cur.execute("SELECT seg_status.create_tag('orders')")
        # A take of 5,000 as the clients' statement writes it: next, step, the time of the take.
        cur.execute("UPDATE seg_status.shardid_tags SET next = next + 5000, step = 5000, updated_at = CURRENT_TIMESTAMP(6) WHERE tag = 'orders'")
        cur.execute("SELECT seg_status.create_tag_from('invoices', 100)")
        cur.execute("SELECT dict_status.create_topic('urls')")
        for value in ("/a", "/b", "/c"):
            cur.execute("SELECT dict_status.dict_id('urls', %s)", (value,))
    conn.close()
    url = server.url_for("status_db")
    held = lease(shardid.Layout.TWITTER, url, range(0, 4), ttl_ms=3_600_000)
    yield url
    held.close()


ARGS = ("--segments-schema", "seg_status", "--dictionary-schema", "dict_status")


def test_text_json_and_check(url: str) -> None:
    done = cli("python", url, *ARGS)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("database  mysql (server clock ")
    lease_row = next(line for line in lines if line.lstrip().startswith("twitter") and " pid " in line)
    assert re.search(rf"twitter\s+0\s+\S+ pid {os.getpid()}\s+\d{{4}}-.*\s+held$", lease_row), lease_row
    orders = next(line for line in lines if line.lstrip().startswith("orders"))
    assert orders.split()[:3] == ["orders", "5001", "5000"] and orders.split()[4] == "83.333", orders
    topic = next(line for line in lines if line.lstrip().startswith("urls"))
    assert topic.split() == ["urls", "3", "2"], topic
    assert lines[-1] == "warnings: none"

    doc = json.loads(cli("python", url, *ARGS, "--json").stdout)
    assert doc["database"] == "mysql"
    assert [doc[s]["table"] for s in ("leases", "tags", "topics")] == [
        "status_db.shardid_leases", "seg_status.shardid_tags", "dict_status.shardid_topics",
    ]  # fmt: skip
    (held,) = doc["leases"]["rows"]
    assert (held["layout"], held["shard"], held["state"], held["session"]) == ("twitter", 0, "held", False)
    assert held["holder"] == f"{socket.gethostname()} pid {os.getpid()}"
    assert held["expires"] > doc["now"] > held["since"]
    assert [(t["tag"], t["next"], t["segment"], t["stride"], t["per_second"]) for t in doc["tags"]["rows"]] == [
        ("invoices", "100", 0, 1, 0),
        ("orders", "5001", 5000, 1, 83.333),
    ]
    assert doc["topics"]["rows"] == [{"topic": "urls", "strings": 3, "last_id": "2", "dropped": False}]

    assert cli("python", url, *ARGS, "--check").returncode == 0
    soon = ("--epoch-ms", str(int(time.time() * 1000)), "--bits", "33,10,20")
    done = cli("python", url, *ARGS, "--check", *soon)
    assert done.returncode == 1 and "warning: layout custom runs out on " in done.stdout, done


def test_the_lease_schema_names_the_leases_database(url: str, server: Any) -> None:
    # The lease's schema option (its database on MySQL): from a connection to another database
    # the lease table of status_db is read by name; without it the URL's database has none.
    other = server.url_for("mysql")
    done = cli("python", other, "--schema", "nothing_here", "--lease-schema", "status_db")
    assert done.returncode == 0, done.stderr
    assert "leases (status_db.shardid_leases)\n" in done.stdout
    assert f"{socket.gethostname()} pid {os.getpid()}" in done.stdout
    done = cli("python", other, "--schema", "nothing_here")
    assert "leases (shardid_leases): absent (not installed)" in done.stdout, done.stdout


def test_absent_tables(server: Any) -> None:
    done = cli("python", server.url_for("mysql"), "--schema", "nothing_here")
    assert done.returncode == 0, done.stderr
    for section in ("leases (shardid_leases)", "tags (nothing_here.shardid_tags)", "topics (nothing_here.shardid_topics)"):
        assert f"{section}: absent (not installed)" in done.stdout


def masked(text: str) -> str:
    text = re.sub(r"server clock [^)]*", "server clock ...", text)
    return re.sub(r'"now":"[^"]*","now_ms":\d+', '"now":...', text)


def test_node_prints_the_same_bytes_and_the_api_reads_them(url: str, server: Any) -> None:
    for args in ((url, *ARGS), (url, *ARGS, "--json")):
        py, node = cli("python", *args), cli("node", *args)
        assert (py.returncode, node.returncode) == (0, 0), (py.stderr, node.stderr)
        assert masked(node.stdout) == masked(py.stdout) != py.stdout
    report = status.read(url, segments_schema="seg_status", dictionary_schema="dict_status")
    assert report.database == "mysql"
    assert [(t.tag, t.next) for t in report.tags.rows] == [("invoices", 100), ("orders", 5001)]
    assert [(t.topic, t.strings, t.last_id) for t in report.topics.rows] == [("urls", 3, 2)]
    assert masked(report.text) == masked(cli("python", url, *ARGS).stdout)
    # On a PyMySQL connection the caller has (left open).
    conn = open_conn(server, database="status_db")
    try:
        again = status.read(conn, segments_schema="seg_status", dictionary_schema="dict_status")
        assert conn.open
    finally:
        conn.close()
    assert again.database == "mysql" and masked(again.text) == masked(report.text)


def test_down_refused_and_bad_urls_are_exit_2(server: Any) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    for program in ("python", "node"):
        done = cli(program, f"mysql://root@127.0.0.1:{closed}/x")
        assert done.returncode == 2 and done.stdout == "", done
        assert done.stderr.startswith(f"shardid: status: 127.0.0.1:{closed}/x: ") and done.stderr.count("\n") == 1, done.stderr
        assert "refused" in done.stderr.lower() or "can't connect" in done.stderr.lower(), done.stderr
        done = cli(program, server.url_for("status_db", user="nobody", password="wrong"))
        assert done.returncode == 2 and "denied" in done.stderr.lower(), done.stderr
        assert "wrong" not in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_a_serial_period_narrower_than_a_failovers_skip_is_warned_about(server: Any, url: str) -> None:
    """Issue 42 on the MySQL family: each tag's recorded rate and the width of the serial whose
    period it is are read, and a current period with fewer numbers left than one failover would
    skip is a warning, as on PostgreSQL (the skip times the row's stride, as the server's)."""
    conn = open_conn(server)
    with conn.cursor() as cur:
        cur.execute("DROP DATABASE IF EXISTS seg_serial")
        install(conn, segments_sql("seg_serial", dialect="mariadb"))
        # The columns status reads of the registrations (the whole table is the Rust serial
        # driver's, shardid::sql::mysql::MysqlSerials; their tags are text, the tags' bytes).
        cur.execute(
            "CREATE TABLE seg_serial.shardid_serials (tag VARCHAR(189) NOT NULL PRIMARY KEY, width INT NOT NULL) "
            "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
        )
        cur.execute("INSERT INTO seg_serial.shardid_serials (tag, width) VALUES ('narrow', 3), ('wide', 9)")
        for tag in ("dense", "narrow@2026-11-27", "narrow@2026-11-28", "wide@2026-11-28", "twice@2026-11-28"):
            cur.execute("SELECT seg_serial.create_tag(%s)", (tag,))
        # As the takes record them: 900 numbers taken, segments of 20, 10 a second at most.
        cur.execute(
            "UPDATE seg_serial.shardid_tags SET next = 901, step = 20, rate = 10, window_n = 0, "
            "window_ms = written_ms WHERE tag <> 'dense'"
        )
        # A ticket server's period of two servers: the server skips twice as far (560), which
        # its 599 numbers left cover.
        cur.execute("INSERT INTO seg_serial.shardid_serials (tag, width) VALUES ('twice', 3)")
        cur.execute("UPDATE seg_serial.shardid_tags SET next = 401, stride = 2 WHERE tag = 'twice@2026-11-28'")
    conn.close()
    done = cli("python", url, "--segments-schema", "seg_serial", "--dictionary-schema", "dict_status", "--check")
    assert done.returncode == 1, done
    warnings = [line for line in done.stdout.splitlines() if line.startswith("warning: serial")]
    assert warnings == [
        "warning: serial period narrow@2026-11-28 has 99 numbers left, fewer than a failover skips now (280): "
        "after one, its serials fail with SERIAL_OVERFLOW until the next period",
    ], done.stdout
    # Two servers: 280 per ticket server, twice; 599 left are enough, 559 would not be.
    conn = open_conn(server)
    with conn.cursor() as cur:
        cur.execute("UPDATE seg_serial.shardid_tags SET next = 441 WHERE tag = 'twice@2026-11-28'")
    conn.close()
    report = status.read(url, segments_schema="seg_serial", dictionary_schema="dict_status")
    assert [w.split(" has ")[0] for w in report.warnings if w.startswith("serial")] == [
        "serial period narrow@2026-11-28", "serial period twice@2026-11-28",
    ]  # fmt: skip
    assert "twice@2026-11-28 has 559 numbers left, fewer than a failover skips now (560)" in report.text
