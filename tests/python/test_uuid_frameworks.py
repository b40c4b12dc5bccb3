"""The UUIDv7 bridge in the frameworks, with the real libraries: a column of UUIDs whose Python
value stays the 64-bit ID (pydantic, SQLAlchemy on SQLite, a Django project on SQLite with Django
REST framework). Each checks what the database holds is the core's UUID of the ID, that either
form finds the row, and that a UUID the bridge did not make for the layout is refused."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import shardid
from conftest import django_project

BIG = 4036916263258161152  # an Instagram ID
TWITTER = shardid.Layout.TWITTER.compose(1_700_000_000_000, 5, 3)


def test_pydantic_uuid_type() -> None:
    pytest.importorskip("pydantic")
    from pydantic import BaseModel, ValidationError

    from shardid.pydantic import ShardIdUuid, shard_id_uuid

    class Note(BaseModel):
        id: ShardIdUuid

    class Tweet(BaseModel):
        id: shard_id_uuid(shardid.Layout.TWITTER)  # type: ignore[valid-type]

    text = str(shardid.Layout.INSTAGRAM.to_uuid(BIG))
    assert Note(id=BIG).model_dump_json() == f'{{"id":"{text}"}}'
    assert Note(id=BIG).model_dump() == {"id": BIG}  # Python mode: the ID
    # In: the UUID (text, either case, or a uuid.UUID) or the ID itself.
    for given in (text, text.upper(), uuid.UUID(text), BIG, str(BIG)):
        assert Note(id=given).id == BIG, given
    assert Note.model_validate_json(f'{{"id":"{text}"}}').id == BIG
    assert Tweet.model_validate_json(f'{{"id":"{shardid.Layout.TWITTER.to_uuid(TWITTER)}"}}').id == TWITTER
    # Refused, never read as a wrong ID: a random UUIDv4, another layout's UUID, a float, junk.
    for bad in (str(uuid.uuid4()), str(shardid.Layout.TWITTER.to_uuid(TWITTER)), 1.5, True, "not-a-uuid", -5):
        with pytest.raises(ValidationError):
            Note(id=bad)
    schema = Note.model_json_schema()["properties"]["id"]
    assert schema["type"] == "string" and schema["format"] == "uuid", schema


def test_sqlalchemy_uuid_column(tmp_path: Path) -> None:
    sa = pytest.importorskip("sqlalchemy")
    from sqlalchemy.orm import DeclarativeBase, Session

    from shardid.sqlalchemy import ShardIdUuid

    class Base(DeclarativeBase):
        pass

    ids = shardid.Generator(layout=shardid.Layout.INSTAGRAM, shard=7)

    class Note(Base):
        __tablename__ = "notes"
        id = sa.Column(ShardIdUuid(shardid.Layout.INSTAGRAM), primary_key=True, default=ids.next_id)
        text = sa.Column(sa.String(20))

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'notes.db'}")
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        notes = [Note(text=f"n{i}") for i in range(50)]
        session.add_all(notes)
        session.add(Note(id=BIG, text="given"))
        session.commit()
        made = sorted(n.id for n in notes)
    with Session(engine) as session:
        # The ID finds the row, and so does its UUID; the Python value is the ID.
        assert session.get(Note, BIG).text == "given"
        uuid_of_big = shardid.Layout.INSTAGRAM.to_uuid(BIG)
        assert session.scalars(sa.select(Note).where(Note.id == uuid_of_big)).one().id == BIG
        # The UUIDs sort as the IDs: ORDER BY the uuid column gives the IDs' order.
        assert [n for n in session.scalars(sa.select(Note.id).where(Note.id != BIG).order_by(Note.id))] == made
        # What the file holds is the core's UUID of the ID (SQLAlchemy's Uuid: 32 hex digits).
        raw = session.execute(sa.text("SELECT id FROM notes WHERE text = 'given'")).scalar_one()
        assert raw == uuid_of_big.hex, raw
        # A UUID the bridge did not make for this layout: refused when bound, and when read.
        with pytest.raises(sa.exc.StatementError) as bound:
            session.scalars(sa.select(Note).where(Note.id == uuid.uuid4())).all()
        assert isinstance(bound.value.orig, shardid.InvalidArgumentError), bound.value
        session.execute(sa.text("INSERT INTO notes (id, text) VALUES (:id, 'foreign')"), {"id": uuid.uuid4().hex})
        with pytest.raises(shardid.InvalidArgumentError):
            session.scalars(sa.select(Note).where(Note.text == "foreign")).all()
    with Session(engine) as session, pytest.raises(sa.exc.StatementError) as floated:
        session.get(Note, 1.5)
    assert isinstance(floated.value.orig, TypeError), floated.value


MODELS = """
from django.db import models
from shardid.django import ShardIdUUIDField

class Note(models.Model):
    id = ShardIdUUIDField(primary_key=True)
    text = models.CharField(max_length=100)

class Comment(models.Model):
    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="comments")
"""

CHECK = """
import django, os, uuid
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
django.setup()
from django.core.management import call_command
call_command("makemigrations", "notes", verbosity=0)
call_command("migrate", verbosity=0)
from django.core.exceptions import ValidationError
from django.db import connection
from rest_framework import serializers
import shardid
from notes.models import Comment, Note

layout = shardid.Layout.INSTAGRAM
notes = [Note.objects.create(text=f"note {i}") for i in range(20)]
given = Note.objects.create(id=%(big)d, text="given")
for n in notes:
    assert isinstance(n.pk, int) and layout.validate_id(n.pk) == n.pk, n.pk
# Either form finds the row; the attribute read back is the ID.
assert Note.objects.get(id=%(big)d) == given
assert Note.objects.get(id=layout.to_uuid(%(big)d)).pk == %(big)d
assert Note.objects.get(id=str(layout.to_uuid(%(big)d))).text == "given"
assert Note.objects.filter(id__in=[%(big)d, notes[0].pk]).count() == 2
assert [n.pk for n in Note.objects.exclude(pk=%(big)d).order_by("pk")] == sorted(n.pk for n in notes)
# The column holds the core's UUID of the ID.
with connection.cursor() as c:
    c.execute("SELECT id FROM notes_note WHERE text = 'given'")
    assert c.fetchone()[0] == layout.to_uuid(%(big)d).hex
# A relation to it: the foreign key column holds the UUID too.
comment = Comment.objects.create(note=given)
assert Comment.objects.get(note_id=%(big)d) == comment and comment.note_id == %(big)d
# A UUID the bridge did not make for this layout: refused as Django's UUIDField refuses junk (a
# ValidationError, with the core's reason), never a wrong row.
for bad in (uuid.uuid4(), shardid.Layout.TWITTER.to_uuid(%(twitter)d)):
    try:
        Note.objects.get(id=bad)
    except ValidationError as e:
        assert "Not an ID or a UUID of this layout" in str(e), e
    else:
        raise AssertionError(f"{bad} was read as an ID")
try:
    Note._meta.pk.clean("not-a-uuid", None)
except ValidationError:
    pass
else:
    raise AssertionError("junk accepted")
# Django REST framework: the UUID out, the UUID or the ID in; the relation written as the UUID.
class NoteSerializer(serializers.ModelSerializer):
    class Meta:
        model = Note
        fields = ["id", "text"]
        read_only_fields = []
class CommentSerializer(serializers.ModelSerializer):
    class Meta:
        model = Comment
        fields = ["id", "note"]
assert NoteSerializer(given).data == {"id": str(layout.to_uuid(%(big)d)), "text": "given"}
assert CommentSerializer(comment).data["note"] == str(layout.to_uuid(%(big)d))
for sent in (str(layout.to_uuid(%(big)d)), %(big)d, "%(big)d"):
    s = CommentSerializer(data={"note": sent})
    assert s.is_valid(), s.errors
    assert s.validated_data["note"] == given
from shardid.rest_framework import ShardIdUuidField
field = ShardIdUuidField(layout=layout)
try:
    field.to_internal_value(str(uuid.uuid4()))
except serializers.ValidationError as e:
    assert "Not an ID or a UUID of this layout" in str(e.detail), e.detail
else:
    raise AssertionError("a UUIDv4 accepted")
print("uuid field ok")
"""


def test_django_uuid_field_and_rest_framework(tmp_path: Path) -> None:
    pytest.importorskip("django")
    pytest.importorskip("rest_framework")
    django_project(tmp_path, MODELS, apps=("rest_framework",))
    done = subprocess.run(
        [sys.executable, "-c", CHECK % {"big": BIG, "twitter": TWITTER}],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0 and "uuid field ok" in done.stdout, done.stdout + done.stderr
    migration = (tmp_path / "notes" / "migrations" / "0001_initial.py").read_text()
    # Migrations name the field where users import it, without the generator default.
    assert "shardid.django.ShardIdUUIDField(primary_key=True" in migration, migration
    assert "next_id" not in migration
