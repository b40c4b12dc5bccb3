"""Public IDs in the frameworks, with the real libraries: a Django project on SQLite (the model
descriptor, the manager, the URL converter with its 404s, the system check, the key hidden from
error reports), Django REST framework's field and pydantic's type."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import shardid
from conftest import django_project

KEY = "30313233343536373839616263646566"  # b"0123456789abcdef"
OLD = "00112233445566778899aabbccddeeff"
BIG = 4036916263258161152

MODELS = """
from django.db import models
from shardid.django import PublicId, PublicIdManager, ShardIdField

class Note(models.Model):
    id = ShardIdField(primary_key=True)
    text = models.CharField(max_length=100)
    public_id = PublicId("note")
    objects = PublicIdManager()

class User(models.Model):
    # An auto-incrementing primary key: small IDs get public IDs too.
    name = models.CharField(max_length=100)
    handle = PublicId("user", "base58")
    objects = PublicIdManager()
"""

URLS = """
from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.urls import path
from shardid.django import register_public_id_converter
from notes.models import Note

register_public_id_converter("note", prefix="note")

def note(request, pk):
    n = get_object_or_404(Note, pk=pk)
    return JsonResponse({"id": n.public_id, "text": n.text})

urlpatterns = [path("notes/<note:pk>/", note, name="note")]
"""

CHECK = """
import django, os, json
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
django.setup()
from django.conf import settings
from django.test import Client
from django.urls import reverse
from django.views.debug import SafeExceptionReporterFilter
from rest_framework import serializers
import shardid
from shardid.rest_framework import PublicIdField
from notes.models import Note, User

notes = [Note.objects.create(text=f"note {i}") for i in range(200)]
users = [User.objects.create(name=f"user {i}") for i in range(5)]
ids = shardid.PublicIds.from_keys(settings.SHARDID_PUBLIC_ID_KEYS, "note")

# The descriptor: the core's text of the primary key; read-only; no column.
for n in notes:
    assert n.public_id == ids.encode(n.pk) and n.public_id.startswith("note_"), n.public_id
    assert Note.objects.get_by_public_id(n.public_id) == n
    assert Note.objects.get_by_public_id(n.public_id.upper()) == n
assert users[0].handle == shardid.PublicIds.from_keys(settings.SHARDID_PUBLIC_ID_KEYS, "user", "base58").encode(users[0].pk)
assert User.objects.get_by_public_id(users[3].handle) == users[3]
assert Note(text="unsaved").public_id is None or Note(text="unsaved").public_id.startswith("note_")
try:
    notes[0].public_id = "note_x"
except AttributeError:
    pass
else:
    raise AssertionError("public_id was set")
assert "public_id" not in [f.name for f in Note._meta.get_fields()]

# Anything else is DoesNotExist, never another row: another type's text, altered, made under
# another key, garbage.
other = shardid.PublicIds.from_keys("0:" + "ab" * 16, "note")
hostile = [users[0].handle, "user_" + notes[0].public_id[5:], notes[0].public_id[:-1],
           notes[0].public_id + "0", other.encode(notes[1].pk), "", "note_", "note_\\u043e" * 3,
           "note_" + "z" * 14]
for text in hostile:
    try:
        found = Note.objects.get_by_public_id(text)
    except Note.DoesNotExist as e:
        assert "ab" * 16 not in str(e) and settings.SHARDID_PUBLIC_ID_KEYS not in str(e)
    else:
        raise AssertionError(f"{text!r} gave {found.pk}")

# The URL converter: the view gets the primary key; other texts are 404 before the view.
client = Client()
url = reverse("note", kwargs={"pk": notes[7].pk})
assert url == f"/notes/{notes[7].public_id}/", url
response = client.get(url)
assert response.status_code == 200 and response.json() == {"id": notes[7].public_id, "text": "note 7"}
assert client.get(url.upper().replace("/NOTES/", "/notes/")).status_code == 200
for text in hostile + [str(notes[7].pk), notes[7].public_id + "/.."]:
    assert client.get(f"/notes/{text}/").status_code == 404, text

# Django REST framework: the public ID out, the ID back in, the rest refused with a reason.
class NoteSerializer(serializers.ModelSerializer):
    id = PublicIdField("note")
    class Meta:
        model = Note
        fields = ["id", "text"]

data = NoteSerializer(notes[3]).data
assert data == {"id": notes[3].public_id, "text": "note 3"}, data
back = NoteSerializer(data={"id": notes[3].public_id, "text": "x"})
assert back.is_valid(), back.errors
assert back.validated_data["id"] == notes[3].pk
for bad in [notes[3].pk, str(notes[3].pk), users[0].handle, other.encode(5), None, ["note_"]]:
    s = NoteSerializer(data={"id": bad, "text": "x"})
    assert not s.is_valid() and "id" in s.errors, (bad, s.errors)
    assert settings.SHARDID_PUBLIC_ID_KEYS not in json.dumps(s.errors)

# Beside the model's PublicId, under its name: the natural spelling reads and writes the ID.
class NamedSerializer(serializers.ModelSerializer):
    public_id = PublicIdField("note")
    class Meta:
        model = Note
        fields = ["public_id", "text"]

data = NamedSerializer(notes[4]).data
assert data == {"public_id": notes[4].public_id, "text": "note 4"}, data
back = NamedSerializer(data={"public_id": notes[4].public_id, "text": "y"})
assert back.is_valid(), back.errors
assert back.validated_data == {"id": notes[4].pk, "text": "y"}, back.validated_data
back = NamedSerializer(notes[5], data={"public_id": notes[5].public_id, "text": "changed"})
assert back.is_valid(), back.errors
assert back.save().text == "changed" and Note.objects.get(pk=notes[5].pk).text == "changed"
assert not NamedSerializer(data={"public_id": users[0].handle, "text": "x"}).is_valid()
handles = type("HandleSerializer", (serializers.ModelSerializer,), {
    "handle": PublicIdField("user", "base58"), "Meta": type("Meta", (), {"model": User, "fields": ["handle", "name"]})})
assert handles(users[2]).data == {"handle": users[2].handle, "name": "user 2"}
# Another prefix than the descriptor's is refused when the serializer is built, naming it.
class WrongSerializer(serializers.ModelSerializer):
    public_id = PublicIdField("nope")
    class Meta:
        model = Note
        fields = ["public_id"]

from django.core.exceptions import ImproperlyConfigured
try:
    WrongSerializer(notes[0]).data
except ImproperlyConfigured as e:
    assert "use PublicIdField('note', 'base32')" in str(e), e
else:
    raise AssertionError("a PublicIdField of another prefix was taken")

# Django's error reports hide the setting (its name holds KEY).
safe = SafeExceptionReporterFilter().get_safe_settings()
assert safe["SHARDID_PUBLIC_ID_KEYS"] != settings.SHARDID_PUBLIC_ID_KEYS
print("public ids: descriptor, manager, converter, DRF, hidden key")
"""


def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, check=False, env=env)


def project(tmp_path: Path, keys_setting: str) -> Path:
    pytest.importorskip("rest_framework")
    django_project(
        tmp_path,
        MODELS,
        'SHARDID = {"layout": "instagram", "shard": 5}\nROOT_URLCONF = "urls"\nALLOWED_HOSTS = ["testserver"]\n' + keys_setting,
        apps=("django.contrib.contenttypes", "django.contrib.auth", "rest_framework"),
    )
    (tmp_path / "urls.py").write_text(URLS)
    return tmp_path


def test_django_models_urls_and_rest_framework(tmp_path: Path) -> None:
    project(tmp_path, f'SHARDID_PUBLIC_ID_KEYS = "2:{KEY}, 1:{OLD}"')
    for args in (["manage.py", "makemigrations", "notes"], ["manage.py", "migrate"], ["-c", CHECK]):
        done = run(tmp_path, *args)
        assert done.returncode == 0, done.stdout + done.stderr
    assert "descriptor, manager, converter, DRF, hidden key" in done.stdout
    # The descriptor is no column: the migration has none.
    migration = (tmp_path / "notes" / "migrations" / "0001_initial.py").read_text()
    assert "public_id" not in migration and "handle" not in migration


def test_django_reads_the_environment_and_checks_the_keys(tmp_path: Path) -> None:
    import os

    project(tmp_path, "")
    env = {k: v for k, v in os.environ.items() if k != "SHARDID_PUBLIC_ID_KEYS"}
    # No key anywhere: the system check says so at start-up, and shows no key.
    done = run(tmp_path, "manage.py", "check", env=env)
    assert done.returncode != 0 and "shardid.E010" in done.stderr, done.stderr
    # A key that is not 32 hex digits: refused by the core's rule, the value never shown.
    secret = "my-secret-passphrase-not-hex"
    done = run(tmp_path, "manage.py", "check", env={**env, "SHARDID_PUBLIC_ID_KEYS": secret})
    assert done.returncode != 0 and "shardid.E010" in done.stderr, done.stderr
    assert secret not in done.stderr + done.stdout
    # From the environment, as in production.
    done = run(tmp_path, "manage.py", "check", env={**env, "SHARDID_PUBLIC_ID_KEYS": KEY})
    assert done.returncode == 0, done.stderr


def test_pydantic_public_ids() -> None:
    pytest.importorskip("pydantic")
    from pydantic import BaseModel, ValidationError

    from shardid.pydantic import public_id

    notes = shardid.PublicIds.from_keys(KEY, "note")

    class Note(BaseModel):
        id: public_id(notes)  # type: ignore[valid-type]

    text = notes.encode(BIG)
    assert text == "note_0923h26jsg2d8g"
    note = Note(id=BIG)
    assert note.model_dump() == {"id": BIG}
    assert note.model_dump_json() == f'{{"id":"{text}"}}'
    assert Note.model_validate_json(f'{{"id":"{text}"}}').id == BIG
    assert Note(id=text).id == BIG
    schema = Note.model_json_schema()["properties"]["id"]
    assert schema["type"] == "string" and schema["pattern"] == f"^{notes.pattern}$"
    assert KEY not in repr(Note.model_fields["id"]) and "0123456789abcdef" not in repr(Note.model_fields["id"])
    users = shardid.PublicIds.from_keys(KEY, "user")
    bad: list[Any] = [users.encode(BIG), text[:-1], f"{BIG}", 5.0, True, None, "note_" + "z" * 14]
    for value in bad:
        with pytest.raises(ValidationError):
            Note(id=value)
    # In JSON only a public ID: a raw number would let clients skip the public form.
    for raw in (f'{{"id":{BIG}}}', f'{{"id":"{BIG}"}}'):
        with pytest.raises(ValidationError):
            Note.model_validate_json(raw)
