"""What the benches of dense IDs and of serials (bench/segments, bench/serials) share: a
throwaway server with the segments' DDL, a tag grown to the segments a bench's client asks for
(as a service's tag is after a while), and the time of a call.

Since the failover work a tag's segment grows at most twice per MiB of WAL
(core/src/sql/segments.rs), so a new tag on a database that writes nothing else hands out 2,000
IDs a take. The benches of dense IDs and of serials (bench/segments, bench/serials) both measure
the steady state, so both grow their tags first with this.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

from shardid.sql import segments

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "postgres"))
from cluster import Cluster  # noqa: E402

# The most take_segment grows a tag's segment per MiB of WAL (shardid_want): twice.
GROWTH = 2


def grow(conn: psycopg.Connection, tag: str, size: int, take: tuple[str, tuple[Any, ...]] | None = None) -> int:
    """Makes `tag` remember segments of `size`, within the growth rule: takes `size`, gives the
    segment back (no hole), and while the take answered fewer, writes a MiB of WAL and takes
    again. `take` is the statement and its arguments (a serial period's take, whose `tag` is
    then `name@period`); by default `take_segment(tag, size)`. Returns how many takes it took."""
    take = take or ("SELECT * FROM seg.take_segment(%s, %s)", (tag, size))
    takes = 0
    last = 0
    while True:
        first, count, _ = conn.execute(*take).fetchone()
        assert conn.execute("SELECT seg.give_back(%s, %s, %s)", (tag, first, first + count)).fetchone() == (True,)
        takes += 1
        if count >= size:
            return takes
        if last and count > GROWTH * last:
            raise AssertionError(f"tag {tag}: a segment grew from {last} to {count}, past the growth rule")
        if count <= last:
            raise AssertionError(f"tag {tag}: no growth past {count} after a MiB of WAL")
        last = count
        # Transactional, so its commit flushes it: take_segment reads pg_current_wal_lsn(),
        # the WAL written out, which a message left in the WAL buffers has not reached.
        conn.execute("SELECT pg_logical_emit_message(true, 'shardid-bench', repeat('x', 1048576))")


@contextmanager
def segments_server() -> Iterator[tuple[Cluster, psycopg.Connection]]:
    """A throwaway PostgreSQL server (removed at the end) with the segments' DDL in schema
    ``seg``, and an autocommit connection to it."""
    with Cluster() as cluster, psycopg.connect(cluster.dsn, autocommit=True) as conn:
        with conn.transaction():
            conn.execute(segments("seg").encode())
        yield cluster, conn


def per_call_ns(make: Callable[[int], Any], n: int) -> float:
    """The time of one call, in ns: ``make(n)`` makes ``n`` of them."""
    start = time.perf_counter_ns()
    make(n)
    return (time.perf_counter_ns() - start) / n
