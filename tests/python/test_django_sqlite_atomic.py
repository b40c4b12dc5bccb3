"""DenseIdField and SerialField inside transaction.atomic() on Django's SQLite backend (issue
44): the number is taken on Django's own connection, in the caller's transaction. A take on the
allocator's own connection would wait for the write lock the transaction holds (and fail after
the busy timeout with SEGMENT_UNAVAILABLE), or commit under a deferred transaction that has
read and make its first write fail with `database is locked`. Each test runs a short script in
a Django project on a SQLite file whose transactions begin IMMEDIATE (they hold the write lock
from the start: the case that waited)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from django_project import IN_CHILDREN, migration

pytest.importorskip("django")

MODELS = """
from django.db import models
from shardid.django import DenseIdField, SerialField

class Order(models.Model):
    number = DenseIdField(tag="orders", unique=True)
    invoice = SerialField(tag="inv", format="INV-{yyyy}{MM}{dd}-{seq:6}", zone="UTC", unique=True)
    # Volume hiding: steps of 1 to 5 between consecutive serials, also inside a transaction.
    hidden = SerialField(tag="hid", format="H-{yyyy}-{seq:8}", zone="UTC", unique=True)
"""

INSTALL = migration(
    'InstallSegments(tags=["orders"])',
    'CreateSerial("inv", "INV-{yyyy}{MM}{dd}-{seq:6}", zone="UTC")',
    'CreateSerial("hid", "H-{yyyy}-{seq:8}", zone="UTC", max_gap=5)',
    dependencies=[("notes", "0001_initial")],
)

PRELUDE = """
import os, time
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")
import django
django.setup()
from django.db import IntegrityError, connection, transaction
from notes.models import Order


# The `error` that `call()` raises; AssertionError when it takes a number instead.
def refused(call, error):
    try:
        call()
    except error as e:
        return e
    raise AssertionError("taken")
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from conftest import django_project

    path = tmp_path_factory.mktemp("atomic")
    django_project(path, MODELS, apps=("shardid.django",))
    settings = path / "settings.py"
    text = settings.read_text()
    assert "'OPTIONS': {'timeout': 30}" in text
    # Every atomic() holds the write lock from its start (Django 5.1's transaction_mode), and a
    # take on another connection would wait 2 s for it, not 30.
    settings.write_text(text.replace("'OPTIONS': {'timeout': 30}", "'OPTIONS': {'timeout': 2, 'transaction_mode': 'IMMEDIATE'}"))
    migrations = path / "notes" / "migrations"
    migrations.mkdir()
    (migrations / "__init__.py").write_text("")
    run(path, "manage.py", "makemigrations", "notes")
    (migrations / "0002_shardid.py").write_text(INSTALL)
    # The same project with Django's default deferred transactions.
    (path / "settings_deferred.py").write_text("from settings import *\nDATABASES['default']['OPTIONS'] = {'timeout': 2}\n")
    # And on a database in memory, which no other connection can share.
    (path / "settings_memory.py").write_text("from settings import *\nDATABASES['default']['NAME'] = ':memory:'\n")
    run(path, "manage.py", "migrate")
    return path


def run(path: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, *args], cwd=path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def script(path: Path, body: str, settings: str = "settings") -> str:
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + body], cwd=path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": settings},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_more_than_a_segment_inside_one_immediate_transaction(project: Path) -> None:
    out = script(project, """
Order.objects.create()  # the process's allocator takes its segment (1,000 numbers) here
allocated = Order.objects.get().number
# A take on another connection would wait for this transaction's write lock and fail after
# the busy timeout (2 s): every create below would raise.
with transaction.atomic():
    made = [Order.objects.create() for _ in range(1_200)]
numbers = [o.number for o in made]
# Taken in the transaction, one at a time after the allocator's segment: none of it.
assert numbers == list(range(numbers[0], numbers[0] + 1_200)) and numbers[0] > allocated + 999, (allocated, numbers[:3])
serials = [int(o.invoice[-6:]) for o in made]
assert serials == list(range(serials[0], serials[0] + 1_200)), serials[:3]
hidden = [int(o.hidden[-8:]) for o in made]
steps = {b - a for a, b in zip(hidden, hidden[1:])}
assert steps <= set(range(1, 6)) and len(steps) > 1, steps
assert Order.objects.count() == 1_201
print("ok")
""")
    assert out.strip() == "ok"


def test_a_deferred_transaction_that_has_read(project: Path) -> None:
    # The segment's commit on another connection would make the transaction's first write fail
    # with `database is locked` (its read snapshot is no longer the latest).
    out = script(project, """
assert connection.settings_dict["OPTIONS"] == {"timeout": 2}
with transaction.atomic():
    before = Order.objects.count()
    made = [Order.objects.create() for _ in range(3)]
assert Order.objects.count() == before + 3
print("ok")
""", settings="settings_deferred")
    assert out.strip() == "ok"


def test_a_rollback_gives_its_numbers_back(project: Path) -> None:
    out = script(project, """
try:
    with transaction.atomic():
        old = [Order.objects.create() for _ in range(3)]
        draft = Order()  # made, not saved
        raise RuntimeError("roll back")
except RuntimeError:
    pass
with transaction.atomic():
    new = [Order.objects.create() for _ in range(4)]
assert [o.number for o in new] == [o.number for o in [*old, draft]], ([o.number for o in old], [o.number for o in new])
assert [o.invoice for o in new] == [o.invoice for o in [*old, draft]]
# The object made in the rolled-back transaction, saved later with its old number: refused,
# never a duplicate (unique=True).
try:
    with transaction.atomic():
        draft.save()
    raise AssertionError("saved twice")
except IntegrityError:
    pass
assert Order.objects.filter(number=draft.number).count() == 1
# A transaction of set_autocommit(False) is one too.
transaction.set_autocommit(False)
try:
    manual = Order.objects.create()
    transaction.rollback()
    again = Order.objects.create()
    transaction.commit()
finally:
    transaction.set_autocommit(True)
assert again.number == manual.number and again.invoice == manual.invoice, (manual.number, again.number)
assert Order.objects.filter(number=again.number).count() == 1
print("ok")
""")
    assert out.strip() == "ok"


def test_processes_inside_and_outside_atomic_share_the_numbers(project: Path) -> None:
    out = script(project, IN_CHILDREN + """
def work(worker):
    for i in range(20):
        if worker == 2:  # the allocator's segments, outside any transaction
            Order.objects.create()
            continue
        with transaction.atomic():
            for _ in range(5):
                Order.objects.create()

assert in_children(3, work)
rows = list(Order.objects.values_list("number", "invoice", "hidden"))
for column in zip(*rows):
    assert len(set(column)) == len(rows), "a number twice"
print("ok", len(rows))
""")
    assert out.strip().startswith("ok"), out


def test_errors_inside_atomic(project: Path) -> None:
    out = script(project, """
from shardid import SerialMismatchError, UnknownTagError
from shardid.django import dense_id
from shardid.django.serials import next_serial
with transaction.atomic():
    e = refused(lambda: dense_id("no-such-tag"), UnknownTagError)
    # The migration operation a Django project creates it with (issue 59), not create_tag.
    assert e.tag == "no-such-tag" and e.create == 'InstallSegments(schema="seg", tags=["no-such-tag"]) in a migration'
    assert refused(lambda: next_serial("inv", "INV-{yyyy}-{seq:6}", "UTC"), SerialMismatchError).tag == "inv"
    assert refused(lambda: next_serial("nope", "N-{seq:6}", "UTC"), UnknownTagError).create == "CreateSerial('nope', 'N-{seq:6}', zone='UTC') in a migration"
# A transaction an error has broken takes nothing, as Django's own queries refuse to run.
from django.db import DatabaseError
from django.db.transaction import TransactionManagementError
with transaction.atomic():
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM no_such_table")
    except DatabaseError:
        pass
    connection.needs_rollback = True  # as an inner atomic() that caught the error marks it
    refused(Order.objects.create, TransactionManagementError)
    refused(lambda: dense_id("orders"), TransactionManagementError)
print("ok")
""")
    assert out.strip() == "ok"


def test_in_memory_inside_atomic_only(project: Path) -> None:
    # Inside atomic() (every test of Django's TestCase) the numbers are taken on Django's
    # connection, so the in-memory database serves them; outside, the allocator would need a
    # connection of its own to it: UNSUPPORTED.
    out = script(project, """
from django.core.management import call_command
from shardid import UnsupportedError
call_command("migrate", verbosity=0)
with transaction.atomic():
    made = [Order.objects.create() for _ in range(3)]
assert [o.number for o in made] == [1, 2, 3], [o.number for o in made]
refused(Order.objects.create, UnsupportedError)
print("ok")
""", settings="settings_memory")
    assert out.strip() == "ok"


def test_other_databases_keep_the_allocator(project: Path) -> None:
    # The rule is SQLite's: on PostgreSQL and the MySQL family a transaction takes nothing on
    # Django's connection (their segments' own connections wait for no table lock).
    out = script(project, """
from shardid.django import leases
connection.vendor = "postgresql"  # what the rule reads, once per alias
with transaction.atomic():
    assert leases._sqlite_transaction("default") is None
    assert leases._on_sqlite == {"default": False}
print("ok")
""")
    assert out.strip() == "ok"


def test_shardid_restored_marks_a_file_copied_back(project: Path) -> None:
    """Issue 42 on SQLite, from Django: the database file copied back from a consistent copy
    (the backup API), `manage.py shardid_restored`, and the next numbers pass every one handed
    out after the copy."""
    db = project / "db.sqlite3"
    assert db.exists(), sorted(p.name for p in project.iterdir())
    copy = project / "copy.sqlite3"
    out = script(project, f"""
import sqlite3
Order.objects.create()
with sqlite3.connect({str(db)!r}) as live, sqlite3.connect({str(copy)!r}) as backup:
    live.backup(backup)
print(max(Order.objects.create().number for _ in range(20)))
""")
    lost = int(out.split()[-1])
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    copy.rename(db)
    marked = run(project, "manage.py", "shardid_restored")
    assert "marked restored:" in marked and "0 tags" not in marked, marked
    out = script(project, """
print(Order.objects.create().number)
with transaction.atomic():
    print(Order.objects.create().number)
""")
    outside, inside = map(int, out.split())
    assert min(outside, inside) > lost, (outside, inside, lost)


def test_shardid_restored_after_starts_right_past_the_numbers_given(project: Path) -> None:
    """Issue 54 from Django: `manage.py shardid_restored --after orders=LAST --after
    inv=SERIAL --margin 3` after a file was copied back: the next number and the next serial
    are exactly the ones given plus 4, not past the rate's bound."""
    db = project / "db.sqlite3"
    copy = project / "copy.sqlite3"
    out = script(project, f"""
import sqlite3
Order.objects.create()
with sqlite3.connect({str(db)!r}) as live, sqlite3.connect({str(copy)!r}) as backup:
    live.backup(backup)
last = [Order.objects.create() for _ in range(20)][-1]
print(last.number, last.invoice)
""")
    lost_number, lost_serial = out.split()[-2:]
    # What the operator knows was issued last (from the lost server, say): past the segments
    # the copy's rows already hold, so that the next is the given one plus 4, not the row's.
    number = int(lost_number) + 5_000
    serial = f"{lost_serial[:-6]}{int(lost_serial[-6:]) + 5_000:06d}"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    copy.rename(db)
    # The premise, checked: the copy's rows are not past the numbers given (else the next is the
    # row's, rightly). The rows go into every message below, to read a failure by.
    copied = _rows(db)
    day = lost_serial.split("-")[1]
    period = f"inv@{day[:4]}-{day[4:6]}-{day[6:]}"
    assert copied["orders"][0] <= number + 4 and copied[period][0] <= int(serial[-6:]) + 4, copied
    marked = run(project, "manage.py", "shardid_restored", "--after", f"orders={number}", "--after", f"inv={serial}", "--margin", "3")
    assert "(--after:" in marked, marked
    restored = _rows(db)
    out = script(project, """
o = Order.objects.create()
print(o.number, o.invoice)
""")
    got_number, got_serial = out.split()[-2:]
    assert int(got_number) == number + 4, (number, got_number, lost_number, copied, restored, _rows(db), marked)
    assert got_serial == f"{serial[:-6]}{int(serial[-6:]) + 4:06d}", (serial, got_serial, copied, restored, _rows(db), marked)


def _rows(db: Path) -> dict[str, tuple[object, ...]]:
    """Each tag's row (next, step, updated_at) and marks (written_ms, rate, window_ms,
    window_n, restored), and the fence (fence, fenced_ms, restored), read from the file."""
    with closing(sqlite3.connect(db)) as conn:
        rows: dict[str, tuple[object, ...]] = {
            tag: (*rest, *conn.execute("SELECT written_ms, rate, window_ms, window_n, restored FROM shardid_tag_marks WHERE tag = ?", (tag,)).fetchall())
            for tag, *rest in conn.execute("SELECT tag, next, step, updated_at FROM shardid_tags")
        }
        rows["(fence)"] = tuple(conn.execute("SELECT fence, fenced_ms, restored FROM shardid_tag_fence").fetchall())
    return rows
