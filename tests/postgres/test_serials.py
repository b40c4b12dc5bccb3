"""Business serial numbers on a real PostgreSQL: the SQL contract, the database's serials
against the clients' (the conformance vectors rendered by render_serial), then Python and Rust
processes of 8 threads each across a scripted midnight in Asia/Shanghai, across a DST change in
America/New_York and in UTC, one of them killed; two processes whose clocks straddle midnight;
and the database's serials interleaved with the clients' on one table with a UNIQUE constraint.

The scripted clock: every process is given the same wall-clock start and scripted start, and
issues at `scripted start + (now - wall start) * speed + its offset`, so the processes cross the
scripted midnight together (or a few ms apart, with offsets)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import psycopg
import pytest
from vectors import load

import shardid
from shardid.segments import Serials, create_serial
from shardid.sql import create_serial_sql, segments, segments_uninstall
from together import on_threads
from examples import example
from serial_checks import forked_child_takes_its_own


def install(conn: Any, schema: str) -> None:
    with conn.transaction():
        conn.execute(segments(schema).encode())


def rows(conn: Any, schema: str) -> dict[str, int]:
    return dict(conn.execute(f"SELECT tag, next FROM {schema}.shardid_tags").fetchall())


# 2026-11-25 00:00 in Shanghai (2026-11-24T16:00Z); 2026-03-08 00:00 EST, a 23-hour day whose
# 02:00 is skipped (05:00Z); 2026-11-26 00:00 UTC.
SHANGHAI_MIDNIGHT = 1_795_536_000_000
NEW_YORK_MIDNIGHT = 1_772_946_000_000
UTC_MIDNIGHT = 1_795_651_200_000


def test_the_sql_contract(conn: Any) -> None:
    install(conn, "ser_sql")
    install(conn, "ser_sql")  # idempotent
    fmt = "ORD-{yyyy}{MM}{dd}-{seq:6}{check}"
    create_serial(conn, "orders", fmt, zone="Asia/Shanghai", schema="ser_sql")
    create_serial(conn, "orders", fmt, zone="Asia/Shanghai", schema="ser_sql")  # again alike: nothing
    with pytest.raises(shardid.SerialMismatchError) as other_zone:
        create_serial(conn, "orders", fmt, zone="UTC", schema="ser_sql")
    assert other_zone.value.tag == "orders"
    assert other_zone.value.reason.startswith("is registered with format ORD-{yyyy}{MM}{dd}-{seq:6:day}{check} in Asia/Shanghai")
    # Another tag printing the same serials (the same shape: the reset aside) is refused.
    with pytest.raises(shardid.SerialMismatchError) as same_shape:
        create_serial(conn, "orders2", "ORD-{yyyy}{MM}{dd}-{seq:6:month}{check}", zone="UTC", schema="ser_sql")
    assert "would print the serials of tag orders" in str(same_shape.value)
    for bad in ("", "a@b", "x" * 190):
        with pytest.raises(shardid.InvalidArgumentError):
            create_serial(conn, bad, "B{seq:3}", zone="UTC", schema="ser_sql")
    # The database checks what a hand-written call sends: pieces, width, reset, zone, tag.
    call = "SELECT ser_sql.create_serial(%s, %s, %s, %s, %s, %s, %s, %s, %s)"
    good = ["t", "X{seq:3}", "UTC", "X{seq:3:never}", "X{seq:3}", ["LX", "seq"], 3, "never", 1]
    for i, value, sqlstate in [
        (5, ["LX"], "SI130"),
        (5, ["LX", "seq", "seq"], "SI130"),
        (5, ["X", "seq"], "SI130"),
        (6, 19, "SI130"),
        (7, "weekly", "SI130"),
        (8, 0, "SI130"),
        (2, "Mars/Olympus", "SI131"),
        (0, "a@b", "22023"),
    ]:
        args = list(good)
        args[i] = value
        with pytest.raises(psycopg.Error) as refused:
            conn.execute(call, args)
        assert refused.value.sqlstate == sqlstate, (i, value)
    conn.execute(call, good)
    # A period's tag is created on first use; a period that is not the reset's is refused.
    take = "SELECT first, count, stride FROM ser_sql.take_serial_segment(%s, %s, %s)"
    assert conn.execute(take, ("orders", "2026-11-25", 10)).fetchone() == (1, 10, 1)
    assert conn.execute(take, ("orders", "2026-11-25", 5)).fetchone() == (11, 5, 1)
    assert conn.execute(take, ("t", "", 2)).fetchone() == (1, 2, 1)
    for tag, period, sqlstate in [("orders", "2026-11", "22023"), ("orders", "x", "22023"), ("t", "2026", "22023"), ("nope", "", "SI001")]:
        with pytest.raises(psycopg.Error) as refused:
            conn.execute(take, (tag, period, 1))
        assert refused.value.sqlstate == sqlstate, (tag, period)
    # The database's own serials: the same rows, the tag's format only.
    (first,) = conn.execute("SELECT ser_sql.next_serial('t', 'X{seq:3}', 'UTC')").fetchone()
    assert first == "X003"
    (canonical,) = conn.execute("SELECT ser_sql.next_serial('t', 'X{seq:3:never}', 'UTC')").fetchone()
    assert canonical == "X004"
    for fmt_, zone, sqlstate in [("Y{seq:3}", "UTC", "SI134"), ("X{seq:3}", "Asia/Shanghai", "SI134")]:
        with pytest.raises(psycopg.Error) as refused:
            conn.execute("SELECT ser_sql.next_serial('t', %s, %s)", (fmt_, zone))
        assert refused.value.sqlstate == sqlstate
    with pytest.raises(psycopg.Error) as unknown:
        conn.execute("SELECT ser_sql.next_serial('nope', 'X{seq:3}', 'UTC')")
    assert unknown.value.sqlstate == "SI001"
    # A number past the width: SERIAL_OVERFLOW, the row left as it was.
    conn.execute("UPDATE ser_sql.shardid_tags SET next = 999 WHERE tag = 't'")
    assert conn.execute("SELECT ser_sql.next_serial('t', 'X{seq:3}', 'UTC')").fetchone() == ("X999",)
    with pytest.raises(psycopg.Error) as overflow:
        conn.execute("SELECT ser_sql.next_serial('t', 'X{seq:3}', 'UTC')")
    assert overflow.value.sqlstate == "SI133" and "no serial number left in t" in str(overflow.value)
    assert rows(conn, "ser_sql")["t"] == 1000
    # The statement for psql registers alike.
    with conn.transaction():
        conn.execute(create_serial_sql("q'uote", "Q\\'{{{seq:2}}}", zone="UTC", schema="ser_sql").encode())
    assert conn.execute("SELECT format, pieces FROM ser_sql.shardid_serials WHERE tag = %s", ("q'uote",)).fetchone() == (
        "Q\\'{{{seq:2}}}",
        ["LQ\\'{", "seq", "L}"],
    )
    assert conn.execute("SELECT ser_sql.render_serial(%s, 7, now())", ("q'uote",)).fetchone() == ("Q\\'{07}",)
    # The uninstall removes all of it.
    with conn.transaction():
        conn.execute(segments_uninstall("ser_sql").encode())
    left = conn.execute(
        "SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'ser_sql'"
    ).fetchone()
    assert left == (0,)
    assert conn.execute("SELECT to_regclass('ser_sql.shardid_serials'), to_regclass('ser_sql.shardid_tags')").fetchone() == (None, None)


def test_the_database_renders_every_vector_as_the_clients_do(conn: Any) -> None:
    """Each format of tests/vectors/serials.json registered as a tag; render_serial(tag, n, at)
    in the database gives the vectors' serial (the core's) for every instant: midnights, New
    York's DST changes, Samoa's skipped day, the width's last number; and refuses alike."""
    install(conn, "ser_vec")
    count = 0
    for i, case in enumerate(load("serials.json")["formats"]):
        tag = f"v{i}"
        create_serial(conn, tag, case["format"], zone=case["zone"], schema="ser_vec")
        for r in case["render"]:
            at = datetime.fromtimestamp(int(r["unix_ms"]) / 1000, tz=timezone.utc)
            expect = r["expect"]
            if "ok" in expect:
                got = conn.execute("SELECT ser_vec.render_serial(%s, %s, %s)", (tag, int(r["number"]), at)).fetchone()
                assert got == (expect["ok"],), (case["format"], r)
                count += 1
            elif int(r["number"]) < 2**63:
                with pytest.raises(psycopg.Error) as refused:
                    conn.execute("SELECT ser_vec.render_serial(%s, %s, %s)", (tag, int(r["number"]), at))
                sqlstate = {"SERIAL_OVERFLOW": "SI133", "INVALID_SERIAL": "22023", "INVALID_ARGUMENT": "22023"}[expect["error"]]
                assert refused.value.sqlstate == sqlstate, (case["format"], r)
                assert str(refused.value).startswith(expect["error"] + ": "), refused.value
                count += 1
    assert count > 60


# A process of 8 Python threads issuing on the scripted clock; one serial a line into OUT, each
# written as soon as it is issued (so a killed process leaves what it issued).
PY_WORKER = """
import json, os, sys, threading, time
from shardid.segments import Serials
dsn, schema, tag, fmt, zone, out = sys.argv[1:7]
threads, script, duration, speed, offset = map(int, sys.argv[7:12])
s = Serials(dsn, tag, fmt, zone=zone, schema=schema, min_size=20, max_size=2000, target_ms=200, wait_ms=30000)
fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
print("ready", flush=True)
real = int(sys.stdin.readline())
counts = []
def run():
    n = 0
    while (elapsed := int(time.time() * 1000) - real) < duration:
        os.write(fd, (s.next_serial_at(script + elapsed * speed + offset) + "\\n").encode())
        n += 1
    counts.append(n)
while int(time.time() * 1000) < real:
    time.sleep(0.001)
ts = [threading.Thread(target=run) for _ in range(threads)]
for t in ts: t.start()
for t in ts: t.join()
s.close()
print(json.dumps({"count": sum(counts), "skipped": s.skipped}))
"""


NODE = Path(__file__).with_name("serials_node.mjs")


def url(dsn: str) -> str:
    """The cluster's libpq string as the URL pg takes."""
    parts = dict(p.split("=", 1) for p in dsn.split())
    return f"postgresql://{parts['user']}@{parts['host']}:{parts['port']}/{parts['dbname']}"


def start(kind: str, dsn: str, schema: str, tag: str, fmt: str, zone: str, out: Path, clock: list[int]) -> subprocess.Popen[str]:
    """Starts a worker; it prints "ready" once connected, then waits for the clock's start on
    its stdin (`go`)."""
    threads, script, duration, speed, offset = (str(v) for v in clock)
    if kind == "python":
        command = [sys.executable, "-c", PY_WORKER, dsn, schema, tag, fmt, zone, str(out), threads, script, duration, speed, offset]
    elif kind == "node":
        command = ["node", str(NODE), "run", url(dsn), schema, tag, fmt, zone, str(out), str(int(script) + int(offset)), duration, speed]
    else:
        command = [example("serials"), "run", dsn, schema, tag, fmt, zone, threads, script, "-", duration, speed, offset, str(out)]
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def go(procs: list[subprocess.Popen[str]], lead_ms: int = 300) -> int:
    """Waits until every worker is ready, then gives them all one start, `lead_ms` from now."""
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    real = int(time.time() * 1000) + lead_ms
    for p in procs:
        assert p.stdin is not None
        p.stdin.write(f"{real}\n")
        p.stdin.flush()
    return real


@pytest.mark.parametrize(
    ("zone", "fmt", "midnight", "speed", "kill", "kinds"),
    [
        # Real time around Shanghai's midnight; a fourth Python process is killed after it.
        ("Asia/Shanghai", "SH-{yyyy}{MM}{dd}-{seq:7}", SHANGHAI_MIDNIGHT, 1, True, ["python", "python", "rust"]),
        # Two scripted hours a real second: midnight, then 02:00 EST skipped to 03:00 EDT.
        ("America/New_York", "NY-{yyyy}{MM}{dd}{HH}-{seq:7}", NEW_YORK_MIDNIGHT, 7_200, False, ["python", "python", "rust"]),
        # Node's 8 concurrent loops in one process in place of a Python process.
        ("UTC", "UT-{yyyy}{MM}{dd}-{seq:7}{check}", UTC_MIDNIGHT, 1, False, ["python", "node", "rust"]),
    ],
)
def test_8_threads_x_3_processes_across_a_scripted_midnight(
    cluster: Any, conn: Any, tmp_path: Path, zone: str, fmt: str, midnight: int, speed: int, kill: bool, kinds: list[str]
) -> None:
    schema = "ser_load"
    install(conn, schema)
    tag = zone.split("/")[-1].lower()
    create_serial(conn, tag, fmt, zone=zone, schema=schema)
    duration = 1_200 if speed == 1 else 2_000  # real ms
    script = midnight - 600 * speed
    kinds = kinds + (["python"] if kill else [])
    outs = [tmp_path / f"{tag}-{i}" for i in range(len(kinds))]
    procs = [start(k, cluster.dsn, schema, tag, fmt, zone, out, [8, script, duration, speed, 0]) for k, out in zip(kinds, outs)]
    real = go(procs)
    if kill:
        while time.time() * 1000 < real + 800:  # past the scripted midnight
            time.sleep(0.01)
        procs[3].send_signal(signal.SIGKILL)
    reports = []
    for i, p in enumerate(procs):
        stdout, _ = p.communicate(timeout=120)
        if kill and i == 3:
            assert p.returncode == -signal.SIGKILL
            continue
        assert p.returncode == 0, (kinds[i], stdout)
        reports.append(json.loads(stdout.strip().splitlines()[-1]))
    written = [[line for line in out.read_text().split("\n") if line] if out.exists() else [] for out in outs]
    serials = [serial for lines in written for serial in lines]
    assert all(r["count"] > 0 for r in reports), reports
    assert sum(r["count"] for r in reports) == sum(len(lines) for lines in written[:3]) > 1_000
    assert len(set(serials)) == len(serials), "a serial twice"
    parser = shardid.SerialFormat(fmt, zone)
    per_period: dict[str, list[int]] = defaultdict(list)
    hours = set()
    for serial in serials:
        parsed = parser.parse(serial)
        per_period[parsed.period].append(parsed.number)
        hours.add((parsed.period, parsed.hour))
    assert len(per_period) == 2, f"both sides of midnight: {sorted(per_period)}"
    if speed > 1:
        assert {h for p, h in hours if p == "2026-03-08"} >= {0, 1, 3}, "the DST change was crossed"
        assert ("2026-03-08", 2) not in hours, "02:00 does not happen that day"
    next_numbers = rows(conn, schema)
    holes = 0
    for period, numbers in per_period.items():
        numbers.sort()
        assert numbers[0] == 1, f"{period} starts at 1"
        assert len(numbers) == len(set(numbers))
        holes += next_numbers[f"{tag}@{period}"] - 1 - len(numbers)
    skipped = sum(r["skipped"] for r in reports)
    if kill:
        # What the killed process held and had not issued (a current and a prefetched segment
        # in each of two periods, at most 2,000 each) is lost with it; everything else is
        # counted.
        assert written[3], "the killed process had issued serials"
        assert skipped <= holes <= skipped + 4 * 2_000, (holes, skipped)
    else:
        assert holes == skipped, "every hole is a rest a process could not give back, and counted"


STRADDLE = """
import json, sys
from shardid.segments import Serials
dsn, schema, tag, fmt, zone = sys.argv[1:6]
script, offset = map(int, sys.argv[6:8])
s = Serials(dsn, tag, fmt, zone=zone, schema=schema, wait_ms=30000)
# The old day's first segment, fetched before the start, as a process running since before.
s.next_serial_at(script + offset - 1000)
print("ready", flush=True)
# Each line a millisecond of the common time: one serial at this process's clock then.
for line in sys.stdin:
    elapsed = int(line)
    print(json.dumps([elapsed, s.next_serial_at(script + elapsed + offset)]), flush=True)
s.close()
"""


def test_two_processes_whose_clocks_straddle_midnight(cluster: Any, conn: Any) -> None:
    """A's clock is 5 ms ahead, B's 5 ms behind: for 10 ms A issues the new day's serials while
    B still issues the old day's; then B joins the new day with a segment of its own. Each
    period is its own tag, so nothing repeats: A gets 2026-11-25 serials from the first segment
    of that day (#1, #2, ... unless B's first fetch of the day commits before A's), B keeps
    getting 2026-11-24 numbers until its own midnight, then 2026-11-25 numbers from the other
    segment.

    The common time is stepped a millisecond at a time, both processes calling at once at each
    step and the next step given when both answered: run freely in real time, the 10 ms were
    all the window, and a loaded machine left B off its core through them (B issued no old-day
    serial after A's first new-day one, under four busy loops on two cores)."""
    install(conn, "ser_straddle")
    fmt = "ST-{yyyy}{MM}{dd}-{seq:6}"
    create_serial(conn, "st", fmt, zone="Asia/Shanghai", schema="ser_straddle")
    script = SHANGHAI_MIDNIGHT - 60
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", STRADDLE, cluster.dsn, "ser_straddle", "st", fmt, "Asia/Shanghai", str(script), str(offset)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for offset in (5, -5)
    ]
    for p in runs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    got: list[list[Any]] = [[], []]
    for elapsed in range(120):
        for p in runs:
            assert p.stdin is not None
            p.stdin.write(f"{elapsed}\n")
            p.stdin.flush()
        for p, serials in zip(runs, got):
            assert p.stdout is not None
            serials.append(json.loads(p.stdout.readline()))
    for p in runs:
        assert p.stdin is not None
        p.stdin.close()
        assert p.wait(timeout=60) == 0
    a, b = got
    parser = shardid.SerialFormat(fmt, "Asia/Shanghai")
    everything = [s for _, s in a + b]
    assert len(set(everything)) == len(everything), "a serial twice"

    def days(got: list[list[Any]]) -> list[tuple[int, str, int]]:
        return [(t, parser.parse(s).period, parser.parse(s).number) for t, s in got]

    a_days, b_days = days(a), days(b)
    a_first_new = min(t for t, p, _ in a_days if p == "2026-11-25")
    b_old_after = [n for t, p, n in b_days if p == "2026-11-24" and t > a_first_new]
    assert b_old_after, "B issued in the old day while A was in the new one"
    a_new = [n for _, p, n in a_days if p == "2026-11-25"]
    b_new = [n for _, p, n in b_days if p == "2026-11-25"]
    assert a_new and b_new
    # Each took its own segment of the new day: one of them starts at 1, the other after it.
    assert sorted([min(a_new), min(b_new)])[0] == 1 and max(min(a_new), min(b_new)) > 1
    assert not set(a_new) & set(b_new)


def test_the_database_and_the_clients_on_one_table_with_a_unique_constraint(cluster: Any, conn: Any) -> None:
    install(conn, "ser_mix")
    fmt = "MX-{yyyy}{MM}{dd}-{seq:8}{check}"
    create_serial(conn, "mx", fmt, zone="Asia/Shanghai", schema="ser_mix")
    conn.execute(
        "CREATE TABLE ser_mix.orders (serial text UNIQUE NOT NULL"
        " DEFAULT ser_mix.next_serial('mx', 'MX-{yyyy}{MM}{dd}-{seq:8}{check}', 'Asia/Shanghai'), source text)"
    )
    errors: list[BaseException] = []

    def database() -> None:
        with psycopg.connect(cluster.dsn, autocommit=True) as c:
            for _ in range(300):
                c.execute("INSERT INTO ser_mix.orders (source) VALUES ('db')")

    def clients() -> None:
        with Serials(cluster.dsn, "mx", fmt, zone="Asia/Shanghai", schema="ser_mix", min_size=20, max_size=50) as s:
            with psycopg.connect(cluster.dsn, autocommit=True) as c:
                for _ in range(300):
                    c.execute("INSERT INTO ser_mix.orders VALUES (%s, 'python')", (s.next_serial(),))

    def guarded(f: Any) -> Any:
        def run() -> None:
            try:
                f()
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

        return run

    node = subprocess.Popen(["node", str(NODE), "insert", url(cluster.dsn), "ser_mix", "mx", fmt, "Asia/Shanghai", "300"], stdout=subprocess.PIPE, text=True)
    on_threads(guarded(f) for f in (database, database, clients, clients))
    assert errors == []
    assert json.loads(node.communicate(timeout=120)[0]) == {"inserted": 300}
    got = conn.execute("SELECT serial, source FROM ser_mix.orders").fetchall()
    assert len(got) == 1_500
    assert {source for _, source in got} == {"db", "python", "node"}
    parser = shardid.SerialFormat(fmt, "Asia/Shanghai")
    periods = {parser.parse(s).period for s, _ in got}  # every one parses, check digit included
    numbers = [(parser.parse(s).period, parser.parse(s).number) for s, _ in got]
    assert len(set(numbers)) == len(numbers)
    assert 1 <= len(periods) <= 2  # a midnight may pass during the test


def test_node_serials(cluster: Any, conn: Any) -> None:
    install(conn, "ser_node")
    fmt = "N-{yyyy}{MM}{dd}-{seq:4}{check}"
    got = subprocess.run(["node", str(NODE), "basic", url(cluster.dsn), "ser_node", "nd", fmt, "Asia/Shanghai"], capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    result = json.loads(got.stdout.strip().splitlines()[-1])
    assert result["numbers"] == [str(n) for n in range(1, 11)]
    parser = shardid.SerialFormat(fmt, "Asia/Shanghai")
    assert [parser.parse(s).number for s in result["serials"]] == list(range(1, 11))
    assert result["skipped"] == "0"
    assert result["errors"] == {
        "unknown": "UNKNOWN_TAG",
        "mismatch": "SERIAL_MISMATCH",
        "again": "SERIAL_MISMATCH",
        "badTag": "INVALID_ARGUMENT",
        "badFormat": "INVALID_SERIAL_FORMAT",
        "closed": "CLOSED",
    }
    # close() gave the rest back: the period's row continues at 11.
    ((tag, next_number),) = conn.execute("SELECT tag, next FROM ser_node.shardid_tags").fetchall()
    assert tag.startswith("nd@") and next_number == 11


def test_volume_hiding_in_the_clients_and_the_database(cluster: Any, conn: Any) -> None:
    install(conn, "ser_hide")
    fmt = "H-{yyyy}{MM}{dd}-{seq:9}"
    create_serial(conn, "h", fmt, zone="UTC", schema="ser_hide", max_gap=10)
    with Serials(cluster.dsn, "h", fmt, zone="UTC", schema="ser_hide", min_size=5_000, max_size=5_000) as s:
        assert s.max_gap == 10
        numbers = [s.parse(s.next_serial()).number for _ in range(500)]
    steps = [b - a for a, b in zip(numbers, numbers[1:])]
    assert all(1 <= step <= 10 for step in steps), steps
    assert len(set(steps)) >= 8, "the steps vary"
    assert numbers[-1] - numbers[0] > 2 * len(steps), "the count does not show: the mean step is about 5.5"
    db = [int(conn.execute("SELECT ser_hide.next_serial('h', %s, 'UTC')", (fmt,)).fetchone()[0][-9:]) for _ in range(200)]
    db_steps = [b - a for a, b in zip(db, db[1:])]
    assert all(1 <= step <= 10 for step in db_steps) and len(set(db_steps)) >= 8, db_steps
    assert not set(db) & set(numbers)


def test_a_forked_child_takes_serials_of_its_own(cluster: Any, conn: Any) -> None:
    install(conn, "ser_fork")
    create_serial(conn, "f", "F-{seq:6}", zone="UTC", schema="ser_fork")
    forked_child_takes_its_own(cluster.dsn)
