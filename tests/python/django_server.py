"""Django projects served for the tests: ``django-admin runserver`` for the ones that drive a
project in a browser (tests/python/test_django_admin.py, tests/postgres/test_django_auto_field.py),
and a real pre-fork gunicorn for the ones that POST to it from many clients at once, whichever
the database (tests/python/test_django_sqlite_gunicorn.py)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_it_answers(server: subprocess.Popen[str], timeout: float, ask: Any) -> None:
    """Calls ``ask()`` every 0.1 s until it raises no OSError; asserts, with what the server
    printed, when the server exits first or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            ask()
            return
        except OSError:
            printed = server.stdout or server.stderr
            assert server.poll() is None and time.monotonic() < deadline, printed.read() if printed else ""
            time.sleep(0.1)


@contextmanager
def runserver(project: Path, *args: str, timeout: float = 30) -> Iterator[str]:
    """Serves ``project`` (its ``settings`` module) on a free port of 127.0.0.1 (``args``:
    more of runserver's options) and yields the base URL once the admin's login page answers;
    the server is stopped on the way out."""
    port = free_port()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "settings", "PYTHONPATH": str(project)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "django", "runserver", f"127.0.0.1:{port}", "--noreload", *args],
        cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_it_answers(proc, timeout, lambda: urllib.request.urlopen(f"{base}/admin/login/", timeout=2).close())
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass
class Gunicorn:
    """A running gunicorn: its port, its process, and once stopped everything it printed."""

    port: int
    process: subprocess.Popen[str]
    output: str = ""

    def post(self, path: str, body: str, timeout: float = 30) -> dict[str, Any]:
        """POSTs ``body`` to ``path``: the JSON answer of a 2xx (an error status raises)."""
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=body.encode(), method="POST")
        with urllib.request.urlopen(request, timeout=timeout) as response:
            assert 200 <= response.status < 300, response.status
            answer: dict[str, Any] = json.loads(response.read())
            return answer


@contextmanager
def gunicorn(project: Path, workers: int = 4, timeout: float = 60) -> Iterator[Gunicorn]:
    """Serves ``project`` (its ``settings`` module on ``PYTHONPATH``) with gunicorn as Django
    projects are deployed: pre-fork, ``workers`` workers, the app loaded in the master
    (``--preload``, so whatever it opened is inherited by every worker). Yields once the port
    accepts connections; on the way out stops it with SIGTERM (the workers finish their requests
    and run their exit handlers) and keeps its output in ``output``."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(project), "DJANGO_SETTINGS_MODULE": "settings"}
    # gunicorn as installed beside this Python (the test virtualenv's).
    command = [str(Path(sys.executable).parent / "gunicorn"), "--preload", "-w", str(workers)]
    process = subprocess.Popen(
        [*command, "-b", f"127.0.0.1:{port}", "--log-level", "warning", "django.core.wsgi:get_wsgi_application()"],
        cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    server = Gunicorn(port, process)
    try:
        wait_until_it_answers(process, timeout, lambda: socket.create_connection(("127.0.0.1", port), timeout=1).close())
        yield server
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            server.output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            server.output, _ = process.communicate()
