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
    # The lease table as status found it: where the search path finds it, named by its schema.
    for name, table in [("leases", "public.shardid_leases"), ("tags", "seg.shardid_tags"), ("topics", "dict.shardid_topics")]:
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


# The lease table's schema (issue 60, finding 4): status finds the lease table as the lease does,
# named by the lease's own schema option, and never reads another role's table found through
# search_path as the application's.
SCHEMA_DB = "status_lease_schema"


@pytest.fixture(scope="module")
def app_url(cluster: Any) -> Iterator[str]:
    """A database as PostgreSQL 14 made it (``CREATE`` on ``public`` for every role), where the
    application's role ``status_app`` holds a lease in its schema ``app`` (shard 0 of Twitter's
    layout, for the module's tests) and another role, ``status_other``, made a
    ``public.shardid_leases`` first, with a row of its own (holder ``intruder``)."""
    with psycopg.connect(cluster.dsn, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {SCHEMA_DB}")
        admin.execute("CREATE ROLE status_app LOGIN")
        admin.execute("CREATE ROLE status_other LOGIN")
    base = f"postgresql://postgres@127.0.0.1:{cluster.port}/{SCHEMA_DB}"
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute("GRANT CREATE ON SCHEMA public TO PUBLIC")  # PostgreSQL <= 14's default
        admin.execute("CREATE SCHEMA app AUTHORIZATION status_app")
    with psycopg.connect(base.replace("postgres@", "status_other@"), autocommit=True) as other:
        other.execute(
            "CREATE TABLE public.shardid_leases (layout text NOT NULL, shard bigint NOT NULL, "
            "ceiling bigint NOT NULL DEFAULT 0, holder text, taken_at timestamptz, token text, "
            "expires_at timestamptz, tli integer, sysid bigint, PRIMARY KEY (layout, shard))"
        )
        other.execute(
            "INSERT INTO public.shardid_leases (layout, shard, ceiling, holder, taken_at, expires_at) "
            "VALUES ('x', 7, 0, 'intruder', now(), now() + interval '1 hour')"
        )
        other.execute("GRANT SELECT ON public.shardid_leases TO PUBLIC")
    url = base.replace("postgres@", "status_app@")
    held = lease(shardid.Layout.TWITTER, url, range(0, 4), schema="app", ttl_ms=3_600_000)
    yield url
    held.close()


def node_status_api(url: str, options: dict[str, Any]) -> dict[str, Any]:
    """Node's ``status.read(url, options)``: the lease section as the API returns it."""
    script = (
        f"require({json.dumps(str(ROOT / 'bindings-node' / 'status.js'))}).read(process.argv[1], JSON.parse(process.argv[2]))"
        ".then((r) => console.log(JSON.stringify({ table: r.leases.table, present: r.leases.present, "
        "notRead: r.leases.notRead, holders: r.leases.rows.map((x) => x.holder), warnings: r.warnings })))"
    )
    done = subprocess.run(["node", "-e", script, url, json.dumps(options)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_a_lease_in_a_named_schema_shows_with_the_lease_schema(app_url: str) -> None:
    mine = f"{socket.gethostname()} pid {os.getpid()}"
    report = status.read(app_url, lease_schema="app")
    assert report.leases.table == "app.shardid_leases" and report.leases.present and report.leases.not_read is None
    assert [(x.layout, x.shard, x.holder, x.state) for x in report.leases.rows] == [("twitter", 0, mine, "held")]
    assert "intruder" not in report.text
    # The command line, Python's and Node's (the same bytes), and restored, which takes it too.
    py = python_cli(app_url, "--lease-schema", "app")
    assert py.returncode == 0, py.stderr
    assert "leases (app.shardid_leases)\n" in py.stdout and mine in py.stdout and "intruder" not in py.stdout
    node = node_cli(app_url, "--lease-schema", "app")
    assert node.returncode == 0 and masked(node.stdout) == masked(py.stdout), node.stderr
    restored = subprocess.run(
        [sys.executable, "-m", "shardid", "restored", app_url, "--lease-schema", "app"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert restored.returncode == 0 and "leases (app.shardid_leases)\n" in restored.stdout, restored.stderr
    assert node_status_api(app_url, {"leaseSchema": "app"}) == {
        "table": "app.shardid_leases", "present": True, "notRead": None, "holders": [mine], "warnings": [],
    }  # fmt: skip
    # A name that is no plain identifier, as the lease's schema.
    with pytest.raises(shardid.InvalidArgumentError) as info:
        status.read(app_url, lease_schema="app; drop table x")
    assert info.value.argument == "lease_schema"
    assert python_cli(app_url, "--lease-schema", "App").returncode == 2


def test_another_roles_table_found_through_search_path_is_not_read_as_the_applications(app_url: str) -> None:
    # No schema named: the search path finds public.shardid_leases, which status_other owns and
    # a lease run as status_app refuses; status says whose it is and shows none of its rows.
    report = status.read(app_url)
    assert report.leases.table == "public.shardid_leases"
    assert not report.leases.present and report.leases.rows == ()
    why = report.leases.not_read
    assert why is not None and why.startswith(
        "public.shardid_leases, found through search_path, is owned by role status_other, which user "
        "status_app neither is nor is a member of"
    ), why
    assert why in report.warnings and "intruder" not in report.text
    py = python_cli(app_url)
    assert py.returncode == 0, py.stderr
    assert f"leases (public.shardid_leases): not read: {why}\n" in py.stdout and "intruder" not in py.stdout
    node = node_cli(app_url)
    assert node.returncode == 0 and masked(node.stdout) == masked(py.stdout), node.stderr
    assert python_cli(app_url, "--check").returncode == 1  # a warning
    doc = json.loads(python_cli(app_url, "--json").stdout)
    assert doc["leases"] == {"table": "public.shardid_leases", "present": False, "not_read": why, "rows": []}
    api = node_status_api(app_url, {})
    assert (api["table"], api["present"], api["notRead"], api["holders"]) == ("public.shardid_leases", False, why, [])
    # Named, a table is read whoever owns it (an operator's role may read the application's),
    # and the report names it.
    named = status.read(app_url, lease_schema="public")
    assert named.leases.table == "public.shardid_leases" and [x.holder for x in named.leases.rows] == ["intruder"]


def test_django_admin_status_reads_the_lease_schema_setting(app_url: str, cluster: Any, tmp_path: Path) -> None:
    from django_project import database, django_run, status_project

    status_project(tmp_path, database("postgresql", cluster.port, SCHEMA_DB, USER="status_app"), "seg", "dict")
    with (tmp_path / "settings.py").open("a") as f:
        f.write("SHARDID = {'layout': 'instagram', 'lease': {'shards': [0, 64], 'schema': 'app'}}\n")
    page = (
        "import django, json; django.setup()\n"
        "from shardid.django.status import page\n"
        "print(json.dumps([[s.where, s.rows, s.problem] for s in page('leases')['sections']]))\n"
    )
    (section,) = json.loads(django_run(tmp_path, "-c", page).stdout.strip().splitlines()[-1])
    where, rows, problem = section
    assert where == "database 'default': app.shardid_leases" and problem is None, section
    assert [row[:4] for row in rows] == [["0", "twitter", "held", f"{socket.gethostname()} pid {os.getpid()}"]], rows
    # Without the setting, the other role's table is not shown as the project's.
    with (tmp_path / "settings.py").open("a") as f:
        f.write("SHARDID = {'layout': 'instagram', 'lease': {'shards': [0, 64]}}\n")
    (section,) = json.loads(django_run(tmp_path, "-c", page).stdout.strip().splitlines()[-1])
    where, rows, problem = section
    assert rows == [] and problem.startswith("not read: public.shardid_leases, found through search_path, is owned by role status_other"), section
