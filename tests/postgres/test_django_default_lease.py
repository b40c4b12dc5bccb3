"""Django's default on PostgreSQL: no shard in the settings, and every worker of a real gunicorn
(pre-fork, the app loaded in the master) leases a shard of its own through the project's
database. The issue behind it measured 158 of 2,400 POSTs failing with duplicate keys under
the README's old first setting, a fixed shard; here all 2,400 succeed, with several shards,
none of them the database's own. Django's test runner drops its test database at the end with
the lease's connection released first."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django_server import gunicorn

from shardid import Layout
from django_project import database, django_app, django_run, migrate_and_check, migration, served_settings

pytest.importorskip("django")

MODELS = """
from django.db import models
from shardid.django import NextId, ShardIdField

class Event(models.Model):
    id = ShardIdField(primary_key=True, db_default=NextId("insta"))
    name = models.CharField(max_length=100)
"""

# The database's next_id() on the last shard, which the default lease leaves free.
INSTALL = migration('InstallPostgres(layout="instagram", shard=8191, schema="insta")')

URLS = """
from django.http import JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from events.models import Event

@csrf_exempt
def create(request):
    event = Event.objects.create(name=request.body.decode())
    return JsonResponse({"id": str(event.id), "pid": __import__("os").getpid()})

urlpatterns = [path("events", create)]
"""

TESTS = """
from django.test import TestCase
from shardid import Layout
from events.models import Event

class EventTest(TestCase):
    def test_ids_come_from_a_leased_shard(self):
        event = Event.objects.create(name="in a test")
        self.assertLess(Layout.INSTAGRAM.decode(event.id).shard, 8191)
"""


def project(tmp_path: Path, port: int, name: str) -> Path:
    # DISABLE_SERVER_SIDE_CURSORS: as Django advises behind a pooler in transaction mode.
    entry = database("postgresql", port, name, DISABLE_SERVER_SIDE_CURSORS=True)
    (tmp_path / "settings.py").write_text(served_settings(entry, ["events"], 'SHARDID = {"layout": "instagram"}\n'))
    (tmp_path / "urls.py").write_text(URLS)
    django_app(tmp_path, "events", {"models.py": MODELS, "tests.py": TESTS, "migrations/0001_install_shardid.py": INSTALL})
    return tmp_path


def run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return django_run(project, *args, check=False)


@pytest.mark.parametrize("pool", ["direct", "tx", "session"])
def test_gunicorn_workers_lease_their_own_shards(cluster: Any, pooler: Any, conn: psycopg.Connection[Any], pool: str, tmp_path: Path) -> None:
    # Directly, and through PgBouncer in transaction mode (where the old session lease handed
    # out duplicates: 448 to 1,951 POSTs of 2,000 failed) and in session mode.
    if pool == "direct":
        conn.execute("CREATE DATABASE django_default_lease")
        dbname, port, name = "django_default_lease", cluster.port, "django_default_lease"
    else:
        dbname = f"dj_{pool}"
        port, name = pooler.port, f"{dbname}_{pool}"
    app = project(tmp_path, port, name)
    # `check` passes with no shard set at all: nothing to warn about.
    migrate_and_check(app, "events")

    with gunicorn(app, workers=4) as server, ThreadPoolExecutor(8) as executor:
        answers = list(executor.map(lambda i: server.post("/events", f"post {i}"), range(2400)))
    out = server.output
    assert "Traceback" not in out and "IntegrityError" not in out, out

    ids = [int(a["id"]) for a in answers]
    assert len(set(ids)) == 2400
    shard_of = {pid: {Layout.INSTAGRAM.decode(int(a["id"])).shard for a in answers if a["pid"] == pid} for pid in {a["pid"] for a in answers}}
    # Each of the 4 workers holds one shard, and no two workers the same one.
    assert len(shard_of) == 4, shard_of
    assert all(len(shards) == 1 for shards in shard_of.values()), shard_of
    shards = [next(iter(s)) for s in shard_of.values()]
    assert len(set(shards)) == len(shards) and 8191 not in shards, shard_of

    dsn = cluster.dsn.replace("dbname=postgres", f"dbname={dbname}")
    with psycopg.connect(dsn, autocommit=True) as db:
        assert db.execute("SELECT count(*), count(DISTINCT id) FROM events_event").fetchone() == (2400, 2400)
        # Rows the database inserts itself take its own shard.
        raw = db.execute("INSERT INTO events_event (name) VALUES ('raw') RETURNING id").fetchone()[0]  # type: ignore[index]
        assert Layout.INSTAGRAM.decode(raw).shard == 8191
        # The ceilings the workers recorded, per shard, in the project's database; the workers
        # are gone and released their leases, and none used an advisory lock.
        recorded = {row[0] for row in db.execute("SELECT shard FROM shardid_leases WHERE ceiling > 0 AND token IS NULL")}
        assert set(shards) <= recorded, (shards, recorded)
        held = db.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").fetchone()[0]  # type: ignore[index]
        assert held == 0


def test_django_test_runner_drops_its_database_with_a_lease_open(cluster: Any, conn: psycopg.Connection[Any], tmp_path: Path) -> None:
    conn.execute("CREATE DATABASE django_runner")
    app = project(tmp_path, cluster.port, "django_runner")
    done = run(app, "-m", "django", "makemigrations", "events")
    assert done.returncode == 0, done.stderr
    # The test makes an ID, which leases a shard on a connection to test_django_runner; the
    # runner then drops that database, which PostgreSQL refuses while a session is connected.
    done = run(app, "-m", "django", "test", "events", "-v", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Ran 1 test" in done.stderr and "OK" in done.stderr, done.stderr
    assert "Destroying test database" in done.stderr and "Got an error" not in done.stderr, done.stderr
    exists = conn.execute("SELECT count(*) FROM pg_database WHERE datname = 'test_django_runner'").fetchone()[0]  # type: ignore[index]
    assert exists == 0
