"""A real Django project on SQLite with ShardIdField as its primary key: makemigrations,
migrate, thousands of rows whose IDs decode to their creation time and sort by it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import django_project

pytest.importorskip("django")

MODELS = """
from django.db import models
from shardid.django import ShardIdField

class Note(models.Model):
    id = ShardIdField(primary_key=True)
    created = models.DateTimeField(auto_now_add=True)
    text = models.CharField(max_length=100)

class Tag(models.Model):
    # Not the primary key: a second column filled by the same process-wide generator.
    public_id = ShardIdField(unique=True)
    note = models.ForeignKey(Note, on_delete=models.CASCADE)
"""

CHECK = """
import django, os
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
django.setup()
from datetime import timedelta
from shardid import Layout
from notes.models import Note, Tag

notes = [Note.objects.create(text=f"note {i}") for i in range(3000)]
Note.objects.bulk_create([Note(text=f"bulk {i}") for i in range(2000)])
Tag.objects.bulk_create([Tag(note=n) for n in notes[:500]])

rows = list(Note.objects.order_by("id"))
assert len(rows) == 5000, len(rows)
assert len({r.id for r in rows}) == 5000
for row in rows:
    parts = Layout.INSTAGRAM.decode(row.id)
    assert parts.shard == 5, parts
    if row.text.startswith("note"):
        # The ID is made when the object is built, just before the row is saved. The generator's
        # clock is the wall clock anchored to a monotonic one from two millisecond readings, so
        # it may read up to 1 ms ahead of `created` (seen: 6 us ahead).
        lag = row.created - parts.datetime
        assert -timedelta(milliseconds=1) < lag < timedelta(seconds=2), (row.id, row.created, parts)
created = [r.created for r in rows if r.text.startswith("note")]
assert created == sorted(created), "IDs are not in creation order"
assert [r.text for r in rows[:3000]] == [f"note {i}" for i in range(3000)]
tags = set(Tag.objects.values_list("public_id", flat=True))
assert len(tags) == 500 and not tags & {r.id for r in rows}
print("django: 5000 notes, 500 tags, all IDs unique, in creation order")
"""


def run(python: str, cwd: Path, *args: str) -> str:
    done = subprocess.run([python, *args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_django_project_on_sqlite(tmp_path: Path) -> None:
    app = django_project(tmp_path, MODELS) / "notes"
    run(sys.executable, tmp_path, "manage.py", "makemigrations", "notes")
    migration = (app / "migrations" / "0001_initial.py").read_text()
    # The field is recorded without the generator: settings are not schema.
    assert "shardid.django.ShardIdField(primary_key=True, serialize=False)" in migration
    assert "default=" not in migration
    # A second makemigrations finds nothing to do: the field deconstructs stably.
    assert "No changes detected" in run(sys.executable, tmp_path, "manage.py", "makemigrations", "notes")
    run(sys.executable, tmp_path, "manage.py", "migrate")
    out = run(sys.executable, tmp_path, "-c", CHECK)
    assert "all IDs unique, in creation order" in out


def test_unsigned_layouts_are_refused(tmp_path: Path) -> None:
    django_project(tmp_path, "", 'SHARDID = {"layout": "discord", "shard": 5}')
    code = (
        "import os, django; os.environ['DJANGO_SETTINGS_MODULE'] = 'settings'; django.setup()\n"
        "from shardid.django import next_id\n"
        "try:\n    next_id()\nexcept Exception as e:\n    print(type(e).__name__, e)\n"
    )
    out = run(sys.executable, tmp_path, "-c", code)
    assert out.startswith("ImproperlyConfigured") and "BIGINT" in out


FORKED = """
import django, os
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
django.setup()
from django.db import connections
from shardid import Layout
from shardid.django import next_id
from notes.models import Note

first = next_id()  # the master's lease, taken before the workers are forked
connections.close_all()
children = []
for worker in range(4):
    pid = os.fork()
    if pid == 0:
        try:
            for i in range(300):
                Note.objects.create(text=f"worker {worker} note {i}")
        finally:
            os._exit(0)
    children.append(pid)
assert all(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0 for pid in children)
rows = list(Note.objects.values_list("id", "text"))
assert len(rows) == 1200 and len({i for i, _ in rows}) == 1200, len(rows)
shards = {}
for id_, text in rows:
    shards.setdefault(text.split(" note")[0], set()).add(Layout.INSTAGRAM.decode(id_).shard)
assert all(len(s) == 1 for s in shards.values()), shards
held = sorted(next(iter(s)) for s in shards.values())
master = Layout.INSTAGRAM.decode(first).shard
assert len(set(held)) == 4 and master not in held, (master, held)
print("leased", master, held, sorted(os.listdir("db.sqlite3-shardid")))
"""


def test_no_shard_setting_leases_a_shard_per_process_on_sqlite(tmp_path: Path) -> None:
    # No SHARDID at all: Instagram's layout, and each process leases its shard from lock files
    # beside the SQLite file, even when the generator was made before the fork.
    django_project(tmp_path, MODELS, "")
    run(sys.executable, tmp_path, "manage.py", "makemigrations", "notes")
    run(sys.executable, tmp_path, "manage.py", "migrate")
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=tmp_path, capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    out = run(sys.executable, tmp_path, "-c", FORKED)
    assert out.startswith("leased 0 [1, 2, 3, 4]"), out
