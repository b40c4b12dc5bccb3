"""A Django field whose tag was never created (the segments' tables there) names the migration
operation that creates it (issue 59, item 6): ``InstallSegments(schema=..., tags=[...])`` for a
DenseIdField, ``CreateSerial(...)`` for a SerialField, in and out of transaction.atomic() on
SQLite, where the error named ``create_tag`` / ``create_serial``, calls a Django project never
makes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("django")

from conftest import django_project  # noqa: E402
from django_project import migration  # noqa: E402

MODELS = """
from django.db import models
from shardid.django import DenseIdField, SerialField

class Order(models.Model):
    number = DenseIdField(tag="orders", unique=True)

class Invoice(models.Model):
    number = SerialField(tag="inv", format="INV-{yyyy}-{seq:6}", zone="UTC", unique=True)
"""

SCRIPT = """
from django.db import transaction
from notes.models import Invoice, Order
for model in (Order, Invoice):
    for atomic in (False, True):
        try:
            if atomic:
                with transaction.atomic():
                    model.objects.create()
            else:
                model.objects.create()
        except Exception as e:
            print(type(e).__name__, getattr(e, "code", None), "|", e)
"""


def test_an_unknown_tag_names_the_migration_operation(tmp_path: Path) -> None:
    django_project(tmp_path, MODELS, apps=("shardid.django",))
    migrations = tmp_path / "notes" / "migrations"
    migrations.mkdir()
    (migrations / "__init__.py").write_text("")

    def manage(*args: str) -> str:
        done = subprocess.run([sys.executable, "manage.py", *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    manage("makemigrations", "notes")
    # The segments' tables, but neither tag.
    (migrations / "0002_shardid.py").write_text(migration("InstallSegments()", dependencies=[("notes", "0001_initial")]))
    manage("migrate")
    lines = manage("shell", "-c", SCRIPT).strip().splitlines()[-4:]
    dense = 'UnknownTagError UNKNOWN_TAG | no tag orders: create it first (InstallSegments(schema="seg", tags=["orders"]) in a migration)'
    serial = "UnknownTagError UNKNOWN_TAG | no tag inv: create it first (CreateSerial('inv', 'INV-{yyyy}-{seq:6}', zone='UTC') in a migration)"
    assert lines == [dense, dense, serial, serial], lines
