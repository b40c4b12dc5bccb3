"""The throwaway Django projects of the Django tests (every suite's conftest puts tests/python on
the path)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
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
