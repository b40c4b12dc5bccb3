"""Business serial numbers in a Django project on the throwaway PostgreSQL server: SerialField
(a CharField whose default is the next serial), NextSerial as its database default for raw SQL,
and the migrations that install segments and register the tag (CreateSerial), reversed."""

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
INSTALLED_APPS = ["shardid.django", "shop"]
DATABASES = {{"default": {database}}}
USE_TZ = True
"""

MODELS = """
from django.db import models
from shardid.django import NextSerial, SerialField

FORMAT = "ORD-{yyyy}{MM}{dd}-{seq:6}{check}"

class Order(models.Model):
    number = SerialField(format=FORMAT, tag="orders", zone="Asia/Shanghai", unique=True,
                         db_default=NextSerial("orders", FORMAT, "Asia/Shanghai"))
    name = models.CharField(max_length=100)
"""

INSTALL = migration(
    'InstallSegments(schema="seg")',
    'CreateSerial("orders", "ORD-{yyyy}{MM}{dd}-{seq:6}{check}", zone="Asia/Shanghai")',
)

CHECK = """
import django, os
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
django.setup()
from django.db import connection
from shop.models import Order

made = [Order.objects.create(name=str(i)) for i in range(200)]
with connection.cursor() as cursor:
    cursor.execute("INSERT INTO shop_order (name) SELECT 'raw' FROM generate_series(1, 100)")
field = Order._meta.get_field("number")
assert field.max_length == 20, field.max_length
numbers = list(Order.objects.values_list("number", "name"))
assert len({n for n, _ in numbers}) == 300
parsed = {name: [] for name in ("app", "raw")}
for number, name in numbers:
    p = field.parse(number)
    parsed["raw" if name == "raw" else "app"].append((p.period, p.number))
assert len(set(parsed["app"] + parsed["raw"])) == 300
from shardid.django import release
release()  # the rest goes back
print(len(parsed["app"]), len(parsed["raw"]))
"""


def run(project: Path, *args: str) -> str:
    return django_run(project, *args).stdout


def check_database(path: Path) -> str:
    """``manage.py check --database default``'s output (warnings do not fail it)."""
    done = subprocess.run(
        [sys.executable, "-m", "django", "check", "--database", "default"],
        cwd=path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "settings", "PYTHONPATH": str(path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_django_serial_field_on_postgres(cluster: Any, conn: psycopg.Connection[Any], tmp_path: Path) -> None:
    conn.execute("CREATE DATABASE django_serials")
    (tmp_path / "settings.py").write_text(SETTINGS.format(database=database("postgresql", cluster.port, "django_serials")))
    app = django_app(tmp_path, "shop", {"models.py": MODELS, "migrations/0001_install_serials.py": INSTALL})
    made = second_migration(tmp_path, app)
    assert (
        "shardid.django.SerialField(db_default=shardid.django.NextSerial('orders', 'ORD-{yyyy}{MM}{dd}-{seq:6}{check}', 'Asia/Shanghai'),"
        " format='ORD-{yyyy}{MM}{dd}-{seq:6}{check}', tag='orders', unique=True, zone='Asia/Shanghai')"
    ) in made, made
    run(tmp_path, "-m", "django", "migrate")
    assert run(tmp_path, "-c", CHECK).split() == ["200", "100"]
    dsn = cluster.dsn.replace("dbname=postgres", "dbname=django_serials")
    # The database check shardid.W003: quiet while a {seq:6} day holds a failover's skip at the
    # rate the period runs at; a warning naming the field once it cannot (a rate of 100,000 a
    # second: a skip of millions), as `shardid status` says it.
    assert "shardid.W003" not in check_database(tmp_path)
    with psycopg.connect(dsn, autocommit=True) as db:
        db.execute("UPDATE seg.shardid_tags SET rate = 100000 WHERE tag LIKE 'orders@%'")
    warned = check_database(tmp_path)
    assert "shardid.W003" in warned and "shop.Order.number: serial period orders@" in warned, warned
    assert "fewer than a failover skips now" in warned, warned
    with psycopg.connect(dsn, autocommit=True) as db:
        db.execute("UPDATE seg.shardid_tags SET rate = 0 WHERE tag LIKE 'orders@%'")
    # After a restore's skip (issue 54): the current period has used most of its numbers and,
    # at the rate its row recorded, the rest runs out before it ends: W003 says so too, in
    # shardid status's words.
    with psycopg.connect(dsn, autocommit=True) as db:
        tag, before = db.execute("SELECT tag, next FROM seg.shardid_tags WHERE tag LIKE 'orders@%' ORDER BY tag DESC").fetchone()
        db.execute("UPDATE seg.shardid_tags SET next = 600000, rate = 500 WHERE tag = %s", (tag,))
    warned = check_database(tmp_path)
    assert "shardid.W003" in warned and f"shop.Order.number: serial period {tag} has used 60.0% of its numbers" in warned, warned
    with psycopg.connect(dsn, autocommit=True) as db:
        db.execute("UPDATE seg.shardid_tags SET next = %s, rate = 0 WHERE tag = %s", (before, tag))
    with psycopg.connect(dsn) as db:
        periods = db.execute("SELECT tag, next FROM seg.shardid_tags").fetchall()
        assert all(tag.startswith("orders@20") for tag, _ in periods), periods
        assert sum(next_number - 1 for _, next_number in periods) >= 300
    run(tmp_path, "-m", "django", "migrate", "shop", "zero")
    with psycopg.connect(dsn) as db:
        assert db.execute("SELECT to_regclass('seg.shardid_serials'), to_regclass('seg.shardid_tags')").fetchone() == (None, None)
