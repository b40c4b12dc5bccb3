"""The asyncio clients on a real MariaDB over aiomysql, with the properties
tests/postgres/test_async.py checks on PostgreSQL: AsyncDictionary under 500 concurrent tasks
writing the same new strings (two clients, so the server sees two writers), tasks cancelled
mid-statement (asyncio.wait_for with tiny timeouts), a server crash mid-run, the sync client's
errors, and AsyncDenseIds handing out each number once with its fetches on the event loop. No
blocking PyMySQL connection is opened on the loop. Bounded: about 10 s in all."""

from __future__ import annotations

import asyncio
from typing import Any

import pymysql
import pytest
from conftest import open_conn, rows
from test_dictionary import assert_dense, setup

import shardid
from shardid import _mysql
from shardid.dictionary import AsyncDictionary, Dictionary
from dense_checks import async_dense_ids_take_each_number_once
from dictionary_checks import a_crash_loses_no_answer, cancelled_calls_leave_it_usable, many_tasks_write_the_same_new_strings, waiting_tasks_share_one_step


def strings_of(conn: Any, schema: str, topic: str) -> dict[str, int]:
    found = rows(
        conn,
        f"SELECT d.value, d.id FROM {schema}.shardid_strings d JOIN {schema}.shardid_topics t USING (topic_id)"
        " WHERE t.topic = %s",
        topic,
    )
    return {v.decode(): i for v, i in found}


@pytest.fixture
def no_blocking_mysql(monkeypatch: Any) -> None:
    """Makes a blocking PyMySQL connection fail: whatever the async clients send goes through
    aiomysql, on the loop."""

    def refuse(*a: Any, **k: Any) -> Any:
        raise AssertionError("a blocking PyMySQL connection was opened on the event loop")

    monkeypatch.setattr(_mysql, "connect", refuse)
    monkeypatch.setattr(pymysql, "connect", refuse)


def test_500_tasks_writing_the_same_new_strings_get_one_id_each(server: Any, conn: Any, no_blocking_mysql: None) -> None:
    setup(conn, "adict_many")
    url = server.url_for("adict_many")
    many_tasks_write_the_same_new_strings(
        url, "adict_many", lambda: assert_dense(conn, "adict_many", "t"), lambda: strings_of(conn, "adict_many", "t")
    )


def test_cancelled_calls_leave_the_cache_and_the_client_usable(server: Any, connect: Any) -> None:
    blocker, check = connect(), connect()
    setup(check, "adict_cancel")

    def hold() -> None:
        blocker.begin()
        with blocker.cursor() as cur:
            cur.execute("SELECT adict_cancel.dict_id('t', 'x')")

    cancelled_calls_leave_it_usable(server.url_for("adict_cancel"), "adict_cancel", hold, blocker.rollback, cancelled_on_the_server=False)
    assert assert_dense(check, "adict_cancel", "t") == 304


def test_a_server_crash_mid_run_loses_no_answer_and_makes_no_hole(server: Any) -> None:
    conn = open_conn(server)
    setup(conn, "adict_crash")
    conn.close()
    url = server.url_for("adict_crash")
    answers = a_crash_loses_no_answer(url, "adict_crash", server.crash_and_restart)
    conn = open_conn(server)
    n = assert_dense(conn, "adict_crash", "t")
    on_server = strings_of(conn, "adict_crash", "t")
    conn.close()
    assert all(on_server[s] == i for s, i in answers.items())
    assert n >= len(answers)


def test_errors_are_the_sync_clients(server: Any, conn: Any) -> None:
    setup(conn, "adict_err", "gone")
    url = server.url_for("adict_err")
    Dictionary(url, "gone", schema="adict_err").drop()

    async def main() -> None:
        d = AsyncDictionary(url, "nope", schema="adict_err")
        with pytest.raises(shardid.UnknownTopicError):
            await d.id("a")
        with pytest.raises(shardid.InvalidArgumentError, match=r"values\[1\]"):
            await d.ids(["a", ""])
        await d.close()
        gone = AsyncDictionary(url, "gone", schema="adict_err")
        with pytest.raises(shardid.TopicDroppedError):
            await gone.ids(["new"])
        with pytest.raises(shardid.TopicDroppedError):
            await gone.create()
        await gone.close()
        with pytest.raises(shardid.InvalidArgumentError):
            AsyncDictionary("mysql://u@h:notaport/db", "t")
        down = AsyncDictionary(f"mysql://root@127.0.0.1:{_closed_port()}/adict_err", "t", schema="adict_err")
        with pytest.raises(shardid.DatabaseUnreachableError):
            await down.id("a")

    asyncio.run(main())


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_tasks_waiting_for_the_same_new_string_share_one_step(server: Any, conn: Any) -> None:
    setup(conn, "adict_once")
    url = server.url_for("adict_once")

    got, sent = waiting_tasks_share_one_step(url, "adict_once")
    assert got == {0}
    assert sent == 1, f"{sent} steps for one new string"


# -- AsyncDenseIds -------------------------------------------------------------------------


def test_async_dense_ids_fetch_on_the_loop_and_hand_out_each_number_once(server: Any, conn: Any, no_blocking_mysql: None) -> None:
    from test_segments import setup as setup_segments

    setup_segments(conn, "aseg", "orders")
    url = server.url_for("aseg")
    async_dense_ids_take_each_number_once(
        url, lambda: int(rows(conn, "SELECT next FROM aseg.shardid_tags WHERE tag = 'orders'")[0][0])
    )


# AsyncDenseIds of a tag never created, and of a server that is down: cells of the one behaviour
# contract, tests/postgres/test_contract.py (mariadb-dense-python-asyncio).
