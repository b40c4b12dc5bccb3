"""What the dense-ID suites of every database check alike (tests/postgres, tests/mysql: their
conftests put tests/python on the path)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import shardid
from shardid import ClosedError
from shardid.segments import DenseIds

from together import race

#: A process of 4 threads taking `n` IDs each from `tag` in schema `seg_load`, in batches of
#: 100 appended to `out` (8 bytes an ID): `python -c WORKER <url> <tag> <out> <n> <wait_ms>`.
WORKER = """
import sys, threading
from array import array
from shardid.segments import DenseIds
url, tag, out, n, wait_ms = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
ids = DenseIds(url, tag, schema="seg_load", min_size=50, max_size=2000, target_ms=200, wait_ms=wait_ms)
lock = threading.Lock()
def run():
    for _ in range(n // 100):
        batch = [ids.next_id() for _ in range(50)] + ids.next_ids(50)
        with lock, open(out, "ab") as f:
            f.write(array("q", batch).tobytes())
threads = [threading.Thread(target=run) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
ids.close()
"""


def read_ids(path: Path, *, missing_ok: bool = False) -> list[int]:
    """The IDs a WORKER wrote to `path` (a torn last one left out)."""
    if missing_ok and not path.exists():
        return []
    data = path.read_bytes()
    values = array("q")
    values.frombytes(data[: len(data) - len(data) % 8])
    return list(values)


def burst_makes_one_fetch(ids: Any) -> None:
    """64 threads released at once on a new allocator of a new tag: IDs 1 to 64, one fetch."""
    got, errors = race(ids.next_id, 64)
    assert errors == []
    assert sorted(got) == list(range(1, 65))
    assert ids.fetches == 1
    ids.close()


def assert_dense_topic(first_row: Any, schema: str, topic: str) -> int:
    """Every string of the dictionary's `topic` has one ID, every ID one string, the IDs are
    exactly 0..n-1 and the topic's counter is n. Returns n. `first_row(sql, *params)`: the
    first row of a statement, through the suite's own driver (`%s` placeholders)."""
    count, distinct_ids, lowest, highest = first_row(
        f"SELECT count(*), count(DISTINCT d.id), min(d.id), max(d.id) FROM {schema}.shardid_strings d"
        f" JOIN {schema}.shardid_topics t USING (topic_id) WHERE t.topic = %s",
        topic,
    )
    (following,) = first_row(f"SELECT next FROM {schema}.shardid_topics WHERE topic = %s", topic)
    assert count == distinct_ids, "an ID given to two strings"
    if count:
        assert (lowest, highest) == (0, count - 1), f"holes: {count} strings numbered {lowest}..{highest}"
    assert following == count, f"the counter says {following}, the table holds {count}"
    return int(count)


def async_dense_ids_take_each_number_once(url: str, following: Callable[[], int], on_loop: Callable[[], None] = lambda: None) -> None:
    """300 tasks on two `AsyncDenseIds` of tag `orders` in schema `aseg` with small segments
    (fetches under way all the time): 12,000 IDs, each once; every number taken from the row
    (`following()`: its `next`) handed out, given back or counted as skipped; after close
    `CLOSED`; a new client continues above. `on_loop` runs first on the event loop."""
    from shardid.segments import AsyncDenseIds

    got: list[int] = []

    async def main() -> tuple[list[int], int, int]:
        on_loop()
        orders = AsyncDenseIds(url, "orders", schema="aseg", min_size=5, max_size=40)
        other = AsyncDenseIds(url, "orders", schema="aseg", min_size=5, max_size=40)
        # 300 tasks on segments of 5 to 40 queue behind each fetch: on a loaded machine (the
        # suite's failover tests run beside this one) a task can wait past the default 5 s for
        # its turn. What is checked is each number once, not how soon it came.
        orders.native.wait_ms = other.native.wait_ms = 60_000

        async def task(i: int) -> None:
            g = other if i % 4 == 0 else orders
            for _ in range(10):
                got.append(await g.next_id())
                got.extend(await g.next_ids(3))

        await asyncio.gather(*(task(i) for i in range(300)))
        fetches = orders.fetches
        await other.close()
        await orders.close()
        try:
            await orders.next_id()
        except ClosedError:  # closed, not unavailable: as DenseIds
            pass
        else:
            raise AssertionError("next_id() after close()")
        return got, fetches, orders.skipped + other.skipped

    ids, fetches, skipped = asyncio.run(main())
    assert len(ids) == len(set(ids)) == 12_000
    assert fetches > 20
    end = following()
    assert min(ids) == 1 and max(ids) < end
    assert end - 1 - len(ids) <= skipped

    async def again() -> int:
        async with AsyncDenseIds(url, "orders", schema="aseg") as orders:
            return await orders.next_id()

    assert asyncio.run(again()) > max(ids)


def forked_child_takes_segments_of_its_own(ids: Any) -> None:
    """`ids` (a DenseIds with segments of 100) hands out 10 IDs, forks; the child takes 10 and
    the parent 10 more: the child never hands out the parent's numbers. Closes `ids`."""
    parent = [ids.next_id() for _ in range(10)]
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            child = [ids.next_id() for _ in range(10)]
            os.write(w, array("q", child).tobytes())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 4096):
        data += chunk
    os.waitpid(pid, 0)
    child_ids = array("q")
    child_ids.frombytes(data)
    parent += [ids.next_id() for _ in range(10)]
    assert len(child_ids) == 10
    assert not set(child_ids) & set(parent), "the child never hands out the parent's numbers"
    ids.close()


def down_then_resumes(ids: Any, stop: Callable[[], None], start: Callable[[], None]) -> None:
    """`ids` (a DenseIds of tag `d`, segments of 10, ``wait_ms=500``) has handed out nothing
    yet: its first ID is 1; with the server stopped, it raises SEGMENT_UNAVAILABLE (retryable,
    not bad input) once its segments are used up; once the server is back, it goes on above.
    Closes `ids`."""
    assert ids.next_id() == 1
    stop()
    try:
        # The first segment has the tag's remembered size (a new tag's: 1,000); then 10 a time.
        with pytest.raises(shardid.SegmentUnavailableError) as down:
            for _ in range(5_000):
                ids.next_id()
        assert down.value.tag == "d"
        assert not isinstance(down.value, ValueError), "retryable, not bad input"
    finally:
        start()
    ids.wait_ms = 10_000
    later = [ids.next_id() for _ in range(30)]
    assert later == sorted(later) and len(set(later)) == 30 and later[0] > 1
    ids.close()


#: A Python process: `argv[3]` IDs of tag `argv[4]` in schema `seg_mixed` from the server at
#: `argv[1]`, appended to the file `argv[2]`.
PYTHON_TAKER = """
import sys
from array import array
from shardid.segments import DenseIds
ids = DenseIds(sys.argv[1], sys.argv[4], schema="seg_mixed", min_size=20, max_size=500, target_ms=100, wait_ms=60000)
open(sys.argv[2], "ab").write(array("q", ids.next_ids(int(sys.argv[3]))).tobytes())
ids.close()
"""


def with_python_never_share_an_id(url: str, tag: str, outs: list[Path], others: list[Any]) -> None:
    """Four processes of another language (`others`, started, each writing 20,000 IDs of `tag`
    in schema `seg_mixed` to `outs[0..4]`) and four Python ones (started here, into
    `outs[4..8]`) on one tag: 160,000 IDs, none twice."""
    procs = others + [subprocess.Popen([sys.executable, "-c", PYTHON_TAKER, url, str(outs[i]), "20000", tag]) for i in range(4, 8)]
    for p in procs:
        assert p.wait(timeout=300) == 0
    ids: list[int] = []
    for out in outs:
        values = array("q")
        values.frombytes(out.read_bytes())
        assert len(values) == 20_000
        ids += values
    assert len(set(ids)) == len(ids) == 160_000, "an ID handed out twice"


#: A client of tag `k` (schema `seg_kill`, segments of 20) writing its IDs to `out` one by one
#: until it is killed: `python -c KILLED_MID_FETCH <url> <out>`.
KILLED_MID_FETCH = """
import sys
from array import array
from shardid.segments import DenseIds
ids = DenseIds(sys.argv[1], "k", schema="seg_kill", min_size=20, max_size=20, wait_ms=60_000)
with open(sys.argv[2], "ab", buffering=0) as out:
    while True:
        out.write(array("q", [ids.next_id()]).tobytes())
"""


def killed_while_its_fetch_is_in_flight(proxy: Any, proxy_url: str, url: str, out: Path, next_of_k: Callable[[], int]) -> None:
    """A client of tag `k` (schema `seg_kill`, whose row remembers segments of 20, its next
    number 1) reaches the database through `proxy` (`proxy_url`: a DelayProxy that holds every
    chunk 300 ms, so a fetch is in flight most of the time) and is killed while one is. A
    successor through `url` never repeats the victim's numbers and continues above them; the
    holes (`next_of_k()`, the row's next number after) are at most the victim's current and
    prefetched segments and the one in flight."""
    victim = subprocess.Popen([sys.executable, "-c", KILLED_MID_FETCH, proxy_url, str(out)])
    deadline = time.monotonic() + 60
    while not (proxy.queries >= 3 and proxy.in_flight.is_set()) and time.monotonic() < deadline:
        time.sleep(0.002)
    assert proxy.in_flight.is_set(), "a fetch was in flight"
    victim.kill()
    victim.wait()
    time.sleep(0.7)  # let the server finish (and commit, or not) what the victim asked for
    killed = read_ids(out, missing_ok=True)
    with DenseIds(url, "k", schema="seg_kill", min_size=20, max_size=20) as successor:
        after = successor.next_ids(100)
    assert killed and len(set(killed)) == len(killed)
    assert not set(killed) & set(after), "the successor never repeats the victim's numbers"
    assert min(after) > max(killed)
    holes = (next_of_k() - 1) - len(killed) - len(after)
    assert 0 <= holes <= 3 * 20, holes


def processes_a_kill_and_a_server_restart(
    url: str, out: Path, crash_and_restart: Callable[[], None], next_of: Callable[[str], int], per_thread: int, wait_ms: int
) -> None:
    """Eight WORKER processes (4 threads of `per_thread` IDs each) on tags `a` and `b` of schema
    `seg_load` through the database `url` names, writing to `out`-<i>: one is killed (SIGKILL)
    once it has written, then the server is crashed and restarted under the rest
    (`crash_and_restart`), and a ninth succeeds the killed one on its tag. No tag repeats an
    ID; every ID is below the tag's next number after (`next_of(tag)`, on a new connection);
    every process but the killed one made all its IDs; the holes are at most three of the
    largest segments (2,000) per process."""
    outs = {i: Path(f"{out}-{i}") for i in range(9)}
    tags = {i: "ab"[i % 2] for i in range(8)} | {8: "b"}  # 8 succeeds the killed 3, on its tag
    start = lambda i: subprocess.Popen([sys.executable, "-c", WORKER, url, tags[i], str(outs[i]), str(per_thread), str(wait_ms)])  # noqa: E731
    procs = {i: start(i) for i in range(8)}
    try:
        deadline = time.monotonic() + 60
        while not (outs[3].exists() and outs[3].stat().st_size > 0) and time.monotonic() < deadline:
            time.sleep(0.01)
        procs[3].send_signal(signal.SIGKILL)  # mid-run, perhaps mid-fetch
        procs[3].wait()
        running = [i for i, p in procs.items() if p.poll() is None]
        crash_and_restart()  # the server goes away under everyone
        assert running, "the server restarted while the others were still making IDs"
        procs[8] = start(8)  # the killed one's successor (tag b, like it)
        for i, p in procs.items():
            if i != 3:
                assert p.wait(timeout=300) == 0, i
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
    for tag in ("a", "b"):
        members = [i for i in outs if tags[i] == tag]
        ids = [v for i in members for v in read_ids(outs[i], missing_ok=True)]
        assert len(ids) == len(set(ids)), f"duplicates in tag {tag}"
        end = next_of(tag)
        assert all(1 <= v < end for v in ids)
        finished = [i for i in members if i != 3]
        assert sum(len(read_ids(outs[i])) for i in finished) == 4 * per_thread * len(finished)
        # Holes: what a killed process held (its current and prefetched segments), and
        # segments whose commit the crash hid from their client.
        holes = (end - 1) - len(ids)
        assert 0 <= holes <= 3 * 2000 * len(members), holes
