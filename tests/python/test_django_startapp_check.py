"""A fresh project made as docs/src/start/django.md says (`startproject`, `startapp`, shardid's
DEFAULT_AUTO_FIELD) is warned, naming the app, that startapp's `default_auto_field` line keeps
shardid's keys out of it (issue 59, item 2: keys came out 1, 2, 3 and no check said so); without
the line the warning is gone and a model's automatic key is an ID of the layout."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("django")

from django_project import django_run  # noqa: E402

SETTINGS = """
INSTALLED_APPS += ["shardid.django", "notes"]
SHARDID = {"layout": "instagram"}
DEFAULT_AUTO_FIELD = "shardid.django.ShardIdAutoField"
"""

MODELS = """from django.db import models

class Note(models.Model):
    text = models.TextField()
"""


def test_startapp_pinning_default_auto_field_is_named(tmp_path: Path) -> None:
    env = {"DJANGO_SETTINGS_MODULE": "mysite.settings"}
    django_run(tmp_path, "-m", "django", "startproject", "mysite", ".", python=sys.executable)
    django_run(tmp_path, "manage.py", "startapp", "notes")
    with (tmp_path / "mysite" / "settings.py").open("a") as settings:
        settings.write(SETTINGS)
    (tmp_path / "notes" / "models.py").write_text(MODELS)
    apps_py = tmp_path / "notes" / "apps.py"
    assert "default_auto_field = 'django.db.models.BigAutoField'" in apps_py.read_text()  # startapp's line

    warned = django_run(tmp_path, "manage.py", "check", **env).stderr
    assert "(shardid.W004) app 'notes': notes.apps.NotesConfig sets default_auto_field = 'django.db.models.BigAutoField'" in warned
    assert "delete the default_auto_field line from notes.apps.NotesConfig" in warned
    # Django's own apps (admin, auth, contenttypes pin AutoField on purpose) are not named.
    assert warned.count("(shardid.W004)") == 1, warned

    apps_py.write_text("\n".join(line for line in apps_py.read_text().splitlines() if "default_auto_field" not in line) + "\n")
    assert "shardid.W004" not in django_run(tmp_path, "manage.py", "check", **env).stderr
    django_run(tmp_path, "manage.py", "makemigrations", "notes", **env)
    django_run(tmp_path, "manage.py", "migrate", **env)
    made = django_run(
        tmp_path, "manage.py", "shell", "-c",
        "from notes.models import Note; from shardid import Layout; n = Note.objects.create(text='a'); "
        "print(type(Note._meta.pk).__name__, Layout.INSTAGRAM.decode(n.pk).shard >= 0, n.pk > 2**40)",
        **env,
    ).stdout
    assert made.splitlines()[-1].split() == ["ShardIdAutoField", "True", "True"], made
