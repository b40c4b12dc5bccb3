"""`next_id()` inside MariaDB: the same IDs as the application's generators (layout, shard,
decoding), unique under concurrent sessions (also when units run out and carry), the BEFORE
INSERT trigger that makes it a column's default, and its errors (before the epoch, past
expiry, a clock set back, a missing counter row, another layout in the same database)."""

from __future__ import annotations

import time
from typing import Any

import pymysql
import pytest
from conftest import install, one, open_conn, rows

import shardid
from shardid import Layout
from shardid.sql import mysql
from together import on_threads


def now_ms() -> int:
    return int(time.time() * 1000)


def test_ids_decode_as_the_applications_do(server: Any, conn: Any) -> None:
    install(conn, mysql(Layout.INSTAGRAM, 5, "insta5"))
    install(conn, mysql(Layout.INSTAGRAM, 5, "insta5"))  # idempotent
    server.sql(mysql(Layout.INSTAGRAM, 5, "insta5"))  # and by the command line client
    before = now_ms()
    ids = [one(conn, "SELECT insta5.next_id()") for _ in range(200)]
    after = now_ms()
    assert ids == sorted(ids) and len(set(ids)) == 200
    for id in ids:
        parts = Layout.INSTAGRAM.decode(id)
        assert parts.shard == 5
        assert before - 5 <= parts.timestamp_ms <= after + 5
        assert one(conn, "SELECT insta5.shardid_timestamp_ms(%s)", id) == parts.timestamp_ms
        assert one(conn, "SELECT insta5.shardid_shard(%s)", id) == 5
        assert one(conn, "SELECT insta5.shardid_sequence(%s)", id) == parts.sequence
    t = ids[0] and Layout.INSTAGRAM.decode(ids[0]).timestamp_ms
    assert one(conn, "SELECT insta5.shardid_min_id_at_ms(%s)", t) == Layout.INSTAGRAM.min_id_at(t)
    assert one(conn, "SELECT insta5.shardid_max_id_at_ms(%s)", t) == Layout.INSTAGRAM.max_id_at(t)
    # The session's time zone changes nothing (the clock is read in UTC), and is left as it was.
    with conn.cursor() as cur:
        cur.execute("SET time_zone = '+13:00'")
    id = one(conn, "SELECT insta5.next_id()")
    assert abs(Layout.INSTAGRAM.decode(id).timestamp_ms - now_ms()) < 1_000
    assert one(conn, "SELECT @@session.time_zone") == "+13:00"
    with pytest.raises(pymysql.err.MySQLError) as invalid:
        one(conn, "SELECT insta5.shardid_shard(-1)")
    assert "INVALID_ID" in str(invalid.value)


def test_a_trigger_makes_it_the_columns_default(server: Any, conn: Any) -> None:
    install(conn, mysql(Layout.INSTAGRAM, 7, "insta7"))
    with conn.cursor() as cur:
        cur.execute(
            "CREATE TABLE insta7.orders (id BIGINT NOT NULL DEFAULT 0 PRIMARY KEY, note TEXT, n INT AUTO_INCREMENT UNIQUE)"
        )
        cur.execute(
            "CREATE TRIGGER insta7.orders_id BEFORE INSERT ON insta7.orders FOR EACH ROW"
            " SET NEW.id = IF(NEW.id IS NULL OR NEW.id = 0, insta7.next_id(), NEW.id)"
        )
        cur.execute("INSERT INTO insta7.orders (note) VALUES ('a'), ('b'), ('c')")
        auto = cur.lastrowid
        cur.execute("INSERT INTO insta7.orders (id, note) VALUES (42, 'explicit')")
        cur.execute("INSERT INTO insta7.orders (id, note) VALUES (0, 'zero'), (NULL, 'null')")
        cur.execute("INSERT INTO insta7.orders (note) SELECT 's' FROM insta7.seq_1_to_3")
        # Without DEFAULT 0, INSERT ... SELECT fails before the trigger runs (strict mode).
        cur.execute("CREATE TABLE insta7.bare (id BIGINT NOT NULL PRIMARY KEY, note TEXT)")
        cur.execute("CREATE TRIGGER insta7.bare_id BEFORE INSERT ON insta7.bare FOR EACH ROW SET NEW.id = insta7.next_id()")
        with pytest.raises(pymysql.err.MySQLError) as no_default:
            cur.execute("INSERT INTO insta7.bare (note) SELECT 's' FROM insta7.seq_1_to_3")
        assert no_default.value.args[0] == 1364
    got = rows(conn, "SELECT id, note FROM insta7.orders ORDER BY n")
    assert [note for _, note in got] == ["a", "b", "c", "explicit", "zero", "null", "s", "s", "s"]
    made = [id for id, note in got if note != "explicit"]
    assert made == sorted(made) and len(set(made)) == 8
    assert all(Layout.INSTAGRAM.decode(id).shard == 7 for id in made)
    assert abs(Layout.INSTAGRAM.decode(made[-1]).timestamp_ms - now_ms()) < 5_000
    assert (42, "explicit") in got
    assert auto == 1, "the table's own AUTO_INCREMENT still reaches LAST_INSERT_ID()"


@pytest.mark.parametrize(
    ("name", "layout"),
    [
        ("instagram", Layout.INSTAGRAM),
        # 2 sequence bits: 4 IDs a millisecond, so concurrent sessions use units up and carry.
        ("tiny", Layout(epoch_ms=1_700_000_000_000, time_bits=41, shard_bits=10, sequence_bits=2)),
        ("sonyflake", Layout.SONYFLAKE),
    ],
)
def test_concurrent_sessions_never_get_one_id_twice(server: Any, conn: Any, name: str, layout: Layout) -> None:
    schema = f"ids_{name}"
    install(conn, mysql(layout, 3, schema))
    got: list[list[int]] = []
    errors: list[BaseException] = []
    per_session = 1_500

    def session() -> None:
        c = open_conn(server)
        try:
            mine = []
            with c.cursor() as cur:
                for _ in range(per_session // 50):
                    # 50 a statement, through a multi-row SELECT as an INSERT ... SELECT would.
                    cur.execute(f"SELECT {schema}.next_id() FROM {schema}.seq_1_to_50")
                    mine += [r[0] for r in cur.fetchall()]
            got.append(mine)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
        finally:
            c.close()

    on_threads([session] * 8)
    assert errors == []
    every = [id for mine in got for id in mine]
    assert len(every) == 8 * per_session
    assert len(set(every)) == len(every), "an ID made twice"
    for mine in got:
        assert mine == sorted(mine), "increasing per session"
    stamps = [layout.decode(id).timestamp_ms for id in every]
    assert max(stamps) <= now_ms() + layout.unit_ms, "no ID dated ahead of the clock (waited, not borrowed)"
    assert {layout.decode(id).shard for id in every} == {3}


def test_errors_of_the_clock_the_layout_and_the_counter(server: Any, conn: Any) -> None:
    # An epoch in the future: the clock is before it.
    future = Layout(epoch_ms=now_ms() + 86_400_000, time_bits=41, shard_bits=12, sequence_bits=10)
    install(conn, mysql(future, 1, "ids_future"))
    with pytest.raises(pymysql.err.MySQLError) as before:
        one(conn, "SELECT ids_future.next_id()")
    assert "TIMESTAMP_BEFORE_EPOCH" in str(before.value)
    # The counter is left as it was (the error rolled the statement back), not moved to the
    # unsigned value of a negative unit shifted.
    assert one(conn, "SELECT last FROM ids_future.shardid_counter") == -1
    # A layout that ran out long ago.
    expired = Layout(epoch_ms=0, unit_ms=1000, time_bits=20, shard_bits=2, sequence_bits=10)
    install(conn, mysql(expired, 1, "ids_expired"))
    with pytest.raises(pymysql.err.MySQLError) as past:
        one(conn, "SELECT ids_expired.next_id()")
    assert "TIMESTAMP_PAST_EXPIRY" in str(past.value)
    # The last ID made 10 s ahead of this clock: the clock went back, beyond the tolerance.
    install(conn, mysql(Layout.INSTAGRAM, 9, "ids_back"))
    ahead = (now_ms() + 10_000 - Layout.INSTAGRAM.epoch_ms) << 10
    with conn.cursor() as cur:
        cur.execute("UPDATE ids_back.shardid_counter SET last = %s", (ahead,))
    with pytest.raises(pymysql.err.MySQLError) as back:
        one(conn, "SELECT ids_back.next_id()")
    assert "CLOCK_MOVED_BACKWARDS" in str(back.value)
    # 300 ms ahead: within the tolerance, it waits for the clock and goes on above it.
    near = (now_ms() + 300 - Layout.INSTAGRAM.epoch_ms) << 10
    with conn.cursor() as cur:
        cur.execute("UPDATE ids_back.shardid_counter SET last = %s", (near,))
    started = time.monotonic()
    id = one(conn, "SELECT ids_back.next_id()")
    assert time.monotonic() - started >= 0.2
    assert ((id >> 23) << 10) | (id & 1023) == near + 1, "the counter's next value, shard bits aside"
    # The counter's row gone: an error, never another statement's LAST_INSERT_ID().
    with conn.cursor() as cur:
        cur.execute("DELETE FROM ids_back.shardid_counter")
    with pytest.raises(pymysql.err.MySQLError) as missing:
        one(conn, "SELECT ids_back.next_id()")
    assert "shardid_counter is missing" in str(missing.value)
    # One database, one layout.
    with pytest.raises(pymysql.err.MySQLError) as other:
        install(conn, mysql(Layout.TWITTER, 1, "ids_future"))
    assert "another layout" in str(other.value)
    with pytest.raises(shardid.ShardOutOfRangeError):
        mysql(Layout.INSTAGRAM, 8192, "x")
    with pytest.raises(shardid.InvalidArgumentError):
        mysql(Layout.INSTAGRAM, 1, "x; DROP DATABASE mysql")


def test_the_command_lines_print_the_mysql_ddl(server: Any) -> None:
    import subprocess
    import sys

    from shardid.sql import dictionary, segments

    def run(*args: str) -> str:
        done = subprocess.run([*args], capture_output=True, text=True, check=True)
        return done.stdout

    assert run(sys.executable, "-m", "shardid.sql", "--dialect", "mysql", "--segments", "--schema", "s") == segments(
        "s", dialect="mysql"
    )
    assert run(sys.executable, "-m", "shardid.sql", "--dialect", "mariadb", "--dictionary", "--schema", "d") == dictionary(
        "d", dialect="mariadb"
    )
    # MariaDB's names a Galera cluster as one server; MySQL's has no wsrep variable to read.
    assert "@@global.wsrep_on" in dictionary("d", dialect="mariadb") and "wsrep" not in dictionary("d", dialect="mysql")
    ddl = run(sys.executable, "-m", "shardid", "sql", "--dialect", "mysql", "--layout", "instagram", "--shard", "4", "--schema", "cli4")
    assert ddl == mysql(Layout.INSTAGRAM, 4, "cli4")
    server.sql(ddl)  # as printed, through the mariadb command line
    assert Layout.INSTAGRAM.decode(int(server.sql("SELECT cli4.next_id()").strip())).shard == 4
