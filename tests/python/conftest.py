"""Shared helpers: the conformance vectors, a result in the vectors' JSON shape, and a small
Django project on SQLite for the Django tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import shardid

from vectors import LAYOUTS, VECTORS, layout_from_spec, load  # noqa: F401 (the tests import them from here)


def as_json(value: Any) -> Any:
    """A result the way the vectors write it: 64-bit values as decimal strings."""
    if isinstance(value, shardid.Parts):
        return {
            "timestamp_ms": str(value.timestamp_ms),
            "shard": str(value.shard),
            "sequence": str(value.sequence),
        }
    if isinstance(value, list):
        return [str(v) for v in value]
    return str(value)


def outcome(call: Callable[[], Any], expect: dict[str, Any]) -> dict[str, Any]:
    """Runs `call` and describes its result like `expect`: {"ok": ...} or {"error": CODE, fields}."""
    try:
        return {"ok": as_json(call())}
    except shardid.ShardIdError as e:
        got: dict[str, Any] = {"error": e.code}
        for field in expect:
            if field == "message":
                got[field] = str(e)
            elif field != "error":
                got[field] = str(getattr(e, field, None))
        return got


def django_project(
    path: Path,
    models: str,
    shardid_setting: str = 'SHARDID = {"layout": "instagram", "shard": 5}',
    apps: tuple[str, ...] = (),
) -> Path:
    """A Django project in ``path`` on SQLite: ``settings.py`` (``apps`` before the ``notes``
    app, then ``shardid_setting``), ``manage.py``, and the ``notes`` app with ``models``."""
    installed = [*apps, "notes"]
    (path / "settings.py").write_text(
        "from pathlib import Path\nBASE_DIR = Path(__file__).parent\nSECRET_KEY = 'test'\n"
        f"INSTALLED_APPS = {installed!r}\n"
        # Forked writers wait for SQLite's lock up to 30 s, not 5: on a loaded machine 4 processes
        # saving 300 rows each saw "database is locked" (the children swallow it; rows missing).
        "DATABASES = {'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': BASE_DIR / 'db.sqlite3', "
        "'OPTIONS': {'timeout': 30}}}\n"
        "USE_TZ = True\nDEFAULT_AUTO_FIELD = 'django.db.models.BigAutoField'\n" + shardid_setting + "\n"
    )
    (path / "manage.py").write_text(
        "import os, sys\nos.environ.setdefault('DJANGO_SETTINGS_MODULE', 'settings')\n"
        "from django.core.management import execute_from_command_line\nexecute_from_command_line(sys.argv)\n"
    )
    app = path / "notes"
    app.mkdir(exist_ok=True)
    (app / "__init__.py").write_text("")
    (app / "models.py").write_text(models)
    return path
