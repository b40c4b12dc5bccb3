"""The failover rules on one server, their edges one at a time (test_failover.py runs real
promotions): a row recording another timeline is stepped past what the lost WAL could have
handed out, by rate (segments, the dictionary: test_restore.py has the figures) or by time
(leases, next_id()), and a segment grows at most twice per MiB of WAL. A row "of another timeline" is made by writing the row's
timeline column, as a promoted standby would find it."""

from __future__ import annotations

import time
from typing import Any

import psycopg

import shardid
from shardid import Layout
from shardid.postgres import lease
from shardid.sql import dictionary, postgres, segments

DEFAULT_SEGMENT = 1000


def install(conn: Any, sql: str) -> None:
    with conn.transaction():
        conn.execute(sql.encode())


def take(conn: Any, schema: str, size: int) -> tuple[int, int, int]:
    row = conn.execute(f"SELECT first, count, stride FROM {schema}.take_segment('t', %s)", (size,)).fetchone()
    assert row is not None
    return row  # type: ignore[no-any-return]


def test_a_segment_grows_at_most_twice_per_mib_of_wal(conn: Any) -> None:
    install(conn, segments("seg_grow"))
    conn.execute("SELECT seg_grow.create_tag('t')")
    assert take(conn, "seg_grow", 0) == (1, DEFAULT_SEGMENT, 1)
    # Asked for far more: twice the last, once; then no larger until a MiB of WAL has passed.
    assert take(conn, "seg_grow", 100_000)[1] == 2 * DEFAULT_SEGMENT
    assert take(conn, "seg_grow", 100_000)[1] == 2 * DEFAULT_SEGMENT
    # Smaller is always fine.
    assert take(conn, "seg_grow", 10)[1] == 10
    assert take(conn, "seg_grow", DEFAULT_SEGMENT)[1] == DEFAULT_SEGMENT  # up to the default, always
    assert take(conn, "seg_grow", 1500)[1] == DEFAULT_SEGMENT  # more is growth: not yet
    conn.execute("CREATE TABLE seg_grow.wal AS SELECT g, repeat('x', 100) AS pad FROM generate_series(1, 20000) g")
    assert take(conn, "seg_grow", 100_000)[1] == 2 * DEFAULT_SEGMENT
    assert take(conn, "seg_grow", 100_000)[1] == 2 * DEFAULT_SEGMENT


def test_a_tag_of_another_timeline_skips_what_the_lost_wal_could_have_handed_out(conn: Any) -> None:
    install(conn, segments("seg_tli"))
    conn.execute("SELECT seg_tli.create_tag('t')")
    first, count, _ = take(conn, "seg_tli", 50)
    end = first + count
    # As a promoted standby finds its row: last written on the old timeline. What it skips
    # (issue 42: by the tag's rate, test_restore.py) is at least 4 segments of twice its size.
    conn.execute("UPDATE seg_tli.shardid_tags SET tli = tli - 1")
    skipped = take(conn, "seg_tli", 50)[0] - end
    assert skipped >= 4 * 2 * 50, skipped
    # Once: the row is on this timeline now.
    assert take(conn, "seg_tli", 50)[0] == end + skipped + 50
    # The database's own IDs jump too, and a give_back never rewinds a row of another timeline.
    conn.execute("UPDATE seg_tli.shardid_tags SET tli = tli - 1")
    row = conn.execute("SELECT next FROM seg_tli.shardid_tags").fetchone()
    assert conn.execute("SELECT seg_tli.next_dense_id('t')").fetchone()[0] >= row[0] + 4 * 2 * 50
    conn.execute("UPDATE seg_tli.shardid_tags SET tli = tli - 1")
    next_ = conn.execute("SELECT next FROM seg_tli.shardid_tags").fetchone()[0]
    assert conn.execute("SELECT seg_tli.give_back('t', %s, %s)", (next_ - 10, next_)).fetchone() == (False,)


def test_a_topic_of_another_timeline_skips_ids(conn: Any) -> None:
    install(conn, dictionary("dict_tli"))
    conn.execute("SELECT dict_tli.create_topic('t')")
    assert conn.execute("SELECT dict_tli.dict_ids('t', ARRAY['a', 'b'])").fetchone() == ([0, 1],)
    conn.execute("UPDATE dict_tli.shardid_topics SET tli = tli - 1")
    # A known string keeps its ID; a new one skips what the lost WAL could have numbered (by the
    # topic's rate, test_restore.py): at least 4 of its largest batches.
    ids = conn.execute("SELECT dict_tli.dict_ids('t', ARRAY['a', 'c'])").fetchone()[0]
    assert ids[0] == 0 and ids[1] >= 2 + 4 * 2, ids
    assert conn.execute("SELECT dict_tli.dict_id('t', 'd')").fetchone() == (ids[1] + 1,)
    # New strings are written with synchronous_commit on, whatever the session's setting.
    conn.execute("SET synchronous_commit = off")
    with conn.transaction():
        conn.execute("SELECT dict_tli.dict_id('t', 'e')")
        assert conn.execute("SHOW synchronous_commit").fetchone() == ("on",)
    assert conn.execute("SHOW synchronous_commit").fetchone() == ("off",)


def test_a_lease_of_another_timeline_starts_above_the_databases_clock_and_skew(cluster: Any, conn: Any) -> None:
    held = lease(Layout.TWITTER, cluster.dsn, range(0, 1), table="tli_leases", ttl_ms=1000)
    held.next_id()
    held.close()
    conn.execute("UPDATE tli_leases SET tli = tli - 1")
    before = time.time()
    successor = lease(Layout.TWITTER, cluster.dsn, range(0, 1), table="tli_leases", ttl_ms=1000)
    waited = time.time() - before
    first = Layout.TWITTER.decode(successor.next_id()).timestamp_ms / 1000
    # Above the database's clock plus 2.25 s when the claim ran: the successor waited for it.
    assert first > before + 2.2 and waited > 2.0, (first - before, waited)
    successor.close()


def test_next_id_on_another_timeline_waits_past_the_floor_once_per_session(cluster: Any, connect: Any) -> None:
    admin = connect()
    install(admin, postgres(Layout.INSTAGRAM, 9, "insta_tli"))
    app = connect()
    first = app.execute("SELECT insta_tli.next_id()").fetchone()[0]
    admin.execute("UPDATE insta_tli.shardid_timeline SET tli = tli - 1")
    # The checked session goes on (it was on this server's timeline all along); a new one sets
    # the floor, the database's clock plus 2 s, and waits past it, as every new session does.
    assert app.execute("SELECT insta_tli.next_id()").fetchone()[0] > first
    fresh = psycopg.connect(cluster.dsn, autocommit=True)
    start = time.time()
    after = fresh.execute("SELECT insta_tli.next_id()").fetchone()[0]
    assert time.time() - start > 1.9
    assert Layout.INSTAGRAM.decode(after).timestamp_ms / 1000 > start + 1.9
    floor = admin.execute("SELECT floor_units FROM insta_tli.shardid_timeline").fetchone()[0]
    assert (after >> 23) > floor
    other = psycopg.connect(cluster.dsn, autocommit=True)
    start = time.time()
    assert other.execute("SELECT insta_tli.next_id()").fetchone()[0] > after
    assert time.time() - start < 1.0  # past the floor already: no wait
    for c in (fresh, other):
        c.close()
    # A clock far behind the floor is an error, not a wait.
    admin.execute("UPDATE insta_tli.shardid_timeline SET floor_units = floor_units + 60000")
    late = psycopg.connect(cluster.dsn, autocommit=True)
    try:
        late.execute("SELECT insta_tli.next_id()")
        raise AssertionError("a next_id() 60 s below the floor made an ID")
    except psycopg.Error as e:
        assert str(e).startswith("CLOCK_MOVED_BACKWARDS: clock moved backwards:"), e
    late.close()
    assert shardid.Layout.INSTAGRAM.decode(after).shard == 9
