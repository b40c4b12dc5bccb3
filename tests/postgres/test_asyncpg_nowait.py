"""A synchronous ``try_next_id()`` on the asyncio lease (issue 56), for a SQLAlchemy column
default inside an ``AsyncSession``'s flush over asyncpg, which cannot await: the lease taken with
``nowait=True`` keeps a ceiling recorded ahead of the clock by a task, and the ID comes from its
generator without awaiting. Every ID handed out is covered by a ceiling the table recorded
before it (a successor after a crash starts above it), none twice across tasks and across two
processes; a lease taken without ``nowait=True`` says so. Before, ``next_id`` was a coroutine only
and ``default=`` could not use it. Bounded: about 6 s in all."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from array import array
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy import BigInteger, text
from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

import shardid
from shardid import Layout, _lease_public_async
from shardid.postgres import lease_async

SHIFT = Layout.INSTAGRAM.shard_bits + Layout.INSTAGRAM.sequence_bits


def asyncpg_url(port: int) -> str:
    return f"postgresql+asyncpg://postgres@127.0.0.1:{port}/postgres"


def recorded_ceiling(cluster: Any, table: str, shard: int) -> int:
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        row = conn.execute(f"SELECT ceiling FROM {table} WHERE shard = %s", (shard,)).fetchone()
    assert row is not None
    return int(row[0])


def test_a_column_default_in_an_async_session_takes_ids_without_awaiting(cluster: Any, monkeypatch: Any) -> None:
    """20 tasks inserting rows whose primary key is ``default=lambda: ids.try_next_id()``
    through SQLAlchemy's asyncio engine over asyncpg, for 2 s, with the lead cut to 400 ms (the
    first ceiling 800 ms ahead: the task must record several more): every row in, no ID twice,
    and at each moment the ceiling in the table covers every ID handed out so far."""
    monkeypatch.setattr(_lease_public_async, "NOWAIT_LEAD_MS", 400)
    url = asyncpg_url(cluster.port)
    holder: dict[str, Any] = {}

    class Base(DeclarativeBase):
        pass

    class Order(Base):
        __tablename__ = "nowait_orders"
        id: Mapped[int] = mapped_column(BigInteger, primary_key=True, default=lambda: holder["ids"].try_next_id())
        n: Mapped[int] = mapped_column(BigInteger)

    async def main() -> tuple[list[int], int, list[str]]:
        engine = create_async_engine(url, pool_size=5, max_overflow=0)
        async with engine.begin() as conn:
            await conn.run_sync(Base.metadata.drop_all)
            await conn.run_sync(Base.metadata.create_all)
        session = async_sessionmaker(engine, expire_on_commit=False)
        got: list[int] = []
        problems: list[str] = []
        async with lease_async(Layout.INSTAGRAM, url, range(0, 4), table="nowait_leases", nowait=True) as ids:
            holder["ids"] = ids
            deadline = time.monotonic() + 2.0

            async def task(k: int) -> None:
                n = 0
                while time.monotonic() < deadline:
                    async with session.begin() as s:
                        orders = [Order(n=n + i) for i in range(5)]
                        s.add_all(orders)
                    got.extend(o.id for o in orders)
                    n += 5

            async def watch() -> None:
                # The ceiling recorded covers what was handed out before it was read.
                while time.monotonic() < deadline:
                    handed = max(got, default=0) >> SHIFT
                    ceiling = await asyncio.to_thread(recorded_ceiling, cluster, "nowait_leases", ids.shard)
                    if handed > ceiling:
                        problems.append(f"ID of unit {handed} above the recorded ceiling {ceiling}")
                    await asyncio.sleep(0.05)

            await asyncio.gather(watch(), *(task(k) for k in range(20)))
            shard = ids.shard
        async with engine.connect() as conn:
            rows = (await conn.execute(text("SELECT count(*), count(DISTINCT id) FROM nowait_orders"))).one()
        await engine.dispose()
        assert rows[0] == rows[1] == len(got)
        return got, shard, problems

    got, shard, problems = asyncio.run(main())
    assert problems == []
    assert len(got) == len(set(got)) >= 200
    assert all(Layout.INSTAGRAM.decode(i).shard == shard for i in got)
    assert max(got) >> SHIFT <= recorded_ceiling(cluster, "nowait_leases", shard)


#: A process taking IDs with try_next_id() for 1.5 s (at least `n`) from a lease over asyncpg
#: (shards 0..2 of table `nowait_procs`), writing them to `out`: `python -c TAKER <url> <out> <n>`.
TAKER = """
import asyncio, sys, time
from array import array
from shardid import Layout
from shardid.postgres import lease_async
url, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
async def main():
    async with lease_async(Layout.INSTAGRAM, url, range(0, 2), table="nowait_procs", nowait=True) as ids:
        got = []
        deadline = time.monotonic() + 1.5
        while len(got) < n or time.monotonic() < deadline:
            got.extend(ids.try_next_id() for _ in range(100))
            await asyncio.sleep(0)
    open(out, "wb").write(array("q", got).tobytes())
asyncio.run(main())
"""


def test_two_processes_never_share_an_id(cluster: Any, tmp_path: Path) -> None:
    """Two processes at once (1.5 s each, so they overlap: shards 0 and 1), 20,000 IDs or more
    each: none twice."""
    url = asyncpg_url(cluster.port)
    outs = [tmp_path / "a.bin", tmp_path / "b.bin"]
    procs = [subprocess.Popen([sys.executable, "-c", TAKER, url, str(out), "20000"]) for out in outs]
    for p in procs:
        assert p.wait(timeout=60) == 0
    ids: list[int] = []
    for out in outs:
        values = array("q")
        values.frombytes(out.read_bytes())
        assert len(values) >= 20_000
        ids += values
    assert len(set(ids)) == len(ids), "an ID handed out by both processes"
    assert {Layout.INSTAGRAM.decode(i).shard for i in ids} == {0, 1}


def test_try_next_id_needs_the_lease_taken_for_it(cluster: Any) -> None:
    url = asyncpg_url(cluster.port)

    async def main() -> None:
        async with lease_async(Layout.INSTAGRAM, url, range(0, 1), table="nowait_plain") as ids:
            with pytest.raises(shardid.InvalidArgumentError, match="nowait=True"):
                ids.try_next_id()
            assert await ids.next_id() > 0
        async with lease_async(Layout.INSTAGRAM, url, range(0, 1), table="nowait_plain", nowait=True) as ids:
            first = ids.try_next_id()  # right after the lease is taken: a ceiling is there
            assert first > 0
        with pytest.raises(shardid.ClosedError):
            ids.try_next_id()

    asyncio.run(main())
