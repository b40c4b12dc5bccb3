"""shardid's admin section on SQLite, where projects develop: the pages answer, say why they
have no rows (SQLite keeps leases in lock files and has no segments or dictionary), and give the
layout's run-out date by the core's rule (Layout.runs_out_soon), a warning within five years.
The rows themselves are tested on PostgreSQL and MariaDB (tests/postgres, tests/mysql)."""

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
import django, json
django.setup()
from django.test.utils import setup_test_environment
setup_test_environment()  # the test client records each page's context
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

call_command("migrate", verbosity=0)
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


def pages(tmp_path: Path, shardid_setting: str) -> dict[str, dict[str, object]]:
    project = django_project(tmp_path, "", shardid_setting + "\n" + MORE_SETTINGS, apps=APPS)
    (project / "urls.py").write_text('from django.contrib import admin\nfrom django.urls import path\nurlpatterns = [path("admin/", admin.site.urls)]\n')
    done = subprocess.run([sys.executable, "-c", PAGES], cwd=project, capture_output=True, text=True, check=False,
                          env={"PYTHONPATH": str(project), "DJANGO_SETTINGS_MODULE": "settings", "PATH": "/usr/bin:/bin"})  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_on_sqlite_the_pages_say_why_they_have_no_rows(tmp_path: Path) -> None:
    seen = pages(tmp_path, "SHARDID = {'layout': 'instagram'}")
    sqlite = "the database 'default' is sqlite: shardid keeps these in PostgreSQL, MySQL or MariaDB"
    assert seen["lease"]["problems"] == [sqlite] and seen["tag"]["problems"] == [sqlite] and seen["topic"]["problems"] == [sqlite]
    for model in ("lease", "tag", "topic"):
        assert seen[model]["layouts"] == {"lines": ["Layout instagram runs out on 2046-06-27T17:00:49.496Z."], "warning": False}
        assert html.escape(sqlite) in str(seen[model]["html"])


def test_a_fixed_shard_keeps_no_lease_and_a_layout_near_its_end_is_a_warning(tmp_path: Path) -> None:
    year_ms = 31_556_952_000
    epoch_ms = int(time.time() * 1000) + 3 * year_ms - 2**40 + 1
    layout = {"epoch_ms": epoch_ms, "time_bits": 40, "shard_bits": 12, "sequence_bits": 10}
    seen = pages(tmp_path, f"SHARDID = {{'layout': {layout!r}, 'shard': 3}}")
    assert seen["lease"]["problems"] == ["SHARDID keeps no lease in a database (a fixed shard, or lock files)"]
    layouts = seen["tag"]["layouts"]
    assert layouts["warning"] is True and layouts["lines"][0].startswith("Layout custom runs out on "), layouts  # type: ignore[index]
    assert 'class="errorlist"' in str(seen["tag"]["html"])
