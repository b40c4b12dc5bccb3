"""Expiring shard leases on a SQLite file (``shardid.sqlite.lease``): processes racing for the
shards of one file, a holder paused past its time to live, the counters. No server: the file
is the database. Bounded: a short time to live, a few processes, about 5 s in all."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import shardid
import shardid.postgres
from shardid import Layout
from shardid.sqlite import lease, lease_async

from lease_checks import python_holder, read_ids

TTL_MS = 600  # the renewal every 200 ms; a paused holder loses its shard after 600 ms

RACER = """
import os, sys, time
import shardid
from shardid import Layout
from shardid.sqlite import lease
url, go, out = sys.argv[1:4]
def answer(text):  # whole or not at all: the test reads it as soon as the file exists
    open(out + ".tmp", "w").write(text)
    os.replace(out + ".tmp", out)
open(out + ".ready", "w").close()
while not os.path.exists(go):
    time.sleep(0.001)
try:
    g = lease(Layout.TWITTER, url, range(0, 3), ttl_ms=5000)
except shardid.NoFreeShardError as e:
    answer("NO_FREE_SHARD " + e.code)
    sys.exit(0)
ids = g.next_ids(1000)
open(out + ".ids", "wb").write(b"".join(i.to_bytes(8, "little") for i in ids))
answer(f"shard {g.shard}")
while not os.path.exists(go + ".end"):
    time.sleep(0.005)
g.close()
"""

def wait_for(predicate: Any, what: str, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


def test_four_processes_race_for_three_shards(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'leases.db'}"
    go, outs = tmp_path / "go", [tmp_path / f"racer{i}" for i in range(4)]
    racers = [subprocess.Popen([sys.executable, "-c", RACER, url, str(go), str(o)]) for o in outs]
    try:
        # Every interpreter started and waiting; then all claim at once.
        wait_for(lambda: all(o.with_suffix(".ready").exists() for o in outs), "every racer started", 8)
        go.touch()
        wait_for(lambda: all(o.exists() for o in outs), "every racer answered", 8)
        answers = sorted(o.read_text() for o in outs)
        # Each shard held once; the fourth told that every shard is held.
        assert answers == ["NO_FREE_SHARD NO_FREE_SHARD", "shard 0", "shard 1", "shard 2"]
        ids = [i for o in outs for i in read_ids(o.with_suffix(".ids"))]
        assert len(ids) == 3000 and len(set(ids)) == 3000
        (tmp_path / "go.end").touch()
        for racer in racers:
            assert racer.wait(timeout=5) == 0
    finally:
        for racer in racers:
            if racer.poll() is None:
                racer.kill()
    # Released: the shards are free at once, not one time to live later.
    with lease(Layout.TWITTER, url, range(0, 3)) as g:
        assert g.shard == 0


def test_a_holder_paused_past_its_ttl_loses_its_shard_and_stops(tmp_path: Path) -> None:
    url, out = f"sqlite:///{tmp_path / 'leases.db'}", tmp_path / "paused"
    child = python_holder("sqlite", url, out, ttl_ms=TTL_MS)
    try:
        wait_for(lambda: len(read_ids(out)) >= 5_000, "the holder made IDs")
        child.send_signal(signal.SIGSTOP)
        stopped = read_ids(out)
        deadline = time.monotonic() + 5
        while True:
            try:
                successor = lease(Layout.TWITTER, url, range(0, 1), ttl_ms=TTL_MS)
                break
            except shardid.NoFreeShardError:
                assert time.monotonic() < deadline, "the paused holder's shard was never freed"
                time.sleep(0.02)
        assert successor.shard == 0
        taken = list(successor.next_ids(20_000))
        child.send_signal(signal.SIGCONT)
        assert child.wait(timeout=5) == 0
        # Resumed, it found its lease gone and stopped (LEASE_LOST, counted as a loss); every
        # ID it made, before the pause or after, differs from every one of the successor's.
        message, losses = (tmp_path / "paused.lost").read_text().split("|")
        assert message.startswith("the lease on shard 0") and losses == "1"
        made = read_ids(out)
        assert len(made) >= len(stopped) and len(set(made)) == len(made)
        taken += successor.next_ids(10_000)
        assert len(set(taken)) == len(taken) and not set(made) & set(taken)
        assert successor.stats()["held"] == 1
        successor.close()
        assert successor.stats()["held"] == 0
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGCONT)
            child.kill()


def test_a_taken_over_lease_stops_and_counts_the_loss(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'leases.db'}"
    g = lease(Layout.TWITTER, url, range(0, 1), table="taken_over")
    g.next_id_at(1_700_000_000_000)
    with sqlite3.connect(tmp_path / "leases.db") as admin:
        assert admin.execute("UPDATE taken_over SET token = 'someone else'").rowcount == 1
    with pytest.raises(shardid.LeaseLostError):
        # The next ceiling write finds another token: nothing written, the generator stopped.
        g.next_id_at(1_700_000_000_000 + 3_600_000)
    with pytest.raises(shardid.LeaseLostError):
        g.next_id_at(1_700_000_000_000 + 3_600_000)  # stopped for good: no retake
    assert g.stats()["losses"] == 1 and g.stats()["held"] == 0
    g.close()


def test_refusals(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'leases.db'}"
    with pytest.raises(shardid.UnsupportedError, match="SQLite has no advisory locks"):
        lease(Layout.TWITTER, url, range(0, 1), kind="session")
    with pytest.raises(shardid.InvalidArgumentError, match="shardid.sqlite does not lease through"):
        lease(Layout.TWITTER, "postgresql://db/app", range(0, 1))
    with pytest.raises(shardid.InvalidArgumentError, match="shardid.postgres does not lease through"):
        shardid.postgres.lease(Layout.TWITTER, url, range(0, 1))
    with pytest.raises(shardid.InvalidArgumentError, match="connect"):
        lease(Layout.TWITTER, url, range(0, 1), connect=lambda: None)
    with pytest.raises(shardid.DatabaseUnreachableError) as unreachable:
        lease(Layout.TWITTER, f"sqlite:///{tmp_path / 'missing' / 'leases.db'}", range(0, 1))
    assert isinstance(unreachable.value.__cause__, sqlite3.Error)


def test_asyncio_races_the_blocking_lease_on_one_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'leases.db'}"

    async def main() -> None:
        blocking = lease(Layout.TWITTER, url, range(0, 2), ttl_ms=TTL_MS)
        async with lease_async(Layout.TWITTER, url, range(0, 2), ttl_ms=TTL_MS) as g:
            assert {blocking.shard, g.shard} == {0, 1}
            with pytest.raises(shardid.NoFreeShardError):
                await lease_async(Layout.TWITTER, url, range(0, 2))
            ids = [await g.next_id() for _ in range(1000)]
            await asyncio.sleep(TTL_MS / 1000)  # renewed by its task meanwhile
            ids.append(await g.next_id())
            assert g.stats()["renewals"] >= 2 and g.stats()["acquisitions"] == 1
        assert len(set(ids)) == len(ids) and not set(ids) & set(blocking.next_ids(1000))
        blocking.close()

    asyncio.run(main())


@pytest.mark.parametrize("flavour", ["blocking", "asyncio"])
def test_a_lease_that_fails_after_its_claim_frees_the_shard_at_once(tmp_path: Path, flavour: str) -> None:
    # The row is claimed before the ceiling generator is made, and the generator refuses an
    # option: the lease raises, and gives the row back at once, so another lease takes the
    # shard without waiting a minute for it to expire.
    url = f"sqlite:///{tmp_path / 'leases.db'}"

    async def take(**options: Any) -> Any:
        if flavour == "blocking":
            return lease(Layout.TWITTER, url, range(0, 1), ttl_ms=60_000, **options)
        return await lease_async(Layout.TWITTER, url, range(0, 1), ttl_ms=60_000, **options)

    async def main() -> None:
        with pytest.raises(shardid.InvalidArgumentError, match="max_borrow_units"):
            await take(max_borrow_units=-1)
        g = await take()
        assert g.shard == 0 and g.held
        if flavour == "blocking":
            g.close()
        else:
            await g.close()

    asyncio.run(main())
