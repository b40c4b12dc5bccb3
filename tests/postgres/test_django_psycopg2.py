"""A Django project on psycopg2 only (issue 36): a virtualenv with Django and psycopg2-binary —
still the most common Django PostgreSQL driver — and no psycopg 3, shardid installed from the
wheel under test. With SHARDID unset, `manage.py check` passes and the default lease works over
Django's own driver; DenseIdField, shardid.django.dictionary(), and the plain DenseIds,
Serials, Dictionary and lease clients all run on psycopg2."""

from __future__ import annotations

import datetime
import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

import shardid
from django_project import database, django_app, django_run, migration

PSYCOPG2 = "psycopg2-binary==2.9.13"
DJANGO = "django==5.2.19"

SETTINGS = """
SECRET_KEY = "test"
INSTALLED_APPS = ["shardid.django", "shop"]
DATABASES = {{"default": {database}}}
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# No SHARDID: Instagram's layout, and a shard leased per process through this database.
"""

MODELS = """
from django.db import models
from shardid.django import DenseIdField, NextId, ShardIdField

class Order(models.Model):
    id = ShardIdField(primary_key=True, db_default=NextId("insta"))
    number = DenseIdField(tag="orders", unique=True)
    name = models.CharField(max_length=100)
"""

INSTALL = migration(
    'InstallPostgres(layout="instagram", shard=8191, schema="insta")',
    'InstallSegments(schema="seg", tags=["orders"])',
    'InstallDictionary(schema="dict", topics=["tags"])',
)

USE = """
import json, os, sys, django
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
django.setup()
from django.db import connection
import psycopg2
from shardid import Layout
from shardid.django import dictionary, get_generator, release
from shop.models import Order

seen = {"driver": connection.Database.__name__}
orders = [Order.objects.create(name=f"order {i}") for i in range(50)]
seen["numbers"] = [o.number for o in orders]
seen["shards"] = sorted({Layout.INSTAGRAM.decode(o.id).shard for o in orders})
seen["lease"] = type(get_generator()).__name__
with connection.cursor() as cursor:  # the database's own next_id(), on shard 8191
    cursor.execute("INSERT INTO shop_order (number, name) VALUES (-1, 'raw') RETURNING id")
    seen["raw_shard"] = Layout.INSTAGRAM.decode(cursor.fetchone()[0]).shard
seen["tags"] = dictionary("tags").ids(["red", "green", "red"])
seen["tag_values"] = dictionary("tags").values([0, 1, 2])

# The plain clients, on psycopg2 as the only driver.
from shardid.segments import DenseIds, Serials, create_serial
from shardid.dictionary import Dictionary
from shardid.postgres import lease
dsn = sys.argv[1]
with DenseIds(dsn, "orders") as ids:
    seen["dense"] = [ids.next_id() for _ in range(3)]
create_serial(dsn, "invoices", "INV-{yyyy}-{seq:5}", zone="UTC")
with Serials(dsn, "invoices", "INV-{yyyy}-{seq:5}", zone="UTC") as invoices:
    seen["serials"] = [invoices.next_serial() for _ in range(2)]
with Dictionary(dsn, "tags") as words:
    seen["dictionary"] = words.ids(["green", "blue"])
with lease(Layout.TWITTER, dsn, range(0, 4), table="plain_leases") as held:
    seen["plain_lease"] = Layout.TWITTER.decode(held.next_id()).shard
release()
print(json.dumps(seen))
"""


def run(python: Path, project: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return django_run(project, *args, python=python, check=check)


@pytest.fixture(scope="module")
def psycopg2_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv with Django and psycopg2-binary from PyPI, and the shardid under test copied
    from this one (its package and its metadata): no psycopg 3."""
    venv = tmp_path_factory.mktemp("venv-psycopg2")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", DJANGO, PSYCOPG2],
        check=True, timeout=300,
    )  # fmt: skip
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())  # fmt: skip
    package = Path(shardid.__file__).parent
    shutil.copytree(package, site / "shardid")
    metadata = Path(str(importlib.metadata.distribution("shardid")._path))  # type: ignore[attr-defined]
    shutil.copytree(metadata, site / metadata.name)
    probe = subprocess.run([str(python), "-c", "import psycopg"], capture_output=True, text=True)
    assert probe.returncode != 0 and "No module named 'psycopg'" in probe.stderr, "psycopg 3 must not be there"
    return python


def test_a_django_project_on_psycopg2_only(cluster: Any, psycopg2_python: Path, tmp_path: Path) -> None:
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute("CREATE DATABASE django_psycopg2")
    (tmp_path / "settings.py").write_text(SETTINGS.format(database=database("postgresql", cluster.port, "django_psycopg2")))
    django_app(tmp_path, "shop", {"models.py": MODELS, "migrations/0001_shardid.py": INSTALL})
    python = psycopg2_python
    run(python, tmp_path, "-m", "django", "makemigrations", "shop")
    # No shardid.E001 about a driver: the default lease runs on Django's own (psycopg2).
    done = run(python, tmp_path, "-m", "django", "check")
    assert done.stderr == "" and "no issues" in done.stdout, done.stderr
    run(python, tmp_path, "-m", "django", "migrate")
    dsn = f"postgresql://postgres@127.0.0.1:{cluster.port}/django_psycopg2"
    import json

    seen = json.loads(run(python, tmp_path, "-c", USE, dsn).stdout.strip().splitlines()[-1])
    assert seen["driver"] == "psycopg2"
    assert seen["numbers"] == list(range(1, 51)), seen["numbers"]
    assert len(seen["shards"]) == 1 and 0 <= seen["shards"][0] < 8191, seen
    assert seen["lease"] == "PostgresLease" and seen["raw_shard"] == 8191, seen
    assert seen["tags"] == [0, 1, 0] and seen["tag_values"] == ["red", "green", None], seen
    assert seen["dense"][0] > 50 and seen["dense"] == sorted(seen["dense"]), seen
    assert seen["dictionary"] == [1, 2] and seen["plain_lease"] in range(0, 4), seen
    # Serials too (they imported psycopg 3 before they ran on the dense IDs' dialect objects).
    year = f"INV-{datetime.datetime.now(datetime.timezone.utc).year}-"
    assert seen["serials"] == [year + "00001", year + "00002"], seen
