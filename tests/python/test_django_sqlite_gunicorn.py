"""Django on SQLite under a real gunicorn (pre-fork, 4 workers, the app loaded in the master:
tests/python/django_server.py's, as the PostgreSQL and MariaDB tests serve theirs), issue 44:
a model with DenseIdField and SerialField made in the view's transaction (IMMEDIATE) with a
dictionary() ID, the tables made by the migrations' operations. 400 POSTs from 8 clients at once: every one answered 2xx,
no key twice (dense numbers, serials, the model's own IDs), and the dictionary's IDs exactly
0..n-1, each row carrying its string's ID."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import django_project
from django_project import migration
from django_server import gunicorn

pytest.importorskip("django")

MODELS = """
from django.db import models
from shardid.django import DenseIdField, SerialField

class Order(models.Model):
    name = models.CharField(max_length=100, unique=True)
    number = DenseIdField(tag="orders", unique=True)
    invoice = SerialField(tag="inv", format="INV-{yyyy}{MM}{dd}-{seq:6}", zone="UTC", unique=True)
    tag_id = models.BigIntegerField()
"""

INSTALL = migration(
    'InstallSegments(tags=["orders"])',
    'CreateSerial("inv", "INV-{yyyy}{MM}{dd}-{seq:6}", zone="UTC")',
    'InstallDictionary(topics=["tags"])',
    dependencies=[("notes", "0001_initial")],
)

URLS = """
import os
from django.db import transaction
from django.http import JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from shardid.django import dictionary
from notes.models import Order

@csrf_exempt
def create(request):
    name = request.body.decode()
    with transaction.atomic():
        # The dense number and the serial are taken here, on Django's connection inside the
        # transaction (which holds the file's write lock from its start: IMMEDIATE), committed
        # with the row (docs/src/databases/sqlite.md).
        order = Order(name=name)
        # A new tag every few posts, the rest seen before: numbered inside the view's
        # transaction, racing the other workers for the same new strings.
        order.tag_id = tag_id = dictionary("tags").id("tag " + str(int(name.split()[1]) // 3))
        order.save()
    return JsonResponse({"id": order.id, "number": order.number, "invoice": order.invoice, "tag_id": tag_id, "pid": os.getpid()})

urlpatterns = [path("orders", create)]
"""

POSTS = 400


def test_gunicorn_workers_on_sqlite(tmp_path: Path) -> None:
    django_project(tmp_path, MODELS, apps=("shardid.django",))
    settings = tmp_path / "settings.py"
    # dictionary() in atomic() needs transactions begun IMMEDIATE (docs/src/databases/sqlite.md),
    # which hold the write lock from the start: the fields' numbers are taken in them.
    text = settings.read_text().replace("'OPTIONS': {'timeout': 30}", "'OPTIONS': {'timeout': 30, 'transaction_mode': 'IMMEDIATE'}")
    settings.write_text(text + "ROOT_URLCONF = 'urls'\nALLOWED_HOSTS = ['127.0.0.1']\nDEBUG = False\nMIDDLEWARE = []\n")
    (tmp_path / "urls.py").write_text(URLS)
    migrations = tmp_path / "notes" / "migrations"
    migrations.mkdir()
    (migrations / "__init__.py").write_text("")
    for args in (["makemigrations", "notes"], []):
        if args:
            done = subprocess.run([sys.executable, "manage.py", *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stdout + done.stderr
    (migrations / "0002_shardid.py").write_text(INSTALL)
    done = subprocess.run([sys.executable, "manage.py", "migrate"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr

    with gunicorn(tmp_path, workers=4) as server, ThreadPoolExecutor(8) as clients:
        answers = list(clients.map(lambda i: server.post("/orders", f"post {i}"), range(POSTS)))
    assert "Traceback" not in server.output and "IntegrityError" not in server.output, server.output

    assert len(answers) == POSTS
    for key in ("id", "number", "invoice"):
        assert len({a[key] for a in answers}) == POSTS, f"a {key} twice"
    assert len({a["pid"] for a in answers}) >= 2, "the workers did not share the load"

    conn = sqlite3.connect(tmp_path / "db.sqlite3")
    rows = conn.execute("SELECT count(*), count(DISTINCT number), count(DISTINCT invoice), count(DISTINCT name) FROM notes_order").fetchall()
    assert rows == [(POSTS, POSTS, POSTS, POSTS)]
    # Taken in the transactions that saved the rows, one at a time: no number left unused.
    numbers = sorted(n for (n,) in conn.execute("SELECT number FROM notes_order"))
    assert numbers == list(range(numbers[0], numbers[0] + POSTS)), numbers[:5]
    tags = dict(conn.execute("SELECT s.value, s.id FROM shardid_strings s JOIN shardid_topics t USING (topic_id) WHERE t.topic = 'tags'"))
    assert sorted(tags.values()) == list(range((POSTS - 1) // 3 + 1)), len(tags)
    for name, tag_id in conn.execute("SELECT name, tag_id FROM notes_order"):
        assert tags[f"tag {int(name.split()[1]) // 3}"] == tag_id, name
    conn.close()
