"""Dense IDs from segments on a real MariaDB: the SQL contract (the clients' plain statements,
and create_tag, next_dense_id for SQL users), then the Python allocator under threads,
processes, kill -9 (also while a fetch is in flight), a server crash and restart, a server that
is down, both isolation levels, and bad input: unknown tags, names that could inject SQL, a
password holding @ : /, and a server that is not MySQL."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pymysql
import pytest
from conftest import install, one, open_conn, rows

import shardid
from shardid.segments import DenseIds
from shardid.sql import segments
from dense_checks import burst_makes_one_fetch, down_then_resumes, forked_child_takes_segments_of_its_own, killed_while_its_fetch_is_in_flight, processes_a_kill_and_a_server_restart
from together import on_threads

SEGMENTS_SQL = "SELECT step, stride FROM {s}.shardid_tags WHERE tag = %s"


def take(conn: Any, schema: str, tag: str, size: int) -> tuple[int, int]:
    """The clients' one statement: (first, rows)."""
    with conn.cursor() as cur:
        n = cur.execute(
            f"UPDATE {schema}.shardid_tags SET step = %s, next = CAST(LAST_INSERT_ID(next) AS SIGNED) + stride * %s"
            " WHERE tag = %s",
            (size, size, tag),
        )
        return cur.lastrowid, n


def setup(conn: Any, schema: str, *tags: str, **kw: int) -> None:
    install(conn, segments(schema, dialect="mysql", **kw))
    for tag in tags:
        one(conn, f"SELECT {schema}.create_tag(%s)", tag)


def test_the_sql_contract(server: Any, conn: Any) -> None:
    setup(conn, "seg_contract")
    setup(conn, "seg_contract")  # idempotent
    server.sql(segments("seg_contract", dialect="mysql"))  # and by the command line client
    assert one(conn, "SELECT seg_contract.create_tag('orders')") == 1
    assert one(conn, "SELECT seg_contract.create_tag('orders')") == 0, "exists: left as it is"
    assert take(conn, "seg_contract", "orders", 10) == (1, 1)
    assert take(conn, "seg_contract", "orders", 5) == (11, 1)
    assert rows(conn, "SELECT next, step, stride FROM seg_contract.shardid_tags WHERE tag = 'orders'") == [(16, 5, 1)]
    assert one(conn, "SELECT seg_contract.create_tag_from('invoices', 1000)") == 1
    assert take(conn, "seg_contract", "invoices", 7) == (1000, 1)
    # The database's own rows draw from the same numbers, and leave LAST_INSERT_ID() alone.
    assert one(conn, "SELECT seg_contract.next_dense_id('orders')") == 16
    assert take(conn, "seg_contract", "orders", 3) == (17, 1)
    # A tag that does not exist updates no row: the reply's insert ID is 0 (a tag may start
    # at 0) and LAST_INSERT_ID() is stale: only the row count tells.
    first, n = take(conn, "seg_contract", "typo", 3)
    assert (first, n) == (0, 0)
    assert one(conn, "SELECT LAST_INSERT_ID()") == 17
    # Giving back works only for the last segment taken.
    give_back = "UPDATE seg_contract.shardid_tags SET next = %s WHERE tag = %s AND next = %s AND next > %s AND MOD(next - %s, stride) = 0"
    with conn.cursor() as cur:
        assert cur.execute(give_back, (18, "orders", 20, 18, 18)) == 1
        assert take(conn, "seg_contract", "orders", 2) == (18, 1)
        assert cur.execute(give_back, (17, "orders", 19, 17, 17)) == 0, "a segment was taken after"
    # A trigger numbers rows from the same tag.
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE seg_contract.orders (n BIGINT NOT NULL PRIMARY KEY, note TEXT)")
        cur.execute(
            "CREATE TRIGGER seg_contract.orders_n BEFORE INSERT ON seg_contract.orders FOR EACH ROW"
            " SET NEW.n = seg_contract.next_dense_id('orders')"
        )
        cur.execute("INSERT INTO seg_contract.orders (note) VALUES ('a'), ('b')")
    assert rows(conn, "SELECT n FROM seg_contract.orders ORDER BY n") == [(20,), (21,)]


def test_bad_input_is_refused_clearly(server: Any, conn: Any) -> None:
    setup(conn, "seg_bad", "a")
    with pytest.raises(pymysql.err.MySQLError) as unknown:
        one(conn, "SELECT seg_bad.next_dense_id('typo')")
    assert "UNKNOWN_TAG" in str(unknown.value)
    for tag in ("", None, "x" * 201):
        with pytest.raises(pymysql.err.MySQLError) as bad_tag:
            one(conn, "SELECT seg_bad.create_tag(%s)", tag)
        assert "INVALID_ARGUMENT" in str(bad_tag.value), tag
    # A tag is data, never SQL: this one is a tag like any other, in SQL and in the client.
    evil = "x'); DROP TABLE seg_bad.shardid_tags; --"
    one(conn, "SELECT seg_bad.create_tag(%s)", evil)
    with DenseIds(server.url_for("seg_bad"), evil, schema="seg_bad") as ids:
        assert ids.next_id() == 1
    # Tags are bytes: no collation makes 'A' or 'a ' the tag 'a'.
    for other in ("A", "a ", "á"):
        with pytest.raises(shardid.UnknownTagError):
            DenseIds(server.url_for("seg_bad"), other, schema="seg_bad").next_id()
    # A tag near the top of BIGINT runs out with an error, never clamps or wraps, even in a
    # session whose sql_mode is not strict (where MySQL clamps a value too large for a column).
    one(conn, "SELECT seg_bad.create_tag_from('top', 9223372036854775800)")
    with conn.cursor() as cur:
        cur.execute("SET SESSION sql_mode = ''")
    assert one(conn, "SELECT seg_bad.next_dense_id('top')") == 9223372036854775800
    with pytest.raises(pymysql.err.MySQLError) as exhausted:
        take(conn, "seg_bad", "top", 100)
    assert exhausted.value.args[0] == 1690, exhausted.value
    # 2^63 - 1 itself cannot be handed out: the row would have to move past it.
    one(conn, "SELECT seg_bad.create_tag_from('last', 9223372036854775807)")
    for _ in range(2):
        with pytest.raises(pymysql.err.MySQLError) as tag_exhausted:
            one(conn, "SELECT seg_bad.next_dense_id('last')")
        assert "TAG_EXHAUSTED" in str(tag_exhausted.value)
    assert one(conn, "SELECT next FROM seg_bad.shardid_tags WHERE tag = 'last'") == 9223372036854775807
    top = DenseIds(server.url_for("seg_bad"), "top", schema="seg_bad", wait_ms=1000)
    with pytest.raises(shardid.SegmentUnavailableError) as ran_out:
        for _ in range(20):
            top.next_id()
    assert "out of range" in str(ran_out.value)
    # Names that could inject SQL never reach it.
    with pytest.raises(shardid.InvalidArgumentError):
        segments("seg; DROP TABLE x", dialect="mysql")
    with pytest.raises(shardid.InvalidArgumentError):
        segments("seg", dialect="oracle")
    with pytest.raises(ValueError):
        segments("seg", servers=2, index=2, dialect="mysql")
    with pytest.raises(shardid.InvalidArgumentError):
        DenseIds(server.url_for("seg_bad"), "", schema="seg_bad")
    with pytest.raises(shardid.InvalidArgumentError):
        DenseIds(server.url_for("seg_bad"), "a", schema="Seg")
    with pytest.raises(shardid.InvalidArgumentError):
        DenseIds([server.url_for("seg_bad"), "host=127.0.0.1"], "a", schema="seg_bad")
    for url in ("mysql://h:99999/seg", "mysql://u:%zz@h/seg", "mysql://"):
        with pytest.raises(shardid.InvalidArgumentError) as bad_url:
            DenseIds(url, "a", schema="seg_bad")
        assert bad_url.value.argument == "url"


def test_a_password_with_at_colon_and_slash_and_a_server_that_is_not_mysql(server: Any, conn: Any, postgres: Any) -> None:
    setup(conn, "seg_auth", "p")
    password = "p@ss:w/rd%?#"
    with conn.cursor() as cur:
        cur.execute("CREATE USER IF NOT EXISTS 'app'@'127.0.0.1' IDENTIFIED BY %s", (password,))
        cur.execute("GRANT SELECT, UPDATE ON seg_auth.* TO 'app'@'127.0.0.1'")
    url = server.url_for("seg_auth", user="app", password=password)
    assert "p%40ss%3Aw%2Frd" in url
    with DenseIds(url, "p", schema="seg_auth") as ids:
        assert ids.next_id() == 1
    # A log-in refused is a database that cannot be reached (issue 36), once the wait is over.
    with pytest.raises(shardid.DatabaseUnreachableError) as denied:
        DenseIds(server.url_for("seg_auth", user="app", password="wrong"), "p", schema="seg_auth", wait_ms=1000).next_id()
    assert "Access denied" in str(denied.value)
    # The PostgreSQL port: PostgreSQL waits for its client to speak first, so PyMySQL would
    # wait for a greeting forever.
    started = time.monotonic()
    with pytest.raises(shardid.NotMysqlError) as not_mysql:
        DenseIds(f"mysql://postgres@127.0.0.1:{postgres.port}/seg", "p", schema="seg_auth").next_id()
    assert time.monotonic() - started < 5
    assert not_mysql.value.server == f"127.0.0.1:{postgres.port}"
    assert "MySQL or MariaDB" in str(not_mysql.value)


def test_ticket_servers_hand_out_disjoint_numbers(server: Any, conn: Any) -> None:
    setup(conn, "seg_odd", "t", servers=2, index=1)
    setup(conn, "seg_even", "t", servers=2, index=0)
    assert rows(conn, "SELECT next, stride FROM seg_odd.shardid_tags") == [(1, 2)]
    assert rows(conn, "SELECT next, stride FROM seg_even.shardid_tags") == [(2, 2)]
    with DenseIds(server.url_for("seg_odd"), "t", schema="seg_odd", min_size=4, max_size=4) as odd:
        got = [odd.next_id() for _ in range(1_010)]
    assert got[:3] == [1, 3, 5] and all(i % 2 == 1 for i in got) and len(set(got)) == len(got)
    assert one(conn, "SELECT seg_odd.next_dense_id('t')") % 2 == 1
    with DenseIds([server.url_for("seg_odd"), server.url_for("seg_even")], "t", schema="seg_odd", min_size=4, max_size=4) as both:
        mixed = [both.next_id() for _ in range(100)]
    assert len(set(mixed)) == 100 and not set(mixed) & set(got)


def test_dense_ids_increase_and_a_clean_close_leaves_no_hole(server: Any, conn: Any) -> None:
    setup(conn, "seg_clean", "orders")
    url = server.url_for("seg_clean")
    with DenseIds(url, "orders", schema="seg_clean", min_size=100, max_size=1000) as first:
        ids = [first.next_id() for _ in range(250)] + first.next_ids(50)
    assert ids == list(range(1, 301))
    assert first.skipped == 0
    with pytest.raises(shardid.ClosedError):  # closed, not unavailable: a retry cannot help
        first.next_id()
    with DenseIds(url, "orders", schema="seg_clean") as again:
        assert again.next_id() == 301, "a restart after a clean close continues at the next number"
    with pytest.raises(shardid.UnknownTagError) as unknown:
        DenseIds(url, "typo", schema="seg_clean").next_id()
    assert unknown.value.tag == "typo"
    # mariadb:// is the same.
    with DenseIds(url.replace("mysql://", "mariadb://"), "orders", schema="seg_clean") as maria:
        assert maria.next_id() == 302


def test_a_burst_on_an_empty_allocator_makes_one_fetch(server: Any, conn: Any) -> None:
    setup(conn, "seg_burst", "b")
    ids = DenseIds(server.url_for("seg_burst"), "b", schema="seg_burst")
    burst_makes_one_fetch(ids)


def test_processes_threads_kill_and_a_server_restart_never_repeat_an_id(server: Any, conn: Any, tmp_path: Path) -> None:
    setup(conn, "seg_load", "a", "b")

    def next_of(tag: str) -> int:
        with open_conn(server) as after:  # the fixture's died with the server
            return one(after, "SELECT next FROM seg_load.shardid_tags WHERE tag = %s", tag)

    # InnoDB recovers from a SIGKILL under everyone; 4 threads: 100,000 IDs per process.
    processes_a_kill_and_a_server_restart(server.url_for("seg_load"), tmp_path / "ids", server.crash_and_restart, next_of, 25_000, 60_000)


def test_a_server_that_is_down_gives_a_typed_error_and_service_resumes(server: Any, conn: Any) -> None:
    setup(conn, "seg_down", "d")
    ids = DenseIds(server.url_for("seg_down"), "d", schema="seg_down", min_size=10, max_size=10, wait_ms=500)
    down_then_resumes(ids, server.stop_server, server.start_server)


def test_a_forked_child_takes_segments_of_its_own(server: Any, conn: Any) -> None:
    setup(conn, "seg_fork", "f")
    ids = DenseIds(server.url_for("seg_fork"), "f", schema="seg_fork", min_size=100, max_size=100)
    forked_child_takes_segments_of_its_own(ids)


@pytest.mark.parametrize("isolation", ["READ COMMITTED", "REPEATABLE READ"])
def test_the_take_never_hands_out_a_number_twice_under_either_isolation(server: Any, conn: Any, isolation: str) -> None:
    schema = "seg_" + isolation.split()[0].lower()
    setup(conn, schema, "iso")
    taken: list[tuple[int, int]] = []
    lock = threading.Lock()

    def worker() -> None:
        # In transactions of the session's isolation, as an application's own would be.
        c = open_conn(server, autocommit=False)
        with c.cursor() as cur:
            cur.execute(f"SET SESSION TRANSACTION ISOLATION LEVEL {isolation}")
        for _ in range(200):
            c.begin()
            first, n = take(c, schema, "iso", 10)
            c.commit()
            assert n == 1
            with lock:
                taken.append((first, 10))
        c.close()

    on_threads([worker] * 8)
    numbers = [n for first, count in taken for n in range(first, first + count)]
    assert len(numbers) == len(set(numbers)) == 8 * 200 * 10
    assert sorted(numbers) == list(range(1, 16_001)), "dense: no number lost either"


def test_a_client_killed_while_its_fetch_is_in_flight_never_causes_a_duplicate(server: Any, conn: Any, tmp_path: Path) -> None:
    from proxy import DelayProxy

    setup(conn, "seg_kill", "k")
    assert take(conn, "seg_kill", "k", 20) == (1, 1)  # the row remembers segments of 20
    with conn.cursor() as cur:
        cur.execute("UPDATE seg_kill.shardid_tags SET next = 1 WHERE tag = 'k'")
    proxy = DelayProxy(server.port, 0.3, watch=b"LAST_INSERT_ID")
    next_of_k = lambda: one(conn, "SELECT next FROM seg_kill.shardid_tags WHERE tag = 'k'")  # noqa: E731
    killed_while_its_fetch_is_in_flight(proxy, f"mysql://root@127.0.0.1:{proxy.port}/seg_kill", server.url_for("seg_kill"), tmp_path / "killed", next_of_k)
