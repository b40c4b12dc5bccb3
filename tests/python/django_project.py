"""The throwaway Django projects of the Django tests (every suite's conftest puts tests/python on
the path)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path


def django_app(project: Path, name: str, files: dict[str, str]) -> Path:
    """Writes the app `name` of the project in `project`: its package, its migrations' package
    and `files` (a path in the app: its text, dedented). Returns the app's directory."""
    app = project / name
    (app / "migrations").mkdir(parents=True)
    (app / "__init__.py").write_text("")
    (app / "migrations" / "__init__.py").write_text("")
    for path, text in files.items():
        (app / path).write_text(textwrap.dedent(text))
    return app


def database(family: str, port: int, name: str, **options: object) -> str:
    """The settings' `DATABASES` entry (as Python text) for the database `name` of the suite's
    throwaway server on 127.0.0.1: `family` "postgresql" (user postgres) or "mysql" (user root;
    the settings install PyMySQL as MySQLdb)."""
    user = {"postgresql": "postgres", "mysql": "root"}[family]
    entry = {"ENGINE": f"django.db.backends.{family}", "HOST": "127.0.0.1", "PORT": port, "USER": user, "NAME": name}
    return repr(entry | options)


def django_run(project: Path, *args: str, python: str | Path = sys.executable, check: bool = True, **env: str) -> subprocess.CompletedProcess[str]:
    """`python *args` in the project `project` (its settings module on the path; `env` added to
    the environment), at most 5 minutes; with `check`, its failure fails the test with its
    output."""
    full = {**os.environ, "PYTHONPATH": str(project), "DJANGO_SETTINGS_MODULE": "settings", **env}
    done = subprocess.run([str(python), *args], cwd=project, env=full, capture_output=True, text=True, timeout=300)
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    return done



def second_migration(project: Path, app: Path) -> str:
    """`makemigrations` for the app in folder `app` of `project`, after its first migration:
    the text of the one it wrote."""
    django_run(project, "-m", "django", "makemigrations", app.name)
    (second,) = (app / "migrations").glob("0002_*.py")
    return second.read_text()


def migrate_and_check(project: Path, app: str) -> str:
    """`makemigrations` for `app`, `migrate` and `check` in `project`: each succeeds, and
    `check` warns of nothing (its stderr empty). Returns what `check` printed."""
    django_run(project, "-m", "django", "makemigrations", app)
    django_run(project, "-m", "django", "migrate")
    done = django_run(project, "-m", "django", "check")
    assert done.stderr == "", done.stderr
    return done.stdout


def _mysql_first(database: str) -> str:
    """The settings' first lines for a MySQL entry of `database()`: PyMySQL as MySQLdb."""
    return "import pymysql\n\npymysql.install_as_MySQLdb()\n\n" if "django.db.backends.mysql" in database else ""


#: The urls.py of a throwaway project whose only URLs are the admin's.
ADMIN_URLS = """
from django.contrib import admin
from django.urls import path

urlpatterns = [path("admin/", admin.site.urls)]
"""


def admin_settings(database: str, apps: Sequence[str], more: str = "") -> str:
    """The settings.py of a throwaway project with Django's admin: its scripts and styles
    (served for Chromium by `runserver --insecure`), sessions, messages, the test client's host
    and 127.0.0.1, a fast password hasher; `apps` after Django's, the database entry `database`
    (`database()`; a MySQL one installs PyMySQL as MySQLdb first), then the lines `more`."""
    return _mysql_first(database) + f"""SECRET_KEY = "test"
DEBUG = False
ALLOWED_HOSTS = ["testserver", "127.0.0.1"]
INSTALLED_APPS = [
    "django.contrib.admin", "django.contrib.auth", "django.contrib.contenttypes",
    "django.contrib.sessions", "django.contrib.messages", "django.contrib.staticfiles", *{list(apps)!r},
]
STATIC_URL = "static/"  # the admin's scripts and styles, for Chromium (runserver --insecure)
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
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast, for a test
DATABASES = {{"default": {database}}}
{more}"""


def served_settings(database: str, apps: Sequence[str], more: str = "") -> str:
    """The settings.py of a throwaway project served by gunicorn or runserver on 127.0.0.1,
    with no middleware: `apps`, the database entry `database` (`database()`; a MySQL one
    installs PyMySQL as MySQLdb first), then the lines `more`."""
    return _mysql_first(database) + f"""SECRET_KEY = "test"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1"]
ROOT_URLCONF = "urls"
INSTALLED_APPS = {list(apps)!r}
MIDDLEWARE = []
DATABASES = {{"default": {database}}}
USE_TZ = True
{more}"""


# Put in a script run in a Django project: ``in_children(count, work)`` runs ``work(worker)`` in
# ``count`` forked processes, the parent's database connections closed first (a child must not
# share them); whether every child ended without an exception (each one's traceback printed).
IN_CHILDREN = """
def in_children(count, work):
    import os, traceback
    from django.db import connections
    connections.close_all()
    children = []
    for worker in range(count):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                work(worker)
                code = 0
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(code)
        children.append(pid)
    return all(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0 for pid in children)
"""


def migration(*operations: str, dependencies: Sequence[tuple[str, str]] = ()) -> str:
    """A migration file of shardid's operations, each given as its Python text
    (`'InstallSegments(schema="seg")'`) and imported from shardid.django by its name: the app's
    first migration, or one after `dependencies`."""
    names = ", ".join(sorted({op.split("(", 1)[0] for op in operations}))
    head = f"dependencies = {list(dependencies)!r}" if dependencies else "initial = True"
    listed = "".join(f"        {op},\n" for op in operations)
    return f"""from django.db import migrations
from shardid.django import {names}


class Migration(migrations.Migration):
    {head}
    operations = [
{listed}    ]
"""


def status_project(project: Path, database: str, segments: str, dictionary: str) -> None:
    """The throwaway project of the admin's status pages in `project`: the admin with
    `shardid.django` on the database entry `database`, Instagram's layout and a default lease of
    shards 0..64, and an app `shop` whose migration installs the dense IDs' tables in schema
    `segments` (tags `orders`, `invoices`) and the dictionary's in `dictionary` (topic
    `colors`)."""
    more = 'DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"\nSHARDID = {"layout": "instagram", "lease": {"shards": [0, 64]}}\n'
    (project / "settings.py").write_text(admin_settings(database, ["shardid.django", "shop"], more))
    (project / "urls.py").write_text(ADMIN_URLS)
    install = migration(
        f'InstallSegments(schema={segments!r}, tags=["orders", "invoices"])', f'InstallDictionary(schema={dictionary!r}, topics=["colors"])'
    )
    django_app(project, "shop", {"models.py": "", "migrations/0001_shardid.py": install})
