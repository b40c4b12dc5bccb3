"""Shard leases through MariaDB (shardid.mysql, Node's shardid/mysql, Rust's
shardid::lease::mysql): processes of three languages on one table, processes of threads with
one killed and the server crashed under them, either isolation level, holders killed, paused
past their lease and taken over, the server down longer than the lease, session leases
(GET_LOCK), bad input, and a failover simulated by the server changing its identity. Every test
counts duplicates; the expected number is always 0. Galera: test_galera.py."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pymysql
import pytest
from conftest import one, open_conn, rows

import shardid
from shardid import Layout, _mysql
from shardid.mysql import lease, lease_async
from lease_checks import (
    down_longer_than_the_lease,
    duplicates,
    eight_sessions_at_once_each_get_a_shard,
    killed_holder,
    paused_past_its_lease,
    python_holder,
    python_probe,
    read_ids,
    take_when_free,
    wait_for_ids,
)
from examples import example, run_example

NODE = Path(__file__).with_name("lease_node.mjs")
# A short time to live keeps the tests that wait for an expiry short; the rules are the same
# at any length.
TTL_MS = 1500


@pytest.fixture(scope="module")
def url(server: Any) -> str:
    with open_conn(server) as c, c.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS lease")
    return server.url_for("lease")  # type: ignore[no-any-return]


def node(url: str, mode: str, *args: str, wait: bool = True) -> Any:
    if not wait:
        return subprocess.Popen(["node", str(NODE), url, mode, *args])
    done = subprocess.run(["node", str(NODE), url, mode, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def rust(url: str, mode: str, *args: str, wait: bool = True) -> Any:
    if not wait:
        return subprocess.Popen([example("mysql_lease"), url, mode, *args])
    return run_example("mysql_lease", url, mode, *args)


def test_processes_of_three_languages_get_distinct_shards_and_no_duplicate(url: str, tmp_path: Path) -> None:
    table = "probe_mixed"
    args = ["2", "50000", "0", "4"]
    runs = [
        python_probe("mysql", url, tmp_path / "p0", 2, 50_000, range(0, 4), table=table),
        python_probe("mysql", url, tmp_path / "p1", 2, 50_000, range(0, 4), table=table),
        node(url, "probe", str(tmp_path / "p2"), table, *args, wait=False),
        rust(url, "probe", table, str(tmp_path / "p3.ids"), *args, wait=False),
    ]
    shards, ids = [], []
    for i, run in enumerate(runs):
        assert run.wait(timeout=120) == 0
        got = read_ids(tmp_path / f"p{i}.ids")
        shards.append(got.pop())
        ids.append(got)
    # Distinct shards for processes that ran together; one that started after another had
    # finished and released its shard (a slow start on a busy machine: seen at a load of 10)
    # may take that shard again, and then starts above the other's IDs.
    assert set(shards) <= {0, 1, 2, 3}
    for shard in set(shards):
        spans = sorted((min(i), max(i)) for s, i in zip(shards, ids) if s == shard)
        assert all(a[1] < b[0] for a, b in zip(spans, spans[1:])), (shard, spans)
    assert [len(i) for i in ids] == [50_000] * 4
    assert duplicates(ids) == 0
    held = [lease(Layout.TWITTER, url, range(0, 4), table="distinct") for _ in range(4)]
    assert sorted(g.shard for g in held) == [0, 1, 2, 3]
    with pytest.raises(shardid.NoFreeShardError, match=r"every shard in 0\.\.4 is leased by a live process \(table distinct\)") as info:
        lease(Layout.TWITTER, url, range(0, 4), table="distinct")
    assert info.value.shards == range(0, 4)
    held[2].close()
    again = lease(Layout.TWITTER, url, range(0, 4), table="distinct")
    assert again.shard == 2
    for g in [*held, again]:
        g.close()


def test_sessions_leasing_at_once_all_create_the_missing_table_without_error(url: str) -> None:
    for round_ in range(3):
        table = f"race_{round_}"
        eight_sessions_at_once_each_get_a_shard(lease, url, table)


# One process of 4 threads on one lease (retaken when lost), making IDs until <out>.stop
# exists; database errors (the server restarted) are counted and retried.
THREADED = """
import os, sys, threading, time
from array import array
import shardid
from shardid import Layout
from shardid.mysql import lease
url, table, out, first, end, ttl = sys.argv[1:7]
deadline = time.monotonic() + 60
while True:
    try:
        g = lease(Layout.INSTAGRAM, url, range(int(first), int(end)), table=table, ttl_ms=int(ttl), retake=True)
        break
    except Exception:  # every shard held, or the server restarting
        if time.monotonic() > deadline:
            raise
        time.sleep(0.05)
f = open(out, "ab", buffering=0)
lock = threading.Lock()
def work():
    while not os.path.exists(out + ".stop"):
        try:
            ids = g.next_ids(50)
        except Exception:
            time.sleep(0.01)
            continue
        with lock:
            f.write(array("Q", ids).tobytes())
        time.sleep(0.001)
threads = [threading.Thread(target=work) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
g.close()
"""


def test_eight_processes_of_four_threads_a_kill_and_a_server_crash_never_repeat_an_id(server: Any, url: str, tmp_path: Path) -> None:
    # 8 processes on 8 shards: the killed one's successor has to wait for its lease to expire.
    outs = [tmp_path / f"t{i}" for i in range(9)]
    start = lambda i: subprocess.Popen([sys.executable, "-c", THREADED, url, "threads", str(outs[i]), "0", "8", str(TTL_MS)])  # noqa: E731
    procs = {i: start(i) for i in range(8)}
    try:
        for i in range(8):
            wait_for_ids(outs[i], 2_000)
        procs[3].send_signal(signal.SIGKILL)  # mid-run, perhaps mid-write of its ceiling
        procs[3].wait()
        killed = read_ids(outs[3])
        procs[8] = start(8)  # its successor, waiting for the shard
        server.crash_and_restart()  # SIGKILL under everyone; InnoDB recovers
        time.sleep(2 * TTL_MS / 1000)
        wait_for_ids(outs[8], 2_000)
        sizes = [outs[i].stat().st_size for i in range(9) if i != 3]
        time.sleep(0.5)
        assert all(outs[i].stat().st_size > s for i, s in zip([i for i in range(9) if i != 3], sizes)), "every live process makes IDs again"
    finally:
        for i in range(9):
            (tmp_path / f"t{i}.stop").write_text("")
        for i, p in procs.items():
            if i != 3:
                assert p.wait(timeout=60) == 0, i
    ids = [read_ids(o) for o in outs]
    assert sum(len(i) for i in ids) > 100_000
    assert duplicates(ids) == 0
    # Whoever held the killed one's shard after it (its successor, or one that lost its lease
    # while the server was down and retook another) started above its IDs.
    shard = {Layout.INSTAGRAM.decode(i).shard for i in killed}
    assert len(shard) == 1
    later = [i for n, some in enumerate(ids) if n != 3 for i in some if Layout.INSTAGRAM.decode(i).shard in shard]
    assert later and min(later) > max(killed)


ISOLATED = """
import sys
from array import array
import pymysql
from shardid import Layout
from shardid.mysql import lease
host, port, isolation, table, out = sys.argv[1:6]
def connect():
    c = pymysql.connect(host=host, port=int(port), user="root", database="lease", autocommit=True)
    with c.cursor() as cur:
        cur.execute(f"SET SESSION TRANSACTION ISOLATION LEVEL {isolation}")
    return c
ids = array("Q")
for _ in range(5):
    g = lease(Layout.INSTAGRAM, None, range(0, 6), table=table, connect=connect, ttl_ms=1000)
    ids.extend(g.next_ids(20_000))
    ids.append(1 << 63 | g.shard)
    g.close()
open(out, "wb").write(ids.tobytes())
"""


@pytest.mark.parametrize("isolation", ["READ COMMITTED", "REPEATABLE READ"])
def test_claims_under_either_isolation_level(server: Any, url: str, isolation: str, tmp_path: Path) -> None:
    # 6 processes on 6 shards, each taking and releasing a lease 5 times at once with the
    # others: every claim gets a shard (none reported held while one was free), none twice.
    table = "iso_" + isolation.split()[0].lower()
    outs = [tmp_path / f"i{i}" for i in range(6)]
    runs = [subprocess.Popen([sys.executable, "-c", ISOLATED, "127.0.0.1", str(server.port), isolation, table, str(o)]) for o in outs]
    for run in runs:
        assert run.wait(timeout=120) == 0
    ids = [read_ids(o) for o in outs]
    shards = [[i & 0xFFFF for i in some if i >> 63] for some in ids]
    assert all(len(s) == 5 for s in shards)
    assert duplicates([[i for i in some if not i >> 63] for some in ids]) == 0


def test_a_killed_holders_shard_is_taken_again_only_after_it_expired(url: str, tmp_path: Path) -> None:
    # Its last ceiling write renewed it at most ~100 ms before the kill.
    killed_holder(lease, "mysql", url, "killed", tmp_path / "ids", lambda s: s > 0.8 * TTL_MS / 1000, ttl_ms=TTL_MS).close()


@pytest.mark.parametrize("language", ["python", "node", "rust"])
def test_a_holder_paused_past_its_lease_refuses_after_another_took_its_shard(url: str, tmp_path: Path, language: str) -> None:
    table, out = f"paused_{language}", tmp_path / "paused"
    if language == "python":
        child = python_holder("mysql", url, out, table=table, ttl_ms=TTL_MS)
    elif language == "node":
        child = node(url, "hold", str(out), table, str(TTL_MS), wait=False)
    else:
        child = rust(url, "hold", table, str(out), str(TTL_MS), wait=False)
    paused_past_its_lease(child, out, lambda: take_when_free(lease, url, table, 10 * TTL_MS / 1000, ttl_ms=TTL_MS))


def test_a_taken_over_lease_stops_at_its_ceiling(server: Any, url: str) -> None:
    T0 = 1_700_000_000_000
    g = lease(Layout.TWITTER, url, range(0, 1), table="taken_over")
    g.next_id_at(T0)
    with open_conn(server, database="lease") as admin, admin.cursor() as cur:
        assert cur.execute("UPDATE taken_over SET token = 'someone else' WHERE layout <> ''") == 1
    # Within the recorded ceiling IDs continue; past it, recording fails and nothing is handed
    # out, for good.
    g.next_id_at(T0 + 50)
    with pytest.raises(shardid.LeaseLostError) as info:
        g.next_id_at(T0 + 1000)
    assert str(info.value) == "the lease on shard 0 is no longer held: take a new lease"
    with pytest.raises(shardid.LeaseLostError):
        g.next_id_at(T0 + 10)
    assert not g.held
    g.close()
    assert node(url, "takenover") == {"within": "no error", "past": "LEASE_LOST", "again": "LEASE_LOST", "held": False}


def test_the_server_down_longer_than_the_lease_and_a_restart_within_it(server: Any, url: str) -> None:
    down_longer_than_the_lease(lease, url, server.stop_server, server.start_server, TTL_MS)
    # A crash and restart within the lease: the heartbeat and the next ceiling write reconnect.
    g = lease(Layout.TWITTER, url, range(0, 1), table="restarted", ttl_ms=8000)
    before_ids = g.next_ids(1000)
    server.crash_and_restart()
    time.sleep(0.3)
    after = g.next_ids(1000)
    assert g.held and g.shard == 0 and min(after) > max(before_ids)
    g.close()


def test_a_session_lease_frees_a_killed_holders_shard_at_once(url: str, tmp_path: Path) -> None:
    successor = killed_holder(lease, "mysql", url, "session_killed", tmp_path / "ids", lambda s: s < 2, kind="session")
    # An expiring lease does not take a shard a live session lease holds, and the other way.
    with pytest.raises(shardid.NoFreeShardError):
        lease(Layout.TWITTER, url, range(0, 1), table="session_killed")
    successor.close()
    expiring = lease(Layout.TWITTER, url, range(0, 1), table="session_killed")
    with pytest.raises(shardid.NoFreeShardError):
        lease(Layout.TWITTER, url, range(0, 1), table="session_killed", kind="session")
    expiring.close()
    # Rust's and Node's session leases work on a single server.
    assert rust(url, "session", "session_rust") == {"code": "no error", "message": ""}
    assert node(url, "session", "session_node") == {"code": "no error", "message": ""}


def test_a_session_lease_whose_connection_ends_stops_at_its_ceiling(server: Any, url: str) -> None:
    T0 = 1_700_000_000_000
    g = lease(Layout.TWITTER, url, range(0, 1), table="session_lost", kind="session")
    g.next_id_at(T0)
    with open_conn(server) as admin, admin.cursor() as cur:
        cur.execute("SELECT id FROM information_schema.PROCESSLIST WHERE db = 'lease' AND id <> CONNECTION_ID()")
        for (pid,) in cur.fetchall():
            cur.execute(f"KILL {int(pid)}")
    g.next_id_at(T0 + 50)
    with pytest.raises(shardid.LeaseLostError):
        g.next_id_at(T0 + 1000)
    g.close()


@pytest.mark.parametrize("flavour", ["blocking", "asyncio"])
def test_session_leases_on_one_shared_connection_refuse_rather_than_repeat(server: Any, url: str, flavour: str) -> None:
    # A proxy that shares one server connection between clients: GET_LOCK is re-entrant, so a
    # second lease on the same connection would be granted the same lock. It is refused
    # (taken as held), and the process-wide check names the pooling.
    admin = open_conn(server, database="lease")
    table = f"shared_conn_{flavour}"

    async def main() -> None:
        if flavour == "blocking":
            shared = open_conn(server, database="lease")
            take: Any = lambda: lease(Layout.TWITTER, None, range(0, 2), table=table, kind="session", connect=lambda: shared)
        else:
            shared = await _mysql.aconnect(url)

            async def connect() -> Any:
                return shared

            take = lambda: lease_async(Layout.TWITTER, None, range(0, 2), table=table, kind="session", connect=connect)

        async def taken() -> Any:
            return take() if flavour == "blocking" else await take()

        first = await taken()
        assert first.shard == 0
        token = one(admin, f"SELECT token FROM {table} WHERE shard = 0")
        with pytest.raises(shardid.SessionPooledError, match="reach the same server session"):
            await taken()
        # The second one was not granted shard 0 again (the lock is this connection's already): it
        # took shard 1 before the check refused it, and gave the row back at once.
        assert rows(admin, f"SELECT shard, token IS NULL FROM {table} WHERE layout <> '' ORDER BY shard") == [(0, 0), (1, 1)]
        assert one(admin, f"SELECT token FROM {table} WHERE shard = 0") == token
        ids = first.next_ids(5_000) if flavour == "blocking" else await first.next_ids(5_000)
        assert len(set(ids)) == 5_000 and first.held
        if flavour == "blocking":
            first.close()
        else:
            await first.close()

    asyncio.run(main())
    admin.close()


def test_bad_input_is_refused_clearly(server: Any, url: str) -> None:
    for bad in ("Leases", "leases; DROP TABLE x", "1leases", ""):
        with pytest.raises(shardid.InvalidArgumentError, match="^table is not a valid name: ") as info:
            lease(Layout.TWITTER, url, range(0, 4), table=bad)
        assert info.value.argument == "table"
    with pytest.raises(shardid.InvalidArgumentError, match=r"^shards 3\.\.3 is empty"):
        lease(Layout.TWITTER, url, range(3, 3))
    with pytest.raises(shardid.ShardOutOfRangeError):
        lease(Layout.TWITTER, url, range(0, 1025))
    for kwargs, argument in [({"kind": "advisory"}, "kind"), ({"ttl_ms": 10}, "ttl_ms")]:
        with pytest.raises(shardid.InvalidArgumentError) as bad_kind:
            lease(Layout.TWITTER, url, range(0, 1), **kwargs)
        assert bad_kind.value.argument == argument
    for bad_url in ("mysql://h:99999/lease", "mysql://u:%zz@h/lease", "mysql://"):
        with pytest.raises(shardid.InvalidArgumentError) as bad:
            lease(Layout.TWITTER, bad_url, range(0, 1))
        assert bad.value.argument == "url"
    assert node(url, "bad") == {
        "tables": ["INVALID_ARGUMENT"] * 4,
        "empty": "INVALID_ARGUMENT",
        "past": "SHARD_OUT_OF_RANGE",
        "urls": ["INVALID_ARGUMENT"] * 4,
        "kind": "INVALID_ARGUMENT",
    }
    assert rust(url, "bad") == {"table": "INVALID_ARGUMENT", "empty": "INVALID_ARGUMENT", "past": "SHARD_OUT_OF_RANGE", "url": "INVALID_ARGUMENT"}
    # No table of the lease's ever held a name that injects SQL.
    assert not rows(open_conn(server), "SELECT table_name FROM information_schema.TABLES WHERE table_name LIKE '%drop%'")


def test_a_password_with_at_colon_and_slash_a_wrong_one_and_a_server_that_is_not_mysql(server: Any, url: str, postgres: Any) -> None:
    password = "p@ss:w/rd%?#"
    with open_conn(server) as c, c.cursor() as cur:
        cur.execute("CREATE USER IF NOT EXISTS 'leaser'@'127.0.0.1' IDENTIFIED BY %s", (password,))
        cur.execute("GRANT SELECT, INSERT, UPDATE, CREATE ON lease.* TO 'leaser'@'127.0.0.1'")
    with lease(Layout.TWITTER, server.url_for("lease", user="leaser", password=password), range(0, 1), table="auth") as g:
        assert g.next_id() > 0
    # A log-in refused is DATABASE_UNREACHABLE (as on PostgreSQL), the driver's error its cause.
    with pytest.raises(shardid.DatabaseUnreachableError) as denied:
        lease(Layout.TWITTER, server.url_for("lease", user="leaser", password="wrong"), range(0, 1), table="auth")
    assert isinstance(denied.value.__cause__, pymysql.err.OperationalError)
    assert denied.value.__cause__.args[0] == 1045 and "1045" in str(denied.value)
    not_mysql = f"mysql://postgres@127.0.0.1:{postgres.port}/lease"
    started = time.monotonic()
    with pytest.raises(shardid.NotMysqlError) as info:
        lease(Layout.TWITTER, not_mysql, range(0, 1))
    assert time.monotonic() - started < 5
    assert info.value.server == f"127.0.0.1:{postgres.port}"
    assert rust(not_mysql, "session", "x")["code"] == "NOT_MYSQL"
    assert node(not_mysql, "session", "x")["code"] == "NOT_MYSQL"


def test_a_node_script_with_a_lease_exits_on_its_own(url: str) -> None:
    started = time.monotonic()
    assert node(url, "exit", "node_exit")["shard"] in range(4)
    assert time.monotonic() - started < 30


def test_a_failover_to_another_server_jumps_the_ceiling_past_the_lost_writes(server: Any, url: str) -> None:
    """A promoted replica is another server (another server_id): the rows it reads may lack
    the last ceiling writes of the holders of its old source. Simulated on one server by
    setting the ceiling back (the lost write) and the server's identity to another: the next
    holder then starts above the server's clock plus the hosts' skew, so a clock 1.5 s behind
    cannot repeat what the old holder made; with the identity unchanged, the same lost write
    lets it (what the jump prevents)."""
    layout = Layout.TWITTER

    def lose_the_last_ceiling(table: str) -> list[int]:
        first = lease(layout, url, range(0, 1), table=table)
        made = first.next_ids(1000)  # dated now: the ceiling is written up to ~100 ms ahead
        first.close()
        with open_conn(server, database="lease") as admin, admin.cursor() as cur:
            cur.execute(f"UPDATE {table} SET ceiling = ceiling - 60000")  # a minute's writes lost
        return made

    made = lose_the_last_ceiling("no_failover")
    same = lease(layout, url, range(0, 1), table="no_failover")
    # Without a jump the lost ceiling lets a clock 1.5 s behind issue IDs among the old
    # holder's again.
    assert same.next_id_at(shardid.now_ms() - 1500) < max(made)
    same.close()

    lose_the_last_ceiling("failover")
    with open_conn(server) as admin, admin.cursor() as cur:
        cur.execute("SET GLOBAL server_id = 2")
    try:
        claimed_at = shardid.now_ms()
        successor = lease(layout, url, range(0, 1), table="failover")
        # It waited for its clock to pass the jumped ceiling before handing it back.
        assert shardid.now_ms() - claimed_at >= 2000
        with pytest.raises((shardid.ClockMovedBackwardsError, shardid.SequenceExhaustedError)):
            successor.next_id_at(shardid.now_ms() - 3500)
        first_id = successor.next_id()
        assert layout.decode(first_id).timestamp_ms >= claimed_at + 2000
        successor.close()
        # The server that wrote it, and the origin of the table's data (a dump restored into a
        # fresh server with the same server_id makes the table anew).
        created = one(
            open_conn(server),
            "SELECT CAST(UNIX_TIMESTAMP(create_time) AS CHAR) FROM information_schema.tables "
            "WHERE table_schema = 'lease' AND table_name = 'failover'",
        )
        assert rows(open_conn(server, database="lease"), "SELECT server FROM failover WHERE layout <> ''") == [(b"server 2 " + created.encode(),)]
        # Written by this server since: no jump at the next claim.
        again_at = shardid.now_ms()
        with lease(layout, url, range(0, 1), table="failover") as again:
            assert shardid.now_ms() - again_at < 1000
            assert again.next_id() > first_id
    finally:
        with open_conn(server) as admin, admin.cursor() as cur:
            cur.execute("SET GLOBAL server_id = 1")


# What a surviving Galera node answered a lease's ceiling record while the cluster evicted a
# killed node (test_galera.py, once in CI): the write set was not replicated, the statement
# rolled back whole.
GALERA_REFUSAL = "Error while appending streaming replication fragment(provider status: Not connected to Primary Component)"
# How many times the core sends a refused statement again (shardid::sql::MAX_RESENDS).
MAX_RESENDS = 10


class Refusals:
    """Connections to the server whose first ``left`` ceiling records of ``table`` are refused
    with PyMySQL's (or aiomysql's) error for Galera's 1180, as the node refused it; everything
    else runs on the real connection. No server can be made to refuse on demand: a trigger that
    raised the error would also hide every statement's last insert ID, by which the lease reads
    its answers."""

    def __init__(self, server: Any, table: str, left: int) -> None:
        self.server, self.record, self.left = server, f"UPDATE `{table}` SET ceiling = CAST(LAST_INSERT_ID(GREATEST(", left

    def refuse(self, sql: str) -> None:
        if sql.startswith(self.record) and self.left > 0:
            self.left -= 1
            raise pymysql.err.OperationalError(1180, GALERA_REFUSAL)

    def connect(self) -> Any:
        refusals = self

        class Cursor(pymysql.cursors.Cursor):
            def execute(self, query: Any, args: Any = None) -> int:
                refusals.refuse(query)
                return super().execute(query, args)

        return open_conn(self.server, database="lease", cursorclass=Cursor)

    async def connect_async(self) -> Any:
        import aiomysql

        refusals = self

        class Cursor(aiomysql.Cursor):  # type: ignore[misc]
            async def execute(self, query: str, args: Any = None) -> Any:
                refusals.refuse(query)
                return await super().execute(query, args)

        return await aiomysql.connect(host="127.0.0.1", port=self.server.port, user="root", db="lease",
                                      autocommit=True, cursorclass=Cursor)  # fmt: skip


@pytest.mark.parametrize("client", ["python", "asyncio", "node"])
def test_a_ceiling_record_a_galera_node_refused_is_sent_again(server: Any, url: str, client: str) -> None:
    # Refused three times: sent again after 25, 50 and 100 ms, and the ID handed out. (Rust's
    # driver: the unit test of shardid::lease::database, over a fake connection.)
    table = f"refused_{client}"
    lease(Layout.TWITTER, url, range(0, 1), table=table).close()  # makes the table
    refusals = Refusals(server, table, 3)
    if client == "python":
        with lease(Layout.TWITTER, None, range(0, 1), table=table, connect=refusals.connect) as g:
            assert g.next_id() > 0
    elif client == "asyncio":
        from shardid.mysql import lease_async

        async def main() -> None:
            async with lease_async(Layout.TWITTER, None, range(0, 1), table=table, connect=refusals.connect_async) as g:
                assert await g.next_id() > 0

        asyncio.run(main())
    else:
        got = node(url, "refused", table, "3")
        assert got["code"] == "no error", got
        refusals.left = got["left"]
    assert refusals.left == 0


def test_a_ceiling_record_refused_every_time_is_sent_a_bounded_number_of_times(server: Any, url: str) -> None:
    # Refused at every send: 1 + MAX_RESENDS sends over 5.6 s, then the driver's error as it is.
    table = "refused_always"
    lease(Layout.TWITTER, url, range(0, 1), table=table).close()
    refusals = Refusals(server, table, 1 + MAX_RESENDS + 1)
    with lease(Layout.TWITTER, None, range(0, 1), table=table, connect=refusals.connect) as g:
        with pytest.raises(pymysql.err.OperationalError) as info:
            g.next_id()
        assert info.value.args == (1180, GALERA_REFUSAL)
        assert refusals.left == 1
        # Within its time to live the lease is still held: the next call records anew.
        assert g.held and g.next_id() > 0


def test_a_leases_counters_equal_the_statements_the_server_saw(server: Any, url: str) -> None:
    # As tests/postgres/test_lease_stats.py, with the server's general log in place of a
    # trigger (a trigger would hide the statement's LAST_INSERT_ID(), by which the lease reads
    # its answers): stats() (the core's counts) must match the statements of the lease's row
    # that the server ran: claims, ceiling writes, and renewals (the heartbeats and the ceiling
    # writes, which renew too).
    table = "stats_leases"
    lease(Layout.TWITTER, url, range(0, 1), table=table).close()  # makes the table
    statement = {
        "claim": f"UPDATE `{table}` SET ceiling = (LAST_INSERT_ID((LEAST(%",
        "record": f"UPDATE `{table}` SET ceiling = CAST(LAST_INSERT_ID(GREATEST(%",
        # A renewal's last insert ID is the server's clock (issue 60, finding 8).
        "renew": f"UPDATE `{table}` SET ceiling = IF(% 0 * LAST_INSERT_ID(%",
        "release": f"UPDATE `{table}` SET ceiling = CAST(LAST_INSERT_ID(IF(% token = NULL%",
    }
    with open_conn(server) as admin, admin.cursor() as cur:
        cur.execute("SET GLOBAL general_log = 'OFF'")
        cur.execute("SET GLOBAL log_output = 'TABLE'")
        cur.execute("TRUNCATE mysql.general_log")
        cur.execute("SET GLOBAL general_log = 'ON'")
        try:
            held = lease(Layout.TWITTER, url, range(0, 1), table=table, ttl_ms=600)
            end = time.monotonic() + 0.6
            while time.monotonic() < end:
                held.next_ids(100)
            time.sleep(0.7)
            held.close()
        finally:
            cur.execute("SET GLOBAL general_log = 'OFF'")
        stats = held.stats()
        log = {}
        for op, like in statement.items():
            cur.execute("SELECT count(*) FROM mysql.general_log WHERE command_type = 'Query' "
                        "AND CONVERT(argument USING utf8mb4) LIKE %s", (like,))  # fmt: skip
            log[op] = cur.fetchone()[0]
    assert log["claim"] == stats["acquisitions"] == 1 and log["release"] == 1, log
    assert log["record"] == stats["ceiling_writes"] >= 4, (log, stats)
    assert log["renew"] >= 2 and log["renew"] + log["record"] == stats["renewals"], (log, stats)
    assert (stats["late_renewals"], stats["losses"], stats["held"]) == (0, 0, 0)


def test_a_lease_names_the_database_its_schema_names(server: Any, url: str) -> None:
    # Issue 60, finding 4: `schema` is the table's database on the MySQL family (the URL's by
    # default); every statement names `schema`.`table`, and the failover origin reads that
    # database's table.
    with open_conn(server) as admin:
        rows(admin, "CREATE DATABASE IF NOT EXISTS lease_elsewhere")
    with lease(Layout.TWITTER, url, range(0, 1), table="elsewhere_leases", schema="lease_elsewhere") as held:
        first = held.next_id()
        assert held.schema == "lease_elsewhere"
    with lease(Layout.TWITTER, url, range(0, 1), table="elsewhere_leases", schema="lease_elsewhere") as held:
        assert held.next_id() > first
    with open_conn(server) as admin:
        found = rows(admin, "SELECT table_schema FROM information_schema.tables WHERE table_name = 'elsewhere_leases'")
        assert found == [("lease_elsewhere",)]
        assert one(admin, "SELECT COUNT(*) FROM lease_elsewhere.elsewhere_leases WHERE ceiling > 0") == 1


FAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
SKEWED = """
import sys
from shardid import ClockSkewError, Layout
from shardid.mysql import lease
try:
    lease(Layout.TWITTER, sys.argv[1], range(0, 1), table="skew_leases").close()
    print("TAKEN")
except ClockSkewError as e:
    print("CLOCK_SKEW", e.ahead_ms)
"""


@pytest.mark.skipif(not FAKETIME.exists(), reason="libfaketime is not installed")
def test_a_client_3_s_fast_is_refused_before_its_claim(url: str) -> None:
    # Issue 60, finding 8, on the MySQL family: the claim's answer has no room for the
    # server's clock, so it is read first, and nothing is claimed by a host too far ahead.
    env = dict(os.environ, LD_PRELOAD=str(FAKETIME), FAKETIME="+3")
    done = subprocess.run([sys.executable, "-c", SKEWED, url], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    verdict, *ahead = done.stdout.split()
    assert verdict == "CLOCK_SKEW" and 2_500 < int(ahead[0]) <= 3_100, done.stdout
    # Nothing was claimed: another process takes the shard at once.
    with lease(Layout.TWITTER, url, range(0, 1), table="skew_leases") as held:
        assert held.shard == 0
