"""What a Django project does next with ShardIdField as its primary key (issue 36): the admin's
add and change pages (Django's test client, and headless Chromium on runserver) neither ask
for an ID nor let one be typed, a DRF ModelSerializer writes foreign keys and reverse relations
to the model as strings that JavaScript's JSON.parse reads exactly, and the field refuses, on
the way to the database, a value its layout cannot hold (create, bulk_create, update, a
fixture)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django_server import runserver

pytest.importorskip("django")
pytest.importorskip("rest_framework")

ROOT = Path(__file__).resolve().parents[2]

SETTINGS = """
from pathlib import Path
BASE_DIR = Path(__file__).parent
SECRET_KEY = "test"
DEBUG = True
ALLOWED_HOSTS = ["127.0.0.1", "testserver"]
INSTALLED_APPS = [
    "django.contrib.admin", "django.contrib.auth", "django.contrib.contenttypes", "django.contrib.sessions",
    "django.contrib.messages", "django.contrib.staticfiles", "rest_framework", "shardid.django", "notes",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware", "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware", "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "urls"
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request", "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
    ]},
}]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": BASE_DIR / "db.sqlite3"}}
STATIC_URL = "static/"
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
SHARDID = {"layout": "instagram"}
"""

MODELS = """
from django.db import models
from shardid.django import ShardIdField

class Note(models.Model):
    id = ShardIdField(primary_key=True)
    text = models.CharField(max_length=100)

class Tag(models.Model):
    id = ShardIdField(primary_key=True)
    note = models.ForeignKey(Note, related_name="tags", on_delete=models.CASCADE)
    name = models.CharField(max_length=50)
"""

ADMIN = """
from django.contrib import admin
from notes.models import Note, Tag

admin.site.register(Note, list_display=("id", "text"))
admin.site.register(Tag)
"""

URLS = """
from django.contrib import admin
from django.urls import path

urlpatterns = [path("admin/", admin.site.urls)]
"""

SETUP = """
import os, django
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
django.setup()
from django.contrib.auth.models import User
from notes.models import Note
User.objects.create_superuser("admin", "admin@example.com", "admin-password")
Note.objects.bulk_create([Note(text=f"note {i}") for i in range(25)])
"""


def run(project: Path, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "settings", "PYTHONPATH": str(project)}
    done = subprocess.run([sys.executable, *args], cwd=project, env=env, capture_output=True, text=True, timeout=timeout)
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


def make_project(path: Path) -> Path:
    (path / "settings.py").write_text(SETTINGS)
    (path / "urls.py").write_text(URLS)
    app = path / "notes"
    app.mkdir()
    (app / "__init__.py").write_text("")
    (app / "models.py").write_text(MODELS)
    (app / "admin.py").write_text(ADMIN)
    run(path, "-m", "django", "makemigrations", "notes")
    run(path, "-m", "django", "migrate")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project on SQLite with the admin, a superuser and 25 notes."""
    make_project(tmp_path)
    run(tmp_path, "-c", SETUP)
    return tmp_path


def rows(project: Path) -> list[tuple[int, str]]:
    script = (
        "import os, json, django; os.environ['DJANGO_SETTINGS_MODULE'] = 'settings'; django.setup()\n"
        "from notes.models import Note\nprint(json.dumps(list(Note.objects.order_by('id').values_list('id', 'text'))))"
    )
    return [tuple(r) for r in json.loads(run(project, "-c", script).stdout)]  # type: ignore[misc]


CLIENT = """
import json, os, django
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
django.setup()
from django.contrib.auth.models import User
from django.test import Client
from django.test.utils import setup_test_environment
from shardid import Layout
from notes.models import Note

setup_test_environment()
client = Client()
client.force_login(User.objects.get(username="admin"))
seen = {}
add = client.get("/admin/notes/note/add/")
seen["add"] = [add.status_code, 'name="id"' in add.content.decode()]
# The add form posts no ID: the field makes one.
added = client.post("/admin/notes/note/add/", {"text": "added", "_save": "Save"})
seen["added"] = [added.status_code, added.get("Location")]
note = Note.objects.get(text="added")
url = f"/admin/notes/note/{note.pk}/change/"
change = client.get(url)
page = change.content.decode()
seen["change"] = [change.status_code, 'name="id"' in page, str(note.pk) in page]
# A client that still posts an ID (a stale form, a hand-made request): it is not a field of the
# form, so the row keeps its key and no second row appears.
changed = client.post(url, {"text": "changed", "id": str(note.pk + 1), "_save": "Save"})
seen["changed"] = [changed.status_code, Note.objects.count(), Note.objects.get(pk=note.pk).text]
seen["shard_of_added"] = Layout.INSTAGRAM.decode(note.pk).shard
print(json.dumps(seen))
"""


def test_the_admin_neither_asks_for_an_id_nor_lets_one_be_changed(project: Path) -> None:
    before = rows(project)
    seen = json.loads(run(project, "-c", CLIENT).stdout)
    assert seen["add"] == [200, False], seen  # no ID input on the add page
    assert seen["added"] == [302, "/admin/notes/note/"], seen
    assert seen["change"] == [200, False, True], seen  # shown in the title and links, never an input
    assert seen["changed"] == [302, 26, "changed"], seen  # 25 + 1 added: the change made no second row
    after = rows(project)
    assert len(after) == len(before) + 1
    assert {i for i, _ in before} < {i for i, _ in after}


@pytest.fixture
def server(project: Path) -> Iterator[str]:
    """``manage.py runserver`` on a free port of 127.0.0.1, stopped after the test."""
    with runserver(project) as base:
        yield base


@pytest.mark.skipif(sys.platform != "linux", reason="Debian's Chromium: the Linux CI (scripts/setup.sh installs it)")
def test_the_admin_in_chromium_adds_and_edits_a_note_without_an_id_field(project: Path, server: str) -> None:
    before = rows(project)
    done = subprocess.run(
        ["node", str(ROOT / "tests/browser/django_admin.mjs"), server, "admin", "admin-password"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["addIdInputs"] == 0 and seen["changeIdInputs"] == 0, seen
    assert seen["shownText"] == "typed in Chromium" and seen["errors"] == [], seen
    after = rows(project)
    # One row added, then edited in place under the key it was given.
    assert len(after) == len(before) + 1 == 26
    (new_id, text), = [r for r in after if r not in before]
    assert text == "edited in Chromium"
    assert seen["changeUrl"] == f"/admin/notes/note/{new_id}/change/"


# Django set up, and the tags' serializer both scripts use.
SERIALIZERS = """
import json, os, sys, django
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
django.setup()
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from notes.models import Note, Tag

class TagSerializer(serializers.ModelSerializer):
    class Meta:
        model = Tag
        fields = ["id", "note", "name"]
"""

SERIALIZE = SERIALIZERS + """
class NoteSerializer(serializers.ModelSerializer):
    class Meta:
        model = Note
        fields = ["id", "text", "tags"]  # tags: the reverse relation of Tag.note

note = Note.objects.create(text="tagged")
tags = [Tag.objects.create(note=note, name=f"t{i}") for i in range(3)]
body = JSONRenderer().render({"note": NoteSerializer(note).data, "tags": TagSerializer(tags, many=True).data})
sys.stdout.buffer.write(body)
"""

WRITE_BACK = SERIALIZERS + """
note = Note.objects.get(text="tagged")
seen = {}
# What JavaScript sends back: the string it read, or an int (a safe one, or an exact bigint's digits).
for name, given in [("string", str(note.pk)), ("int", note.pk)]:
    s = TagSerializer(data={"note": given, "name": name})
    seen[name] = s.is_valid() and s.save().note_id == note.pk
for name, given in [("negative", "-5"), ("float", float(note.pk)), ("unknown", str(note.pk + 1)), ("bool", True)]:
    s = TagSerializer(data={"note": given, "name": name})
    seen[name] = None if s.is_valid() else s.errors["note"][0].code
print(json.dumps(seen))
"""

# JavaScript reads the body with plain JSON.parse, as a browser would.
NODE_READ = """
const body = JSON.parse(require('fs').readFileSync(0, 'utf8'))
const out = {
  types: [typeof body.note.id, ...body.note.tags.map((t) => typeof t), ...body.tags.map((t) => typeof t.note)],
  note: body.note.id,
  tags: body.note.tags,
  tagNotes: body.tags.map((t) => t.note),
  tagIds: body.tags.map((t) => t.id),
}
process.stdout.write(JSON.stringify(out))
"""


def test_drf_writes_foreign_keys_and_reverse_relations_as_strings_that_json_parse_reads_exactly(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    body = run(project, "-c", SERIALIZE).stdout
    truth = [tuple(r) for r in rows(project)]
    note_id = next(i for i, text in truth if text == "tagged")
    done = subprocess.run(["node", "-e", NODE_READ], input=body, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    read = json.loads(done.stdout)
    assert read["types"] == ["string"] * 7, (read, body)
    # Exactly the IDs Django holds, after JavaScript's parser: nothing rounded.
    assert int(read["note"]) == note_id and read["tagNotes"] == [str(note_id)] * 3, (read, note_id)
    assert read["tags"] == read["tagIds"] and len(set(read["tags"])) == 3
    assert all(int(t) > 2**53 for t in read["tags"])
    seen = json.loads(run(project, "-c", WRITE_BACK).stdout)
    assert seen["string"] is True and seen["int"] is True, seen
    # Refused: not an ID of the layout, a float (maybe rounded already), a bool; an ID of no row.
    assert seen["negative"] == "not_an_id" and seen["bool"] == "invalid", seen
    assert seen["float"] == "invalid" and seen["unknown"] == "does_not_exist", seen


REFUSED = """
import json, os, django
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
django.setup()
import shardid
from notes.models import Note, Tag

seen = {}
def attempt(name, call):
    try:
        call()
        seen[name] = "saved"
    except shardid.InvalidIdError as e:
        seen[name] = [e.code, isinstance(e, ValueError)]

note = Note.objects.create(text="ok")
attempt("create", lambda: Note.objects.create(id=-5, text="x"))
attempt("save", lambda: Note(id=2**63, text="x").save())
attempt("bulk_create", lambda: Note.objects.bulk_create([Note(text="fine"), Note(id=-5, text="x")]))
attempt("update", lambda: Note.objects.filter(pk=note.pk).update(id=-5))
attempt("foreign_key", lambda: Tag.objects.create(note_id=-5, name="x"))
# The layout is the settings' of the moment: override_settings changes it (2**41 is no ID of a
# 40-bit layout, and an Instagram ID).
from django.test.utils import override_settings
small = {"epoch_ms": 1_600_000_000_000, "time_bits": 30, "shard_bits": 5, "sequence_bits": 5}
with override_settings(SHARDID={"layout": small, "shard": 1}):
    attempt("override", lambda: Note.objects.create(id=2**41, text="x"))
attempt("after", lambda: Note.objects.create(id=2**41, text="after"))
seen["stored"] = sorted(Note.objects.values_list("text", flat=True))
# Looking up a value that is no ID finds nothing, as for any integer: only saving refuses.
seen["lookup"] = Note.objects.filter(pk=-5).count()
print(json.dumps(seen))
"""


def test_the_field_refuses_what_its_layout_cannot_hold_on_the_way_to_the_database(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    seen = json.loads(run(project, "-c", REFUSED).stdout)
    for name in ("create", "save", "bulk_create", "update", "foreign_key", "override"):
        assert seen[name] == ["INVALID_ID", True], (name, seen)
    assert seen["after"] == "saved"
    assert seen["stored"] == ["after", "ok"] and seen["lookup"] == 0, seen
    # A fixture with pk -5 is refused by loaddata, naming the row.
    fixture = project / "bad.json"
    fixture.write_text(json.dumps([{"model": "notes.note", "pk": -5, "fields": {"text": "from a fixture"}}]))
    done = run(project, "-m", "django", "loaddata", str(fixture), check=False)
    assert done.returncode != 0
    assert "InvalidIdError" in done.stderr and "-5" in done.stderr, done.stderr
    assert sorted(t for _, t in rows(project)) == ["after", "ok"]
