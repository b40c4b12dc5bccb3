"""Business serial numbers against the same binding's dense IDs, in one run on one throwaway
PostgreSQL server: per call, once the segments are in memory (the tags remember segments of
4,000,000, grown there first within the growth rule, so no round of a million calls waits for
the database).

- Python: ``Serials.next_serial()`` (formatting included, a ``str`` out) against
  ``DenseIds.next_id()``; ``SerialFormat.parse()`` against the same.
- Node (bench/serials/node.mjs): ``nextSerial()`` against the dense ``nextId()``; ``parse``.
- Rust (core/examples/serials.rs ``bench``): ``Serials::next_serial`` against
  ``DenseIds::next_id``; ``SerialFormat::parse``. The allocators alone, without the clients,
  are the criterion bench ``cargo bench -p shardid-bench --bench serials``.

    python bench/serials/bench.py [--calls 1000000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psycopg

from shardid import SerialFormat
from shardid.segments import DenseIds, Serials, create_serial

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "segments"))
from growth import grow, per_call_ns, segments_server  # noqa: E402

FORMAT = "ORD-{yyyy}{MM}{dd}-{seq:12}"
ZONE = "Asia/Shanghai"
BIG = 4_000_000


def remember_big_segments(conn: psycopg.Connection, tag: str, serial: bool) -> None:
    """Makes the tag (today's period, for a serial tag) remember segments of BIG
    (bench/segments/growth.py)."""
    if serial:
        period = SerialFormat(FORMAT, ZONE).period_at(int(time.time() * 1000))
        grow(conn, f"{tag}@{period}", BIG, ("SELECT * FROM seg.take_serial_segment(%s, %s, %s)", (tag, period, BIG)))
    else:
        conn.execute("SELECT seg.create_tag(%s)", (tag,))
        grow(conn, tag, BIG)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with segments_server() as (cluster, conn):
        for lang in ("py", "node", "rust"):
            remember_big_segments(conn, f"dense_{lang}", serial=False)
            create_serial(conn, f"ser_{lang}", FORMAT.replace("ORD", lang.upper()), zone=ZONE)
            remember_big_segments(conn, f"ser_{lang}", serial=True)

        dense = DenseIds(cluster.dsn, "dense_py", min_size=BIG, max_size=BIG)
        serials = Serials(cluster.dsn, "ser_py", FORMAT.replace("ORD", "PY"), zone=ZONE, min_size=BIG, max_size=BIG)
        fmt = SerialFormat(FORMAT.replace("ORD", "PY"), ZONE)
        sample = serials.next_serial()
        n = args.calls
        # Plain loops, the results dropped: a list of a million objects would time the
        # allocator and the garbage collector too.
        def ids(c: int) -> None:
            for _ in range(c):
                dense.next_id()

        def serial(c: int) -> None:
            for _ in range(c):
                serials.next_serial()

        def parse(c: int) -> None:
            for _ in range(c):
                fmt.parse(sample)

        measures = {
            "Python DenseIds.next_id()": ids,
            "Python Serials.next_serial()": serial,
            "Python SerialFormat.parse()": parse,
        }
        rows: dict[str, list[float]] = {}
        for _ in range(args.rounds):
            for name, make in measures.items():
                rows.setdefault(name, []).append(per_call_ns(make, n))
        serials.close()
        dense.close()
        median = {name: statistics.median(v) for name, v in rows.items()}
        print(f"{'benchmark':40} {'ns per call (median of ' + str(args.rounds) + ')':>28}")
        for name, ns in median.items():
            print(f"{name:40} {ns:28.1f}")
        base = median["Python DenseIds.next_id()"]
        print(f"  next_serial / next_id = {median['Python Serials.next_serial()'] / base:.2f} (at most 3)")
        print(f"  parse / next_id       = {median['Python SerialFormat.parse()'] / base:.2f} (at most 3)")

        url = f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres"
        done = subprocess.run(["node", str(Path(__file__).with_name("node.mjs")), url, FORMAT.replace("ORD", "NODE"), ZONE], capture_output=True, text=True)
        print(done.stdout.rstrip() if done.returncode == 0 else f"\nNode: failed\n{done.stderr}")

        example = os.environ.get("SHARDID_SERIALS_EXAMPLE") or str(ROOT / "target" / "release" / "examples" / "serials")
        if not os.environ.get("SHARDID_SERIALS_EXAMPLE"):
            subprocess.run(["cargo", "build", "-q", "--release", "-p", "shardid", "--features", "serial,postgres", "--example", "serials"], cwd=ROOT, check=True)
        done = subprocess.run([example, "bench", cluster.dsn, "seg", "rust", FORMAT.replace("ORD", "RUST"), ZONE, str(n)], capture_output=True, text=True)
        print(done.stdout.rstrip() if done.returncode == 0 else f"\nRust: failed\n{done.stderr}")


if __name__ == "__main__":
    main()
