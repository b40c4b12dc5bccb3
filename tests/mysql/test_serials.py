"""Business serial numbers from Python on a real MariaDB (shardid.segments.Serials and
create_serial over PyMySQL, every statement the core's: MysqlSerials beside the segments'
steps): 3 processes of 4 threads taking from one tag while one is killed with SIGKILL, Python
and Rust (core/examples/mysql_serials.rs) taking from one tag, the errors the other databases
raise (SERIAL_MISMATCH, UNKNOWN_TAG naming create_serial, CLOSED, UNKNOWN_TIME_ZONE,
DATABASE_UNREACHABLE, also for a server stopped under a running allocator), a forked child, and
Django's CreateSerial and SerialField on MariaDB."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from conftest import install, one, rows
from examples import example

import shardid
from shardid.segments import Serials, create_serial
from shardid.sql import mysql_serials, segments
from together import on_threads
from django_project import database, django_app
from serial_checks import forked_child_takes_its_own

# 2025-11-25 23:59:59 in Shanghai (the Rust example's clock), and a day later.
BEFORE_MIDNIGHT = 1_764_086_399_000
NEXT_DAY = BEFORE_MIDNIGHT + 86_400_000


def setup(conn: Any, schema: str) -> None:
    """The segments' DDL, then the registrations' (both the core's, one statement at a time)."""
    install(conn, segments(schema, dialect="mysql"))
    install(conn, mysql_serials(schema))


# A process of 4 threads issuing serials now; one a line into OUT, each written as soon as it is
# issued (so a killed process leaves what it issued).
WORKER = """
import json, os, sys, threading, time
from shardid.segments import Serials
url, schema, tag, fmt, zone, out = sys.argv[1:7]
duration = int(sys.argv[7])
s = Serials(url, tag, fmt, zone=zone, schema=schema, min_size=5, max_size=200, target_ms=100, wait_ms=10000)
fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
print("ready", flush=True)
start = float(sys.stdin.readline())
counts = []
def run():
    n = 0
    while time.time() - start < duration / 1000:
        os.write(fd, (s.next_serial() + "\\n").encode())
        n += 1
    counts.append(n)
while time.time() < start:
    time.sleep(0.001)
ts = [threading.Thread(target=run) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
s.close()
print(json.dumps({"count": sum(counts), "skipped": s.skipped, "fetches": s.fetches}))
"""


def test_3_processes_x_4_threads_one_killed(server: Any, conn: Any, tmp_path: Path) -> None:
    schema, tag, fmt, zone = "ser_py", "orders", "OR-{yyyy}{MM}{dd}-{seq:7}", "UTC"
    setup(conn, schema)
    url = server.url_for(schema)
    create_serial(url, tag, fmt, zone=zone, schema=schema)
    create_serial(url, tag, fmt, zone=zone, schema=schema)  # again alike: nothing
    outs = [tmp_path / f"out-{i}" for i in range(3)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, url, schema, tag, fmt, zone, str(out), "1500"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for out in outs
    ]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    start = time.time() + 0.2
    for p in procs:
        assert p.stdin is not None
        p.stdin.write(f"{start}\n")
        p.stdin.flush()
    time.sleep(max(0.0, start + 0.6 - time.time()))
    procs[2].send_signal(signal.SIGKILL)
    reports = []
    for i, p in enumerate(procs):
        stdout, _ = p.communicate(timeout=60)
        if i == 2:
            assert p.returncode == -signal.SIGKILL
            continue
        assert p.returncode == 0, stdout
        reports.append(json.loads(stdout.strip().splitlines()[-1]))
    written = [[line for line in out.read_text().split("\n") if line] if out.exists() else [] for out in outs]
    serials = [s for lines in written for s in lines]
    assert written[2], "the killed process had issued serials"
    assert [r["count"] for r in reports] == [len(written[0]), len(written[1])]
    assert all(r["count"] > 100 and r["fetches"] > 1 for r in reports), reports
    assert len(set(serials)) == len(serials), "a serial twice"
    parser = shardid.SerialFormat(fmt, zone)
    per_period: dict[str, list[int]] = defaultdict(list)
    for serial in serials:
        assert re.fullmatch(r"OR-\d{8}-\d{7}", serial), serial
        parsed = parser.parse(serial)
        assert parsed.number == int(serial[-7:]) and parsed.period.replace("-", "") == serial[3:11]
        per_period[parsed.period].append(parsed.number)
    # Each period's numbers come from the period's own tag, made at its first take.
    tags = {bytes(r[0]).decode() for r in rows(conn, f"SELECT tag FROM {schema}.shardid_tags")}
    assert {f"{tag}@{period}" for period in per_period} <= tags
    for numbers in per_period.values():
        assert len(numbers) == len(set(numbers))


def test_python_and_rust_take_from_one_tag(server: Any, conn: Any) -> None:
    binary = example("mysql_serials")  # SHARDID_MYSQL_EXAMPLES, or built now
    schema, tag, fmt, zone = "ser_both", "both", "BT-{yyyy}{MM}{dd}-{seq:6}", "Asia/Shanghai"
    setup(conn, schema)
    url = server.url_for(schema)
    create_serial(url, tag, fmt, zone=zone, schema=schema)
    rust = subprocess.Popen(
        [binary, "take", url, schema, tag, fmt, zone, "4", "300", str(BEFORE_MIDNIGHT)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ours: list[str] = []
    lock = threading.Lock()
    with Serials(url, tag, fmt, zone=zone, schema=schema, min_size=10, max_size=40) as s:

        def run() -> None:
            got = [s.next_serial_at(BEFORE_MIDNIGHT) for _ in range(300)]
            with lock:
                ours.extend(got)

        on_threads([run] * 4)
    stdout, stderr = rust.communicate(timeout=120)
    assert rust.returncode == 0, stderr
    theirs = stdout.split()
    assert len(theirs) == len(ours) == 1_200
    both = theirs + ours
    assert len(set(both)) == 2_400, "a serial twice across the languages"
    assert all(re.fullmatch(r"BT-20251125-\d{6}", serial) for serial in both)
    # Both gave their rests back at close: the period's numbers are dense, no hole but what a
    # segment taken after a rest leaves.
    numbers = sorted(int(serial[-6:]) for serial in both)
    assert numbers[0] == 1 and numbers[-1] < 2_400 + 2 * 40 * 2


def test_the_errors(server: Any, conn: Any) -> None:
    schema, fmt, zone = "ser_errors", "ER-{yyyy}{MM}{dd}-{seq:6}", "Asia/Shanghai"
    setup(conn, schema)
    url = server.url_for(schema)
    create_serial(url, "er", fmt, zone=zone, schema=schema)
    # The same tag in another zone, another tag printing the same serials, connecting otherwise.
    with pytest.raises(shardid.SerialMismatchError, match=r"serial tag er is registered as .* in Asia/Shanghai") as e:
        create_serial(url, "er", fmt, zone="UTC", schema=schema)
    assert e.value.code == "SERIAL_MISMATCH" and e.value.tag == "er"
    with pytest.raises(shardid.SerialMismatchError, match="has the format of tag er"):
        create_serial(url, "er2", fmt, zone=zone, schema=schema)
    with pytest.raises(shardid.SerialMismatchError, match="serial tag er "):
        Serials(url, "er", fmt, zone="UTC", schema=schema)
    assert one(conn, f"SELECT COUNT(*) FROM {schema}.shardid_serials") == 1, "nothing registered by a mismatch"
    # A tag never registered: the message names create_serial, at once.
    started = time.monotonic()
    with pytest.raises(shardid.UnknownTagError) as unknown:
        Serials(url, "never", fmt, zone=zone, schema=schema)
    assert str(unknown.value) == "no tag never: create it first (create_serial)"
    assert unknown.value.code == "UNKNOWN_TAG" and time.monotonic() - started < 2
    # The registration removed under a running allocator: the next period's take says so.
    with Serials(url, "er", fmt, zone=zone, schema=schema, wait_ms=2_000) as s:
        assert s.next_serial_at(BEFORE_MIDNIGHT) == "ER-20251125-000001"
        with conn.cursor() as cur:
            cur.execute(f"DELETE FROM {schema}.shardid_serials WHERE tag = 'er'")
        with pytest.raises(shardid.UnknownTagError, match=r"^no tag er: create it first \(create_serial\)$"):
            s.next_serial_at(NEXT_DAY)
    create_serial(url, "er", fmt, zone=zone, schema=schema)
    # Bad zones, and a URL the core cannot read.
    with pytest.raises(shardid.UnknownTimeZoneError) as bad_zone:
        create_serial(url, "er", fmt, zone="Mars/Olympus", schema=schema)
    assert bad_zone.value.code == "UNKNOWN_TIME_ZONE"
    with pytest.raises(shardid.UnknownTimeZoneError):
        Serials(url, "er", fmt, zone="Mars/Olympus", schema=schema)
    with pytest.raises(shardid.InvalidArgumentError):
        Serials("mysql://root@127.0.0.1:notaport/x", "er", fmt, zone=zone, schema=schema)
    with pytest.raises(shardid.InvalidArgumentError):
        Serials(url, "er", fmt, zone=zone, schema="seg; DROP DATABASE x")
    # After close: CLOSED, every call.
    s = Serials(url, "er", fmt, zone=zone, schema=schema)
    first = s.next_serial_at(BEFORE_MIDNIGHT)
    s.close()
    s.close()  # twice is fine
    for _ in range(2):
        with pytest.raises(shardid.ClosedError) as closed:
            s.next_serial()
        assert str(closed.value) == "Serials of tag er was closed: make a new one"
    # close() gave the rest back: a new allocator continues right after.
    with Serials(url, "er", fmt, zone=zone, schema=schema) as again:
        assert again.parse(again.next_serial_at(BEFORE_MIDNIGHT)).number == s.parse(first).number + 1
    # The segments' DDL without the registrations': DATABASE naming the DDL to run.
    install(conn, segments("ser_half", dialect="mysql"))
    half = server.url_for("ser_half")
    for call in (
        lambda: create_serial(half, "er", fmt, zone=zone, schema="ser_half"),
        lambda: Serials(half, "er", fmt, zone=zone, schema="ser_half"),
    ):
        with pytest.raises(shardid.DatabaseError, match="--dialect mysql --serials --schema ser_half") as missing:
            call()
        assert missing.value.code == "DATABASE" and "shardid_serials" in str(missing.value)
    # No server there: DATABASE_UNREACHABLE, from create_serial and from Serials.
    down = "mysql://root@127.0.0.1:1/x"
    for call in (
        lambda: create_serial(down, "er", fmt, zone=zone, schema=schema),
        lambda: Serials(down, "er", fmt, zone=zone, schema=schema),
    ):
        with pytest.raises(shardid.DatabaseUnreachableError) as unreachable:
            call()
        assert unreachable.value.code == "DATABASE_UNREACHABLE" and unreachable.value.__cause__ is not None


def test_a_server_stopped_under_a_running_allocator(server: Any, conn: Any) -> None:
    schema, fmt, zone = "ser_down", "DN-{yyyy}{MM}{dd}-{seq:6}", "Asia/Shanghai"
    setup(conn, schema)
    url = server.url_for(schema)
    create_serial(url, "dn", fmt, zone=zone, schema=schema)
    s = Serials(url, "dn", fmt, zone=zone, schema=schema, wait_ms=1_000)
    assert s.next_serial_at(BEFORE_MIDNIGHT) == "DN-20251125-000001"
    server.stop_server()
    try:
        # The next period needs a fetch: the wait ends with DATABASE_UNREACHABLE.
        started = time.monotonic()
        with pytest.raises(shardid.DatabaseUnreachableError) as e:
            s.next_serial_at(NEXT_DAY)
        assert e.value.code == "DATABASE_UNREACHABLE" and time.monotonic() - started < 5
    finally:
        server.start_server()
    # Back: the allocator connects again by itself.
    deadline = time.monotonic() + 10
    while True:
        try:
            assert s.next_serial_at(NEXT_DAY) == "DN-20251126-000001"
            break
        except shardid.DatabaseUnreachableError:
            assert time.monotonic() < deadline
    s.close()


# A parent takes serials, forks; the child takes its own while the parent goes on.
def test_a_forked_child_takes_serials_of_its_own(server: Any, conn: Any) -> None:
    setup(conn, "ser_fork")
    url = server.url_for("ser_fork")
    create_serial(url, "f", "F-{seq:6}", zone="UTC", schema="ser_fork")
    forked_child_takes_its_own(url)


SETTINGS = """
import pymysql

pymysql.install_as_MySQLdb()

SECRET_KEY = "test"
INSTALLED_APPS = ["shardid.django", "shop"]
DATABASES = {{"default": {database}}}
USE_TZ = True
"""

MODELS = """
from django.db import models
from shardid.django import SerialField

class Order(models.Model):
    number = SerialField(format="DJ-{yyyy}{MM}{dd}-{seq:6}", tag="dj", zone="Asia/Shanghai", schema="seg_dj", unique=True)
"""

MIGRATION = """
from django.db import migrations, models
from shardid.django import CreateSerial, InstallSegments, SerialField

class Migration(migrations.Migration):
    initial = True
    operations = [
        InstallSegments(schema="seg_dj"),
        CreateSerial("dj", "DJ-{yyyy}{MM}{dd}-{seq:6}", zone="Asia/Shanghai", schema="seg_dj"),
        migrations.CreateModel("Order", [
            ("id", models.BigAutoField(primary_key=True)),
            ("number", SerialField(format="DJ-{yyyy}{MM}{dd}-{seq:6}", tag="dj", zone="Asia/Shanghai", schema="seg_dj", unique=True)),
        ]),
    ]
"""

# Orders from 4 threads, then a CreateSerial of the same format under another tag (SERIAL_MISMATCH),
# and NextSerial (PostgreSQL's only) refused.
SCRIPT = """
import json, threading
import django
django.setup()
from django.db import connection
from shop.models import Order
def run():
    for _ in range(25):
        Order.objects.create()
    connection.close()
ts = [threading.Thread(target=run) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
from shardid.django import CreateSerial
from shardid import SerialMismatchError
from django.db import connection
try:
    with connection.schema_editor() as editor:
        CreateSerial("dj2", "DJ-{yyyy}{MM}{dd}-{seq:6}", zone="Asia/Shanghai", schema="seg_dj").database_forwards("shop", editor, None, None)
    mismatch = "no error"
except SerialMismatchError as e:
    mismatch = e.code
from django.db import NotSupportedError
from shardid.django import NextSerial
try:
    Order.objects.annotate(n=NextSerial("dj", "DJ-{yyyy}{MM}{dd}-{seq:6}", "Asia/Shanghai", schema="seg_dj")).first()
    next_serial = "no error"
except NotSupportedError as e:
    next_serial = "NextSerial is PostgreSQL's" if "PostgreSQL's" in str(e) else str(e)
print(json.dumps({"numbers": [o.number for o in Order.objects.all()], "mismatch": mismatch, "next_serial": next_serial}))
"""


def test_django_create_serial_and_serial_field_on_mariadb(server: Any, conn: Any, tmp_path: Path) -> None:
    pytest.importorskip("django")
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE django_serials")
    (tmp_path / "settings.py").write_text(SETTINGS.format(database=database("mysql", server.port, "django_serials")))
    django_app(tmp_path, "shop", {"models.py": MODELS, "migrations/0001_initial.py": MIGRATION})
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "DJANGO_SETTINGS_MODULE": "settings"}

    def run(*args: str) -> str:
        done = subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    run("-m", "django", "migrate", "-v", "0")
    assert rows(conn, "SELECT tag, zone FROM seg_dj.shardid_serials") == [("dj", "Asia/Shanghai")]
    got = json.loads(run("-c", SCRIPT).strip().splitlines()[-1])
    numbers = got["numbers"]
    assert len(numbers) == len(set(numbers)) == 100
    assert all(re.fullmatch(r"DJ-\d{8}-\d{6}", n) for n in numbers)
    assert got["mismatch"] == "SERIAL_MISMATCH"
    assert got["next_serial"] == "NextSerial is PostgreSQL's", "refused on MySQL, saying so"
    # Reversed: the registration and shardid's tables are gone.
    run("-m", "django", "migrate", "shop", "zero", "-v", "0")
    assert rows(conn, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'seg_dj'") == []
