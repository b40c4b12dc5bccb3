"""Leases where production runs: behind PgBouncer in transaction mode (the default of most
hosted PostgreSQL), with holders killed, paused past their lease, and cut off from a database
that is down. Every test counts duplicates; the expected number is always 0.

The issue behind these measured, with the old session lease behind PgBouncer 1.18 in
transaction mode: two or more of 4 processes on one shard in 10 runs of 10, up to 79,500
duplicate IDs of 151,001.
"""

from __future__ import annotations

import subprocess
import time
from array import array
from pathlib import Path
from typing import Any

import psycopg
import pytest

import shardid
from shardid import Layout
from shardid.postgres import lease

from lease_checks import down_longer_than_the_lease, duplicates, killed_holder, paused_past_its_lease, python_holder, python_probe, take_when_free
from pooler import Pooler
from examples import example, run_example

# A short time to live keeps the tests that wait for an expiry short; the rules are the same
# at any length.
TTL_MS = 1500


def probe(dsn: str, table: str, kind: str, tmp_path: Path, processes: int = 4) -> tuple[list[int], list[array[int]], list[str]]:
    """``processes`` processes each leasing from shards 0..4 of ``table`` and making 50,000 IDs
    over 2 s: the shards they got, their IDs, and each one's status."""
    runs = [python_probe("postgres", dsn, tmp_path / f"p{i}", 2, 50_000, range(0, 4), table=table, kind=kind) for i in range(processes)]
    shards, ids, statuses = [], [], []
    for i, run in enumerate(runs):
        assert run.wait(timeout=120) == 0
        got = array("Q")
        got.frombytes((tmp_path / f"p{i}.ids").read_bytes())
        status = (tmp_path / f"p{i}.status").read_text()
        statuses.append(status)
        if status == "ok":
            shards.append(got.pop())
        ids.append(got)
    return shards, ids, statuses


@pytest.mark.parametrize("pool", ["tx", "session", "direct"])
def test_four_processes_get_four_shards_and_no_duplicate(cluster: Any, pooler: Pooler, pool: str, tmp_path: Path) -> None:
    dsn = cluster.dsn if pool == "direct" else pooler.dsn(pool)
    for round_ in range(2):
        shards, ids, statuses = probe(dsn, f"probe_{pool}_{round_}", "expiring", tmp_path)
        assert statuses == ["ok"] * 4
        assert sorted(shards) == [0, 1, 2, 3]
        assert [len(i) for i in ids] == [50_000] * 4
        assert duplicates(ids) == 0


def test_session_leases_behind_a_transaction_pooler_refuse_rather_than_repeat(cluster: Any, pooler: Pooler, tmp_path: Path) -> None:
    # Advisory locks are re-entrant per server session, and the pooler shares 3 of them among
    # the 4 processes: each refuses (its statements move to another server session, or two of
    # its connections see one) or works on a shard of its own; no ID is ever made twice.
    shards, ids, statuses = probe(pooler.dsn("tx"), "probe_session_tx", "session", tmp_path)
    assert set(statuses) <= {"ok", "LEASE_LOST", "SESSION_POOLED"}, statuses
    assert len(set(shards)) == len(shards)
    assert duplicates(ids) == 0
    # Two session leases of one process on one pooled server session: refused at once.
    with pytest.raises((shardid.SessionPooledError, shardid.LeaseLostError)):
        held = [lease(Layout.TWITTER, pooler.dsn("tx"), range(0, 8), table="two_sessions", kind="session") for _ in range(4)]
        for g in held:
            g.next_ids(5000)


@pytest.mark.parametrize("pool", ["tx", "direct"])
def test_a_killed_holders_shard_is_taken_again_only_after_it_expired(cluster: Any, pooler: Pooler, pool: str, tmp_path: Path) -> None:
    dsn = cluster.dsn if pool == "direct" else pooler.dsn("tx")
    # Its last ceiling write renewed it at most ~100 ms before the kill.
    expired = lambda s: s > 0.8 * TTL_MS / 1000  # noqa: E731
    killed_holder(lease, "postgres", dsn, f"killed_{pool}", tmp_path / "ids", expired, ttl_ms=TTL_MS).close()


@pytest.mark.parametrize("pool", ["tx", "direct"])
def test_a_holder_paused_past_its_lease_refuses_after_another_took_its_shard(cluster: Any, pooler: Pooler, pool: str, tmp_path: Path) -> None:
    dsn = cluster.dsn if pool == "direct" else pooler.dsn("tx")
    table = f"paused_{pool}"
    out = tmp_path / "paused"
    child = python_holder("postgres", dsn, out, table=table, ttl_ms=TTL_MS)
    paused_past_its_lease(child, out, lambda: take_when_free(lease, dsn, table, 10 * TTL_MS / 1000, ttl_ms=TTL_MS))


def test_a_taken_over_lease_stops_at_its_ceiling(cluster: Any, pooler: Pooler) -> None:
    T0 = 1_700_000_000_000
    g = lease(Layout.TWITTER, pooler.dsn("tx"), range(0, 1), table="taken_over")
    g.next_id_at(T0)
    # Another holder's claim: the row's token changes.
    with psycopg.connect(cluster.dsn, autocommit=True) as admin:
        assert admin.execute("UPDATE taken_over SET token = 'someone else' WHERE layout <> '' RETURNING shard").rowcount == 1
    # Within the recorded ceiling IDs continue (above the last holder's, below any
    # successor's); past it, recording fails and nothing is handed out, for good.
    g.next_id_at(T0 + 50)
    with pytest.raises(shardid.LeaseLostError) as info:
        g.next_id_at(T0 + 1000)
    assert info.value.shard == 0
    assert str(info.value) == "the lease on shard 0 is no longer held: take a new lease"
    with pytest.raises(shardid.LeaseLostError):
        g.next_id_at(T0 + 10)
    assert not g.held
    g.close()


def test_the_database_down_longer_than_the_lease(cluster: Any) -> None:
    down_longer_than_the_lease(lease, cluster.dsn, cluster.stop_server, cluster.start_server, TTL_MS)


def test_a_restart_within_the_lease_is_ridden_through(cluster: Any) -> None:
    g = lease(Layout.TWITTER, cluster.dsn, range(0, 1), table="restarted", ttl_ms=5000)
    before = g.next_ids(1000)
    cluster.crash_and_restart()
    # The heartbeat and the next ceiling write reconnect: the same lease, the same shard.
    time.sleep(0.3)
    after = g.next_ids(1000)
    assert g.held and g.shard == 0
    assert min(after) > max(before)
    g.close()


def test_leases_write_no_server_side_prepared_statement(cluster: Any, pooler: Pooler) -> None:
    # psycopg prepares a statement on its 5th execution unless told not to; PgBouncer 1.18
    # in transaction mode cannot carry one ("prepared statement _pg3_0 already exists").
    held = [lease(Layout.TWITTER, pooler.dsn("tx"), range(0, 8), table="prepared", ttl_ms=300) for _ in range(6)]
    time.sleep(1.0)  # ten renewals each
    for g in held:
        g.next_ids(20_000)
        assert g.held
    with psycopg.connect(cluster.dsn, autocommit=True) as admin:
        assert admin.execute("SELECT count(*) FROM pg_prepared_statements").fetchone()[0] == 0  # type: ignore[index]
    for g in held:
        g.close()


def test_a_session_lease_on_a_direct_connection_frees_a_killed_holders_shard_at_once(cluster: Any, tmp_path: Path) -> None:
    successor = killed_holder(lease, "postgres", cluster.dsn, "session_killed", tmp_path / "ids", lambda s: s < 2, kind="session")
    # An expiring lease does not take a shard a live session lease holds, and the other way.
    with pytest.raises(shardid.NoFreeShardError):
        lease(Layout.TWITTER, cluster.dsn, range(0, 1), table="session_killed")
    successor.close()
    expiring = lease(Layout.TWITTER, cluster.dsn, range(0, 1), table="session_killed")
    with pytest.raises(shardid.NoFreeShardError):
        lease(Layout.TWITTER, cluster.dsn, range(0, 1), table="session_killed", kind="session")
    expiring.close()


def test_bad_kinds_and_times_to_live_are_refused_before_connecting() -> None:
    for kwargs, argument in [({"kind": "advisory"}, "kind"), ({"ttl_ms": 10}, "ttl_ms"), ({"ttl_ms": 10**9}, "ttl_ms")]:
        with pytest.raises(shardid.InvalidArgumentError) as info:
            lease(Layout.TWITTER, "host=192.0.2.1 connect_timeout=30", range(0, 1), **kwargs)
        assert info.value.argument == argument


def test_an_old_table_is_upgraded_in_place(cluster: Any) -> None:
    with psycopg.connect(cluster.dsn, autocommit=True) as admin:
        admin.execute(
            "CREATE TABLE old_leases (layout text NOT NULL, shard bigint NOT NULL, ceiling bigint NOT NULL, "
            "holder text, taken_at timestamptz, PRIMARY KEY (layout, shard))"
        )
        sig = "epoch_ms=1288834974657 unit_ms=1 bits=41/10/12 order=TimeShardSequence"
        ceiling = shardid.now_ms() - Layout.TWITTER.epoch_ms + 300
        admin.execute("INSERT INTO old_leases VALUES (%s, 0, %s, 'old', now())", (sig, ceiling))
    g = lease(Layout.TWITTER, cluster.dsn, range(0, 1), table="old_leases")
    # Starts above the ceiling the old table recorded.
    assert g.next_id() >> 22 > ceiling
    g.close()


# Node's shardid/postgres (pg), on the same pooler: tests/postgres/lease_node.mjs.
NODE = Path(__file__).with_name("lease_node.mjs")


def node(dsn: str, mode: str, *args: str, wait: bool = True) -> Any:
    import json

    if not wait:
        return subprocess.Popen(["node", str(NODE), dsn, mode, *args])
    done = subprocess.run(["node", str(NODE), dsn, mode, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


# Rust's shardid::lease::postgres (the `postgres` crate): core/examples/lease.rs.
def rust(dsn: str, mode: str, *args: str, wait: bool = True) -> Any:
    if not wait:
        return subprocess.Popen([example("lease"), dsn, mode, *args])
    return run_example("lease", dsn, mode, *args)


def other(language: str, pooler: Pooler, mode: str, table: str, out: str, *args: str, wait: bool = True) -> Any:
    """Node's or Rust's example in `mode` on `table` through the pooler in transaction mode,
    writing to `out` (each example takes its arguments in its own order)."""
    if language == "node":
        return node(pooler.url("tx"), mode, out, table, *args, wait=wait)
    return rust(pooler.dsn("tx"), mode, table, out, *args, wait=wait)


@pytest.mark.parametrize("language", ["node", "rust"])
def test_processes_of_another_language_behind_a_transaction_pooler_get_four_shards_and_no_duplicate(
    pooler: Pooler, tmp_path: Path, language: str
) -> None:
    # Two Node or Rust processes and two Python ones, one table: the lease is the same everywhere.
    table = f"{language}_probe"
    runs = [other(language, pooler, "probe", table, str(tmp_path / f"o{i}"), "2", "50000", wait=False) for i in range(2)]
    shards, ids, statuses = probe(pooler.dsn("tx"), table, "expiring", tmp_path, processes=2)
    assert statuses == ["ok", "ok"]
    for i, run in enumerate(runs):
        assert run.wait(timeout=120) == 0
        got = array("Q")
        got.frombytes((tmp_path / (f"o{i}.ids" if language == "node" else f"o{i}")).read_bytes())
        shards.append(got.pop())
        ids.append(got)
    assert sorted(shards) == [0, 1, 2, 3]
    assert [len(i) for i in ids] == [50_000] * 4
    assert duplicates(ids) == 0


@pytest.mark.parametrize("language", ["node", "rust"])
def test_a_holder_of_another_language_paused_past_its_lease_refuses_after_python_took_its_shard(
    pooler: Pooler, tmp_path: Path, language: str
) -> None:
    table = f"{language}_paused"
    out = tmp_path / table
    child = other(language, pooler, "hold", table, str(out), str(TTL_MS), wait=False)
    paused_past_its_lease(child, out, lambda: take_when_free(lease, pooler.dsn("tx"), table, 10 * TTL_MS / 1000, ttl_ms=TTL_MS))


@pytest.mark.parametrize("language", ["node", "rust"])
def test_a_taken_over_lease_of_another_language_stops_at_its_ceiling(pooler: Pooler, language: str) -> None:
    seen = node(pooler.url("tx"), "takenover") if language == "node" else rust(pooler.dsn("tx"), "takenover")
    assert seen == {"within": "no error", "past": "LEASE_LOST", "again": "LEASE_LOST", "held": False}


def test_rust_bad_input(cluster: Any) -> None:
    assert rust(cluster.dsn, "bad") == {"table": "INVALID_ARGUMENT", "empty": "INVALID_ARGUMENT", "ttl": "must be within 300..=3600000 ms"}
