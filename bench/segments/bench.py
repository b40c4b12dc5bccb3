"""Dense IDs from segments against what a Python service would use instead, in one run on one
throwaway PostgreSQL server:

- ``DenseIds.next_id()`` and ``next_ids(1000)`` (shardid.segments), and, for scale, the same
  process's time-sortable ``Generator.next_id()``;
- ``SELECT nextval('s')`` per ID (a round trip each), on a plain sequence and on one with
  ``CACHE 1000`` (the cache is the server session's: still a round trip per ID);
- a pooled sequence (``INCREMENT BY 1000``): one ``nextval`` per 1,000 IDs, the block handed out
  by the client (Hibernate's pooled optimizer).

Then the tail: ``next_id()`` with 50 ms added to every round trip by a TCP proxy in front of the
server, timed per call (percentiles of 2,000,000 calls), to show the database is never on the
hot path.

    python bench/segments/bench.py [--ids 2000000] [--rounds 3]

It also runs bench/segments/node.mjs on the same server: Node's ``nextId()`` against its
time-sortable ``Generator.nextId()``.

What is measured is the steady state of a tag a service has used for a while: each tag is first
grown to the segments its client asks for (``grow``). Since the failover work a tag's segment
grows at most twice per MiB of WAL (core/src/sql/segments.rs), so a new tag on a database that
writes nothing else hands out 2,000 IDs a take; the bench writes a MiB of WAL between takes (a
logical decoding message nothing reads), as the other writes of a busy database would. The
before/after figures are in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import shardid
from shardid.segments import DenseIds

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "postgres"))
from proxy import DelayProxy  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from growth import grow, per_call_ns, segments_server  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ids", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with segments_server() as (cluster, conn):
        conn.execute("SELECT seg.create_tag('bench'), seg.create_tag('tail'), seg.create_tag('node')")
        # Each tag grown to the largest segment its client asks for: 1,000,000 for Python's two.
        # Node's synchronous loop of a million IDs cannot let a fetch land: its tag remembers
        # segments of 4,000,000, so every round fits in memory.
        takes = {tag: grow(conn, tag, size) for tag, size in (("bench", 1_000_000), ("tail", 1_000_000), ("node", 4_000_000))}
        print("Tags grown first (takes, a MiB of WAL between two): " + ", ".join(f"{t} {n}" for t, n in takes.items()))
        conn.execute("CREATE SEQUENCE plain_seq; CREATE SEQUENCE cached_seq CACHE 1000;")
        conn.execute("CREATE SEQUENCE pooled_seq INCREMENT BY 1000")

        ids = DenseIds(cluster.dsn, "bench", min_size=10_000, max_size=1_000_000, target_ms=1_000)
        # Time-sortable IDs on a layout whose cap (4 M a millisecond) a loop never reaches: the
        # per-call cost, not the layout's cap.
        uncapped = shardid.Layout(epoch_ms=0, time_bits=41, shard_bits=0, sequence_bits=22)
        generator = shardid.Generator(uncapped, 0)
        n = args.ids
        rows: dict[str, list[float]] = {}

        def pooled(count: int) -> None:
            block, left = 0, 0
            for _ in range(count):
                if left == 0:
                    (block,) = conn.execute("SELECT nextval('pooled_seq')").fetchone()
                    left = 1000
                _ = block + (1000 - left)
                left -= 1

        measures = {
            "shardid DenseIds.next_id()": lambda c: [ids.next_id() for _ in range(c)],
            "shardid DenseIds.next_ids(1000), per ID": lambda c: [ids.next_ids(1000) for _ in range(c // 1000)],
            "shardid Generator.next_id() (time-sortable)": lambda c: [generator.next_id() for _ in range(c)],
            "nextval() per ID": lambda c: [conn.execute("SELECT nextval('plain_seq')").fetchone() for _ in range(c)],
            "nextval() per ID, CACHE 1000": lambda c: [conn.execute("SELECT nextval('cached_seq')").fetchone() for _ in range(c)],
            "pooled sequence (INCREMENT BY 1000)": pooled,
        }
        for _ in range(args.rounds):
            for name, make in measures.items():
                count = n if "nextval() per ID" not in name else 20_000
                rows.setdefault(name, []).append(per_call_ns(make, count))
        print(f"{'benchmark':48} {'ns per ID (median)':>18} {'IDs/s':>14}")
        median = {name: statistics.median(v) for name, v in rows.items()}
        for name, ns in median.items():
            print(f"{name:48} {ns:18.1f} {1e9 / ns:14,.0f}")
        dense = median["shardid DenseIds.next_id()"]
        print("\nRatios (targets in parentheses):")
        print(f"  DenseIds.next_id / Generator.next_id     = {dense / median['shardid Generator.next_id() (time-sortable)']:.2f} (at most 1)")
        print(f"  next_ids(1000) per ID / next_id           = {median['shardid DenseIds.next_ids(1000), per ID'] / dense:.2f} (below 1)")
        print(f"  IDs/s: DenseIds / nextval per ID          = {median['nextval() per ID'] / dense:,.0f}x (at least 100x)")
        print(f"  IDs/s: DenseIds / nextval, CACHE 1000     = {median['nextval() per ID, CACHE 1000'] / dense:,.0f}x")
        print(f"  IDs/s: DenseIds / pooled sequence         = {median['pooled sequence (INCREMENT BY 1000)'] / dense:.2f}x")
        print(f"  segments fetched: {ids.fetches}")
        ids.close()

        # Node's client, on the same server (bench/segments/node.mjs).
        import subprocess

        node = Path(__file__).with_name("node.mjs")
        url = f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres"
        done = subprocess.run(["node", str(node), url], capture_output=True, text=True)
        print(done.stdout.rstrip() if done.returncode == 0 else f"\nNode: failed\n{done.stderr}")

        # The tail, with 50 ms on every round trip.
        proxy = DelayProxy(cluster.port, 0.050)
        slow = DenseIds(
            f"host=127.0.0.1 port={proxy.port} user=postgres dbname=postgres",
            "tail",
            min_size=100_000,
            max_size=1_000_000,
            target_ms=1_000,
        )
        slow.next_id()
        calls = []
        clock = time.perf_counter_ns
        for _ in range(n):
            t0 = clock()
            slow.next_id()
            calls.append(clock() - t0)
        calls.sort()
        pct = lambda p: calls[min(len(calls) - 1, int(len(calls) * p))] / 1000  # noqa: E731
        print(
            f"\nWith 50 ms added to every round trip ({n:,} calls, {slow.fetches} segments fetched): "
            f"p50 {pct(0.5):.2f} us, p99 {pct(0.99):.2f} us, p99.9 {pct(0.999):.2f} us, max {calls[-1] / 1000:.0f} us"
        )
        slow.close()


if __name__ == "__main__":
    main()
