"""What the lease suites of every database check alike (their conftests put tests/python on the
path)."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import threading
import time
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import shardid
from shardid import Layout
from together import race


def eight_sessions_at_once_each_get_a_shard(lease: Callable[..., Any], url: str, table: str) -> None:
    """Eight sessions lease shards 0..8 of `table` (which does not exist yet) at once through the
    database `url` names: each gets one, and they are the eight (every concurrent CREATE TABLE
    IF NOT EXISTS but one may fail in the database; the claim must not)."""
    held, errors = race(lambda: lease(Layout.TWITTER, url, range(0, 8), table=table), 8)
    try:
        assert not errors, errors[0]
        assert sorted(g.shard for g in held) == list(range(8))
    finally:
        for g in held:
            g.close()


def read_ids(path: Path) -> array[int]:
    """The IDs a holder process wrote to `path` (8 bytes each, little-endian; a write cut short
    by a kill is left out)."""
    ids = array("Q")
    data = path.read_bytes() if path.exists() else b""
    ids.frombytes(data[: len(data) // 8 * 8])
    return ids


def wait_for_ids(path: Path, n: int) -> None:
    """Until the holder writing `path` has written `n` IDs (at most 30 s)."""
    deadline = time.monotonic() + 30
    while (not path.exists() or path.stat().st_size < 8 * n) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert path.exists() and path.stat().st_size >= 8 * n


def duplicates(ids: list[array[int]] | list[list[int]]) -> int:
    """How many IDs of all the lists together were handed out more than once."""
    every = [i for some in ids for i in some]
    return len(every) - len(set(every))


def down_longer_than_the_lease(lease: Callable[..., Any], url: str, stop: Callable[[], None], start: Callable[[], None], ttl_ms: int) -> None:
    """Two holders make IDs all along through the database `url` names (table `outage`) while
    `stop` stops it for longer than the lease (`ttl_ms`) and `start` brings it back: both stop
    on their own while it is down; once it is back, the one with ``retake=True`` takes a lease
    again and the other stays lost. No ID twice; ``DATABASE_UNREACHABLE`` (the driver's error
    its cause) while it was down, ``LEASE_LOST`` after."""
    strict = lease(Layout.TWITTER, url, range(0, 4), table="outage", ttl_ms=ttl_ms)
    retaking = lease(Layout.TWITTER, url, range(0, 4), table="outage", ttl_ms=ttl_ms, retake=True)
    made: list[int] = []
    errors: dict[str, int] = {}
    done = threading.Event()

    def make() -> None:
        while not done.is_set():
            for g in (strict, retaking):
                try:
                    made.extend(g.next_ids(100))
                except Exception as e:  # noqa: BLE001 (counted)
                    name = type(e).__name__
                    errors[name] = errors.get(name, 0) + 1
            time.sleep(0.005)

    worker = threading.Thread(target=make)
    worker.start()
    try:
        time.sleep(0.5)
        stop()
        down_at = time.monotonic()
        time.sleep(ttl_ms / 1000 * 1.5)
        # Both stopped on their own within the time to live.
        assert not strict.held and not retaking.held
        before = len(made)
        time.sleep(0.3)
        assert len(made) == before
        start()
        assert time.monotonic() - down_at < 30
        deadline = time.monotonic() + 15
        while len(made) == before and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        done.set()
        worker.join()
    assert len(made) > before, errors
    assert len(set(made)) == len(made)
    assert errors.get("LeaseLostError", 0) > 0 and errors.get("DatabaseUnreachableError", 0) > 0, errors
    assert not strict.held and retaking.held
    with pytest.raises(shardid.LeaseLostError):
        strict.next_id()
    strict.close()
    retaking.close()


def async_lease_taken_over_stops_and_a_successor_continues_above(
    lease_async: Callable[..., Any], url: str, steal: Callable[[], None]
) -> None:
    """An asyncio lease of shard 0 of table `async_lost` closed frees its shard at once; the
    next one continues above its IDs and its heartbeat keeps it (time to live 600 ms) until
    `steal()` overwrites the row's token: then it stops (``LEASE_LOST``) at its next renewal."""
    layout = Layout.TWITTER

    async def main() -> None:
        first = await lease_async(layout, url, range(0, 1), table="async_lost", ttl_ms=600)
        before = await first.next_ids(5000)
        await first.close()  # frees the shard at once
        second = await lease_async(layout, url, range(0, 1), table="async_lost", ttl_ms=600)
        assert second.shard == 0
        assert await second.next_id() > max(before)
        await asyncio.sleep(0.5)  # the heartbeat renewed it (ttl 600 ms): still held
        assert second.held
        await asyncio.to_thread(steal)
        await asyncio.sleep(0.9)  # the next renewal finds the row taken
        assert not second.held
        with pytest.raises(shardid.LeaseLostError):
            await second.next_id()
        await second.close()

    asyncio.run(main())


PROBE = """
import json, sys, time
from array import array
from importlib import import_module
import shardid
from shardid import Layout
module, url, out, seconds, count, first, end, options = sys.argv[1:9]
ids = array("Q")
status = "ok"
try:
    g = import_module("shardid." + module).lease(Layout.INSTAGRAM, url, range(int(first), int(end)), **json.loads(options))
    start = time.monotonic()
    for i in range(int(count)):
        ids.append(g.next_id())
        if i % 1000 == 999:  # spread over the time, so ceilings are written all along
            time.sleep(max(0.0, start + float(seconds) * i / int(count) - time.monotonic()))
    ids.append(g.shard)
    g.close()
except shardid.ShardIdError as e:
    status = e.code
open(out + ".ids", "wb").write(ids.tobytes())
open(out + ".status", "w").write(status)
"""


def python_probe(module: str, url: str, out: Path, seconds: float, count: int, shards: range, **options: Any) -> subprocess.Popen[bytes]:
    """A Python process that leases a shard of `shards` (Instagram's layout) through
    `shardid.<module>.lease(url, **options)` and makes `count` IDs spread over `seconds`,
    written to `out`.ids with the shard last; `out`.status is `ok`, or the error's code if the
    lease refused (the IDs made until then written all the same)."""
    args = [module, url, str(out), str(seconds), str(count), str(shards.start), str(shards.stop), json.dumps(options)]
    return subprocess.Popen([sys.executable, "-c", PROBE, *args])


HOLDER = """
import json, sys
import shardid
from shardid import Layout
from importlib import import_module
module, url, out, options = sys.argv[1:5]
g = import_module("shardid." + module).lease(Layout.TWITTER, url, range(0, 1), **json.loads(options))
with open(out, "ab", buffering=0) as f:
    while True:
        try:
            f.write(g.next_id().to_bytes(8, "little"))
        except shardid.LeaseLostError as e:
            open(out + ".lost", "w").write(f"{e}|{g.stats()['losses']}")
            break
"""


def python_holder(module: str, url: str, out: Path, **options: Any) -> subprocess.Popen[bytes]:
    """A Python process that holds shard 0 through `shardid.<module>.lease(url, **options)` and
    writes its IDs to `out` (8 bytes each) until it finds its lease gone; then it writes the
    LEASE_LOST message and its lease's `losses` to `out`.lost (`message|losses`)."""
    return subprocess.Popen([sys.executable, "-c", HOLDER, module, url, str(out), json.dumps(options)])


def killed_holder(lease: Callable[..., Any], module: str, url: str, table: str, out: Path, waited: Callable[[float], bool], **options: Any) -> Any:
    """A Python process holding shard 0 of `table` through `shardid.<module>.lease(url,
    **options)` and writing its IDs to `out` is killed (SIGKILL) after 20,000 IDs; `lease`
    (the same function, in this process) takes the shard as soon as it is free, after a wait
    that `waited(seconds)` accepts (a lease that expires: not before its time to live; a
    session lease: at once), and makes IDs above every one the killed holder made. Returns
    that lease, still held."""
    child = python_holder(module, url, out, table=table, **options)
    try:
        wait_for_ids(out, 20_000)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    killed_at = time.monotonic()
    successor = take_when_free(lease, url, table, 20, **options)
    assert waited(time.monotonic() - killed_at), time.monotonic() - killed_at
    assert successor.shard == 0
    assert min(successor.next_ids(10_000)) > max(read_ids(out))
    return successor


def take_when_free(lease: Callable[..., Any], url: str, table: str, deadline_s: float, **options: Any) -> Any:
    """A lease of shard 0 of `table`, taken as soon as it is free (`NO_FREE_SHARD` until then),
    at most `deadline_s` seconds from now."""
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            return lease(Layout.TWITTER, url, range(0, 1), table=table, **options)
        except shardid.NoFreeShardError:
            assert time.monotonic() < deadline, "the shard was never freed"
            time.sleep(0.02)


def paused_past_its_lease(child: Any, out: Path, take: Callable[[], Any]) -> None:
    """`child`, a process holding shard 0 that writes its IDs to `out` (and, once it finds its
    lease gone, the LEASE_LOST message to `out`.lost), is paused (SIGSTOP) past its lease;
    `take()` takes the shard as soon as it is free and makes 50,000 IDs; the child, resumed,
    finds its lease gone and stops. Every ID it made before, while paused or after differs
    from every one of the successor's."""
    try:
        wait_for_ids(out, 20_000)
        child.send_signal(signal.SIGSTOP)
        stopped = read_ids(out)
        successor = take()
        taken = list(successor.next_ids(50_000))
        child.send_signal(signal.SIGCONT)
        assert child.wait(timeout=30) == 0
        assert Path(f"{out}.lost").read_text().startswith("the lease on shard 0")
        made = read_ids(out)
        assert len(made) >= len(stopped)
        taken += successor.next_ids(10_000)
        assert len(set(taken)) == len(taken) and not set(made) & set(taken)
        successor.close()
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGCONT)
            child.kill()
