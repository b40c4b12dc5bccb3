"""uWSGI's default prefork (no ``--lazy-apps``): the app is loaded in the master and the workers
are forked in C, without Python's ``os.register_at_fork`` hooks (issue 60, finding 1). A plain
``Generator`` made in the master refuses in every worker, and a lease made there takes a shard
of its own in each, none the master's; no ID is handed out twice.

uWSGI is compiled from source by ``pip install uwsgi`` (2.0.31: 27 s of CPU), so
scripts/setup.sh builds its wheel once into pip's cache and requirements.txt installs it from
there; the test takes about 2 s. ``tests/python/test_c_fork.py`` makes the same fork in C, with
``ctypes``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

UWSGI = shutil.which("uwsgi", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))


WORKERS = 4

# Loaded once, in the master: the generator and the lease are made (and used) before the fork.
APP = """
import json, os, sys, time
import shardid
from shardid import Layout

TWITTER = Layout.preset("twitter")
generator = shardid.Generator(TWITTER, 5)
lease = shardid.lease(TWITTER, os.environ["SHARDID_TEST_SHARDS"], range(0, 16))
MASTER = {"pid": os.getpid(), "shard": lease.shard, "ids": generator.next_ids(100) + lease.next_ids(100)}

def application(environ, start_response):
    time.sleep(0.2)  # the requests under way at once go to several workers
    try:
        plain = {"ids": generator.next_ids(100)}
    except shardid.ForkedGeneratorError as e:
        plain = {"refused": e.code}
    body = json.dumps({
        "pid": os.getpid(), "master": MASTER, "plain": plain,
        "shard": lease.shard, "ids": lease.next_ids(1000),
    }).encode()
    start_response("200 OK", [("Content-Type", "application/json")])
    return [body]
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str, out: list[dict[str, Any]]) -> None:
    with urllib.request.urlopen(url, timeout=10) as r:
        out.append(json.loads(r.read()))


def test_workers_forked_by_uwsgi_refuse_the_masters_generator_and_lease_shards_of_their_own(tmp_path: Path) -> None:
    assert UWSGI is not None, "uwsgi is missing: tests/python/requirements.txt installs it"
    (tmp_path / "app.py").write_text(APP)
    port = free_port()
    env = dict(os.environ, SHARDID_TEST_SHARDS=str(tmp_path / "shards"))
    server = subprocess.Popen(
        [UWSGI, "--master", "--processes", str(WORKERS), "--http-socket", f"127.0.0.1:{port}",
         "--chdir", str(tmp_path), "--wsgi-file", "app.py", "--need-app", "--die-on-term",
         "--disable-logging", "--home", sys.prefix],  # fmt: skip
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    answers: list[dict[str, Any]] = []
    try:
        deadline = time.monotonic() + 30
        while True:  # until the app answers (the master loads it before forking)
            try:
                get(f"http://127.0.0.1:{port}/", answers)
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "uWSGI did not start"
                time.sleep(0.1)
        # Rounds of requests at once, until several workers answered (bounded: 10 rounds).
        for _ in range(10):
            threads = [threading.Thread(target=get, args=(f"http://127.0.0.1:{port}/", answers)) for _ in range(2 * WORKERS)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(15)
            if len({a["pid"] for a in answers}) >= 3:
                break
    finally:
        server.terminate()
        try:
            output = server.communicate(timeout=15)[0].decode(errors="replace")
        except subprocess.TimeoutExpired:
            server.kill()
            output = server.communicate()[0].decode(errors="replace")
    master = answers[0]["master"]
    pids = {a["pid"] for a in answers}
    assert len(pids) >= 2, f"one worker answered every request:\n{output[-2000:]}"
    assert master["pid"] not in pids, "the master answered: the app was not loaded before the fork"
    for a in answers:
        assert a["plain"] == {"refused": "FORKED_GENERATOR"}, f"worker {a['pid']} used the master's generator: {a['plain']}"
    shards = {a["pid"]: a["shard"] for a in answers}
    assert master["shard"] not in shards.values(), "a worker kept the master's shard"
    assert len(set(shards.values())) == len(pids), f"two workers on one shard: {shards}"
    ids = master["ids"] + [i for a in answers for i in a["ids"]]
    assert len(ids) == len(set(ids)), f"{len(ids) - len(set(ids))} IDs handed out twice"
