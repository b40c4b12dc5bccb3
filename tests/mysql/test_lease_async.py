"""The asyncio lease through MariaDB (``shardid.mysql.lease_async``): the blocking lease's
protocol and session (``shardid._lease_async``, from which the blocking one is generated), over
aiomysql, its heartbeat a task. Unique IDs under the recorded ceilings from many tasks of two
leases on distinct shards, with no blocking connection opened; a lease taken over stops and its
successor continues above; a session lease (``GET_LOCK``); the errors the blocking lease raises
(a URL no driver takes or another database's, a server that is down). Every test counts
duplicates; the expected number is always 0."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pymysql
import pytest
from conftest import open_conn, rows
from lease_checks import async_lease_taken_over_stops_and_a_successor_continues_above

import shardid
from shardid import _mysql
from shardid.mysql import AsyncMysqlLease, lease_async

LAYOUT = shardid.Layout.TWITTER


@pytest.fixture(scope="module")
def url(server: Any) -> str:
    with open_conn(server) as c, c.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS alease")
    return server.url_for("alease")  # type: ignore[no-any-return]


def no_blocking_mysql(monkeypatch: Any) -> None:
    """Makes a blocking PyMySQL connection fail: the asyncio lease goes through aiomysql."""

    def refuse(*a: Any, **k: Any) -> Any:
        raise AssertionError("a blocking PyMySQL connection was opened on the event loop")

    monkeypatch.setattr(_mysql, "connect", refuse)
    monkeypatch.setattr(pymysql, "connect", refuse)


def test_async_leases_hand_out_unique_ids_under_their_ceilings_on_distinct_shards(server: Any, url: str, monkeypatch: Any) -> None:
    ids: list[int] = []
    no_blocking_mysql(monkeypatch)

    async def main() -> tuple[int, int, dict[str, int]]:
        a = await lease_async(LAYOUT, url, range(0, 3), table="async_leases", ttl_ms=900)
        async with lease_async(LAYOUT, url, range(0, 3), table="async_leases", ttl_ms=900) as b:
            assert isinstance(b, AsyncMysqlLease) and a.shard != b.shard and {a.shard, b.shard} <= {0, 1, 2}

            async def taker(g: Any) -> None:
                loop = asyncio.get_running_loop()
                end = loop.time() + 1.0  # several spans of 100 ms, and heartbeats (300 ms)
                while loop.time() < end:
                    ids.append(await g.next_id())
                    ids.extend(await g.next_ids(3))
                    await asyncio.sleep(0)

            await asyncio.gather(*(taker(g) for g in (a, b) for _ in range(10)))
            assert a.held and b.held
            stats = b.stats()
            shards = (a.shard, b.shard)
            await a.close()
            await a.close()  # twice is fine
            with pytest.raises(shardid.ClosedError):
                await a.next_id()
        assert not b.held
        return *shards, stats

    sa, sb, stats = asyncio.run(main())
    monkeypatch.undo()
    assert stats["acquisitions"] == 1 and stats["ceiling_writes"] >= 2 and stats["held"] == 1
    assert len(ids) == len(set(ids)) > 5_000
    assert {LAYOUT.decode(i).shard for i in ids} == {sa, sb}
    with open_conn(server, database="alease") as c:
        recorded = dict(rows(c, "SELECT shard, ceiling FROM async_leases"))
        # Both released at close: no token left.
        assert rows(c, "SELECT COUNT(*) FROM async_leases WHERE token IS NOT NULL") == [(0,)]
    for s in (sa, sb):
        top = max(i for i in ids if LAYOUT.decode(i).shard == s)
        # Every ID handed out lies under the ceiling its shard's row recorded.
        assert (top >> (LAYOUT.shard_bits + LAYOUT.sequence_bits)) <= recorded[s]


def test_an_async_lease_taken_over_stops_and_a_successor_continues_above(server: Any, url: str) -> None:
    def steal() -> None:
        with open_conn(server, database="alease") as c, c.cursor() as cur:
            assert cur.execute("UPDATE async_lost SET token = 'stolen' WHERE layout <> ''") == 1

    async_lease_taken_over_stops_and_a_successor_continues_above(lease_async, url, steal)


def test_an_async_session_lease_holds_get_lock_and_frees_the_shard_at_close(url: str) -> None:
    async def main() -> None:
        first = await lease_async(LAYOUT, url, range(0, 2), table="async_session", kind="session")
        second = await lease_async(LAYOUT, url, range(0, 2), table="async_session", kind="session")
        assert {first.shard, second.shard} == {0, 1}
        got = await first.next_ids(1000) + await second.next_ids(1000)
        assert len(set(got)) == 2000
        shard = first.shard
        await first.close()
        third = await lease_async(LAYOUT, url, range(0, 2), table="async_session", kind="session")
        assert third.shard == shard  # freed at once, no expiry to wait for
        assert await third.next_id() > max(i for i in got if LAYOUT.decode(i).shard == shard)
        await second.close()
        await third.close()

    asyncio.run(main())


def test_async_errors_are_the_blocking_leases(server: Any, url: str) -> None:
    with pytest.raises(shardid.InvalidArgumentError, match="url"):
        lease_async(LAYOUT, "postgresql+psycopg://x@y/z", range(0, 1))
    with pytest.raises(shardid.InvalidArgumentError, match="postgres"):
        lease_async(LAYOUT, "postgresql://x@y/z", range(0, 1))
    with pytest.raises(shardid.InvalidArgumentError, match="shards"):
        lease_async(LAYOUT, url, range(0, 4, 2))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there

    async def down() -> None:
        await lease_async(LAYOUT, f"mysql://root@127.0.0.1:{port}/alease", range(0, 1))

    with pytest.raises(shardid.DatabaseUnreachableError):
        asyncio.run(down())
