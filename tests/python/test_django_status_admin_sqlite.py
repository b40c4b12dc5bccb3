"""shardid's admin section on SQLite, where projects develop: the pages read the file's own
tables (the core's SQLite DDL) through Django's connection, say which are not installed, and give
the layouts' run-out dates by the core's rule, a warning within five years. The same pages on
PostgreSQL and MariaDB: tests/postgres, tests/mysql."""

from __future__ import annotations

import html
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("django")

from conftest import django_project  # noqa: E402

APPS = ("django.contrib.admin", "django.contrib.auth", "django.contrib.contenttypes",
        "django.contrib.sessions", "django.contrib.messages", "shardid.django")  # fmt: skip

MORE_SETTINGS = """
ALLOWED_HOSTS = ["testserver"]
ROOT_URLCONF = "urls"
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
TEMPLATES = [{"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True, "OPTIONS": {"context_processors": [
    "django.template.context_processors.request", "django.contrib.auth.context_processors.auth",
    "django.contrib.messages.context_processors.messages"]}}]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
"""

PAGES = """
import django, json, os
django.setup()
from django.test.utils import setup_test_environment
setup_test_environment()  # the test client records each page's context
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

call_command("migrate", verbosity=0)
from django.db import connection
connection.ensure_connection()
connection.connection.executescript(os.environ.get("SHARDID_TEST_SQL", ""))
c = Client()
c.force_login(User.objects.create_superuser("admin", "a@example.com", "pw"))
out = {}
for model in ("lease", "tag", "topic"):
    page = c.get(f"/admin/shardid/{model}/")
    assert page.status_code == 200, (model, page.status_code, page.content[:2000])
    out[model] = {"problems": [s.problem for s in page.context["sections"]], "layouts": page.context["layouts"],
                  "html": page.content.decode()}
print(json.dumps(out))
"""


def pages(tmp_path: Path, shardid_setting: str, sql: str = "") -> dict[str, dict[str, object]]:
    project = django_project(tmp_path, "", shardid_setting + "\n" + MORE_SETTINGS, apps=APPS)
    (project / "urls.py").write_text('from django.contrib import admin\nfrom django.urls import path\nurlpatterns = [path("admin/", admin.site.urls)]\n')
    done = subprocess.run([sys.executable, "-c", PAGES], cwd=project, capture_output=True, text=True, check=False,
                          env={"PYTHONPATH": str(project), "DJANGO_SETTINGS_MODULE": "settings", "PATH": "/usr/bin:/bin",
                               "SHARDID_TEST_SQL": sql})  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def ddl(kind: str) -> str:
    done = subprocess.run([sys.executable, "-m", "shardid", "sql", "--dialect", "sqlite", kind, "--schema", "main"],
                          capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    return done.stdout


def test_on_sqlite_the_pages_say_which_tables_are_not_installed(tmp_path: Path) -> None:
    seen = pages(tmp_path, "SHARDID = {'layout': 'instagram'}")
    for model, table in (("lease", "shardid_leases"), ("tag", "main.shardid_tags"), ("topic", "main.shardid_topics")):
        problem = f"not installed: the database has no table {table}"
        assert seen[model]["problems"] == [problem], seen[model]["problems"]
        assert html.escape(problem) in str(seen[model]["html"])
        layouts = seen[model]["layouts"]
        assert layouts["warning"] is False and layouts["lines"][0].startswith(  # type: ignore[index]
            "Layout instagram runs out on 2046-06-27T17:00:49.496Z, in "
        ), layouts


def test_on_sqlite_the_pages_show_the_files_tags_and_topics(tmp_path: Path) -> None:
    sql = ddl("--segments") + ddl("--dictionary") + (
        "INSERT INTO shardid_tags (tag, next, step, updated_at) VALUES ('orders', 2001, 2000, 0);\n"
        "INSERT INTO shardid_topics (topic, next, created_at) VALUES ('urls', 1, 0);\n"
        "INSERT INTO shardid_strings (topic_id, value, id) VALUES (1, '/a', 0);\n"
    )
    seen = pages(tmp_path, "SHARDID = {'layout': 'instagram'}", sql)
    assert seen["tag"]["problems"] == [None] and seen["topic"]["problems"] == [None]
    tags = str(seen["tag"]["html"])
    assert "database &#x27;default&#x27;: main.shardid_tags" in tags and "<td>orders</td>" in tags.replace(" ", ""), tags[-3000:]
    assert "<td>2001</td>" in tags.replace(" ", "")
    topics = str(seen["topic"]["html"]).replace(" ", "")
    assert "<td>urls</td>" in topics and "<td>/a</td>" not in topics


def test_a_fixed_shard_keeps_no_lease_and_a_layout_near_its_end_is_a_warning(tmp_path: Path) -> None:
    year_ms = 31_556_952_000
    epoch_ms = int(time.time() * 1000) + 3 * year_ms - 2**40 + 1
    layout = {"epoch_ms": epoch_ms, "time_bits": 40, "shard_bits": 12, "sequence_bits": 10}
    seen = pages(tmp_path, f"SHARDID = {{'layout': {layout!r}, 'shard': 3}}")
    assert seen["lease"]["problems"] == ["SHARDID keeps no lease in a database (a fixed shard, or lock files)"]
    layouts = seen["tag"]["layouts"]
    assert layouts["warning"] is True and layouts["lines"][0].startswith("Layout custom runs out on "), layouts  # type: ignore[index]
    assert 'class="errorlist"' in str(seen["tag"]["html"])
