"""Shard leases and fork safety: 8 forked workers x 1,000,000 IDs without a duplicate,
gunicorn-style pre-fork workers, a worker killed with SIGKILL and its successor, a clock set
back between runs, and a plain Generator refusing to work in a forked child."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from array import array
from pathlib import Path

import pytest

import shardid
from shardid import Layout
from together import on_processes

T0 = 1_700_000_000_000
FORK = multiprocessing.get_context("fork")


def _worker(generator: shardid.LeasedGenerator, out: str) -> None:
    ids = generator.next_ids(1_000_000)
    Path(out).write_bytes(array("Q", ids).tobytes() + array("Q", [generator.shard]).tobytes())


def _read(path: Path) -> tuple[array, int]:
    ids = array("Q")
    ids.frombytes(path.read_bytes())
    shard = ids.pop()
    return ids, shard


def test_eight_forked_workers_make_a_million_ids_each_without_a_duplicate(tmp_path: Path) -> None:
    generator = shardid.lease(Layout.TWITTER, tmp_path / "shards", range(0, 16))
    parent_ids = generator.next_ids(1000)  # the parent uses its shard before forking
    workers = [FORK.Process(target=_worker, args=(generator, str(tmp_path / f"w{i}"))) for i in range(8)]
    on_processes(workers)
    shards = {generator.shard}
    seen = set(parent_ids)
    for i in range(8):
        ids, shard = _read(tmp_path / f"w{i}")
        assert len(ids) == 1_000_000
        shards.add(shard)
        seen.update(ids)
    assert len(shards) == 9, "the parent and each worker hold a shard of their own"
    assert len(seen) == 8_000_000 + 1000


def test_pre_fork_workers_like_gunicorn_each_take_a_shard(tmp_path: Path) -> None:
    # The master makes the generator at import time (as a Django settings module would),
    # then forks workers that all use the same object.
    generator = shardid.lease(Layout.INSTAGRAM, tmp_path / "shards", range(0, 8))
    generator.next_id()
    pids = []
    for i in range(4):
        pid = os.fork()
        if pid == 0:
            try:
                ids = [generator.next_id() for _ in range(50_000)]
                (tmp_path / f"w{i}").write_bytes(array("Q", ids + [generator.shard]).tobytes())
            finally:
                os._exit(0)
        pids.append(pid)
    for pid in pids:
        assert os.waitpid(pid, 0)[1] == 0
    all_ids: set[int] = set()
    shards = set()
    for i in range(4):
        ids, shard = _read(tmp_path / f"w{i}")
        all_ids.update(ids)
        shards.add(shard)
    assert len(all_ids) == 200_000 and len(shards) == 4 and generator.shard not in shards


HOLDER = """
import sys, shardid
g = shardid.lease(shardid.Layout.TWITTER, sys.argv[1], range(0, 1))
with open(sys.argv[2], "ab", buffering=0) as out:
    while True:
        out.write(g.next_id().to_bytes(8, "little"))
"""


def test_a_worker_killed_mid_run_frees_its_shard_and_its_successor_never_repeats(tmp_path: Path) -> None:
    out = tmp_path / "ids"
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "shards"), str(out)])
    deadline = time.monotonic() + 30
    while (not out.exists() or out.stat().st_size < 8 * 20_000) and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(shardid.NoFreeShardError) as info:
        shardid.lease(Layout.TWITTER, tmp_path / "shards", range(0, 1))  # the child holds it
    assert info.value.shards == range(0, 1)
    child.send_signal(signal.SIGKILL)
    child.wait()
    killed = array("Q")
    killed.frombytes(out.read_bytes()[: out.stat().st_size // 8 * 8])
    successor = shardid.lease(Layout.TWITTER, tmp_path / "shards", range(0, 1))
    assert successor.shard == 0
    ids = successor.next_ids(10_000)
    assert min(ids) > max(killed)


def test_a_clock_set_back_between_runs_never_yields_an_old_id(tmp_path: Path) -> None:
    d = tmp_path / "shards"
    first = shardid.lease(Layout.TWITTER, d, range(0, 1))
    issued = [first.next_id_at(T0 + i // 100) for i in range(1000)]
    del first
    again = shardid.lease(Layout.TWITTER, d, range(0, 1))
    with pytest.raises(shardid.ClockMovedBackwardsError):
        again.next_id_at(T0 - 5000)  # beyond the 1 s tolerance
    with pytest.raises(shardid.SequenceExhaustedError) as info:
        again.next_id_at(T0 - 400)  # within it: wait for the last holder's ceiling
    assert again.next_id_at(info.value.retry_at_ms) > max(issued)


def test_a_plain_generator_refuses_to_work_in_a_forked_child() -> None:
    generator = shardid.Generator(Layout.TWITTER, 3)
    generator.next_id()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            outcome = b"no error"
            try:
                generator.next_id()
            except shardid.ForkedGeneratorError as e:
                outcome = b"refused: " + str(e).encode()
            # A new generator with a shard of its own is fine in the child.
            shardid.Generator(Layout.TWITTER, 4).next_id()
            os.write(w, outcome)
        finally:
            os._exit(0)
    os.close(w)
    message = os.read(r, 4096).decode()
    os.waitpid(pid, 0)
    assert message.startswith("refused: this generator was made before fork()"), message
    assert "or use a lease, which takes a new shard in each child" in message
    generator.next_id()  # the parent keeps working


def test_no_free_shard_names_the_range(tmp_path: Path) -> None:
    held = [shardid.lease(Layout.TWITTER, tmp_path, range(10, 12)) for _ in range(2)]
    assert sorted(g.shard for g in held) == [10, 11]
    with pytest.raises(shardid.NoFreeShardError, match=r"every shard in 10\.\.12 is leased") as info:
        shardid.lease(Layout.TWITTER, tmp_path, range(10, 12))
    assert info.value.code == "NO_FREE_SHARD" and isinstance(info.value, RuntimeError)
    with pytest.raises(shardid.ShardOutOfRangeError):
        shardid.lease(Layout.TWITTER, tmp_path, range(1020, 1030))
    with pytest.raises(shardid.InvalidArgumentError):
        shardid.lease(Layout.TWITTER, tmp_path, range(0, 10, 2))
    with pytest.raises(shardid.InvalidArgumentError, match=r"^shards 5\.\.5 is empty: a lease needs a range of at least one shard$") as empty:
        shardid.lease(Layout.TWITTER, tmp_path, range(5, 5))
    assert isinstance(empty.value, ValueError) and empty.value.argument == "shards"
    (tmp_path / "a-file").write_text("")
    with pytest.raises(shardid.LeaseFileError, match=f"{tmp_path / 'a-file' / 'shards'}: Not a directory"):
        shardid.lease(Layout.TWITTER, tmp_path / "a-file" / "shards", range(0, 4))
    held.clear()  # released: the files remain, recording the Twitter layout
    with pytest.raises(shardid.LeaseFileError, match="another layout"):
        shardid.lease(Layout.INSTAGRAM, tmp_path, range(10, 12))


DJANGO = """
import sys, time
import django
from django.conf import settings
settings.configure(SHARDID={"layout": "twitter", "lease": {"directory": sys.argv[1], "shards": [0, 4]}})
django.setup()
import shardid
from shardid.django import get_generator, next_id
generator = get_generator()
assert isinstance(generator, shardid.LeasedGenerator), generator
print(generator.shard, next_id(), flush=True)
time.sleep(1)  # hold the lease while the other process takes one
"""


def test_django_settings_can_lease_shards(tmp_path: Path) -> None:
    pytest.importorskip("django")
    runs = [
        subprocess.Popen([sys.executable, "-c", DJANGO, str(tmp_path)], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [run.communicate()[0].split() for run in runs]
    assert all(run.returncode == 0 for run in runs)
    shards = {int(shard) for shard, _ in outputs}
    assert len(shards) == 2
    for shard, id_ in outputs:
        assert Layout.TWITTER.decode(int(id_)).shard == int(shard)


TAKE_SHARD_ZERO = """
import sys
import shardid
print(shardid.lease(shardid.Layout.TWITTER, sys.argv[1], range(0, 1)).shard)
"""


def test_a_closed_lease_frees_its_shard_for_another_process_at_once(tmp_path: Path) -> None:
    take = [sys.executable, "-c", TAKE_SHARD_ZERO, str(tmp_path)]
    with shardid.lease(shardid.Layout.TWITTER, tmp_path, range(0, 1)) as held:
        last = held.next_id()
        refused = subprocess.run(take, capture_output=True, text=True, timeout=60)
        assert "NoFreeShardError" in refused.stderr, refused.stderr
    # Closed by the `with`, while this process (and the object) lives on.
    start = time.monotonic()
    taken = subprocess.run(take, capture_output=True, text=True, timeout=60)
    assert taken.stdout.strip() == "0", taken.stderr
    assert time.monotonic() - start < 10
    # Closed is not lost: ClosedError (a RuntimeError), naming the shard it held.
    for call in (held.next_id, lambda: held.next_ids(3), lambda: held.next_id_at(shardid.now_ms())):
        with pytest.raises(shardid.ClosedError) as info:
            call()
        assert info.value.code == "CLOSED" and info.value.what == "the lease on shard 0", info.value
        assert str(info.value) == "the lease on shard 0 was closed: make a new one"
        assert isinstance(info.value, RuntimeError)
    assert held.shard == 0
    held.close()  # twice is fine
    # A successor in this process continues above the closed lease's IDs.
    with shardid.lease(shardid.Layout.TWITTER, tmp_path, range(0, 1)) as again:
        assert again.next_id() > last
