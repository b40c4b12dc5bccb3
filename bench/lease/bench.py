"""What a lease kept in PostgreSQL costs (issue 28), on a throwaway server behind PgBouncer in
transaction mode, in one run:

- the ID path: ``PostgresLease.next_id()`` (an expiring lease through the pooler, and a session
  lease on a direct connection) against a plain ``Generator.next_id()`` of the same layout,
  median ns per ID over bursts that stay below the layout's cap (so nobody waits for the clock);
  Node's ``await lease.nextId()`` against ``await`` of a plain ``gen.nextId()`` likewise
  (``bench/lease/node.mjs``);
- taking a lease: the statements (round trips) one acquisition sends, the first on a new table
  and then on an existing one, counted by the connection;
- keeping it: the statements a holder that makes no ID sends over 10 time-to-lives (the
  heartbeat), and one that makes IDs flat out (ceiling writes renew too).

    SHARDID_PYTHON_VENV=target/python-venv tests/python/run.sh --install-only
    (cd bindings-node && npm run build)
    target/python-venv/bin/python bench/lease/bench.py [--rounds 300]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

import shardid
from shardid.postgres import lease

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests" / "postgres"))
from cluster import Cluster  # noqa: E402
from pooler import Pooler  # noqa: E402

BURST = 1000


def next_millisecond() -> None:
    start = time.time_ns() // 1_000_000
    while time.time_ns() // 1_000_000 == start:
        pass


def per_call(make: Any, rounds: int) -> float:
    """Median ns per call over ``rounds`` bursts of ``BURST`` calls, each right after a
    millisecond boundary (Twitter's layout: 4,096 IDs a millisecond, so no burst waits)."""
    samples = []
    loop = range(BURST)
    for _ in range(rounds):
        next_millisecond()
        start = time.perf_counter_ns()
        for _ in loop:
            make()
        samples.append((time.perf_counter_ns() - start) / BURST)
    return statistics.median(samples)


class Counting:
    """A DB-API connection that counts the statements sent through it."""

    def __init__(self, conn: Any, counter: list[int]) -> None:
        self._conn, self._counter = conn, counter

    def cursor(self) -> Any:
        outer = self

        class Cursor:
            def __init__(self) -> None:
                self._cur = outer._conn.cursor()

            def execute(self, sql: str, params: Any = None) -> Any:
                outer._counter[0] += 1
                return self._cur.execute(sql, params)

            def __getattr__(self, name: str) -> Any:
                return getattr(self._cur, name)

        return Cursor()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def counted(dsn: str) -> tuple[list[int], Any]:
    counter = [0]

    def connect() -> Any:
        return Counting(psycopg.connect(dsn, autocommit=True, prepare_threshold=None), counter)

    return counter, connect


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    layout = shardid.Layout.TWITTER
    with Cluster() as cluster:
        pooler = Pooler(cluster.port)
        try:
            plain = shardid.Generator(layout, 900)
            expiring = lease(layout, pooler.dsn("tx"), range(0, 8), table="bench_leases")
            session = lease(layout, cluster.dsn, range(8, 16), table="bench_leases", kind="session")
            results = {}
            for r in range(3):  # interleaved, so drift hits all alike
                for name, make in (("plain Generator.next_id()", plain.next_id),
                                   ("expiring lease through PgBouncer", expiring.next_id),
                                   ("session lease, direct", session.next_id)):  # fmt: skip
                    results.setdefault(name, []).append(per_call(make, args.rounds // 3))
            medians = {name: statistics.median(v) for name, v in results.items()}
            base = medians["plain Generator.next_id()"]
            print("Python, ns per ID (median of bursts of 1,000 below the cap):\n")
            print("| generator | ns per ID | against the plain generator |")
            print("| --- | ---: | ---: |")
            for name, ns in medians.items():
                print(f"| {name} | {ns:.1f} | {ns / base:.3f}x |")

            # Taking one: statements per acquisition.
            print("\nStatements (round trips) per acquisition, counted by the connection:\n")
            print("| lease | first, on a new table | then |")
            print("| --- | ---: | ---: |")
            for kind, dsn, table in (("expiring", pooler.dsn("tx"), "count_expiring"), ("session", cluster.dsn, "count_session")):
                counts = []
                for _ in range(2):
                    counter, connect = counted(dsn)
                    held = lease(layout, None, range(0, 8), table=table, kind=kind, connect=connect)
                    counts.append(counter[0])
                    held.close()
                print(f"| {kind} | {counts[0]} | {counts[1]} |")

            # Keeping one: statements over 10 times to live, idle and busy.
            ttl = 600
            print(f"\nStatements while holding an expiring lease of {ttl} ms for {10 * ttl} ms (10 times to live):\n")
            print("| holder | statements | per third of the time to live |")
            print("| --- | ---: | ---: |")
            for busy in (False, True):
                counter, connect = counted(pooler.dsn("tx"))
                held = lease(layout, None, range(0, 8), table="count_keep", ttl_ms=ttl, connect=connect)
                start_count, start = counter[0], time.monotonic()
                while time.monotonic() - start < 10 * ttl / 1000:
                    if busy:
                        held.next_ids(1000)
                    time.sleep(0.001)
                sent = counter[0] - start_count
                print(f"| {'making IDs flat out' if busy else 'idle'} | {sent} | {sent / 30:.2f} |")
                held.close()

            expiring.close()
            session.close()
            node = subprocess.run(["node", str(HERE / "node.mjs"), pooler.url("tx"), str(args.rounds)],
                                  capture_output=True, text=True, timeout=600)  # fmt: skip
            if node.returncode != 0:
                raise SystemExit(node.stdout + node.stderr)
            out = json.loads(node.stdout.strip().splitlines()[-1])
            print("\nNode, ns per ID (median of bursts of 1,000 below the cap):\n")
            print("| generator | ns per ID | against `await` of the plain generator |")
            print("| --- | ---: | ---: |")
            for name, ns in out.items():
                print(f"| {name} | {ns:.1f} | {ns / out['await gen.nextId()']:.3f}x |")
        finally:
            pooler.stop()


if __name__ == "__main__":
    main()
