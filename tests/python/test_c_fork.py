"""A fork() made in C, which runs none of Python's ``os.register_at_fork`` hooks (uWSGI's default
prefork does this; here ``ctypes`` calls libc's ``fork()``): every shardid object made before
it must still see the fork in the child (issue 60, finding 1). The native module registers a
``pthread_atfork`` child handler when imported, which every ``fork()`` runs.

- a plain ``Generator`` refuses in the child (``ForkedGeneratorError``): it holds the parent's
  shard (before: 197,952 of 200,000 IDs repeated);
- a ``LeasedGenerator`` (lock files) and a SQLite ``DatabaseLease`` (whose ID methods are the
  generator's own, with no Python frame to check the pid) take a shard of their own there
  (before: the parent's shard, every ID repeated);
- ``DenseIds`` and ``Serials`` take segments of their own there (before: the parent's segment).

Each case runs in a fresh interpreter (``python -c``), so no thread of pytest's is copied into
the child; each child makes a bounded number of IDs and reports them through a pipe.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from shardid import Layout

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fork() from libc through ctypes: Linux, where CI runs")

# The forking program: `c_fork(child)` forks through libc (the GIL held, as a C host forking its
# embedded interpreter would: no Python hook runs), runs `child()` in the child and returns what
# it reported as JSON. A `ShardIdError` in the child is reported as {"error": code}.
PRELUDE = """
import ctypes, json, os, sys, time
import shardid
from shardid import Layout

LIBC = ctypes.PyDLL(None)
TWITTER = Layout.preset("twitter")
# A time both processes make IDs at, after all else (then the state is ahead of the clock): two
# copies of one state hand out the same IDs there.
AT = shardid.now_ms() + 2_000

def c_fork(child):
    r, w = os.pipe()
    pid = LIBC.fork()
    if pid == 0:
        try:
            try:
                out = child()
            except shardid.ShardIdError as e:
                out = {"error": e.code}
            os.write(w, json.dumps(out).encode())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 1 << 16):
        data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    assert status == 0, status
    return json.loads(data)

def report(**values):
    print(json.dumps(values))
"""

GENERATOR = """
g = shardid.Generator(TWITTER, 3)
before = g.next_ids(1000)

def child():
    refused, ids = [], []
    for call in (lambda: [g.next_id()], lambda: g.next_ids(100_000), lambda: g.next_ids_at(AT, 100)):
        try:
            ids += call()
        except shardid.ForkedGeneratorError as e:
            refused.append(str(e))
    # Made in the child, a generator works there.
    return {"refused": refused, "ids": ids, "own": shardid.Generator(TWITTER, 4).next_id()}

child = c_fork(child)
report(child=child, parent=before + g.next_ids(100_000) + g.next_ids_at(AT, 100))
"""

LEASED = """
lease = shardid.lease(TWITTER, sys.argv[1], range(0, 4))
before = lease.next_ids(1000)

def child():
    ids = [lease.next_id()] + lease.next_ids(100_000) + [lease.next_id_at(AT) for _ in range(100)]
    return {"shard": lease.shard, "ids": ids}

child = c_fork(child)
parent = before + lease.next_ids(100_000) + [lease.next_id_at(AT) for _ in range(100)]
report(child=child, shard=lease.shard, parent=parent)
"""

SQLITE_LEASE = """
from shardid.sqlite import lease as sqlite_lease
lease = sqlite_lease(TWITTER, "sqlite:///" + sys.argv[1] + "/leases.db", range(0, 4))
before = lease.next_ids(1000)

def child():
    ids = [lease.next_id() for _ in range(1000)] + lease.next_ids(50_000)
    ids += [lease.next_id_at(AT) for _ in range(100)]
    out = {"shard": lease.shard, "ids": ids}
    lease.close()
    return out

child = c_fork(child)
parent = before + lease.next_ids(50_000) + [lease.next_id_at(AT) for _ in range(100)]
report(child=child, shard=lease.shard, parent=parent)
lease.close()
"""

DENSE = """
from shardid.segments import DenseIds, create_tag
url = "sqlite:///" + sys.argv[1] + "/dense.db"
create_tag(url, "orders")
ids = DenseIds(url, "orders", min_size=100, max_size=100)
before = [ids.next_id() for _ in range(10)]
# Forked once the prefetch is in: SQLite's in-process lock state of a statement in flight
# is copied into the child (whatever the fork), which then waits for a lock nobody holds.
while ids._fetching():
    time.sleep(0.01)

def child():
    return {"ids": [ids.next_id() for _ in range(50)]}

child = c_fork(child)
report(child=child, parent=before + [ids.next_id() for _ in range(300)])
ids.close()
"""

SERIALS = """
from shardid.segments import Serials, create_serial
url = "sqlite:///" + sys.argv[1] + "/serials.db"
create_serial(url, "inv", "INV-{yyyy}-{seq:8}", zone="UTC")
serials = Serials(url, "inv", "INV-{yyyy}-{seq:8}", zone="UTC", min_size=100, max_size=100)
before = [serials.next_serial() for _ in range(10)]
while serials._fetching():  # as DENSE
    time.sleep(0.01)

def child():
    return {"ids": [serials.next_serial() for _ in range(50)]}

child = c_fork(child)
report(child=child, parent=before + [serials.next_serial() for _ in range(300)])
serials.close()
"""

SQLITE_CONNECTION = """
import gc
from shardid import _sqlite
held = [_sqlite.connect("sqlite:///" + sys.argv[1] + "/kept.db")]

def child():
    before = len(_sqlite._inherited)
    conn = held.pop()
    usable = _sqlite.is_open(conn)
    _sqlite.close(conn)  # what a driver does with a connection it will not use
    del conn
    gc.collect()
    return {"usable": usable, "kept": len(_sqlite._inherited) - before}

child = c_fork(child)
report(child=child, parent=held[0].execute("SELECT 1").fetchone()[0])
"""


def run(program: str, tmp_path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + program, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def assert_own_shard(ids: list[int], parents: int) -> None:
    """None of the child's IDs is of the parent's shard."""
    twitter = Layout.preset("twitter")
    theirs = [i for i in ids if twitter.decode(i).shard == parents]
    assert not theirs, f"{len(theirs)} of the child's {len(ids)} IDs are of the parent's shard {parents}"


def test_a_generator_made_before_a_c_fork_refuses_in_the_child(tmp_path: Path) -> None:
    out = run(GENERATOR, tmp_path)
    child = out["child"]
    repeated = set(child["ids"]) & set(out["parent"])
    assert not child["ids"], f"the child handed out {len(child['ids'])} IDs, {len(repeated)} of them the parent's too"
    assert len(child["refused"]) == 3, child
    assert all(m.startswith("this generator was made before fork()") for m in child["refused"]), child
    assert child["own"] > 0
    assert len(set(out["parent"])) == 101_100


def test_a_leased_generator_takes_a_shard_of_its_own_after_a_c_fork(tmp_path: Path) -> None:
    out = run(LEASED, tmp_path)
    child, parent = out["child"], out["parent"]
    assert "error" not in child, child
    assert child["shard"] != out["shard"], "the child kept the parent's shard"
    assert len(child["ids"]) == 100_101
    assert_own_shard(child["ids"], out["shard"])
    assert not set(child["ids"]) & set(parent), "an ID handed out by both"


def test_a_sqlite_lease_takes_a_shard_of_its_own_after_a_c_fork(tmp_path: Path) -> None:
    out = run(SQLITE_LEASE, tmp_path)
    child, parent = out["child"], out["parent"]
    assert "error" not in child, child
    assert child["shard"] != out["shard"], "the child kept the parent's shard"
    assert len(child["ids"]) == 51_100
    assert_own_shard(child["ids"], out["shard"])
    assert not set(child["ids"]) & set(parent), "an ID handed out by both"


def test_dense_ids_take_segments_of_their_own_after_a_c_fork(tmp_path: Path) -> None:
    out = run(DENSE, tmp_path)
    child, parent = out["child"], out["parent"]
    assert "error" not in child, child
    assert len(child["ids"]) == 50 and len(set(child["ids"])) == 50
    assert not set(child["ids"]) & set(parent), "the child handed out the parent's numbers"


def test_serials_take_segments_of_their_own_after_a_c_fork(tmp_path: Path) -> None:
    out = run(SERIALS, tmp_path)
    child, parent = out["child"], out["parent"]
    assert "error" not in child, child
    assert len(child["ids"]) == 50 and len(set(child["ids"])) == 50
    assert not set(child["ids"]) & set(parent), "the child handed out the parent's serials"


def test_the_parents_sqlite_connections_are_kept_unused_in_a_c_forked_child(tmp_path: Path) -> None:
    # SQLite forbids using a connection across fork(), closing it included (the child would
    # unmap the parent's WAL index): the child neither uses nor closes the parent's.
    out = run(SQLITE_CONNECTION, tmp_path)
    assert out["child"] == {"usable": False, "kept": 1}, out["child"]
    assert out["parent"] == 1
