"""Exact IDs in JSON: the pydantic type and the Django REST framework field, with the real
libraries, and an ID above 2**53 round-tripped through JavaScript's JSON.parse."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import shardid
from conftest import django_project

BIG = 4036916263258161152  # above 2**53: a float or JSON.parse would round it


def test_pydantic_ids_are_strings_in_json_and_ints_in_python() -> None:
    pytest.importorskip("pydantic")
    from pydantic import BaseModel

    from shardid.pydantic import ShardId

    class Note(BaseModel):
        id: ShardId

    note = Note(id=BIG)
    assert note.model_dump() == {"id": BIG}
    assert note.model_dump_json() == f'{{"id":"{BIG}"}}'
    assert Note.model_validate_json(f'{{"id":"{BIG}"}}').id == BIG
    assert Note.model_validate_json(f'{{"id":{BIG}}}').id == BIG  # an exact JSON integer is fine
    assert Note(id=str(BIG)).id == BIG
    schema = Note.model_json_schema()["properties"]["id"]
    assert schema["type"] == "string" and schema["pattern"] == "^[0-9]{1,20}$"


@pytest.mark.parametrize(
    "bad",
    [4.036916426399811e18, 5.0, True, -5, "+5", " 5", "5 ", "", "0x10", 2**63, 2**64, None, [5], "٥"],
    ids=repr,
)
def test_pydantic_refuses_what_is_not_an_id(bad: Any) -> None:
    pytest.importorskip("pydantic")
    from pydantic import BaseModel, ValidationError

    from shardid.pydantic import ShardId

    class Note(BaseModel):
        id: ShardId

    with pytest.raises(ValidationError) as caught:
        Note(id=bad)
    assert len(str(caught.value)) < 600


def test_pydantic_type_of_one_layout() -> None:
    pytest.importorskip("pydantic")
    from pydantic import BaseModel, ValidationError

    from shardid.pydantic import shard_id

    class Message(BaseModel):
        id: shard_id(shardid.Layout.DISCORD)  # type: ignore[valid-type]

    assert Message(id=2**63).model_dump_json() == f'{{"id":"{2**63}"}}'
    with pytest.raises(ValidationError):
        Message(id=2**64)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_an_id_survives_javascripts_json_parse_both_ways() -> None:
    pytest.importorskip("pydantic")
    from pydantic import BaseModel

    from shardid.pydantic import ShardId

    class Note(BaseModel):
        id: ShardId

    script = "const o = JSON.parse(require('fs').readFileSync(0, 'utf8')); o.id = String(BigInt(o.id) + 1n); process.stdout.write(JSON.stringify(o))"
    done = subprocess.run(["node", "-e", script], input=Note(id=BIG).model_dump_json(), capture_output=True, text=True, check=True)
    assert Note.model_validate_json(done.stdout).id == BIG + 1
    # What a plain int field would have sent: JSON.parse rounds it.
    plain = subprocess.run(["node", "-e", "process.stdout.write(String(JSON.parse(require('fs').readFileSync(0, 'utf8')).id))"], input=json.dumps({"id": BIG}), capture_output=True, text=True, check=True)
    assert int(plain.stdout) != BIG


MODELS = """
from django.db import models
from shardid.django import ShardIdField

class Note(models.Model):
    # Editable on request (the default is not, as an AutoField is not): the serializer and the
    # form below take IDs in, which is what they check.
    id = ShardIdField(primary_key=True, editable=True)
    text = models.CharField(max_length=100)

class Post(models.Model):
    id = ShardIdField(primary_key=True)
"""

CHECK = """
import json, os, django
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
django.setup()
from django import forms
from django.core.exceptions import ValidationError
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from notes.models import Note, Post
import shardid.rest_framework

class NoteSerializer(serializers.ModelSerializer):
    class Meta:
        model = Note
        fields = ["id", "text"]

# ModelSerializer picks shardid's field for the model's ShardIdField, without being told.
assert isinstance(NoteSerializer().fields["id"], shardid.rest_framework.ShardIdField)
assert not NoteSerializer().fields["id"].read_only

# By default the field is not editable: read-only in DRF, left out of model forms.
class PostSerializer(serializers.ModelSerializer):
    class Meta:
        model = Post
        fields = ["id"]

assert PostSerializer().fields["id"].read_only
assert isinstance(PostSerializer().fields["id"], shardid.rest_framework.ShardIdField)
assert list(forms.modelform_factory(Post, fields="__all__")().fields) == []
note = Note.objects.create(text="hello")
data = NoteSerializer(note).data
assert data["id"] == str(note.id), data
assert f'"id":"{note.id}"' in JSONRenderer().render(data).decode()

# In: an int or a decimal string, validated by the layout.
for given in [str(note.id + 1), note.id + 2]:
    s = NoteSerializer(data={"id": given, "text": "x"})
    assert s.is_valid(), s.errors
    assert s.validated_data["id"] == int(given)
for bad in ["-5", -5, "+5", 4.036916426399811e18, True, "9223372036854775808", "x" * 10000]:
    s = NoteSerializer(data={"id": bad, "text": "x"})
    assert not s.is_valid(), bad
    assert "id" in s.errors and len(str(s.errors["id"])) < 300, (bad, s.errors)

# Model validation: -5 is nobody's ID.
try:
    Note(id=-5, text="x").full_clean()
except ValidationError as e:
    assert e.error_dict["id"][0].code == "invalid_shard_id", e
else:
    raise AssertionError("full_clean accepted -5")

class NoteForm(forms.ModelForm):
    class Meta:
        model = Note
        fields = ["id", "text"]

form = NoteForm(data={"id": "9223372036854775808", "text": "x"})
assert not form.is_valid() and "id" in form.errors, form.errors
assert NoteForm(data={"id": str(note.id + 3), "text": "x"}).is_valid()
print("drf: ids as strings, validated in, models and forms validate")
"""


def test_django_rest_framework_and_model_validation(tmp_path: Path) -> None:
    pytest.importorskip("rest_framework")
    django_project(tmp_path, MODELS, apps=("django.contrib.contenttypes", "django.contrib.auth", "rest_framework"))
    for args in (["manage.py", "makemigrations", "notes"], ["manage.py", "migrate"], ["-c", CHECK]):
        done = subprocess.run([sys.executable, *args], cwd=tmp_path, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    assert "models and forms validate" in done.stdout

