"""Django on MariaDB through Django's own MySQL backend over PyMySQL (``pymysql.install_as_MySQLdb()``):
the default lease with no shard in the settings (no shardid.E001), DenseIdField, dictionary() in
the view's transaction, and the install operations rendering MariaDB's SQL from the connection.
A real gunicorn (pre-fork, 4 workers, the app loaded in the master) answers POSTs from 8 clients
while one worker is killed with SIGKILL: every POST is answered, no duplicate key anywhere, the
killed worker's replacement leases a shard of its own, and the dictionary's IDs stay exactly
0..n-1. Then the migrations are reversed and shardid's routines and tables are gone."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import textwrap
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import one, rows
from django_server import gunicorn

from shardid import Layout
from django_project import database, django_app, django_run, migrate_and_check, migration, served_settings

pytest.importorskip("django")

MODELS = """
from django.db import models
from shardid.django import DenseIdField, ShardIdField

class Event(models.Model):
    id = ShardIdField(primary_key=True)
    name = models.CharField(max_length=100, unique=True)
    number = DenseIdField(tag="orders", unique=True)
    tag_id = models.BigIntegerField()
"""

# The database's own next_id() on the last shard (which the default lease leaves free), segments
# and the dictionary: each operation renders MariaDB's SQL, the connection being MariaDB.
INSTALL = migration(
    'InstallPostgres(layout="instagram", shard=8191, schema="insta")',
    'InstallSegments(schema="seg", tags=["orders"])',
    'InstallDictionary(schema="dict", topics=["tags"])',
)

URLS = """
import os
from django.db import transaction
from django.http import JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from shardid.django import dictionary
from events.models import Event

@csrf_exempt
def create(request):
    name = request.body.decode()
    with transaction.atomic():
        # A new tag every few posts, the rest seen before: new strings are numbered inside
        # the view's transaction, with the topic's row locked.
        tag_id = dictionary("tags").id("tag " + str(int(name.split()[1]) // 3))
        event = Event.objects.create(name=name, tag_id=tag_id)
    return JsonResponse({"id": str(event.id), "number": event.number, "tag_id": tag_id, "pid": os.getpid()})

urlpatterns = [path("events", create)]
"""

POSTS = 480


def project(tmp_path: Path, port: int, name: str = "django_mysql") -> Path:
    (tmp_path / "settings.py").write_text(served_settings(database("mysql", port, name), ["shardid.django", "events"], 'SHARDID = {"layout": "instagram"}\n'))
    (tmp_path / "urls.py").write_text(URLS)
    django_app(tmp_path, "events", {"models.py": MODELS, "migrations/0001_install_shardid.py": INSTALL})
    return tmp_path


def run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return django_run(project, *args, check=False)


def post(port: int, body: str) -> tuple[dict[str, Any], int]:
    """POSTs until answered: a request the killed worker had accepted is reset, and the client
    sends it again (the name is unique, so one sent twice that had committed fails loudly)."""
    for attempt in range(1, 6):
        request = urllib.request.Request(f"http://127.0.0.1:{port}/events", data=body.encode(), method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                assert response.status == 200
                return json.loads(response.read()), attempt
        except urllib.error.HTTPError:
            raise
        except (ConnectionError, http.client.RemoteDisconnected, urllib.error.URLError):
            time.sleep(0.05)
    raise AssertionError(f"{body!r} not answered in 5 attempts")


def test_gunicorn_workers_on_mariadb_with_a_worker_killed(server: Any, conn: Any, tmp_path: Path) -> None:
    conn.cursor().execute("CREATE DATABASE django_mysql")
    app = project(tmp_path, server.port)
    # No shard set and a MySQL database: the default lease is kept there, nothing to report.
    assert "no issues" in migrate_and_check(app, "events")
    # The operations installed MariaDB's routines.
    routines = {(db, name) for db, name in rows(conn, "SELECT ROUTINE_SCHEMA, ROUTINE_NAME FROM information_schema.ROUTINES")}
    assert {("insta", "next_id"), ("seg", "create_tag"), ("seg", "next_dense_id"), ("dict", "create_topic")} <= routines

    killed: list[int] = []
    answered = threading.Semaphore(0)

    def post_and_count(port: int, i: int) -> tuple[dict[str, Any], int]:
        answer = post(port, f"post {i}")
        answered.release()
        return answer

    with gunicorn(app, workers=4) as web, ThreadPoolExecutor(8) as executor:
        futures = [executor.submit(post_and_count, web.port, i) for i in range(POSTS)]
        # A third of the way in, SIGKILL the worker that answered last: its lease is not
        # released, and gunicorn starts another worker in its place.
        for _ in range(POSTS // 3):
            answered.acquire(timeout=120)
        victim = next(f.result()[0]["pid"] for f in reversed(futures) if f.done())
        os.kill(victim, signal.SIGKILL)
        killed.append(victim)
        answers = [f.result() for f in futures]
    out = web.output
    assert "IntegrityError" not in out and "Duplicate entry" not in out, out

    # Every POST answered (some after a retry: the ones the killed worker had), with an ID.
    assert len(answers) == POSTS
    ids = [int(a["id"]) for a, _ in answers]
    assert len(set(ids)) == POSTS
    shard_of: dict[int, set[int]] = {}
    for a, _ in answers:
        shard_of.setdefault(a["pid"], set()).add(Layout.INSTAGRAM.decode(int(a["id"])).shard)
    # The killed worker and its replacement among them: 5 workers, each on one shard of its own
    # (the killed worker's lease had not expired, so the replacement took another), none the
    # database's.
    assert killed[0] in shard_of and len(shard_of) == 5, shard_of
    assert all(len(s) == 1 for s in shard_of.values()), shard_of
    shards = [next(iter(s)) for s in shard_of.values()]
    assert len(set(shards)) == 5 and 8191 not in shards, shard_of

    db = "django_mysql"
    assert rows(conn, f"SELECT count(*), count(DISTINCT id), count(DISTINCT number), count(DISTINCT name) FROM {db}.events_event") == [(POSTS, POSTS, POSTS, POSTS)]
    # Dense numbers per worker increase; the dictionary's tags are exactly 0..n-1, one per
    # string, and every event carries its tag's ID.
    tags = dict(rows(conn, "SELECT s.value, s.id FROM dict.shardid_strings s JOIN dict.shardid_topics t USING (topic_id) WHERE t.topic = 'tags'"))
    assert sorted(tags.values()) == list(range(POSTS // 3)), len(tags)
    for name, tag_id in rows(conn, f"SELECT name, tag_id FROM {db}.events_event"):
        assert tags[f"tag {int(name.split()[1]) // 3}".encode()] == tag_id, name
    # Rows the database numbers itself take its own shard.
    assert Layout.INSTAGRAM.decode(one(conn, "SELECT insta.next_id()")).shard == 8191
    # The workers recorded their ceilings in the project's database.
    recorded = {r[0] for r in rows(conn, f"SELECT shard FROM {db}.shardid_leases WHERE ceiling > 0")}
    assert set(shards) <= recorded, (shards, recorded)

    # After a restore nothing else sees: manage.py shardid_restored marks the tag and the topic
    # (over a mysql:// URL made from the settings), and the next take of each skips (issue 42).
    done = run(app, "-m", "django", "shardid_restored")
    assert done.returncode == 0, done.stderr
    assert "marked restored: 1 tag, 1 topic" in done.stdout, done.stdout
    assert rows(conn, "SELECT restored FROM seg.shardid_tags UNION ALL SELECT restored FROM dict.shardid_topics") == [(1,), (1,)]
    before = one(conn, "SELECT next FROM seg.shardid_tags WHERE tag = 'orders'")
    assert one(conn, "SELECT seg.next_dense_id('orders')") >= before + 4 * 2
    assert one(conn, "SELECT dict.dict_id('tags', 'after-restored')") >= POSTS // 3 + 4
    assert rows(conn, "SELECT restored FROM seg.shardid_tags UNION ALL SELECT restored FROM dict.shardid_topics") == [(0,), (0,)]

    # Reversed, the operations remove what they installed (the databases stay).
    done = run(app, "-m", "django", "migrate", "events", "zero")
    assert done.returncode == 0, done.stderr
    left = rows(conn, "SELECT ROUTINE_SCHEMA, ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA IN ('insta', 'seg', 'dict')")
    tables = rows(conn, "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA IN ('insta', 'seg', 'dict')")
    assert (left, tables) == ([], []), (left, tables)


MYSQLCLIENT_CHECK = """
import os, threading
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
import django
django.setup()
import MySQLdb
from django.db import connection, connections, transaction
from shardid import Layout
from shardid.django import dictionary
from events.models import Event

assert not hasattr(MySQLdb, "install_as_MySQLdb"), "mysqlclient, not PyMySQL"
errors = []

def post(k):
    try:
        for i in range(50):
            name = f"mc {k} {i}"
            with transaction.atomic():
                tag_id = dictionary("tags").id(f"mc tag {i % 7}")
                Event.objects.create(name=name, tag_id=tag_id)
    except Exception as e:
        errors.append(e)
    finally:
        connections.close_all()

threads = [threading.Thread(target=post, args=(k,)) for k in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
assert not errors, errors
rows = list(Event.objects.values_list("id", "number", "tag_id"))
assert len(rows) == 200 and len({r[0] for r in rows}) == 200 and len({r[1] for r in rows}) == 200
assert {Layout.INSTAGRAM.decode(r[0]).shard for r in rows} == {0}, "one process, one leased shard"
assert sorted({r[2] for r in rows}) == list(range(7))
with connection.cursor() as cursor:
    cursor.execute("SELECT shard FROM shardid_leases WHERE token IS NOT NULL")
    assert [r[0] for r in cursor.fetchall()] == [0]
print("mysqlclient: ok")
"""


def test_django_over_mysqlclient(server: Any, conn: Any, tmp_path: Path) -> None:
    # Django's MySQL backend over its own driver, mysqlclient (when it builds: it needs
    # libmariadb-dev): the default lease on a mysqlclient connection, dense IDs, and the
    # dictionary in 4 threads' transactions.
    pytest.importorskip("MySQLdb")
    conn.cursor().execute("CREATE DATABASE django_mysqlclient")
    app = project(tmp_path, server.port, "django_mysqlclient")
    settings = (app / "settings.py").read_text()
    settings = settings.replace("import pymysql\n\npymysql.install_as_MySQLdb()\n", "")
    (app / "settings.py").write_text(settings)
    (app / "events" / "migrations" / "0001_install_shardid.py").write_text(
        textwrap.dedent(INSTALL).replace('schema="seg", tags=["orders"]', 'schema="seg_mc", tags=["orders"]').replace('schema="dict", topics=["tags"]', 'schema="dict_mc", topics=["tags"]').replace('schema="insta"', 'schema="insta_mc"')
    )
    (app / "events" / "models.py").write_text(textwrap.dedent(MODELS).replace('tag="orders"', 'tag="orders", schema="seg_mc"'))
    for args in (["makemigrations", "events"], ["migrate"]):
        done = run(app, "-m", "django", *args)
        assert done.returncode == 0, done.stderr
    script = MYSQLCLIENT_CHECK.replace('dictionary("tags")', 'dictionary("tags", schema="dict_mc")')
    done = run(app, "-c", script)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "mysqlclient: ok" in done.stdout
