"""Shard leases through PostgreSQL (shardid.postgres): processes on "different hosts"
(separate connections) get distinct shards, sessions starting at once all create the table of
leases, a clock set back between holders never yields an old ID, forked workers take shards of
their own, a session lease's lost session stops the generator at its ceiling, and a closed
lease frees its shard at once. Poolers, kills, pauses and outages: test_lease_pooled.py."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import time
from array import array
from pathlib import Path
from typing import Any

import psycopg
import pytest

import shardid
from shardid import Layout
from shardid.postgres import lease
from lease_checks import eight_sessions_at_once_each_get_a_shard
from together import on_processes

T0 = 1_700_000_000_000


def test_sessions_get_distinct_shards_and_no_free_shard_names_the_range(cluster: Any) -> None:
    held = [lease(Layout.TWITTER, cluster.dsn, range(0, 4), table="distinct_leases") for _ in range(4)]
    assert sorted(g.shard for g in held) == [0, 1, 2, 3]
    with pytest.raises(shardid.NoFreeShardError, match=r"every shard in 0\.\.4 is leased") as info:
        lease(Layout.TWITTER, cluster.dsn, range(0, 4), table="distinct_leases")
    assert info.value.shards == range(0, 4)
    ids = [i for g in held for i in g.next_ids(10_000)]
    assert len(set(ids)) == 40_000
    held[2].close()
    again = lease(Layout.TWITTER, cluster.dsn, range(0, 4), table="distinct_leases")
    assert again.shard == held[2].shard
    for g in [*held, again]:
        g.close()


def test_a_table_name_that_is_not_a_plain_identifier_is_refused(cluster: Any) -> None:
    for bad in ("Leases", "leases; DROP TABLE x", "1leases", ""):
        with pytest.raises(shardid.InvalidArgumentError, match="^table is not a valid name: ") as info:
            lease(Layout.TWITTER, cluster.dsn, range(0, 4), table=bad)
        assert info.value.argument == "table"
    # An empty range is refused before any statement, not reported as every shard being held.
    with pytest.raises(shardid.InvalidArgumentError, match=r"^shards 3\.\.3 is empty: a lease needs a range of at least one shard$"):
        lease(Layout.TWITTER, cluster.dsn, range(3, 3))
    assert node(url(cluster), "badtable") == {
        "codes": ["INVALID_ARGUMENT"] * 4,
        "empty": "INVALID_ARGUMENT shards 3..3 is empty: a lease needs a range of at least one shard",
    }


def test_sessions_leasing_at_once_all_create_the_missing_table_without_error(cluster: Any) -> None:
    # Concurrent CREATE TABLE IF NOT EXISTS can fail in PostgreSQL (a duplicate key, table or row
    # type); every one of eight sessions starting at once must still get its lease.
    for round_ in range(10):
        table = f"race_leases_{round_}"
        eight_sessions_at_once_each_get_a_shard(lease, cluster.dsn, table)


def test_a_clock_set_back_between_holders_never_yields_an_old_id(cluster: Any) -> None:
    first = lease(Layout.TWITTER, cluster.dsn, range(0, 1), table="clock_leases")
    issued = [first.next_id_at(T0 + i // 100) for i in range(1000)]
    first.close()
    again = lease(Layout.TWITTER, cluster.dsn, range(0, 1), table="clock_leases")
    with pytest.raises(shardid.ClockMovedBackwardsError):
        again.next_id_at(T0 - 5000)
    with pytest.raises(shardid.SequenceExhaustedError):
        again.next_id_at(T0 - 400)
    assert again.next_id_at(T0 + 200) > max(issued)
    again.close()


def _worker(generator: Any, out: str) -> None:
    ids = generator.next_ids(100_000)
    Path(out).write_bytes(array("Q", ids + [generator.shard]).tobytes())


def test_forked_workers_take_shards_of_their_own(cluster: Any, tmp_path: Path) -> None:
    generator = lease(Layout.INSTAGRAM, cluster.dsn, range(0, 16), table="fork_leases")
    generator.next_id()
    fork = multiprocessing.get_context("fork")
    workers = [fork.Process(target=_worker, args=(generator, str(tmp_path / f"w{i}"))) for i in range(4)]
    on_processes(workers)
    seen: set[int] = set(generator.next_ids(1000))
    shards = {generator.shard}
    for i in range(4):
        ids = array("Q")
        ids.frombytes((tmp_path / f"w{i}").read_bytes())
        shards.add(ids.pop())
        seen.update(ids)
    assert len(shards) == 5 and len(seen) == 401_000
    # The parent's session still works after the children used (and abandoned) theirs.
    assert generator.next_id() > 0
    generator.close()


def test_a_lost_session_stops_the_generator_at_its_ceiling(cluster: Any) -> None:
    # A session lease's lock ends with its session; an expiring lease reconnects instead
    # (test_lease_pooled.py).
    generator = lease(Layout.TWITTER, cluster.dsn, range(0, 1), table="lost_leases", kind="session")
    generator.next_id_at(T0)
    with psycopg.connect(cluster.dsn, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '' "
            "AND pid <> pg_backend_pid() AND query LIKE '%lost_leases%'"
        )
    # Within the recorded ceiling IDs continue (they are above the last holder's and below
    # any successor's); past it, recording fails and nothing is handed out.
    generator.next_id_at(T0 + 50)
    with pytest.raises(shardid.LeaseLostError) as info:
        generator.next_id_at(T0 + 1000)
    assert info.value.shard == 0
    assert str(info.value) == "the lease on shard 0 is no longer held: take a new lease"
    # Node's driver, likewise (and its process survives the ended session).
    assert node(url(cluster), "lost") == {"within": "no error", "past": "LEASE_LOST"}


# Node's shardid/postgres (pg), on the same server: tests/postgres/lease_node.mjs.
NODE = Path(__file__).with_name("lease_node.mjs")


def node(dsn: str, mode: str, *args: str) -> dict[str, Any]:
    import json

    done = subprocess.run(["node", str(NODE), dsn, mode, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def url(cluster: Any) -> str:
    return f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres"


def test_node_sessions_get_distinct_shards(cluster: Any) -> None:
    assert node(url(cluster), "distinct") == {"shards": [0, 1, 2, 3], "fifth": "NO_FREE_SHARD", "unique": 40_000}


def test_node_a_clock_set_back_between_holders(cluster: Any) -> None:
    assert node(url(cluster), "clock") == {
        "back5s": "CLOCK_MOVED_BACKWARDS",
        "back400ms": "SEQUENCE_EXHAUSTED",
        "above": True,
    }


CLOSED_SHARD_TAKER = """
import sys
from shardid import Layout
from shardid.postgres import lease
print(lease(Layout.TWITTER, sys.argv[1], range(0, 1), table="closed_leases").shard)
"""


def test_a_closed_lease_frees_its_shard_for_another_process_at_once(cluster: Any) -> None:
    with lease(Layout.TWITTER, cluster.dsn, range(0, 1), table="closed_leases") as held:
        held.next_id()
        taker = subprocess.run(
            [sys.executable, "-c", CLOSED_SHARD_TAKER, cluster.dsn], capture_output=True, text=True, timeout=60
        )
        assert "NO_FREE_SHARD" in taker.stderr or "NoFreeShardError" in taker.stderr, taker.stderr
    # Closed by the `with`: another process takes the shard at once, and this one makes no ID.
    start = time.monotonic()
    taker = subprocess.run(
        [sys.executable, "-c", CLOSED_SHARD_TAKER, cluster.dsn], capture_output=True, text=True, timeout=60
    )
    assert taker.stdout.strip() == "0", taker.stderr
    assert time.monotonic() - start < 10
    with pytest.raises(shardid.ClosedError):
        held.next_id()
    held.close()  # twice is fine
    assert node(url(cluster), "closed") == {"before": "NO_FREE_SHARD", "after": 0, "afterClose": "CLOSED"}
