"""Node's business serials (shardid/segments' createSerial and serials) on MariaDB, over mysql2:
tests/mysql/serials_node.mjs does the work, these check it. Several processes with concurrent
callers on one tag, one of them killed mid-run, never issue a serial twice; the errors are the
other databases' (one contract)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

from conftest import install, one, open_conn, rows

from shardid.sql import segments

NODE = Path(__file__).with_name("serials_node.mjs")


def node(url: str, mode: str, *args: str) -> dict[str, Any]:
    done = subprocess.run(["node", str(NODE), url, mode, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def serials_ddl(schema: str) -> str:
    """The registrations' DDL as the core renders it (shardid/mysql's serialsDdl)."""
    return str(node("mysql://root@127.0.0.1:1/x", "ddl", schema)["ddl"])


def install_serials(conn: Any, schema: str) -> None:
    """The segments' DDL, then the registrations' (after it, as its header says)."""
    install(conn, segments(schema, dialect="mysql"))
    install(conn, serials_ddl(schema))


def test_node_serials_from_processes_one_killed_are_never_issued_twice(server: Any, conn: Any, tmp_path: Path) -> None:
    schema = "ser_node_kill"
    install_serials(conn, schema)
    url = server.url_for(schema)
    created = node(url, "create")
    assert {k: v["code"] for k, v in created.items()} == {
        "first": "no error",
        "again": "no error",  # registered again alike
        "otherZone": "SERIAL_MISMATCH",
        "otherFormat": "SERIAL_MISMATCH",
        "otherMaxGap": "SERIAL_MISMATCH",
        "sameFormatOtherTag": "SERIAL_MISMATCH",  # would print the same serials
        "badZone": "UNKNOWN_TIME_ZONE",
    }
    assert "ns" in created["sameFormatOtherTag"]["message"]
    assert one(conn, f"SELECT count(*) FROM {schema}.shardid_serials") == 1

    outs = [tmp_path / f"serials-{i}" for i in range(3)]
    # Three processes, 6 concurrent callers each; the first is killed once it has issued some.
    # Its callers ask for far more (6 x 20,000) than the others (6 x 150): with 900 it could
    # finish, midnight's serials included, between two looks at its file (CI saw it once).
    procs = [
        subprocess.Popen(["node", str(NODE), url, "take", str(out), "6", "20000" if i == 0 else "150"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i, out in enumerate(outs)
    ]
    deadline = time.monotonic() + 60
    while not (outs[0].exists() and len(outs[0].read_text().splitlines()) >= 100):
        assert time.monotonic() < deadline and procs[0].poll() is None, "the first process issued nothing"
        time.sleep(0.01)
    procs[0].send_signal(signal.SIGKILL)
    assert procs[0].wait(timeout=30) == -signal.SIGKILL
    killed = outs[0].read_text().splitlines()
    assert 100 <= len(killed) < 6 * 20_000 and not any(s.startswith("NS-20251126-") for s in killed), "killed mid-run"
    for p in procs[1:]:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    # A process started after the kill takes past what the killed one held.
    late = tmp_path / "serials-late"
    assert node(url, "take", str(late), "4", "50")["done"] is True

    issued = [line for out in [*outs, late] for line in out.read_text().splitlines()]
    twice = [s for s, n in Counter(issued).items() if n > 1]
    assert twice == [], f"issued twice: {twice[:5]}"
    # The format, in its zone: 2025-11-25 in Shanghai, then 2 serials of the next day each.
    before = [s for s in issued if s.startswith("NS-20251125-")]
    after = [s for s in issued if s.startswith("NS-20251126-")]
    assert all(re.fullmatch(r"NS-2025112[56]-\d{6}", s) for s in issued)
    assert len(before) >= 100 + 2 * 6 * 150 + 4 * 50 and len(after) == 2 * 2 + 2
    # The next day's tag was made at its first take and counts from 1; only the killed
    # process's segments are holes.
    assert sorted(after)[0] == "NS-20251126-000001"
    assert sorted(after)[-1] <= "NS-20251126-000600"  # three processes' segments at most
    # The periods' tags are ordinary segment rows (the failover rules of a take hold for them).
    tags = {bytes(row[0]).decode() for row in rows(conn, f"SELECT tag FROM {schema}.shardid_tags")}
    assert {"ns@2025-11-25", "ns@2025-11-26"} <= tags
    # Every number below the period's next one was issued, or is a hole: the killed process's
    # current and prefetched segments, and a clean close's rest when another process took a
    # segment after it (at most two segments of 200 per process).
    numbers = {int(s[-6:]) for s in before}
    end = one(conn, f"SELECT next FROM {schema}.shardid_tags WHERE tag = 'ns@2025-11-25'")
    assert max(numbers) < end and end - 1 - len(numbers) <= 4 * 2 * 200


def test_node_serial_errors_on_mariadb_are_the_contracts(server: Any, conn: Any) -> None:
    install_serials(conn, "ser_node_err")
    install(conn, segments("ser_noreg", dialect="mysql"))  # the segments' DDL, no registrations
    conn.cursor().execute("CREATE DATABASE IF NOT EXISTS ser_none")
    url = server.url_for("ser_node_err")
    node(url, "create")  # registers ns
    got = node(url, "errors", "ser_none", "ser_noreg")
    assert {k: v["code"] for k, v in got.items()} == {
        "unknown": "UNKNOWN_TAG",
        "otherZone": "SERIAL_MISMATCH",
        "otherFormat": "SERIAL_MISMATCH",
        "closed": "CLOSED",
        "closedAsync": "CLOSED",
        "down": "DATABASE_UNREACHABLE",
        "createDown": "DATABASE_UNREACHABLE",
        "noTables": "DATABASE",
        "noRegistrations": "DATABASE",
        "noRegistrationsServed": "DATABASE",
    }
    assert got["unknown"]["message"] == "no tag never_made: create it first (createSerial)"
    assert got["closed"]["message"] == "Serials of tag ns was closed: make a new one"
    for missing in ("noTables", "noRegistrations", "noRegistrationsServed"):
        # Names both scripts to run.
        assert "--segments --dialect mysql" in got[missing]["message"], got[missing]
        assert "serialsDdl(" in got[missing]["message"], got[missing]


def test_node_serials_of_a_registration_gone_before_a_first_take_are_unknown(server: Any, conn: Any) -> None:
    schema = "ser_node_gone"
    install_serials(conn, schema)
    url = server.url_for(schema)
    proc = subprocess.Popen(
        ["node", str(NODE), url, "vanished"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdin is not None
    assert json.loads(proc.stdout.readline()) == {"opened": True}
    conn.cursor().execute(f"DELETE FROM {schema}.shardid_serials WHERE tag = 'gone'")
    out, err = proc.communicate("go\n", timeout=60)
    assert proc.returncode == 0, err
    taken = json.loads(out.strip().splitlines()[-1])["taken"]
    assert taken == {"code": "UNKNOWN_TAG", "message": "no tag gone: create it first (createSerial)"}
    # No period tag made for a tag nobody registered.
    assert one(conn, f"SELECT count(*) FROM {schema}.shardid_tags WHERE tag LIKE 'gone@%'") == 0


def test_node_and_rust_processes_on_one_serial_tag_never_share_a_serial(server: Any, conn: Any, tmp_path: Path) -> None:
    from examples import example  # core/examples/mysql_serials.rs, built by run.sh (or here)

    schema = "ser_cross"
    install_serials(conn, schema)
    url = server.url_for(schema)
    assert node(url, "create")["first"] == {"code": "no error"}
    format_, zone, at = "NS-{yyyy}{MM}{dd}-{seq:6}", "Asia/Shanghai", "1764086399000"  # as serials_node.mjs
    outs = [tmp_path / f"node-{i}" for i in range(2)]
    procs = [subprocess.Popen(["node", str(NODE), url, "take", str(out), "4", "100"], stderr=subprocess.PIPE, text=True) for out in outs]
    command = [example("mysql_serials"), "take", url, schema, "ns", format_, zone, "2", "200", at]
    rust = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    issued: list[str] = []
    for p in rust:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        issued += out.split()  # one serial a line
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    issued += [line for out in outs for line in out.read_text().splitlines()]
    assert len(issued) == 2 * 400 + 2 * (4 * 100 + 2)
    twice = [s for s, n in Counter(issued).items() if n > 1]
    assert twice == [], f"issued twice: {twice[:5]}"
    assert all(re.fullmatch(r"NS-2025112[56]-\d{6}", s) for s in issued)


def test_node_serial_periods_skip_the_lost_takes_on_another_server(server: Any, conn: Any, tmp_path: Path) -> None:
    # A period's tag is an ordinary segment row taken by the segments' steps: after a failover
    # that lost its last takes (the row set back, on a server of another identity) the next
    # take jumps past them, as dense IDs do (test_failover.py).
    schema = "ser_fo"
    install_serials(conn, schema)
    url = server.url_for(schema)
    node(url, "create")

    def taken(name: str, each: int) -> set[int]:
        out = tmp_path / name
        assert node(url, "take", str(out), "1", str(each))["done"] is True
        return {int(s[-6:]) for s in out.read_text().splitlines() if s.startswith("NS-20251125-")}

    def lose() -> None:
        with conn.cursor() as cur:
            cur.execute(f"UPDATE {schema}.shardid_tags SET next = 101 WHERE tag = 'ns@2025-11-25'")

    first = taken("first", 300)
    lose()
    # The same server: the lost numbers are handed out again (what the skip is for).
    again = taken("again", 20)
    assert again & first, "without a new server identity the lost takes repeat"
    lose()
    with open_conn(server) as c, c.cursor() as cur:
        cur.execute("SET GLOBAL server_id = 2")
    try:
        after = taken("after", 20)
    finally:
        with open_conn(server) as c, c.cursor() as cur:
            cur.execute("SET GLOBAL server_id = 1")
    assert min(after) > max(first | again), "a lost serial handed out again after the failover"
    assert rows(conn, f"SELECT server FROM {schema}.shardid_tags WHERE tag = 'ns@2025-11-25'") == [(b"server 2",)]
