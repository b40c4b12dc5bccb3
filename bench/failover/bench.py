"""What surviving a failover costs in PostgreSQL: the functions of this build against those of
the build before it (issue 29), side by side on one throwaway server, rounds alternating.

- ``next_id()``: every call now checks, once per server session, that the counters are on this
  server's timeline (a session setting read per call); against the build before and
  Instagram's published function, under ``pgbench -c 4`` (``SELECT f()`` per transaction).
- ``take_segment()``: each take now reads the server's timeline and may clamp a segment's
  growth; ``pgbench -c 4`` of takes of 50 on one tag (they queue on its row).
- the dictionary: each batch of new strings now reads the timeline and raises
  ``synchronous_commit`` where it was off; the latency of a batch of 100 new strings from one
  client (psycopg, autocommit), p50 and p99.

The build before's SQL is ``bench/failover/before/*.generated.sql``, rendered by the core at
commit 994fb5a (the last before the change) for the schemas ``insta5b``, ``segb`` and ``dictb``.

    scripts/bench-postgres.sh is the other PostgreSQL benchmark; this one:
    SHARDID_PYTHON_VENV=target/python-venv tests/python/run.sh --install-only
    target/python-venv/bin/python bench/failover/bench.py [--rounds 6] [--seconds 5]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

import psycopg

import shardid
from shardid.sql import dictionary, postgres, segments

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests" / "postgres"))
sys.path.insert(0, str(HERE.parent / "postgres"))
from bench import INSTAGRAM  # noqa: E402
from cluster import Cluster  # noqa: E402

PGBENCH = {
    "next_id(), this build": "SELECT insta5.next_id();",
    "next_id(), the build before": "SELECT insta5b.next_id();",
    "Instagram's next_id()": "SELECT ig.next_id();",
    "take_segment(50), this build": "SELECT * FROM sega.take_segment('t', 50);",
    "take_segment(50), the build before": "SELECT * FROM segb.take_segment('t', 50);",
}


def pgbench(cluster: Cluster, sql: str, seconds: int) -> float:
    script = cluster.root / "bench.sql"
    script.write_text(sql + "\n")
    run = cluster.pgbench("-n", "-M", "prepared", "-c", "4", "-j", "2", "-T", str(seconds), "-f", str(script), "postgres")
    found = re.search(r"tps = ([\d.]+) \(without initial connection time\)", run.stdout)
    if run.returncode != 0 or found is None:
        raise SystemExit(f"pgbench failed for {sql}:\n{run.stdout}{run.stderr}")
    return float(found.group(1))


def batches(conn: psycopg.Connection, schema: str, round_: int, n: int = 60) -> list[float]:
    """Milliseconds per batch of 100 new strings, ``n`` batches."""
    times = []
    for b in range(n):
        values = [f"r{round_}-b{b}-s{i}" for i in range(100)]
        start = time.perf_counter()
        conn.execute(f"SELECT {schema}.dict_ids('t', %s)", (values,))
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    with Cluster() as cluster, psycopg.connect(cluster.dsn, autocommit=True) as conn:
        for sql in (
            postgres(shardid.Layout.INSTAGRAM, 5, "insta5"),
            segments("sega"),
            dictionary("dicta"),
            *((HERE / "before" / f"{name}.generated.sql").read_text() for name in ("next_id", "segments", "dictionary")),
            INSTAGRAM,
        ):
            with conn.transaction():
                conn.execute(sql.encode())  # type: ignore[call-overload]
        conn.execute("SELECT sega.create_tag('t'), segb.create_tag('t'), dicta.create_topic('t'), dictb.create_topic('t')")
        version = conn.execute("SHOW server_version").fetchone()[0]  # type: ignore[index]
        tps: dict[str, list[float]] = {name: [] for name in PGBENCH}
        latency: dict[str, list[float]] = {"dicta": [], "dictb": []}
        for r in range(args.rounds):
            order = list(PGBENCH.items())
            for name, sql in order if r % 2 == 0 else order[::-1]:
                tps[name].append(pgbench(cluster, sql, args.seconds))
            for schema in ("dicta", "dictb") if r % 2 == 0 else ("dictb", "dicta"):
                latency[schema] += batches(conn, schema, r)
    print(f"PostgreSQL {version}; {args.rounds} rounds of pgbench -c 4 -j 2 -T {args.seconds} -M prepared; "
          f"{len(latency['dicta'])} batches of 100 new strings per dictionary\n")  # fmt: skip
    print("| statement | per second (median) | per round against the build before (median, range) | against Instagram's (median, range) |")
    print("| --- | ---: | ---: | ---: |")
    for name in PGBENCH:
        before = name.replace("this build", "the build before")
        ratio = sorted(x / y for x, y in zip(tps[name], tps[before]))
        ig = sorted(x / y for x, y in zip(tps[name], tps["Instagram's next_id()"]))
        against_before = f"{statistics.median(ratio):.2f}x ({ratio[0]:.2f}-{ratio[-1]:.2f})" if before != name else ""
        against_ig = f"{statistics.median(ig):.2f}x ({ig[0]:.2f}-{ig[-1]:.2f})" if name.startswith("next_id") else ""
        print(f"| {name} | {statistics.median(tps[name]):,.0f} | {against_before} | {against_ig} |")
    print("\n| dictionary, batch of 100 new strings | p50, ms | p99, ms |")
    print("| --- | ---: | ---: |")
    for schema, label in (("dicta", "this build"), ("dictb", "the build before")):
        q = statistics.quantiles(latency[schema], n=100)
        print(f"| {label} | {statistics.median(latency[schema]):.2f} | {q[98]:.2f} |")


if __name__ == "__main__":
    main()
