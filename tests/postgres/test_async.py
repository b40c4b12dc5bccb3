"""The asyncio clients on a real PostgreSQL: AsyncDictionary under 500 concurrent tasks writing
the same new strings, tasks cancelled mid-statement (asyncio.wait_for with tiny timeouts) and a
server crash mid-run; lease_async and AsyncDenseIds handing out IDs with their statements on
the event loop. Bounded: about 10 s in all."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

import shardid
from shardid.dictionary import AsyncDictionary

from test_dictionary import assert_dense, install  # noqa: F401 (tests/postgres is on sys.path)
from dense_checks import async_dense_ids_take_each_number_once
from lease_checks import async_lease_taken_over_stops_and_a_successor_continues_above
from dictionary_checks import a_crash_loses_no_answer, cancelled_calls_leave_it_usable, many_tasks_write_the_same_new_strings, waiting_tasks_share_one_step


def strings_of(conn: Any, schema: str, topic: str) -> dict[str, int]:
    rows = conn.execute(
        f"SELECT d.value, d.id FROM {schema}.shardid_strings d JOIN {schema}.shardid_topics t USING (topic_id)"
        " WHERE t.topic = %s",
        (topic,),
    ).fetchall()
    return {v: i for v, i in rows}


def test_500_tasks_writing_the_same_new_strings_get_one_id_each(cluster: Any, conn: Any) -> None:
    install(conn, "adict_many")
    many_tasks_write_the_same_new_strings(
        cluster.dsn, "adict_many", lambda: assert_dense(conn, "adict_many", "t"), lambda: strings_of(conn, "adict_many", "t")
    )


def test_cancelled_calls_leave_the_cache_and_the_connection_usable(cluster: Any, connect: Any) -> None:
    blocker, check = connect(), connect()
    install(check, "adict_cancel")

    def hold() -> None:
        blocker.autocommit = False
        blocker.execute("SELECT adict_cancel.dict_ids('t', ARRAY['x'])")

    def release() -> None:
        blocker.rollback()
        blocker.autocommit = True

    cancelled_calls_leave_it_usable(cluster.dsn, "adict_cancel", hold, release, cancelled_on_the_server=True)
    assert assert_dense(check, "adict_cancel", "t") == 304


def test_a_server_crash_mid_run_loses_no_answer_and_makes_no_hole(cluster: Any) -> None:
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        install(conn, "adict_crash")
    answers = a_crash_loses_no_answer(cluster.dsn, "adict_crash", cluster.crash_and_restart)
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        n = assert_dense(conn, "adict_crash", "t")
        on_server = strings_of(conn, "adict_crash", "t")
    assert all(on_server[s] == i for s, i in answers.items())
    assert n >= len(answers)


def test_errors_are_the_sync_clients(cluster: Any, conn: Any) -> None:
    install(conn, "adict_err")

    async def main() -> None:
        d = AsyncDictionary(cluster.dsn, "nope", schema="adict_err")
        with pytest.raises(shardid.UnknownTopicError):
            await d.id("a")
        with pytest.raises(shardid.InvalidArgumentError, match=r"values\[1\]"):
            await d.ids(["a", ""])
        await d.close()

    asyncio.run(main())


# -- lease_async ---------------------------------------------------------------------------


def _no_sync_psycopg(monkeypatch: Any) -> None:
    """Makes a blocking psycopg connection fail: whatever the async clients send goes through
    AsyncConnection, on the loop."""

    def refuse(*a: Any, **k: Any) -> Any:
        raise AssertionError("a blocking psycopg connection was opened on the event loop")

    monkeypatch.setattr(psycopg.Connection, "connect", refuse)


def test_async_leases_hand_out_unique_ids_on_distinct_shards_and_record_ceilings(cluster: Any, monkeypatch: Any) -> None:
    from shardid.postgres import lease_async

    layout = shardid.Layout.TWITTER
    ids: list[int] = []
    statements: list[str] = []
    lag = 0.0

    async def main() -> tuple[list[int], int, int]:
        nonlocal lag
        _no_sync_psycopg(monkeypatch)
        a = await lease_async(layout, cluster.dsn, range(0, 3), table="async_leases", ttl_ms=900)
        async with lease_async(layout, cluster.dsn, range(0, 3), table="async_leases", ttl_ms=900) as b:
            assert {a.shard, b.shard} <= {0, 1, 2} and a.shard != b.shard
            done = asyncio.Event()
            for g in (a, b):
                run = g._run

                async def counting(sql: str, params: Any, tenure: Any, run: Any = run) -> Any:
                    statements.append(sql)
                    return await run(sql, params, tenure)

                g._run = counting  # type: ignore[method-assign]

            async def ticker() -> None:
                nonlocal lag
                while not done.is_set():
                    t = asyncio.get_running_loop().time()
                    await asyncio.sleep(0.005)
                    lag = max(lag, asyncio.get_running_loop().time() - t - 0.005)

            async def taker(g: Any) -> None:
                loop = asyncio.get_running_loop()
                end = loop.time() + 1.2  # several spans of 100 ms, and a heartbeat or four
                while loop.time() < end:
                    ids.append(await g.next_id())
                    ids.extend(await g.next_ids(3))
                    await asyncio.sleep(0)

            tick = asyncio.create_task(ticker())
            await asyncio.gather(*(taker(g) for g in (a, b) for _ in range(10)))
            done.set()
            # 10 tasks per lease wanting the next ceiling at once send one statement, not 10:
            # 1.2 s is 12 spans of 100 ms, and the heartbeat renews every 300 ms.
            assert 2 <= len(statements) <= 2 * (12 + 5), f"{len(statements)} ceiling writes and renewals"
            await tick
            assert a.held and b.held
            shards = (a.shard, b.shard)
            await a.close()
            await a.close()  # twice is fine
            with pytest.raises(shardid.ClosedError):  # closed, not lost: as the sync lease
                await a.next_id()
        assert not b.held
        return ids, *shards

    ids, sa, sb = asyncio.run(main())
    monkeypatch.undo()
    assert len(ids) == len(set(ids)) > 10_000
    assert {layout.decode(i).shard for i in ids} == {sa, sb}
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        rows = dict(conn.execute("SELECT shard, ceiling FROM async_leases").fetchall())
    for s in (sa, sb):
        top = max(i for i in ids if layout.decode(i).shard == s)
        # Every ID handed out lies under the ceiling its shard's row recorded.
        assert (top >> (layout.shard_bits + layout.sequence_bits)) <= rows[s]
    print(f"event-loop lag under 20 taking tasks: {lag * 1000:.1f} ms")
    assert lag < 0.5


def test_an_async_lease_taken_over_stops_and_a_successor_continues_above(cluster: Any) -> None:
    from shardid.postgres import lease_async

    def steal() -> None:
        with psycopg.connect(cluster.dsn, autocommit=True) as admin:
            assert admin.execute("UPDATE async_lost SET token = 'stolen' WHERE layout <> ''").rowcount == 1

    async_lease_taken_over_stops_and_a_successor_continues_above(lease_async, cluster.dsn, steal)


# -- AsyncDenseIds -------------------------------------------------------------------------


def test_async_dense_ids_fetch_on_the_loop_and_hand_out_each_number_once(cluster: Any, conn: Any, monkeypatch: Any) -> None:
    from test_segments import install as install_segments

    install_segments(conn, "aseg")
    conn.execute("SELECT aseg.create_tag('orders')")
    async_dense_ids_take_each_number_once(
        cluster.dsn,
        lambda: int(conn.execute("SELECT next FROM aseg.shardid_tags WHERE tag = 'orders'").fetchone()[0]),
        on_loop=lambda: _no_sync_psycopg(monkeypatch),
    )
    monkeypatch.undo()


def test_tasks_waiting_for_the_same_new_string_share_one_statement(cluster: Any, conn: Any) -> None:
    install(conn, "adict_once")

    got, sent = waiting_tasks_share_one_step(cluster.dsn, "adict_once")
    assert got == {0}
    assert sent == 1, f"{sent} statements for one new string"
