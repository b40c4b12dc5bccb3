"""Trying to make the emitted next_id() repeat an ID, leave its layout or hold its lock:
one huge statement, concurrent sessions and pgbench on one primary key (with the Python
generator writing another shard into the same table), exhausted time units, a clock set back,
a server crash, expiry, rollbacks, cancels and session resets."""

from __future__ import annotations

import functools
import re
import threading
from typing import Any, Callable

import psycopg
import pytest
from cluster import Cluster
from conftest import install

import shardid
from together import on_threads

Conn = psycopg.Connection[Any]


def now_ms(conn: Conn) -> int:
    return conn.execute("SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint").fetchone()[0]  # type: ignore[index,no-any-return]


def tiny_layout(conn: Conn) -> shardid.Layout:
    """Four IDs per millisecond (two sequence bits), epoch a day ago: units run out at once."""
    return shardid.Layout(epoch_ms=now_ms(conn) - 86_400_000, time_bits=41, shard_bits=2, sequence_bits=2)


def run_together(*jobs: Callable[[], Any]) -> list[Any]:
    """Runs the jobs in threads released at the same moment; re-raises the first failure."""
    barrier = threading.Barrier(len(jobs))
    results: list[Any] = [None] * len(jobs)
    errors: list[BaseException] = []

    def run(i: int, job: Callable[[], Any]) -> None:
        try:
            barrier.wait()
            results[i] = job()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    on_threads(functools.partial(run, i, job) for i, job in enumerate(jobs))
    if errors:
        raise errors[0]
    return results


def test_one_statement_of_200000_ids_is_unique_increasing_and_dated_now(conn: Conn) -> None:
    install(conn, shardid.Layout.INSTAGRAM, 5, "one")
    before = now_ms(conn)
    rows = conn.execute("SELECT i, one.next_id() FROM generate_series(1, 200000) AS i").fetchall()
    after = now_ms(conn)
    ids = [id_ for _, id_ in sorted(rows)]
    assert len(set(ids)) == 200000
    assert all(a < b for a, b in zip(ids, ids[1:])), "IDs of one session must increase"
    for id_ in ids[:: 997]:
        parts = shardid.Layout.INSTAGRAM.decode(id_)
        assert parts.shard == 5 and before <= parts.timestamp_ms <= after


def test_concurrent_sessions_and_the_python_generator_share_one_primary_key(connect: Callable[[], Conn]) -> None:
    admin = connect()
    install(admin, shardid.Layout.INSTAGRAM, 5, "multi")
    admin.execute("CREATE TABLE multi.t (id bigint PRIMARY KEY DEFAULT multi.next_id(), src text NOT NULL)")
    conns = [connect() for _ in range(9)]

    def bulk(c: Conn) -> Callable[[], None]:
        # 100,000 rows in one statement, from four sessions at once.
        return lambda: c.execute("INSERT INTO multi.t (src) SELECT 'bulk' FROM generate_series(1, 100000)")

    def singles(c: Conn) -> Callable[[], None]:
        def run() -> None:
            for _ in range(1000):  # one row per transaction
                c.execute("INSERT INTO multi.t (src) VALUES ('single')")
        return run

    def app() -> None:
        # The application writes shard 6 of the same layout into the same table meanwhile.
        generator = shardid.Generator(shardid.Layout.INSTAGRAM, 6)
        for _ in range(20):
            conns[8].execute(
                "INSERT INTO multi.t (id, src) SELECT unnest(%s::bigint[]), 'app'", (generator.next_ids(5000),)
            )

    run_together(*[bulk(c) for c in conns[:4]], *[singles(c) for c in conns[4:8]], app)
    counts = dict(admin.execute("SELECT src, count(*) FROM multi.t GROUP BY src").fetchall())
    assert counts == {"bulk": 400000, "single": 4000, "app": 100000}
    shards = dict(admin.execute("SELECT src, array_agg(DISTINCT multi.shardid_shard(id)) FROM multi.t GROUP BY src").fetchall())
    assert shards == {"bulk": [5], "single": [5], "app": [6]}
    # The primary key already refused duplicates; count them once more for the record.
    assert admin.execute("SELECT count(*) - count(DISTINCT id) FROM multi.t").fetchone()[0] == 0  # type: ignore[index]


def test_pgbench_sessions_insert_with_the_default_without_errors(cluster: Any, conn: Conn) -> None:
    install(conn, shardid.Layout.TWITTER, 9, "bench")
    conn.execute("CREATE TABLE bench.t (id bigint PRIMARY KEY DEFAULT bench.next_id())")
    script = cluster.root / "insert.sql"
    script.write_text("INSERT INTO bench.t DEFAULT VALUES;\n")
    run = cluster.pgbench("-n", "-c", "4", "-j", "2", "-t", "5000", "-f", str(script), "postgres")
    assert run.returncode == 0, run.stdout + run.stderr
    processed = int(re.search(r"number of transactions actually processed: (\d+)", run.stdout).group(1))  # type: ignore[union-attr]
    assert processed == 20000
    assert "number of failed transactions: 0 " in run.stdout, run.stdout
    assert conn.execute("SELECT count(DISTINCT id), count(*) FROM bench.t").fetchone() == (20000, 20000)


def test_an_exhausted_unit_is_waited_for_never_repeated(connect: Callable[[], Conn]) -> None:
    # Four IDs per millisecond: two sessions asking for 3,000 each must wait for the clock.
    admin = connect()
    start = now_ms(admin)
    tiny = tiny_layout(admin)
    install(admin, tiny, 1, "tiny")
    query = "SELECT tiny.next_id(), floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint FROM generate_series(1, 3000)"
    a, b = connect(), connect()
    rows_a, rows_b = run_together(lambda: a.execute(query).fetchall(), lambda: b.execute(query).fetchall())
    ids = [id_ for id_, _ in rows_a + rows_b]
    assert len(set(ids)) == 6000
    for rows in (rows_a, rows_b):
        assert all(x[0] < y[0] for x, y in zip(rows, rows[1:]))
        # Waited, not borrowed: no ID is dated after the clock read just after it was made.
        assert all(tiny.decode(id_).timestamp_ms <= clock for id_, clock in rows)
    assert now_ms(admin) - start >= 6000 // 4 - 200  # the clock had to move on


def test_a_used_up_unit_is_waited_out_to_the_next_one(conn: Conn) -> None:
    # One statement asking for twenty units' worth of Instagram IDs (1,024 a millisecond): each
    # used-up unit is waited out to the very next one. pg_sleep() alone woke 2-3 ms later, so
    # nearly every wait skipped units and one statement ran at a third of the layout's rate.
    # A session descheduled for a millisecond can still skip one; most waits must not.
    layout = shardid.Layout.INSTAGRAM
    install(conn, layout, 5, "cap")
    ids = [r[0] for r in conn.execute("SELECT cap.next_id() FROM generate_series(1, 20480)").fetchall()]
    assert len(set(ids)) == 20480
    assert all(a < b for a, b in zip(ids, ids[1:]))
    units = sorted({layout.decode(i).timestamp_ms for i in ids})
    steps = [b - a for a, b in zip(units, units[1:])]
    assert len(units) >= 20
    assert sum(step > 1 for step in steps) <= len(steps) // 2, steps


def test_eight_sessions_racing_through_tiny_units_never_collide(connect: Callable[[], Conn]) -> None:
    # Four IDs per millisecond for eight sessions: nearly every call finds its unit's counter not
    # ready or used up, so the counters move to new units all the time while others call nextval().
    admin = connect()
    tiny = tiny_layout(admin)
    install(admin, tiny, 3, "race")
    query = "SELECT race.next_id() FROM generate_series(1, 500)"
    conns = [connect() for _ in range(8)]
    results = run_together(*[(lambda c=c: c.execute(query).fetchall()) for c in conns])
    ids = [row[0] for rows in results for row in rows]
    assert len(ids) == 4000 and len(set(ids)) == 4000
    assert {tiny.decode(i).shard for i in ids} == {3}


def test_a_server_with_more_processes_than_a_units_spare_values_is_refused(conn: Conn) -> None:
    # 58 time bits leave a stride of 4 bits: 28 spare values between a counter's units, fewer
    # than this server's processes, so no counter move could be proven safe.
    t = now_ms(conn)
    narrow = shardid.Layout(epoch_ms=t - 86_400_000, time_bits=58, shard_bits=3, sequence_bits=2)
    install(conn, narrow, 1, "narrow")
    with pytest.raises(psycopg.Error, match=r"this server allows \d+ processes, more than the 28 values") as info:
        conn.execute("SELECT narrow.next_id()")
    assert info.value.sqlstate == "55000"


def test_borrowing_stays_within_its_limit(conn: Conn) -> None:
    tiny = tiny_layout(conn)
    install(conn, tiny, 1, "borrow", max_borrow_units=3)
    rows = conn.execute(
        "SELECT borrow.next_id(), floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint FROM generate_series(1, 2000)"
    ).fetchall()
    assert len({id_ for id_, _ in rows}) == 2000
    assert all(tiny.decode(id_).timestamp_ms <= clock + 3 for id_, clock in rows)


def stride(layout: shardid.Layout) -> int:
    """Bits of counter value per time unit: `stride_shift` in core/src/sql.rs."""
    return max(layout.sequence_bits + 1, min(16, 62 - layout.time_bits))


def used_up_to(conn: Conn, schema: str, layout: shardid.Layout, ms: int) -> int:
    """Moves the counters as if IDs had been made up to the unit of `ms` (a clock that was
    ahead, and has since been set back): that unit's first ID taken, the unit before it used
    up. Returns the unit's start in Unix milliseconds."""
    units = (ms - layout.epoch_ms) // layout.unit_ms
    for unit, sequence in ((units, 0), (units - 1, layout.max_sequence)):
        counter = "even" if unit % 2 == 0 else "odd"
        conn.execute(f"SELECT setval('{schema}.shardid_counter_{counter}', %s, true)", ((unit << stride(layout)) + sequence,))
    return layout.epoch_ms + units * layout.unit_ms


def test_a_clock_set_back_never_yields_an_old_id(connect: Callable[[], Conn]) -> None:
    admin = connect()
    layout = shardid.Layout.TWITTER
    install(admin, layout, 2, "back")
    # 5 s ahead of the clock: further than the 1 s tolerance.
    used_up_to(admin, "back", layout, now_ms(admin) + 5000)
    with pytest.raises(psycopg.Error, match=r"^CLOCK_MOVED_BACKWARDS: clock moved backwards: \d+ ms behind") as info:
        connect().execute("SELECT back.next_id()")
    assert info.value.sqlstate == "55000"
    # 300 ms ahead: within the tolerance, next_id() waits for the clock to catch up, then goes
    # on after the last ID.
    ahead = used_up_to(admin, "back", layout, now_ms(admin) + 300)
    ids = [r[0] for r in connect().execute("SELECT back.next_id() FROM generate_series(1, 100)").fetchall()]
    assert now_ms(admin) >= ahead
    assert min(layout.decode(i).timestamp_ms for i in ids) >= ahead
    assert len(set(ids)) == 100
    assert layout.compose(ahead, 2, 0) not in ids  # made before the clock went back


def test_a_server_crash_never_yields_an_old_id() -> None:
    # A server of its own: killed without a checkpoint, then WAL replayed. The counters are
    # ordinary sequences, so they come back at or past the last value handed out.
    with Cluster() as own:
        layout = shardid.Layout.INSTAGRAM
        with psycopg.connect(own.dsn, autocommit=True) as conn:
            install(conn, layout, 5, "crash")
            before = [r[0] for r in conn.execute("SELECT crash.next_id() FROM generate_series(1, 20000)").fetchall()]
            before += [conn.execute("SELECT crash.next_id()").fetchone()[0] for _ in range(200)]  # type: ignore[index]
            # And IDs made ahead of the clock, as by a clock that was ahead before the crash.
            ahead = used_up_to(conn, "crash", layout, now_ms(conn) + 300)
        own.crash_and_restart()
        with psycopg.connect(own.dsn, autocommit=True) as conn:
            after = [r[0] for r in conn.execute("SELECT crash.next_id() FROM generate_series(1, 20000)").fetchall()]
        assert len(set(before + after)) == len(before) + len(after)
        assert min(after) > max(before)
        assert min(layout.decode(i).timestamp_ms for i in after) >= ahead
        assert layout.compose(ahead, 5, 0) not in after


def test_a_role_with_only_the_documented_privileges_makes_ids(cluster: Any, conn: Conn) -> None:
    # README: USAGE on the schema, SELECT and UPDATE on the two counters, SELECT, INSERT and
    # UPDATE on the timeline's table; nothing else.
    install(conn, shardid.Layout.TWITTER, 3, "grants")
    conn.execute("CREATE ROLE shardid_app LOGIN")
    conn.execute("GRANT USAGE ON SCHEMA grants TO shardid_app")
    conn.execute("GRANT SELECT, UPDATE ON grants.shardid_counter_even, grants.shardid_counter_odd TO shardid_app")
    conn.execute("GRANT SELECT, INSERT, UPDATE ON grants.shardid_timeline TO shardid_app")
    with psycopg.connect(cluster.dsn.replace("user=postgres", "user=shardid_app"), autocommit=True) as app:
        # Enough calls to cross many time units: the first caller of each readies the next.
        ids = [r[0] for r in app.execute("SELECT grants.next_id() FROM generate_series(1, 50000)").fetchall()]
        ids += [app.execute("SELECT grants.next_id()").fetchone()[0] for _ in range(100)]  # type: ignore[index]
    assert len(set(ids)) == 50100


def test_never_an_id_outside_the_layout(connect: Callable[[], Conn]) -> None:
    admin = connect()
    t = now_ms(admin)
    future = shardid.Layout(epoch_ms=t + 86_400_000, time_bits=41, shard_bits=10, sequence_bits=12)
    install(admin, future, 1, "future")
    with pytest.raises(psycopg.Error, match="^TIMESTAMP_BEFORE_EPOCH: ") as info:
        admin.execute("SELECT future.next_id()")
    assert info.value.sqlstate == "22008"
    expired = shardid.Layout(epoch_ms=0, time_bits=30, shard_bits=1, sequence_bits=1)
    install(admin, expired, 1, "expired")
    with pytest.raises(psycopg.Error, match="^TIMESTAMP_PAST_EXPIRY: "):
        admin.execute("SELECT expired.next_id()")
    # A layout with a minute left whose every slot is used: an error, not a wrapped ID.
    short = shardid.Layout(epoch_ms=t - 2**20 + 60_000, time_bits=20, shard_bits=1, sequence_bits=2)
    install(admin, short, 1, "short")
    last = 2**20 - 1  # the last unit, with every sequence number taken
    admin.execute(f"SELECT setval('short.shardid_counter_{'even' if last % 2 == 0 else 'odd'}', %s, true)", ((last << stride(short)) + 3,))
    with pytest.raises(psycopg.Error, match="^TIMESTAMP_PAST_EXPIRY: every ID of the layout"):
        connect().execute("SELECT short.next_id()")


def test_ids_of_a_rolled_back_transaction_are_not_issued_again(connect: Callable[[], Conn]) -> None:
    a = connect()
    install(a, shardid.Layout.INSTAGRAM, 7, "rb")
    issued: set[int] = set()
    for _ in range(20):
        with pytest.raises(psycopg.errors.QueryCanceled):
            with a.transaction():
                ids = [r[0] for r in a.execute("SELECT rb.next_id() FROM generate_series(1, 300)").fetchall()]
                assert not issued & set(ids)
                issued.update(ids)
                a.execute("SET LOCAL statement_timeout = 1")
                a.execute("SELECT pg_sleep(1)")
        ids = [r[0] for r in a.execute("SELECT rb.next_id() FROM generate_series(1, 300)").fetchall()]
        assert not issued & set(ids)
        issued.update(ids)
    assert len(issued) == 20 * 600


def test_a_cancelled_call_never_leaves_the_lock_held(connect: Callable[[], Conn]) -> None:
    a, b = connect(), connect()
    tiny = tiny_layout(a)
    install(a, tiny, 1, "cancel")
    pid = a.execute("SELECT pg_backend_pid()").fetchone()[0]  # type: ignore[index]
    b.execute("SET lock_timeout = '2s'")
    for timeout_ms in range(1, 40):
        a.execute(f"SET statement_timeout = {timeout_ms}")
        with pytest.raises(psycopg.errors.QueryCanceled):
            a.execute("SELECT count(cancel.next_id()) FROM generate_series(1, 100000)")
        held = b.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = %s", (pid,)
        ).fetchone()[0]  # type: ignore[index]
        assert held == 0, f"lock left held after a cancel at {timeout_ms} ms"
        b.execute("SELECT cancel.next_id()")  # would time out on a leaked lock


def test_resetting_the_session_changes_nothing(conn: Conn) -> None:
    # next_id() keeps nothing in the session: what poolers and DISCARD reset cannot matter.
    install(conn, shardid.Layout.INSTAGRAM, 8, "lost")
    ids = [r[0] for r in conn.execute("SELECT lost.next_id() FROM generate_series(1, 1000)").fetchall()]
    for reset in ("DISCARD TEMP", "RESET ALL", "DISCARD ALL"):
        conn.execute(reset)
        more = [r[0] for r in conn.execute("SELECT lost.next_id() FROM generate_series(1, 1000)").fetchall()]
        assert min(more) > max(ids), reset
        ids += more
    assert len(set(ids)) == 4000
