"""DEFAULT_AUTO_FIELD = "shardid.django.ShardIdAutoField" in a Django project with nothing else
of shardid's set: a custom user model keyed by it, django.contrib.{admin,auth,sessions}, the
migration from BigAutoField, an admin login (Django's test client: the admin's login, add and
change views, the session), and bulk_create of 10,000 rows, on SQLite and on PostgreSQL; on
PostgreSQL also a login in headless Chromium on runserver, through the admin's real form, to a
user's change page."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django_server import runserver

from shardid import Layout
from django_project import ADMIN_URLS, admin_settings, database, django_app, django_run, second_migration

ROOT = Path(__file__).resolve().parents[2]

MORE_SETTINGS = """\
import os
AUTH_USER_MODEL = "shop.User"
# The only shardid setting (the step before it: Django's own BigAutoField).
DEFAULT_AUTO_FIELD = os.environ.get("AUTO_FIELD", "shardid.django.ShardIdAutoField")
"""

MODELS = """
from django.contrib.auth.models import AbstractUser
from django.db import models

class User(AbstractUser):
    pass

class Item(models.Model):
    name = models.CharField(max_length=100)
    owner = models.ForeignKey(User, null=True, on_delete=models.CASCADE)
"""

ADMIN = """
from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from shop.models import Item, User

admin.site.register(User, UserAdmin)
admin.site.register(Item)
"""

CHECK = """
import django, re
django.setup()
from django.contrib.admin.models import LogEntry
from django.contrib.sessions.models import Session
from django.test import Client
from shardid import Layout
from shop.models import Item, User

L = Layout.INSTAGRAM  # settings.SHARDID unset: the default layout

admin = User.objects.create_superuser("admin", "a@example.com", "pw")
users = [User.objects.create_user(f"user{i}", password="pw") for i in range(50)]

# The admin: log in, add an item, open a user's change page.
c = Client()
page = c.get("/admin/login/")
assert page.status_code == 200
done = c.post("/admin/login/?next=/admin/", {"username": "admin", "password": "pw", "next": "/admin/"}, follow=True)
assert done.status_code == 200 and "Site administration" in done.content.decode(), done.content[:500]
assert Session.objects.count() == 1
added = c.post("/admin/shop/item/add/", {"name": "from the admin", "owner": str(users[3].pk)}, follow=True)
assert added.status_code == 200, added.status_code
item = Item.objects.get(name="from the admin")
assert item.owner_id == users[3].pk
assert c.get(f"/admin/shop/user/{users[7].pk}/change/").status_code == 200
assert c.get(f"/admin/shop/item/{item.pk}/change/").status_code == 200
assert LogEntry.objects.filter(object_id=str(item.pk)).exists()

# bulk_create: the keys are set before the insert, on every backend.
objs = [Item(name=f"bulk{i}", owner=users[i % 50]) for i in range(10_000)]
assert all(o.pk is not None for o in objs), "an instance without its ID before the insert"
before = [o.pk for o in objs]
made = Item.objects.bulk_create(objs, batch_size=2_000)
assert [o.pk for o in made] == before

keys = list(User.objects.values_list("pk", flat=True)) + list(Item.objects.values_list("pk", flat=True))
assert len(keys) == 51 + 10_001 and len(set(keys)) == len(keys), "a key repeated"
for k in keys:
    L.validate_id(k)
    assert k > 2**40, k  # a time-sortable ID, not a counter's
assert Item.objects.filter(pk__in=before).count() == 10_000
print("ok", len(keys))
"""

# After the login in Chromium: the user it opened, and the sessions (the test client's and Chromium's).
AFTER_LOGIN = """
import django, json
django.setup()
from django.contrib.sessions.models import Session
from shop.models import User
print(json.dumps({"pk": User.objects.get(username="user7").pk, "sessions": Session.objects.count()}))
"""


def run(project: Path, *args: str, **env: str) -> str:
    return django_run(project, *args, **env).stdout


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_default_auto_field_with_a_custom_user_admin_and_bulk_create(backend: str, cluster: Any, tmp_path: Path) -> None:
    if backend == "postgresql":
        with psycopg.connect(cluster.dsn, autocommit=True) as conn:
            conn.execute("CREATE DATABASE django_auto")
        entry = database("postgresql", cluster.port, "django_auto")
    else:
        entry = f'{{"ENGINE": "django.db.backends.sqlite3", "NAME": "{tmp_path / "db.sqlite3"}"}}'
    (tmp_path / "settings.py").write_text(admin_settings(entry, ["shop"], MORE_SETTINGS))
    (tmp_path / "urls.py").write_text(ADMIN_URLS)
    app = django_app(tmp_path, "shop", {"models.py": MODELS, "admin.py": ADMIN})

    # The project as it was: Django's BigAutoField.
    big = {"AUTO_FIELD": "django.db.models.BigAutoField"}
    run(tmp_path, "-m", "django", "makemigrations", "shop", **big)
    run(tmp_path, "-m", "django", "migrate", **big)
    # Then the one setting: the migration is an AlterField of each model's id, nothing else.
    made = second_migration(tmp_path, app)
    operations = made.split("operations = [", 1)[1]
    assert operations.count("migrations.AlterField(") == 2, made
    assert operations.count("migrations.") == 2, made
    assert "field=shardid.django.ShardIdAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')" in made
    assert "default=" not in operations, "the generator is configuration, not schema"
    sql = run(tmp_path, "-m", "django", "sqlmigrate", "shop", "0002")
    if backend == "postgresql":
        # The column keeps its type and identity: nothing to change.
        assert not any(w in sql.upper() for w in ("ALTER TABLE", "CREATE TABLE")), sql
    run(tmp_path, "-m", "django", "migrate")
    assert run(tmp_path, "-m", "django", "makemigrations", "--check", "--dry-run").strip() == "No changes detected"

    assert run(tmp_path, "-c", CHECK).split() == ["ok", str(51 + 10_001)]

    if backend == "postgresql":
        # The admin in headless Chromium (tests/browser/django_admin_login.mjs): the login form
        # typed into and submitted, the user found by the change list's search, its change page
        # opened from the link the admin made of its key. Once, on PostgreSQL: the pages are the
        # same on SQLite, and a browser costs seconds.
        with runserver(tmp_path, "--insecure") as base:  # DEBUG is off: serve static files
            done = subprocess.run(
                ["node", str(ROOT / "tests/browser/django_admin_login.mjs"), base, "admin", "pw", "user7"],
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        seen = json.loads(done.stdout.strip().splitlines()[-1])
        assert seen["welcome"] == "admin" and seen["errors"] == [], seen
        assert seen["shownUsername"] == "user7" and seen["title"].startswith("user7 |"), seen
        truth = json.loads(run(tmp_path, "-c", AFTER_LOGIN))
        assert seen["changeUrl"] == f"/admin/shop/user/{truth['pk']}/change/", (seen, truth)
        pk = int(seen["changeUrl"].split("/")[4])
        Layout.INSTAGRAM.validate_id(pk)
        assert pk > 2**40, pk  # the URL carries a time-sortable ID, not a counter's
        assert truth["sessions"] == 2, truth  # the test client's login, and Chromium's
