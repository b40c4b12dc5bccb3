"""Successive short processes hand out consecutive numbers (issue 59, item 3): DenseIds and
Serials never closed give their unused rest back at exit (atexit), and on SIGTERM where the
process has no handler of its own; a handler of the application's is left alone. Before, each
process skipped the rest of its segment (1, 1001, 2001, ...) and Django's manage.py runs did."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import django_project
from django_project import migration

TAKE = """
import json, sys
from shardid.segments import DenseIds, Serials, create_serial, create_tag
url = sys.argv[1]
create_tag(url, "orders")
create_serial(url, "inv", "INV-{yyyy}-{seq:6}", zone="UTC")
ids = DenseIds(url, "orders")
serials = Serials(url, "inv", "INV-{yyyy}-{seq:6}", zone="UTC")
print(json.dumps([ids.next_id(), serials.next_serial()[-6:]]), flush=True)
"""


def take(url: str, after: str = "") -> list[object]:
    done = subprocess.run([sys.executable, "-c", TAKE + after, url], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[0])  # type: ignore[no-any-return]


def test_ten_processes_that_never_close_hand_out_consecutive_numbers(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ids.db'}"
    got = [take(url) for _ in range(10)]
    # INV-{yyyy}: the year's serials, so only New Year's midnight itself could split them.
    assert got == [[n, f"{n:06}"] for n in range(1, 11)]


def signalled(url: str, before: str) -> tuple[list[object], int, str]:
    """A process that runs ``before``, takes, prints, then waits, sent SIGTERM once it printed."""
    child = subprocess.Popen([sys.executable, "-c", before + TAKE + "\nimport time\ntime.sleep(30)\n", url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        started = time.monotonic()
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=20)
        assert time.monotonic() - started < 5  # bounded: never held long at exit
    finally:
        child.kill()
    return json.loads(line), child.returncode, out + err


def test_sigterm_gives_back_and_still_ends_the_process_by_the_signal(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ids.db'}"
    first, status, _ = signalled(url, "")
    assert status == -signal.SIGTERM  # ended as SIGTERM ends it
    assert take(url) == [2, "000002"]  # the rest was given back
    # A handler of the application's, installed before the first segment: it runs, ours is not
    # installed.
    own = 'import signal, sys\nsignal.signal(signal.SIGTERM, lambda *a: (print("own handler", flush=True), sys.exit(3)))\n'
    _, status, out = signalled(url, own)
    assert status == 3 and "own handler" in out, out
    # Its sys.exit ran atexit: given back there.
    assert first == [1, "000001"] and take(url) == [4, "000004"]


MODELS = """
from django.db import models
from shardid.django import DenseIdField, SerialField

class Order(models.Model):
    number = DenseIdField(tag="orders", unique=True)
    invoice = SerialField(tag="inv", format="INV-{yyyy}-{seq:6}", zone="UTC", unique=True)
"""


def test_successive_manage_py_runs_hand_out_consecutive_numbers(tmp_path: Path) -> None:
    pytest.importorskip("django")
    django_project(tmp_path, MODELS, apps=("shardid.django",))
    migrations = tmp_path / "notes" / "migrations"
    migrations.mkdir()
    (migrations / "__init__.py").write_text("")

    def manage(*args: str) -> str:
        done = subprocess.run([sys.executable, "manage.py", *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    manage("makemigrations", "notes")
    install = 'InstallSegments(tags=["orders"])', 'CreateSerial("inv", "INV-{yyyy}-{seq:6}", zone="UTC")'
    (migrations / "0002_shardid.py").write_text(migration(*install, dependencies=[("notes", "0001_initial")]))
    manage("migrate")
    create = "from notes.models import Order; o = Order.objects.create(); print('made', o.number, o.invoice[-6:])"
    # Ten runs, as issue 59 asks: each a process of its own that never closes (about 0.5 s of
    # CPU each), each starting where the one before stopped.
    made = [manage("shell", "-c", create).split("made ", 1)[1].split() for _ in range(10)]
    assert made == [[str(n), f"{n:06}"] for n in range(1, 11)]


URLS = """
import os
from django.http import JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from notes.models import Order

@csrf_exempt
def create(request):
    order = Order.objects.create()
    return JsonResponse({"number": order.number, "pid": os.getpid()})

urlpatterns = [path("orders", create)]
"""


def test_a_gunicorn_reload_hands_out_the_next_numbers(tmp_path: Path) -> None:
    """The issue's gunicorn HUP moved dense numbers from 9,251 to 18,005: the old workers exit
    gracefully (gunicorn's own SIGTERM handler, then atexit) and give their rest back."""
    pytest.importorskip("django")
    pytest.importorskip("gunicorn")
    from django_server import gunicorn

    django_project(tmp_path, MODELS, apps=("shardid.django",))
    settings = tmp_path / "settings.py"
    settings.write_text(settings.read_text() + "ROOT_URLCONF = 'urls'\nALLOWED_HOSTS = ['127.0.0.1']\nDEBUG = False\nMIDDLEWARE = []\n")
    (tmp_path / "urls.py").write_text(URLS)
    migrations = tmp_path / "notes" / "migrations"
    migrations.mkdir()
    (migrations / "__init__.py").write_text("")
    for args in (["makemigrations", "notes"], ["migrate"]):
        if args == ["migrate"]:
            install = 'InstallSegments(tags=["orders"])', 'CreateSerial("inv", "INV-{yyyy}-{seq:6}", zone="UTC")'
            (migrations / "0002_shardid.py").write_text(migration(*install, dependencies=[("notes", "0001_initial")]))
        done = subprocess.run([sys.executable, "manage.py", *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
    with gunicorn(tmp_path, workers=1) as server:
        first = server.post("/orders", "")
        server.process.send_signal(signal.SIGHUP)  # new workers; the old one exits gracefully
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                os.kill(first["pid"], 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        second = server.post("/orders", "")
    assert second["pid"] != first["pid"], server.output
    assert [first["number"], second["number"]] == [1, 2], server.output
