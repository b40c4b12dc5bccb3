"""A Django project on the throwaway PostgreSQL server: ShardIdField as the primary key with the
database's next_id() as its database default (installed by the InstallPostgres migration),
ORM and bulk inserts with the application's shard, raw SQL inserts with the database's, and
time-range queries through min_id_at/max_id_at on both sides."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
from django_project import database, django_app, django_run, migration, second_migration

SETTINGS = """
SECRET_KEY = "test"
INSTALLED_APPS = ["events"]
DATABASES = {{"default": {database}}}
USE_TZ = True
SHARDID = {{"layout": "instagram", "shard": 1}}
"""

MODELS = """
from django.db import models
from shardid.django import NextId, ShardIdField

class Event(models.Model):
    id = ShardIdField(primary_key=True, db_default=NextId("insta5"))
    name = models.CharField(max_length=100)
"""

INSTALL = migration('InstallPostgres(layout="instagram", shard=5, schema="insta5")')

CHECK = """
import django, os
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
django.setup()
from datetime import datetime, timezone
from django.db import connection
from shardid import Layout
from events.models import Event

def now():
    return datetime.now(timezone.utc)

t0 = now()
made = [Event.objects.create(name="orm") for _ in range(500)]
Event.objects.bulk_create([Event(name="bulk") for _ in range(2000)])
t1 = now()
with connection.cursor() as cursor:
    # Raw SQL without an id: the column's database default, insta5.next_id(), shard 5.
    cursor.execute("INSERT INTO events_event (name) SELECT 'raw' FROM generate_series(1, 3000)")
    cursor.execute("INSERT INTO events_event (name) VALUES ('raw-one') RETURNING id")
    raw_one = cursor.fetchone()[0]
t2 = now()

rows = list(Event.objects.values_list("id", "name"))
assert len(rows) == 5501 and len({i for i, _ in rows}) == 5501
for id_, name in rows:
    expected = 5 if name.startswith("raw") else 1
    assert Layout.INSTAGRAM.decode(id_).shard == expected, (id_, name)
assert Layout.INSTAGRAM.decode(raw_one).shard == 5
assert all(m.id == Event.objects.get(pk=m.id).id for m in made[:10])

# Time ranges: the ORM with the library's bounds, and SQL with the database's, agree.
L = Layout.INSTAGRAM
app_rows = Event.objects.filter(id__gte=L.min_id_at(t0), id__lte=L.max_id_at(t1))
assert app_rows.count() == 2500, app_rows.count()
db_rows = Event.objects.filter(id__gte=L.min_id_at(t1), id__lte=L.max_id_at(t2)).exclude(name__in=["orm", "bulk"])
assert db_rows.count() == 3001, db_rows.count()
with connection.cursor() as cursor:
    cursor.execute(
        "SELECT count(*) FROM events_event WHERE id BETWEEN insta5.shardid_min_id_at(%s) AND insta5.shardid_max_id_at(%s)",
        [t0, t2],
    )
    assert cursor.fetchone()[0] == 5501
    cursor.execute("SELECT min(insta5.shardid_timestamp(id)), max(insta5.shardid_timestamp(id)) FROM events_event")
    first, last = cursor.fetchone()
    assert t0.replace(microsecond=t0.microsecond // 1000 * 1000) <= first and last <= t2, (t0, first, last, t2)
print("django on postgres: ok")
"""


def run(project: Path, *args: str) -> str:
    return django_run(project, *args).stdout


def test_django_project_on_postgres(cluster: Any, conn: psycopg.Connection[Any], tmp_path: Path) -> None:
    conn.execute("CREATE DATABASE django_shardid")
    (tmp_path / "settings.py").write_text(SETTINGS.format(database=database("postgresql", cluster.port, "django_shardid")))
    app = django_app(tmp_path, "events", {"models.py": MODELS, "migrations/0001_install_shardid.py": INSTALL})
    made = second_migration(tmp_path, app)
    assert "shardid.django.NextId('insta5')" in made, made
    assert "('events', '0001_install_shardid')" in made
    run(tmp_path, "-m", "django", "migrate")
    assert "django on postgres: ok" in run(tmp_path, "-c", CHECK)

    dsn = cluster.dsn.replace("dbname=postgres", "dbname=django_shardid")
    with psycopg.connect(dsn) as db:
        default = db.execute(
            "SELECT column_default FROM information_schema.columns WHERE table_name = 'events_event' AND column_name = 'id'"
        ).fetchone()[0]  # type: ignore[index]
        assert default == "insta5.next_id()"
    # Reversing the migrations removes the table, then the functions and their state.
    run(tmp_path, "-m", "django", "migrate", "events", "zero")
    with psycopg.connect(dsn) as db:
        left = db.execute(
            "SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'insta5'"
        ).fetchone()[0]  # type: ignore[index]
        assert left == 0
        assert db.execute("SELECT to_regclass('insta5.shardid_counter_even')").fetchone()[0] is None  # type: ignore[index]


DENSE_MODELS = """
from django.db import models
from shardid.django import DenseIdField

class Order(models.Model):
    number = DenseIdField(tag="orders", unique=True)
    name = models.CharField(max_length=100)
"""

DENSE_INSTALL = migration('InstallSegments(schema="seg", tags=["orders"])')

DENSE_CHECK = """
import django, os, sys
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
django.setup()
from django.db import connection
from orders.models import Order

made = [Order.objects.create(name=str(i)) for i in range(300)]
numbers = [o.number for o in made]
assert numbers == sorted(numbers) and len(set(numbers)) == 300, numbers[:5]
from shardid.django import _dense
for ids in _dense.values():
    ids.close()  # the rest goes back: the next process continues where this one stopped
print(min(numbers), max(numbers))
"""


def test_django_dense_id_field_on_postgres(cluster: Any, conn: psycopg.Connection[Any], tmp_path: Path) -> None:
    conn.execute("CREATE DATABASE django_dense")
    settings = SETTINGS.format(database=database("postgresql", cluster.port, "django_dense")).replace('"events"', '"orders"')
    (tmp_path / "settings.py").write_text(settings)
    app = django_app(tmp_path, "orders", {"models.py": DENSE_MODELS, "migrations/0001_install_segments.py": DENSE_INSTALL})
    made = second_migration(tmp_path, app)
    assert "shardid.django.DenseIdField(tag='orders', unique=True)" in made, made
    run(tmp_path, "-m", "django", "migrate")
    assert run(tmp_path, "-c", DENSE_CHECK).split() == ["1", "300"]
    assert run(tmp_path, "-c", DENSE_CHECK).split() == ["301", "600"], "a clean close leaves no hole"
    run(tmp_path, "-m", "django", "migrate", "orders", "zero")
    dsn = cluster.dsn.replace("dbname=postgres", "dbname=django_dense")
    with psycopg.connect(dsn) as db:
        assert db.execute("SELECT to_regclass('seg.shardid_tags')").fetchone()[0] is None  # type: ignore[index]


DICT_MODELS = """
from django.db import models

class Tagged(models.Model):
    tag_id = models.BigIntegerField()
"""

DICT_INSTALL = migration('InstallDictionary(schema="dict", topics=["tags"])')

DICT_CHECK = """
import django, os
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
django.setup()
import shardid
from django.db import IntegrityError, transaction
from shardid.django import dictionary
from tags.models import Tagged

tags = dictionary("tags")
assert dictionary("tags") is tags, "one per process and topic"
first = tags.ids(["red", "green", "red"])
Tagged.objects.bulk_create([Tagged(tag_id=i) for i in first])
# In the caller's transaction: a rollback gives the new IDs back.
try:
    with transaction.atomic():
        assert tags.id("blue") == 2
        raise IntegrityError("roll back")
except IntegrityError:
    pass
# The rolled-back ID was given back, and never cached: "blue" is not 2.
assert tags.ids(["yellow", "blue"]) == [2, 3], "the rolled-back IDs were given back"
assert tags.id("blue") == 3 and tags.value(2) == "yellow"
# Committed in a transaction: cached at its commit.
with transaction.atomic():
    assert tags.ids(["white"]) == [4]
    assert tags.cache.id("white") is None, "cached before its commit"
assert tags.cache.id("white") == 4
assert tags.lookup(["red", "nope"]) == [0, None] and tags.values([1, 9]) == ["green", None]
try:
    dictionary("nope").id("x")
    raise AssertionError("no error")
except shardid.UnknownTopicError as e:
    assert e.topic == "nope"
print(first, Tagged.objects.count())
"""


def test_django_dictionary_on_postgres(cluster: Any, conn: psycopg.Connection[Any], tmp_path: Path) -> None:
    conn.execute("CREATE DATABASE django_dict")
    settings = SETTINGS.format(database=database("postgresql", cluster.port, "django_dict")).replace('"events"', '"tags", "shardid.django"')
    (tmp_path / "settings.py").write_text(settings)
    django_app(tmp_path, "tags", {"models.py": DICT_MODELS, "migrations/0001_install_dictionary.py": DICT_INSTALL})
    run(tmp_path, "-m", "django", "makemigrations", "tags")
    run(tmp_path, "-m", "django", "migrate")
    assert run(tmp_path, "-c", DICT_CHECK).strip() == "[0, 1, 0] 3"
    # After a restore nothing else sees: manage.py shardid_restored marks the topic, and its
    # next new string skips (issue 42).
    out = run(tmp_path, "-m", "django", "shardid_restored")
    assert "marked restored: 0 tags, 1 topic" in out, out
    dsn = cluster.dsn.replace("dbname=postgres", "dbname=django_dict")
    with psycopg.connect(dsn, autocommit=True) as db:
        assert db.execute("SELECT restored FROM dict.shardid_topics").fetchone() == (True,)
        new_id = db.execute("SELECT dict.dict_id(topic, 'after-restore') FROM dict.shardid_topics").fetchone()[0]
        assert new_id >= 2 + 4 * 2, new_id
        assert db.execute("SELECT restored FROM dict.shardid_topics").fetchone() == (False,)
    run(tmp_path, "-m", "django", "migrate", "tags", "zero")
    dsn = cluster.dsn.replace("dbname=postgres", "dbname=django_dict")
    with psycopg.connect(dsn) as db:
        assert db.execute("SELECT to_regclass('dict.shardid_topics'), to_regclass('dict.shardid_strings')").fetchone() == (None, None)
        left = db.execute(
            "SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'dict'"
        ).fetchone()[0]  # type: ignore[index]
        assert left == 0, "every function of the install is removed"


FORGOTTEN_MODELS = """
from django.db import models
from shardid.django import DenseIdField, SerialField

class Order(models.Model):
    number = DenseIdField(tag="orders", unique=True)

class Invoice(models.Model):
    serial = SerialField(format="INV-{yyyy}-{seq:6}", tag="invoices", zone="UTC", unique=True)
"""

FORGOTTEN_SAVE = """
import django, os, sys, time
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
django.setup()
import shardid
from orders.models import Invoice, Order

for model in (Order, Invoice):
    started = time.monotonic()
    try:
        model.objects.create()
        raise AssertionError("saved")
    except shardid.DatabaseError as e:
        print(type(e).__name__, round(time.monotonic() - started), e)
"""

FORGOTTEN_INSTALL = migration(
    'InstallSegments(schema="seg", tags=["orders"])',
    'CreateSerial("invoices", "INV-{yyyy}-{seq:6}", zone="UTC")',
    dependencies=[("orders", "0001_initial")],
)


def test_a_model_on_segments_where_install_segments_never_ran_names_the_operation(
    cluster: Any, conn: psycopg.Connection[Any], tmp_path: Path
) -> None:
    """A DenseIdField and a SerialField in a project whose migrations forgot InstallSegments:
    `manage.py check --database default` says so (shardid.E003), and the first save raises
    shardid.DatabaseError naming the operation at once, rather than psycopg's `schema "seg"
    does not exist` (after the allocator's wait). With the migration added, both work."""
    conn.execute("CREATE DATABASE django_forgotten")
    settings = SETTINGS.format(database=database("postgresql", cluster.port, "django_forgotten")).replace('"events"', '"orders"')
    (tmp_path / "settings.py").write_text(settings)
    app = django_app(tmp_path, "orders", {"models.py": FORGOTTEN_MODELS})
    run(tmp_path, "-m", "django", "makemigrations", "orders")
    run(tmp_path, "-m", "django", "migrate")
    run(tmp_path, "-m", "django", "check")  # no database asked: nothing to read
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "DJANGO_SETTINGS_MODULE": "settings"}
    done = subprocess.run(
        [sys.executable, "-m", "django", "check", "--database", "default"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode != 0, done.stdout + done.stderr
    said = " ".join(done.stderr.split())
    assert "shardid.E003" in said and "InstallSegments(schema='seg')" in said, said
    assert "orders.Order.number" in said and "orders.Invoice.serial" in said and "CreateSerial" in said, said
    lines = run(tmp_path, "-c", FORGOTTEN_SAVE).splitlines()
    assert len(lines) == 2, lines
    for line in lines:
        assert line.startswith("DatabaseError 0 database: the database 'default' has no schema seg"), line
        assert "InstallSegments(schema='seg') from shardid.django" in line and "manage.py migrate" in line, line
    assert "CreateSerial" in lines[1] and "seg.shardid_serials" in lines[1], lines[1]

    (app / "migrations" / "0002_install_segments.py").write_text(FORGOTTEN_INSTALL)
    run(tmp_path, "-m", "django", "migrate")
    run(tmp_path, "-m", "django", "check", "--database", "default")
    made = run(tmp_path, "-c", "import django; django.setup(); from orders.models import *; "
               "print(Order.objects.create().number, Invoice.objects.create().serial[:4])")  # fmt: skip
    assert made.split() == ["1", "INV-"], made
