"""What the asyncio dictionary suites of every database check alike (tests/postgres,
tests/mysql: their conftests put tests/python on the path)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

import pytest

import shardid
from shardid.dictionary import AsyncDictionary


def many_tasks_write_the_same_new_strings(
    url: str, schema: str, dense: Callable[[], int], stored: Callable[[], dict[str, int]]
) -> None:
    """500 tasks on one dictionary of topic `t` and a second client (its own connection and
    cache) writing the same strings at once, so the server sees two writers: each string gets
    one ID, the IDs are dense from 0 (`dense()`: the database's count, checked dense), and the
    database holds what the tasks were answered (`stored()`: every string and its ID)."""
    pool = [f"/page/{i}" for i in range(1500)]

    async def main() -> list[tuple[list[str], list[int]]]:
        async with AsyncDictionary(url, "t", schema=schema) as d, AsyncDictionary(url, "t", schema=schema) as other:
            await d.create()
            rng = random.Random(34)

            async def task(i: int) -> tuple[list[str], list[int]]:
                client = other if i % 5 == 0 else d
                batch = rng.sample(pool, rng.randint(1, 40))
                if i % 3 == 0:
                    return batch[:1], [await client.id(batch[0])]
                return batch, await client.ids(batch)

            return await asyncio.gather(*(task(i) for i in range(500)))

    answers = asyncio.run(main())
    seen: dict[str, int] = {}
    for batch, ids in answers:
        assert len(batch) == len(ids)
        for s, i in zip(batch, ids, strict=True):
            assert seen.setdefault(s, i) == i, f"{s!r} got {seen[s]} and {i}"
    n = dense()
    assert n == len(seen) and n > 1000
    assert stored() == seen
    assert sorted(seen.values()) == list(range(n))


def a_crash_loses_no_answer(url: str, schema: str, crash_and_restart: Callable[[], None]) -> dict[str, int]:
    """20 tasks writing new strings of topic `t` while the server is killed and restarted: a
    call while it is down raises `DATABASE_UNREACHABLE` (nothing else); no string gets two IDs, and the same client
    answers every string as before once it is back. Returns every string's ID."""
    answers: dict[str, int] = {}

    async def main() -> None:
        d = AsyncDictionary(url, "t", schema=schema)
        await d.create()
        rng = random.Random(3)
        stop = asyncio.Event()

        async def writer() -> None:
            while not stop.is_set():
                batch = [f"w{rng.randrange(5000)}" for _ in range(10)]
                try:
                    ids = await d.ids(batch)
                except shardid.DatabaseUnreachableError:
                    await asyncio.sleep(0.05)  # the server is down: the call says so
                    continue
                for s, i in zip(batch, ids, strict=True):
                    assert answers.setdefault(s, i) == i
                await asyncio.sleep(0)

        tasks = [asyncio.create_task(writer()) for _ in range(20)]
        await asyncio.sleep(0.5)
        before = len(answers)
        await asyncio.to_thread(crash_and_restart)
        await asyncio.sleep(1.0)
        stop.set()
        await asyncio.gather(*tasks)
        assert len(answers) > before, "nothing was written after the restart"
        # The same client, its connection replaced, answers every string as before.
        every = sorted(answers)
        assert await d.ids(every) == [answers[s] for s in every]
        await d.close()

    asyncio.run(main())
    return answers


def waiting_tasks_share_one_step(url: str, schema: str) -> tuple[set[int], int]:
    """1000 tasks asking for the same new string of topic `t` at once: the IDs they got, and
    how many steps the connection ran (one, when the tasks share it)."""

    async def main() -> tuple[set[int], int]:
        d = AsyncDictionary(url, "t", schema=schema)
        await d.create()
        sent = 0
        run = d._connection.run

        async def counting(step: str, *args: Any) -> Any:
            nonlocal sent
            sent += 1
            return await run(step, *args)

        d._connection.run = counting  # type: ignore[method-assign]
        got = await asyncio.gather(*(d.id("/new") for _ in range(1000)))
        await d.close()
        return set(got), sent

    return asyncio.run(main())


def cancelled_calls_leave_it_usable(url: str, schema: str, hold: Callable[[], None], release: Callable[[], None], *, cancelled_on_the_server: bool) -> None:
    """An asyncio dictionary of topic `t` in `schema` through the database `url` names: a call
    timed out while `hold()` (another transaction holding a new string of the topic) makes it
    wait on the server leaves nothing in the cache and assigns nothing; after `release()`, 150
    rounds of three calls timed out at random points (in the queue for the lock, connecting,
    mid-statement, reading the answer) leave it answering right, and a fresh client agrees.
    `cancelled_on_the_server`: the database cancels the statement and the client keeps its
    connection (PostgreSQL); otherwise the client gives up the connection, whose answer is
    unread, and the next call opens another (MySQL). The caller checks the topic is dense (304
    strings)."""

    async def main() -> None:
        d = AsyncDictionary(url, "t", schema=schema)
        await d.create()
        assert await d.ids(["a", "b"]) == [0, 1]
        conn_before = d._connection._conn
        # The next batch of new strings waits on the server: the timeout lands mid-statement.
        hold()
        try:
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(d.ids(["c", "d"]), timeout=0.2)
            assert d.cache.id("c") is None and d.cache.id("a") == 0
            if cancelled_on_the_server:
                assert d._connection._conn is conn_before and not conn_before.closed, "the connection was given up"
            else:
                assert d._connection._conn is not conn_before, "a connection with an unread answer was kept"
            # Nothing was assigned, and the lookups (no lock) answer while the row is held.
            assert await d.lookup(["c", "d", "a"]) == [None, None, 0]
        finally:
            release()
        assert await d.ids(["d", "c"]) == [2, 3]
        rng = random.Random(7)
        for _ in range(150):
            batch = [f"s{rng.randrange(300)}" for _ in range(rng.randint(1, 20))]
            calls = [d.ids(batch) for _ in range(3)]
            try:
                await asyncio.wait_for(asyncio.gather(*calls), timeout=rng.choice([0, 1e-5, 1e-4, 5e-4, 2e-3, 5e-3]))
            except asyncio.TimeoutError:
                pass
        every = [f"s{i}" for i in range(300)]
        ids = await d.ids(every)
        assert await d.values(ids) == every
        await d.close()
        fresh = AsyncDictionary(url, "t", schema=schema, cache_size=0)
        assert await fresh.ids(every) == ids
        await fresh.close()

    asyncio.run(main())
