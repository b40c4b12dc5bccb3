"""The step-back rules on one server (issue 42), their edges one at a time: a tag, a serial
period or a dictionary topic whose row the database's state stepped back past (another
timeline, another system identifier, or marked restored by an operator) skips what its highest
sustained rate could have handed out between its last remembered write and now, times
``MARGIN``, plus ``FLOOR_BATCHES`` of its largest handouts — and nothing else does.

A row "stepped back past" is made by writing its columns as a promoted standby, a restored dump
or ``shardid restored`` would leave them. test_dump_restore.py restores real dumps into fresh
clusters; test_failover_serials.py runs real promotions.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from shardid.segments import create_serial
from shardid.sql import dictionary, segments

NODE_CLI = Path(__file__).resolve().parents[2] / "bindings-node" / "cli.js"

# shardid::sql::failover
MARGIN = 4
FLOOR_BATCHES = 4
SKEW_S = 2.0
LOST_WRITES = (1 << 20) // 100


def install(conn: Any, sql: str) -> None:
    with conn.transaction():
        conn.execute(sql.encode())


def take(conn: Any, schema: str, size: int, tag: str = "t") -> tuple[int, int, int]:
    row = conn.execute(f"SELECT first, count, stride FROM {schema}.take_segment(%s, %s)", (tag, size)).fetchone()
    assert row is not None
    return row  # type: ignore[no-any-return]


def expected_skip(step: int, rate: float, since_s: float) -> float:
    """What a row last written ``since_s`` ago, at ``rate`` numbers a second, skips."""
    return FLOOR_BATCHES * 2 * step + MARGIN * rate * (since_s + SKEW_S)


def age(conn: Any, schema: str, tag: str, *, rate: float, seconds: float, step_back: str) -> None:
    """Makes tag's row look as a step back leaves it: last written `seconds` ago at `rate`."""
    conn.execute(
        f"UPDATE {schema}.shardid_tags SET rate = %s, window_n = 0, window_at = clock_timestamp() - make_interval(secs => %s),"
        f" updated_at = clock_timestamp() - make_interval(secs => %s), {step_back} WHERE tag = %s",
        (rate, seconds + 1, seconds, tag),
    )


STEP_BACKS = {
    "timeline": "tli = tli - 1",
    # As a row restored from another cluster's dump reads: another system, written by a server
    # started at another time.
    "system": "sysid = sysid + 1, started = started - interval '1 day'",
    "restored": "restored = true",
}


@pytest.mark.parametrize("how", list(STEP_BACKS))
def test_a_tag_skips_what_its_rate_could_have_handed_out(conn: Any, how: str) -> None:
    schema = f"rs_{how}"
    install(conn, segments(schema))
    conn.execute(f"SELECT {schema}.create_tag('t')")
    first, count, _ = take(conn, schema, 50)
    end = first + count
    age(conn, schema, "t", rate=100.0, seconds=10.0, step_back=STEP_BACKS[how])
    got = take(conn, schema, 50)[0]
    want = expected_skip(50, 100.0, 10.0)
    # The statement ran a few ms after the row was aged: a few more numbers at 100 a second.
    assert want <= got - end <= want + MARGIN * 100 * 0.5, (got - end, want)
    # Once: the row records this timeline, this system, and is no longer marked.
    assert take(conn, schema, 50)[0] == got + 50
    row = conn.execute(
        f"SELECT tli, sysid, restored FROM {schema}.shardid_tags WHERE tag = 't'"
    ).fetchone()
    sysid = conn.execute("SELECT system_identifier FROM pg_control_system()").fetchone()[0]
    assert row[1] == sysid and row[2] is False
    # A give_back never rewinds a row stepped back past.
    age(conn, schema, "t", rate=100.0, seconds=1.0, step_back=STEP_BACKS[how])
    next_ = conn.execute(f"SELECT next FROM {schema}.shardid_tags").fetchone()[0]
    assert conn.execute(f"SELECT {schema}.give_back('t', %s, %s)", (next_ - 10, next_)).fetchone() == (False,)


def test_nothing_skips_without_a_step_back(conn: Any) -> None:
    install(conn, segments("rs_none"))
    conn.execute("SELECT rs_none.create_tag('t')")
    first = take(conn, "rs_none", 50)[0]
    age(conn, "rs_none", "t", rate=1e6, seconds=100.0, step_back="step = step")
    assert take(conn, "rs_none", 50)[0] == first + 50
    assert conn.execute("SELECT rs_none.next_dense_id('t')").fetchone() == (first + 100,)


def test_a_row_of_another_run_of_this_server_reads_the_identifier_again_and_does_not_skip(conn: Any) -> None:
    install(conn, segments("rs_run"))
    conn.execute("SELECT rs_run.create_tag('t')")
    first = take(conn, "rs_run", 50)[0]
    # As after a restart: the row was written by this cluster, started at another time. The
    # identifier is read from the control file (the same): no skip, and the row records this run.
    conn.execute("UPDATE rs_run.shardid_tags SET started = started - interval '1 hour'")
    assert take(conn, "rs_run", 50)[0] == first + 50
    assert conn.execute("SELECT started = pg_postmaster_start_time() FROM rs_run.shardid_tags").fetchone() == (True,)


def test_the_rate_is_the_highest_sustained_over_windows_of_a_second(conn: Any) -> None:
    install(conn, segments("rs_rate"))
    conn.execute("SELECT rs_rate.create_tag('t')")
    # About 1,000 numbers a second for 2.2 s: 100 segments of 10 a second.
    start = time.monotonic()
    while time.monotonic() - start < 2.2:
        take(conn, "rs_rate", 10)
        time.sleep(0.01)
    rate = conn.execute("SELECT rate FROM rs_rate.shardid_tags").fetchone()[0]
    elapsed = time.monotonic() - start
    took = conn.execute("SELECT next - 1 FROM rs_rate.shardid_tags").fetchone()[0]
    assert 0.5 * took / elapsed < rate < 2 * took / elapsed, (rate, took / elapsed)
    # Slower traffic later leaves the highest rate.
    for _ in range(3):
        take(conn, "rs_rate", 10)
        time.sleep(0.6)
    assert conn.execute("SELECT rate FROM rs_rate.shardid_tags").fetchone()[0] == rate


def test_a_new_tag_skips_what_its_open_window_handed_out(conn: Any) -> None:
    install(conn, segments("rs_open"))
    conn.execute("SELECT rs_open.create_tag('t')")
    first, count, _ = take(conn, "rs_open", 500)
    # One take, no closed window: its numbers over at least a second are its rate.
    conn.execute("UPDATE rs_open.shardid_tags SET tli = tli - 1")
    got = take(conn, "rs_open", 500)[0]
    skip = got - (first + count)
    assert expected_skip(500, 500.0, 0) <= skip <= expected_skip(500, 500.0, 1.0), skip


def test_a_row_written_before_rates_skips_as_before(conn: Any) -> None:
    install(conn, segments("rs_old"))
    conn.execute("SELECT rs_old.create_tag('t')")
    first, count, _ = take(conn, "rs_old", 50)
    # As the previous version's rows are after an upgrade: nothing measured.
    conn.execute("UPDATE rs_old.shardid_tags SET window_at = NULL, sysid = NULL, rate = 0, tli = tli - 1")
    assert take(conn, "rs_old", 50)[0] == first + count + LOST_WRITES * 2 * 1000


def test_the_databases_own_ids_skip_too(conn: Any) -> None:
    install(conn, segments("rs_own"))
    conn.execute("SELECT rs_own.create_tag('t')")
    before = conn.execute("SELECT rs_own.next_dense_id('t')").fetchone()[0]
    age(conn, "rs_own", "t", rate=10.0, seconds=5.0, step_back="tli = tli - 1")
    after = conn.execute("SELECT rs_own.next_dense_id('t')").fetchone()[0]
    want = expected_skip(0, 10.0, 5.0) - 2 * FLOOR_BATCHES + 2 * FLOOR_BATCHES * 1  # step 0: segments of 1
    assert want <= after - before - 1 <= want + 10, (after - before, want)


def test_a_serial_period_skips_and_next_serial_with_it(conn: Any) -> None:
    install(conn, segments("rs_ser"))
    fmt = "ORD-{yyyy}{MM}{dd}-{seq:6}"
    create_serial(conn, "orders", fmt, zone="UTC", schema="rs_ser")
    first = conn.execute("SELECT rs_ser.next_serial('orders', %s, 'UTC')", (fmt,)).fetchone()[0]
    period = conn.execute("SELECT tag FROM rs_ser.shardid_tags").fetchone()[0]
    # 10 serials a second, last written 1 s ago, on the old timeline: a failover that lost a
    # second of WAL. The day's {seq:6} keeps issuing numbers, above what could have been issued.
    age(conn, "rs_ser", period, rate=10.0, seconds=1.0, step_back="tli = tli - 1")
    second = conn.execute("SELECT rs_ser.next_serial('orders', %s, 'UTC')", (fmt,)).fetchone()[0]
    gap = int(second[-6:]) - int(first[-6:])
    assert expected_skip(0, 10.0, 1.0) < gap < 1000, (first, second)
    # A client's segment of the period skips alike.
    age(conn, "rs_ser", period, rate=200.0, seconds=1.0, step_back=STEP_BACKS["system"])
    day = period.split("@")[1]
    row = conn.execute("SELECT first, count FROM rs_ser.take_serial_segment('orders', %s, 100)", (day,)).fetchone()
    assert expected_skip(1, 200.0, 1.0) < row[0] - int(second[-6:]) < 10_000, row


@pytest.mark.parametrize("how", list(STEP_BACKS))
def test_a_topic_skips_what_its_rate_could_have_assigned(conn: Any, how: str) -> None:
    schema = f"rd_{how}"
    install(conn, dictionary(schema))
    conn.execute(f"SELECT {schema}.create_topic('t')")
    assert conn.execute(f"SELECT {schema}.dict_ids('t', ARRAY['a', 'b', 'c'])").fetchone() == ([0, 1, 2],)
    conn.execute(
        f"UPDATE {schema}.shardid_topics SET rate = 100, window_n = 0, window_at = clock_timestamp() - interval '11 s',"
        f" written_at = clock_timestamp() - interval '10 s', {STEP_BACKS[how]}"
    )
    ids = conn.execute(f"SELECT {schema}.dict_ids('t', ARRAY['a', 'd'])").fetchone()[0]
    assert ids[0] == 0  # a known string keeps its ID
    want = FLOOR_BATCHES * 3 + MARGIN * 100 * (10 + SKEW_S)  # the largest batch was 3
    assert want <= ids[1] - 3 <= want + MARGIN * 100 * 0.5, (ids, want)
    # Once.
    assert conn.execute(f"SELECT {schema}.dict_id('t', 'e')").fetchone() == (ids[1] + 1,)


def test_a_topic_of_an_older_version_skips_as_before_then_measures(conn: Any) -> None:
    install(conn, dictionary("rd_old"))
    conn.execute("SELECT rd_old.create_topic('t')")
    conn.execute("SELECT rd_old.dict_ids('t', ARRAY['a'])")
    conn.execute("UPDATE rd_old.shardid_topics SET window_at = NULL, written_at = NULL, sysid = NULL, tli = tli - 1")
    assert conn.execute("SELECT rd_old.dict_id('t', 'b')").fetchone() == (1 + LOST_WRITES,)
    row = conn.execute("SELECT sysid IS NOT NULL, window_at IS NOT NULL, written_at IS NOT NULL FROM rd_old.shardid_topics").fetchone()
    assert row == (True, True, True)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "shardid", *args], capture_output=True, text=True, timeout=60)


def test_shardid_restored_marks_every_tag_and_topic_then_a_take_skips(cluster: Any, conn: Any) -> None:
    install(conn, segments("rx_seg"))
    install(conn, dictionary("rx_dict"))
    conn.execute("SELECT rx_seg.create_tag('a'), rx_seg.create_tag('b')")
    conn.execute("SELECT rx_dict.create_topic('t')")
    end = sum(take(conn, "rx_seg", 50, tag)[1] for tag in ("a",)) + 1
    assert conn.execute("SELECT rx_dict.dict_ids('t', ARRAY['x', 'y'])").fetchone() == ([0, 1],)
    out = _cli("restored", cluster.dsn, "--segments-schema", "rx_seg", "--dictionary-schema", "rx_dict")
    assert out.returncode == 0, out.stderr
    assert "marked restored: 2 tags, 1 topic" in out.stdout, out.stdout
    assert conn.execute("SELECT count(*) FROM rx_seg.shardid_tags WHERE restored").fetchone() == (2,)
    got = take(conn, "rx_seg", 50, "a")[0]
    assert got - end >= FLOOR_BATCHES * 2 * 50, (got, end)
    assert conn.execute("SELECT rx_dict.dict_id('t', 'z')").fetchone()[0] >= 2 + FLOOR_BATCHES * 2
    # Nothing else is marked: a second take does not skip.
    assert take(conn, "rx_seg", 50, "a")[0] == got + 50
    # Absent schemas are reported absent, not an error; no URL is exit status 2, and so is a
    # MySQL one where no server listens (the MySQL family's restored: tests/mysql/test_dump_restore.py).
    out = _cli("restored", cluster.dsn, "--segments-schema", "nothere", "--dictionary-schema", "nothere")
    assert out.returncode == 0 and "marked restored: 0 tags, 0 topics" in out.stdout, out
    assert _cli("restored").returncode == 2
    out = _cli("restored", "mysql://app@127.0.0.1:1/app")
    assert out.returncode == 2 and "cannot be reached" in out.stderr, out
    # npx shardid restored: the same command (the core's), on pg.
    node = subprocess.run(
        ["node", str(NODE_CLI), "restored", f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres",
         "--segments-schema", "rx_seg", "--dictionary-schema", "rx_dict"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert node.returncode == 0 and "marked restored: 2 tags, 1 topic" in node.stdout, node
    got = take(conn, "rx_seg", 50, "a")[0]
    assert take(conn, "rx_seg", 50, "a")[0] == got + 50
    assert conn.execute("SELECT count(*) FROM rx_seg.shardid_tags WHERE restored").fetchone() == (1,)  # b: not taken yet


def test_a_step_back_that_passes_a_serials_width_is_serial_overflow_not_a_repeat(conn: Any) -> None:
    install(conn, segments("rs_full"))
    fmt = "F-{seq:3}"
    create_serial(conn, "f", fmt, zone="UTC", schema="rs_full")
    conn.execute("SELECT rs_full.next_serial('f', %s, 'UTC')", (fmt,))
    conn.execute("UPDATE rs_full.shardid_tags SET rate = 1000, tli = tli - 1")
    with pytest.raises(psycopg.Error, match="SERIAL_OVERFLOW"):
        conn.execute("SELECT rs_full.next_serial('f', %s, 'UTC')", (fmt,))


def test_status_warns_when_a_serial_period_cannot_hold_a_failovers_skip(cluster: Any, conn: Any) -> None:
    install(conn, segments("rw_seg"))
    create_serial(conn, "narrow", "N-{yyyy}{MM}{dd}-{seq:3}", zone="UTC", schema="rw_seg")
    create_serial(conn, "wide", "W-{yyyy}{MM}{dd}-{seq:6}", zone="UTC", schema="rw_seg")
    for tag, fmt in (("narrow", "N-{yyyy}{MM}{dd}-{seq:3}"), ("wide", "W-{yyyy}{MM}{dd}-{seq:6}")):
        for _ in range(3):
            conn.execute("SELECT rw_seg.next_serial(%s, %s, 'UTC')", (tag, fmt))
    # 100 serials a second: a failover skips 4 * 2 + 4 * 100 * 3 = 1,208, more than {seq:3} holds.
    conn.execute("UPDATE rw_seg.shardid_tags SET rate = 100")
    out = _cli("status", cluster.dsn, "--segments-schema", "rw_seg", "--dictionary-schema", "nothere", "--check")
    assert out.returncode == 1, out
    warned = [line for line in out.stdout.splitlines() if "serial period" in line]
    assert len(warned) == 1 and "narrow@" in warned[0] and "fewer than a failover skips now (1208)" in warned[0], out.stdout
