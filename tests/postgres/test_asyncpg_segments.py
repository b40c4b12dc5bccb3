"""Dense IDs on asyncpg (issue 56): ``AsyncDenseIds`` over a ``postgresql+asyncpg://`` URL (its
own connection, asyncpg's statement cache off), over the application's asyncpg ``Pool`` (a
connection lent for each take and given back) and over its ``Connection`` (used as it is,
refused inside a transaction of the application's), directly and behind PgBouncer in
transaction mode: the core's take and give-back (``SegmentProtocol``) run by the asyncpg
executor, with its ``$1`` placeholders. Every number once across concurrent tasks, across two
processes, and across fetches cancelled at each of their awaits; no connection of the pool kept;
the clear errors of a closed pool and of a connection in a transaction. Before, the URL was
refused (``UNSUPPORTED``: "runs psycopg 3 here, not yet asyncpg") and a pool or connection was
no connection string. Bounded: a few seconds each, about 25 s in all."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import time
from array import array
from pathlib import Path
from typing import Any

import asyncpg
import psycopg
import pytest

import shardid
from shardid.segments import AsyncDenseIds, DenseIds

from test_segments import install

SCHEMA = "seg_apg"


def asyncpg_url(port: int, database: str) -> str:
    return f"postgresql+asyncpg://postgres@127.0.0.1:{port}/{database}"


@pytest.fixture(scope="module")
def schema(cluster: Any) -> str:
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        install(conn, SCHEMA)
    return SCHEMA


def new_tag(cluster: Any, tag: str) -> None:
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute(f"SELECT {SCHEMA}.create_tag(%s)", (tag,))


def following(cluster: Any, tag: str) -> int:
    """The tag's next number in its row."""
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        row = conn.execute(f"SELECT next FROM {SCHEMA}.shardid_tags WHERE tag = %s", (tag,)).fetchone()
    assert row is not None
    return int(row[0])


def endpoint(cluster: Any, pooler: Any, via: str) -> tuple[int, str]:
    return (cluster.port, "postgres") if via == "direct" else (pooler.port, "tx")


async def open_source(kind: str, port: int, database: str) -> tuple[Any, Any]:
    """What AsyncDenseIds is given (a URL, the application's pool, its connection) and what to
    close after it."""
    url = f"postgresql://postgres@127.0.0.1:{port}/{database}"
    if kind == "url":
        return asyncpg_url(port, database), None
    # The application's own: behind PgBouncer in transaction mode asyncpg needs its statement
    # cache off (asyncpg's documentation), as SQLAlchemy's asyncpg dialect is told too.
    if kind == "pool":
        pool = await asyncpg.create_pool(url, min_size=1, max_size=4, statement_cache_size=0)
        return pool, pool
    conn = await asyncpg.connect(url, statement_cache_size=0)
    return conn, conn


async def close_within(owned: Any, seconds: float) -> None:
    """Closes the application's pool or connection; a pool whose connection was never given
    back waits for it for good: a failure after ``seconds``."""
    try:
        await asyncio.wait_for(owned.close(), seconds)
    except asyncio.TimeoutError:
        owned.terminate()
        raise AssertionError(f"{type(owned).__name__}.close() waited {seconds} s: a connection never given back") from None


async def take_concurrently(ids: AsyncDenseIds, tasks: int, each: int) -> list[int]:
    got: list[int] = []

    async def task() -> None:
        for _ in range(each):
            got.append(await ids.next_id())
            got.extend(await ids.next_ids(2))

    await asyncio.gather(*(task() for _ in range(tasks)))
    return got


@pytest.mark.parametrize("via", ["direct", "pgbouncer-tx"])
@pytest.mark.parametrize("kind", ["url", "pool", "connection"])
def test_dense_ids_over_asyncpg_hand_out_each_number_once(cluster: Any, pooler: Any, schema: str, kind: str, via: str) -> None:
    """100 tasks, segments of 5 to 40 (a fetch under way most of the time): 3,000 numbers,
    each once; every number the row moved past handed out or counted as skipped; the pool's
    connections all back in it; the same numbers' row read by psycopg's client next."""
    tag = f"apg_{kind}_{via.replace('-', '_')}"
    new_tag(cluster, tag)
    port, database = endpoint(cluster, pooler, via)

    async def main() -> tuple[list[int], int, int]:
        source, owned = await open_source(kind, port, database)
        try:
            ids = AsyncDenseIds(source, tag, schema=schema, min_size=5, max_size=40, wait_ms=30_000)
            got = await take_concurrently(ids, 100, 10)
            fetches = ids.fetches
            if kind == "pool":
                while ids.native._fetching():
                    await asyncio.sleep(0.005)
                # Between fetches the pool has every connection: one is lent for a take only.
                assert owned.get_idle_size() == owned.get_size(), "a connection of the pool kept between fetches"
            if kind == "url":
                assert shardid._db.is_asyncpg(ids._driver._conns[0])
            await ids.close()
            with pytest.raises(shardid.ClosedError):
                await ids.next_id()
            if kind == "pool":
                assert owned.get_idle_size() == owned.get_size(), "a connection of the pool was kept"
            if kind == "connection":
                assert not owned.is_closed(), "the application's connection is the application's to close"
            return got, fetches, ids.skipped
        finally:
            if owned is not None:
                await close_within(owned, 10)

    got, fetches, skipped = asyncio.run(main())
    assert len(got) == len(set(got)) == 3_000, "a number handed out twice"
    assert fetches > 10
    end = following(cluster, tag)
    assert min(got) == 1 and max(got) < end
    assert end - 1 - len(got) <= skipped
    with DenseIds(cluster.dsn, tag, schema=schema) as after:  # psycopg's client continues above
        assert after.next_id() > max(got)


#: A process taking `n` numbers of `tag` with 20 tasks on one AsyncDenseIds over asyncpg (`kind`:
#: a URL, or a pool it makes), appending them to `out`: `python -c TAKER <url> <tag> <out> <n> <kind>`.
TAKER = f"""
import asyncio, sys
from array import array
import asyncpg
from shardid.segments import AsyncDenseIds
url, tag, out, n, kind = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
async def main():
    pool = None
    if kind == "pool":
        pool = await asyncpg.create_pool(url.replace("+asyncpg", ""), min_size=1, max_size=3, statement_cache_size=0)
    async with AsyncDenseIds(pool or url, tag, schema="{SCHEMA}", min_size=5, max_size=60, wait_ms=30_000) as ids:
        got = []
        async def task():
            for _ in range(n // 20):
                got.append(await ids.next_id())
        await asyncio.gather(*(task() for _ in range(20)))
    if pool is not None:
        await pool.close()
    open(out, "wb").write(array("q", got).tobytes())
asyncio.run(main())
"""


def test_two_processes_over_asyncpg_never_share_a_number(cluster: Any, schema: str, tmp_path: Path) -> None:
    """Two processes at once, one over the URL and one over its own pool, 4,000 numbers each
    of one tag: none twice."""
    new_tag(cluster, "apg_procs")
    url = asyncpg_url(cluster.port, "postgres")
    outs = [tmp_path / "url.bin", tmp_path / "pool.bin"]
    procs = [
        subprocess.Popen([sys.executable, "-c", TAKER, url, "apg_procs", str(out), "4000", kind])
        for out, kind in zip(outs, ["url", "pool"])
    ]
    for p in procs:
        assert p.wait(timeout=120) == 0
    ids: list[int] = []
    for out in outs:
        values = array("q")
        values.frombytes(out.read_bytes())
        assert len(values) == 4_000
        ids += values
    assert len(set(ids)) == len(ids) == 8_000, "a number handed out by both processes"


@pytest.mark.parametrize("kind", ["url", "pool"])
def test_fetches_cancelled_at_each_await_hand_out_nothing_twice(cluster: Any, schema: str, kind: str) -> None:
    """The fetch task cancelled after 0 to 8 of the loop's turns (so at each of its awaits: the
    lending, the statement, the give-back to the pool), and callers cancelled by tiny
    timeouts, up to 200 times over (3 s), between takes: no number twice, nothing handed out that a later
    take repeats, every connection back in the pool, and the client still hands out numbers."""
    tag = f"apg_cancel_{kind}"
    new_tag(cluster, tag)
    rng = random.Random(56)

    async def main() -> tuple[list[int], int]:
        source, owned = await open_source(kind, cluster.port, "postgres")
        got: list[int] = []
        cancelled = 0
        try:
            ids = AsyncDenseIds(source, tag, schema=schema, min_size=2, max_size=2, wait_ms=10_000)
            deadline = time.monotonic() + 3
            for _ in range(200):
                if time.monotonic() > deadline:
                    break
                waiter = asyncio.ensure_future(ids.next_id())
                for _ in range(rng.randrange(9)):
                    await asyncio.sleep(0)
                fetching = [t for t in asyncio.all_tasks() if t.get_name() == "shardid-segment" and not t.done()]
                for t in fetching:
                    t.cancel()
                    cancelled += 1
                try:
                    got.append(await asyncio.wait_for(waiter, timeout=rng.choice([1e-4, 1e-3, 0.5])))
                except (asyncio.TimeoutError, shardid.SegmentUnavailableError):
                    pass
                got.extend(await ids.next_ids(3))
            got.extend(await ids.next_ids(50))
            await ids.close()
            if kind == "pool":
                assert owned.get_idle_size() == owned.get_size(), "a cancelled fetch kept a connection of the pool"
        finally:
            if owned is not None:
                await close_within(owned, 10)
        return got, cancelled

    got, cancelled = asyncio.run(main())
    assert cancelled >= 10, f"only {cancelled} fetches cancelled"
    assert len(got) == len(set(got)), "a number handed out twice"
    assert len(got) >= 50
    with DenseIds(cluster.dsn, tag, schema=schema) as after:
        assert after.next_id() > max(got)


def test_a_closed_pool_is_a_clear_error_at_once(cluster: Any, schema: str) -> None:
    """The application closed its pool (its shutdown): the next call that needs a fetch raises
    ``ClosedError`` naming the pool, at once rather than after ``wait_ms``."""
    new_tag(cluster, "apg_closed")

    async def main() -> float:
        pool = await asyncpg.create_pool(f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres", min_size=1, max_size=2)
        ids = AsyncDenseIds(pool, "apg_closed", schema=schema, min_size=3, max_size=3, wait_ms=5_000)
        assert [await ids.next_id() for _ in range(3)] == [1, 2, 3]
        while ids._driver._conns[0] is not None or ids.native._fetching():
            await asyncio.sleep(0.01)  # the prefetch in
        await pool.close()
        started = time.monotonic()
        with pytest.raises(shardid.ClosedError, match="the asyncpg pool given to DenseIds of tag apg_closed was closed"):
            for _ in range(10):
                await ids.next_id()
        took = time.monotonic() - started
        await ids.close()
        return took

    assert asyncio.run(main()) < 2.0


def test_a_connection_in_a_transaction_is_refused_never_rolled_back_under_the_ids(cluster: Any, schema: str) -> None:
    """The application's connection inside its transaction: a take there would be rolled back
    with it, and the next take would hand out the same numbers. Refused (``INVALID_ARGUMENT``
    as the cause of ``SEGMENT_UNAVAILABLE``), the transaction rolled back, the numbers taken
    after it never repeat the ones before."""
    new_tag(cluster, "apg_tx")

    async def main() -> tuple[list[int], list[int]]:
        conn = await asyncpg.connect(f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres")
        try:
            ids = AsyncDenseIds(conn, "apg_tx", schema=schema, min_size=3, max_size=3, wait_ms=300)
            before: list[int] = []
            tx = conn.transaction()
            await tx.start()
            try:
                for _ in range(12):
                    before.append(await ids.next_id())
            except shardid.SegmentUnavailableError as e:
                assert isinstance(e.__cause__, shardid.InvalidArgumentError)
                assert "inside a transaction" in str(e)
            finally:
                await tx.rollback()
            ids.native.wait_ms = 10_000  # the retry after the refusals' backoff
            after = await ids.next_ids(12)
            await ids.close()
            return before, after
        finally:
            await conn.close()

    before, after = asyncio.run(main())
    assert len(before) < 12, "numbers taken inside the application's transaction"
    assert not set(before) & set(after), "numbers handed out again after the application's rollback"
    assert len(set(after)) == 12


def test_the_blocking_client_refuses_asyncpg_objects(cluster: Any, schema: str) -> None:
    async def main() -> None:
        conn = await asyncpg.connect(f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres")
        try:
            with pytest.raises(shardid.UnsupportedError, match="asyncio only"):
                DenseIds(conn, "apg_tx", schema=schema)
        finally:
            await conn.close()

    asyncio.run(main())



def serial_format(prefix: str) -> str:
    """A day's serials with a prefix of their own (two tags never print the same serials)."""
    return prefix + "-{yyyy}{MM}{dd}-{seq:6}"


@pytest.mark.parametrize(
    ("kind", "via", "prefix"), [("url", "direct", "UD"), ("url", "pgbouncer-tx", "UB"), ("pool", "direct", "PD"), ("connection", "direct", "CD")]
)
def test_serials_over_asyncpg_hand_out_each_number_once(cluster: Any, pooler: Any, schema: str, kind: str, via: str, prefix: str) -> None:
    """``AsyncSerials`` over asyncpg: the allocator on the loop, its period's takes (the first
    one making the period's tag) and give-backs the core's protocol run by the asyncpg executor.
    50 tasks, segments of 3 to 20: 1,000 serials, each once, numbered from 1; a serial at hand
    returned without a fetch; psycopg's blocking client continues above after close."""
    from shardid.segments import AsyncSerials, Serials, create_serial

    tag = f"inv_{kind}_{via.replace('-', '_')}"
    fmt = serial_format(prefix)
    create_serial(cluster.dsn, tag, fmt, zone="UTC", schema=schema)
    port, database = endpoint(cluster, pooler, via)

    async def main() -> list[str]:
        source, owned = await open_source(kind, port, database)
        got: list[str] = []
        try:
            async with AsyncSerials(source, tag, fmt, zone="UTC", schema=schema, min_size=3, max_size=20, wait_ms=30_000) as numbers:

                async def task() -> None:
                    for _ in range(20):
                        got.append(await numbers.next_serial())

                await asyncio.gather(*(task() for _ in range(50)))
                assert numbers._driver is not None and numbers._driver.fetches > 5
            if kind == "pool":
                assert owned.get_idle_size() == owned.get_size(), "a connection of the pool was kept"
        finally:
            if owned is not None:
                await close_within(owned, 10)
        return got

    got = asyncio.run(main())
    assert len(got) == len(set(got)) == 1_000, "a serial handed out twice"
    numbers = sorted(int(g.rsplit("-", 1)[1]) for g in got)
    assert numbers[0] >= 1 and numbers[-1] < 1_200
    with Serials(cluster.dsn, tag, fmt, zone="UTC", schema=schema) as after:
        assert int(after.next_serial().rsplit("-", 1)[1]) > numbers[-1]


#: A process taking `n` serials of `tag` with 10 tasks over asyncpg: `python -c SERIAL_TAKER <url> <tag> <out> <n>`.
SERIAL_TAKER = f"""
import asyncio, sys
from shardid.segments import AsyncSerials
url, tag, out, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
async def main():
    got = []
    async with AsyncSerials(url, tag, "{serial_format('PR')}", zone="UTC", schema="{SCHEMA}", min_size=3, max_size=40, wait_ms=30_000) as numbers:
        async def task():
            for _ in range(n // 10):
                got.append(await numbers.next_serial())
        await asyncio.gather(*(task() for _ in range(10)))
    open(out, "w").write(" ".join(got))
asyncio.run(main())
"""


def test_two_processes_over_asyncpg_never_share_a_serial(cluster: Any, schema: str, tmp_path: Path) -> None:
    from shardid.segments import create_serial

    create_serial(cluster.dsn, "inv_procs", serial_format("PR"), zone="UTC", schema=schema)
    url = asyncpg_url(cluster.port, "postgres")
    outs = [tmp_path / "a.txt", tmp_path / "b.txt"]
    procs = [subprocess.Popen([sys.executable, "-c", SERIAL_TAKER, url, "inv_procs", str(out), "1000"]) for out in outs]
    for p in procs:
        assert p.wait(timeout=120) == 0
    got = [line for out in outs for line in out.read_text().split()]
    assert len(got) == len(set(got)) == 2_000, "a serial handed out by both processes"


def test_serials_over_a_closed_pool_say_so(cluster: Any, schema: str) -> None:
    from shardid.segments import AsyncSerials, create_serial

    create_serial(cluster.dsn, "inv_closed", serial_format("CL"), zone="UTC", schema=schema)

    async def main() -> None:
        pool = await asyncpg.create_pool(f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres", min_size=1, max_size=2)
        numbers = AsyncSerials(pool, "inv_closed", serial_format("CL"), zone="UTC", schema=schema, min_size=2, max_size=2, wait_ms=5_000)
        assert (await numbers.next_serial()).endswith("-000001")
        while numbers._serials is not None and numbers._serials._fetching():
            await asyncio.sleep(0.01)
        await pool.close()
        with pytest.raises(shardid.ClosedError, match="the asyncpg pool given to Serials of tag inv_closed was closed"):
            for _ in range(10):
                await numbers.next_serial()
        await numbers.close()
        with pytest.raises(shardid.ClosedError, match="Serials of tag inv_closed was closed"):
            await numbers.next_serial()

    asyncio.run(main())


@pytest.mark.parametrize("kind", ["url", "pool"])
def test_serial_fetches_cancelled_at_each_await_hand_out_nothing_twice(cluster: Any, schema: str, kind: str) -> None:
    """As the dense IDs' (above), for ``AsyncSerials`` over asyncpg: its fetch tasks cancelled
    after 0 to 8 of the loop's turns, callers cancelled by tiny timeouts, for up to 5 s: no
    serial twice, every connection back in the pool, psycopg's client continuing above."""
    from shardid.segments import AsyncSerials, Serials, create_serial

    tag, fmt = f"inv_cancel_{kind}", serial_format(f"X{kind[0].upper()}")
    create_serial(cluster.dsn, tag, fmt, zone="UTC", schema=schema)
    rng = random.Random(56)

    async def main() -> tuple[list[str], int]:
        source, owned = await open_source(kind, cluster.port, "postgres")
        got: list[str] = []
        cancelled = 0
        try:
            numbers = AsyncSerials(source, tag, fmt, zone="UTC", schema=schema, min_size=2, max_size=2, wait_ms=10_000)
            got.append(await numbers.next_serial())
            deadline = time.monotonic() + 3
            for _ in range(200):
                if time.monotonic() > deadline:
                    break
                waiter = asyncio.ensure_future(numbers.next_serial())
                for _ in range(rng.randrange(9)):
                    await asyncio.sleep(0)
                for t in [t for t in asyncio.all_tasks() if t.get_name() == "shardid-serial" and not t.done()]:
                    t.cancel()
                    cancelled += 1
                try:
                    got.append(await asyncio.wait_for(waiter, timeout=rng.choice([1e-4, 1e-3, 0.5])))
                except (asyncio.TimeoutError, shardid.SegmentUnavailableError):
                    pass
            got.extend([await numbers.next_serial() for _ in range(20)])
            await numbers.close()
            if kind == "pool":
                assert owned.get_idle_size() == owned.get_size(), "a cancelled fetch kept a connection of the pool"
        finally:
            if owned is not None:
                await close_within(owned, 10)
        return got, cancelled

    got, cancelled = asyncio.run(main())
    assert cancelled >= 10, f"only {cancelled} fetches cancelled"
    assert len(got) == len(set(got)), "a serial handed out twice"
    last = max(int(g.rsplit("-", 1)[1]) for g in got)
    with Serials(cluster.dsn, tag, fmt, zone="UTC", schema=schema) as after:
        assert int(after.next_serial().rsplit("-", 1)[1]) > last
