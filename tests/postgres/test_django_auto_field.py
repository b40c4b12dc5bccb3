"""DEFAULT_AUTO_FIELD = "shardid.django.ShardIdAutoField" in a Django project with nothing else
of shardid's set: a custom user model keyed by it, django.contrib.{admin,auth,sessions}, the
migration from BigAutoField, an admin login (Django's test client: the admin's login, add and
change views, the session), and bulk_create of 10,000 rows, on SQLite and on PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import psycopg
import pytest

SETTINGS = """
import os
SECRET_KEY = "test"
DEBUG = False
ALLOWED_HOSTS = ["testserver"]
INSTALLED_APPS = [
    "django.contrib.admin", "django.contrib.auth", "django.contrib.contenttypes",
    "django.contrib.sessions", "django.contrib.messages", "shop",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
TEMPLATES = [{{
    "BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True,
    "OPTIONS": {{"context_processors": [
        "django.template.context_processors.request", "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
    ]}},
}}]
ROOT_URLCONF = "urls"
USE_TZ = True
AUTH_USER_MODEL = "shop.User"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast, for a test
DATABASES = {{"default": {database}}}
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

URLS = """
from django.contrib import admin
from django.urls import path

urlpatterns = [path("admin/", admin.site.urls)]
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


def run(project: Path, *args: str, **env: str) -> str:
    full = {**os.environ, "PYTHONPATH": str(project), "DJANGO_SETTINGS_MODULE": "settings", **env}
    done = subprocess.run([sys.executable, *args], cwd=project, env=full, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_default_auto_field_with_a_custom_user_admin_and_bulk_create(backend: str, cluster: Any, tmp_path: Path) -> None:
    if backend == "postgresql":
        with psycopg.connect(cluster.dsn, autocommit=True) as conn:
            conn.execute("CREATE DATABASE django_auto")
        database = (
            f'{{"ENGINE": "django.db.backends.postgresql", "HOST": "127.0.0.1", "PORT": {cluster.port},'
            ' "USER": "postgres", "NAME": "django_auto"}'
        )
    else:
        database = f'{{"ENGINE": "django.db.backends.sqlite3", "NAME": "{tmp_path / "db.sqlite3"}"}}'
    (tmp_path / "settings.py").write_text(SETTINGS.format(database=database))
    (tmp_path / "urls.py").write_text(URLS)
    app = tmp_path / "shop"
    (app / "migrations").mkdir(parents=True)
    (app / "__init__.py").write_text("")
    (app / "migrations" / "__init__.py").write_text("")
    (app / "models.py").write_text(textwrap.dedent(MODELS))
    (app / "admin.py").write_text(ADMIN)

    # The project as it was: Django's BigAutoField.
    big = {"AUTO_FIELD": "django.db.models.BigAutoField"}
    run(tmp_path, "-m", "django", "makemigrations", "shop", **big)
    run(tmp_path, "-m", "django", "migrate", **big)
    # Then the one setting: the migration is an AlterField of each model's id, nothing else.
    run(tmp_path, "-m", "django", "makemigrations", "shop")
    (second,) = (app / "migrations").glob("0002_*.py")
    migration = second.read_text()
    operations = migration.split("operations = [", 1)[1]
    assert operations.count("migrations.AlterField(") == 2, migration
    assert operations.count("migrations.") == 2, migration
    assert "field=shardid.django.ShardIdAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')" in migration
    assert "default=" not in operations, "the generator is configuration, not schema"
    sql = run(tmp_path, "-m", "django", "sqlmigrate", "shop", "0002")
    if backend == "postgresql":
        # The column keeps its type and identity: nothing to change.
        assert not any(w in sql.upper() for w in ("ALTER TABLE", "CREATE TABLE")), sql
    run(tmp_path, "-m", "django", "migrate")
    assert run(tmp_path, "-m", "django", "makemigrations", "--check", "--dry-run").strip() == "No changes detected"

    assert run(tmp_path, "-c", CHECK).split() == ["ok", str(51 + 10_001)]
