"""asyncpg as a PostgreSQL driver of the asyncio clients (issue 56): the asyncio dictionary and
lease over a ``postgresql+asyncpg://`` URL, the one URL a FastAPI application gives SQLAlchemy,
run the core's statements rendered with asyncpg's ``$1`` placeholders, directly and behind
PgBouncer in transaction mode (asyncpg's statement cache off, as its documentation says for
poolers), and read asyncpg's errors by the same rule as psycopg's (a terminated backend is a
lost connection, opened again). Before, the URL was refused ("postgresql+asyncpg" is not a
database URL), and asyncpg was no driver of shardid's at all."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

import shardid
from shardid import Layout, _db
from shardid.dictionary import AsyncDictionary, Dictionary
from shardid.postgres import lease, lease_async
from shardid.sql import dictionary

TTL_MS = 1500


def asyncpg_url(port: int, database: str) -> str:
    return f"postgresql+asyncpg://postgres@127.0.0.1:{port}/{database}"


@pytest.fixture(scope="module")
def schema(cluster: Any) -> str:
    with psycopg.connect(cluster.dsn, autocommit=True) as conn, conn.transaction():
        conn.execute(dictionary("dict_apg").encode())
    return "dict_apg"


@pytest.mark.parametrize("via", ["direct", "pgbouncer-tx"])
def test_the_asyncio_dictionary_over_asyncpg(cluster: Any, pooler: Any, schema: str, via: str) -> None:
    port, database = (cluster.port, "postgres") if via == "direct" else (pooler.port, "tx")
    topic = f"words_{via.replace('-', '_')}"
    blocking = Dictionary(cluster.dsn, topic, schema=schema)
    blocking.create()

    async def main() -> tuple[list[int], list[int | None], list[str | None], list[list[int]]]:
        async with AsyncDictionary(asyncpg_url(port, database), topic, schema=schema, cache_size=0) as d:
            ids = await d.ids(["a", "b", "c"])
            assert _db.is_asyncpg(d._connection._conn)
            found = await d.lookup(["b", "zz"])
            values = await d.values([2, 0])
            # 8 tasks writing the same new strings at once: one ID each, the same for all.
            words = [f"w{i}" for i in range(50)]
            together = await asyncio.gather(*(d.ids(words) for _ in range(8)))
            return ids, found, values, together

    ids, found, values, together = asyncio.run(main())
    assert (ids, found, values) == ([0, 1, 2], [1, None], ["c", "a"])
    assert all(t == together[0] for t in together) and sorted(together[0]) == list(range(3, 53))
    # psycopg reads what asyncpg wrote.
    assert blocking.ids(["a", "c", "w0"]) == [0, 2, together[0][0]]
    blocking.close()


def test_a_terminated_asyncpg_connection_is_lost_and_opened_again(cluster: Any, schema: str) -> None:
    Dictionary(cluster.dsn, "lost", schema=schema).create()

    async def main() -> list[int]:
        async with AsyncDictionary(asyncpg_url(cluster.port, "postgres"), "lost", schema=schema, cache_size=0) as d:
            assert await d.ids(["a"]) == [0]
            pid = d._connection._conn.get_server_pid()
            with psycopg.connect(cluster.dsn, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            got = await d.ids(["a", "b"])
            assert d._connection._conn.get_server_pid() != pid
            return got

    assert asyncio.run(main()) == [0, 1]


def test_an_unknown_topic_over_asyncpg_is_its_error(cluster: Any, schema: str) -> None:
    async def main() -> None:
        async with AsyncDictionary(asyncpg_url(cluster.port, "postgres"), "never_made", schema=schema) as d:
            with pytest.raises(shardid.UnknownTopicError):
                await d.ids(["a"])

    asyncio.run(main())


def test_an_unreachable_server_over_asyncpg_is_database_unreachable(cluster: Any, schema: str) -> None:
    async def main() -> None:
        async with AsyncDictionary("postgresql+asyncpg://postgres:s3cret@127.0.0.1:1/postgres", "t", schema=schema) as d:
            with pytest.raises(shardid.DatabaseUnreachableError) as refused:
                await d.ids(["a"])
            assert "s3cret" not in str(refused.value)

    asyncio.run(main())


@pytest.mark.parametrize(("via", "kind"), [("direct", "expiring"), ("direct", "session"), ("pgbouncer-tx", "expiring")])
def test_the_asyncio_lease_over_asyncpg(cluster: Any, pooler: Any, via: str, kind: str) -> None:
    port, database = (cluster.port, "postgres") if via == "direct" else (pooler.port, "tx")
    dsn = cluster.dsn if via == "direct" else pooler.dsn("tx")
    table = f"apg_{via.replace('-', '_')}_{kind}"
    url = asyncpg_url(port, database)

    async def main() -> tuple[set[int], list[int], list[int]]:
        async with lease_async(Layout.TWITTER, url, range(0, 2), table=table, kind=kind, ttl_ms=TTL_MS) as g:
            assert _db.is_asyncpg(g._session.conn)
            with lease(Layout.TWITTER, dsn, range(0, 2), table=table, kind=kind, ttl_ms=TTL_MS) as other:
                with pytest.raises(shardid.NoFreeShardError):
                    await lease_async(Layout.TWITTER, url, range(0, 2), table=table, kind=kind, ttl_ms=TTL_MS)
                ids = [await g.next_id() for _ in range(2000)]
                others = [other.next_id() for _ in range(2000)]
                return {g.shard, other.shard}, ids, others

    shards, ids, others = asyncio.run(main())
    assert shards == {0, 1}
    assert len(set(ids) | set(others)) == 4000


def test_the_asyncio_lease_over_the_applications_asyncpg_connections(cluster: Any) -> None:
    """``connect=``: a coroutine function the application gives, here asyncpg's ``connect``
    with its own settings; the core's statements are rendered for the connection it returns."""
    import asyncpg

    url = f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres"
    opened: list[Any] = []

    async def connect() -> Any:
        conn = await asyncpg.connect(url, statement_cache_size=0)
        opened.append(conn)
        return conn

    async def main() -> list[int]:
        async with lease_async(Layout.TWITTER, None, range(0, 1), table="apg_connect", connect=connect, ttl_ms=TTL_MS) as g:
            with pytest.raises(shardid.NoFreeShardError):
                lease(Layout.TWITTER, cluster.dsn, range(0, 1), table="apg_connect", ttl_ms=TTL_MS)
            return [await g.next_id() for _ in range(500)]

    ids = asyncio.run(main())
    assert len(set(ids)) == 500 and len(opened) == 1
