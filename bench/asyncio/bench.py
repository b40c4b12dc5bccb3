"""The asyncio clients against the synchronous ones, in the same run on one throwaway server.

    python bench/asyncio/bench.py [--rounds 3] [--calls 300]

1. cached lookups per second: ``Dictionary.id`` (sync), ``await AsyncDictionary.id``, and
   ``AsyncDictionary.cache.id`` (no ``await``), over 10,000 cached strings;
2. a batch of 100 new strings (one round trip, the topic's counter locked to the commit) and a
   batch of 100 lookups with nothing cached: p50 / p99 of ``Dictionary.ids`` against ``await
   AsyncDictionary.ids``, alternating call by call so both see the same server and machine;
   the ratio async / sync is taken per round;
3. IDs per second of ``await AsyncPostgresLease.next_id()`` against the sync lease's
   ``next_id()``, and of ``await AsyncDenseIds.next_id()`` against ``DenseIds.next_id()``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import psycopg

from shardid import Layout
from shardid.dictionary import AsyncDictionary, Dictionary
from shardid.postgres import lease, lease_async
from shardid.segments import AsyncDenseIds, DenseIds
from shardid.sql import dictionary, segments

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "postgres"))
from cluster import Cluster  # noqa: E402


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] * 1000


async def round_(dsn: str, r: int, calls: int) -> dict[str, float]:
    out: dict[str, float] = {}
    sync = Dictionary(dsn, f"t{r}")
    sync.create()
    adict = AsyncDictionary(dsn, f"t{r}")
    await adict.create()
    words = [f"https://example.com/{r}/{i}" for i in range(10_000)]
    sync.ids(words)
    await adict.ids(words)
    n = 300_000
    t = time.perf_counter()
    for i in range(n):
        sync.id(words[i % 10_000])
    out["sync cached /s"] = n / (time.perf_counter() - t)
    t = time.perf_counter()
    for i in range(n):
        await adict.id(words[i % 10_000])
    out["async cached /s"] = n / (time.perf_counter() - t)
    cache = adict.cache
    t = time.perf_counter()
    for i in range(n):
        cache.id(words[i % 10_000])
    out["async cache.id /s"] = n / (time.perf_counter() - t)
    # Batches of 100 new strings, alternating.
    ts: list[float] = []
    ta: list[float] = []
    for c in range(calls):
        batch = [f"new/{r}/{c}/{i}" for i in range(100)]
        t = time.perf_counter()
        sync.ids([f"s/{b}" for b in batch])
        ts.append(time.perf_counter() - t)
        t = time.perf_counter()
        await adict.ids([f"a/{b}" for b in batch])
        ta.append(time.perf_counter() - t)
    out["new100 sync p50"], out["new100 sync p99"] = pct(ts, 0.5), pct(ts, 0.99)
    out["new100 async p50"], out["new100 async p99"] = pct(ta, 0.5), pct(ta, 0.99)
    # Batches of 100 lookups, nothing cached (cache_size 0).
    cold_s = Dictionary(dsn, f"t{r}", cache_size=0)
    cold_a = AsyncDictionary(dsn, f"t{r}", cache_size=0)
    ls: list[float] = []
    la: list[float] = []
    for c in range(calls):
        batch = words[(c * 100) % 9_900 :][:100]
        t = time.perf_counter()
        cold_s.lookup(batch)
        ls.append(time.perf_counter() - t)
        t = time.perf_counter()
        await cold_a.lookup(batch)
        la.append(time.perf_counter() - t)
    out["lookup100 sync p50"], out["lookup100 async p50"] = pct(ls, 0.5), pct(la, 0.5)
    out["lookup100 sync p99"], out["lookup100 async p99"] = pct(ls, 0.99), pct(la, 0.99)
    for d in (sync, cold_s):
        d.close()
    for d in (adict, cold_a):
        await d.close()
    # Leases and dense IDs: IDs per second, one caller.
    n = 200_000
    g = lease(Layout.TWITTER, dsn, range(0, 2), table="bench_leases")
    t = time.perf_counter()
    for _ in range(n):
        g.next_id()
    out["lease sync /s"] = n / (time.perf_counter() - t)
    g.close()
    ag = await lease_async(Layout.TWITTER, dsn, range(0, 2), table="bench_leases")
    t = time.perf_counter()
    for _ in range(n):
        await ag.next_id()
    out["lease async /s"] = n / (time.perf_counter() - t)
    await ag.close()
    d = DenseIds(dsn, "orders", schema="seg")
    t = time.perf_counter()
    for _ in range(n):
        d.next_id()
    out["dense sync /s"] = n / (time.perf_counter() - t)
    d.close()
    ad = AsyncDenseIds(dsn, "orders", schema="seg")
    t = time.perf_counter()
    for _ in range(n):
        await ad.next_id()
    out["dense async /s"] = n / (time.perf_counter() - t)
    await ad.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=300)
    args = ap.parse_args()
    with Cluster(fsync="on", synchronous_commit="on") as cluster:
        with psycopg.connect(cluster.dsn, autocommit=True) as conn:
            conn.execute(dictionary("dict").encode())
            conn.execute(segments("seg").encode())
            conn.execute("SELECT seg.create_tag('orders')")
        rounds = [asyncio.run(round_(cluster.dsn, r, args.calls)) for r in range(args.rounds)]
    for key in rounds[0]:
        values = [r[key] for r in rounds]
        unit = "ms" if "p50" in key or "p99" in key else ""
        print(f"{key:24} median {statistics.median(values):>14,.2f} {unit}  ({', '.join(f'{v:,.2f}' for v in values)})")
    for what in ("new100", "lookup100"):
        for p in ("p50", "p99"):
            ratios = [r[f"{what} async {p}"] / r[f"{what} sync {p}"] for r in rounds]
            print(f"{what} {p} async/sync: median {statistics.median(ratios):.2f} ({', '.join(f'{x:.2f}' for x in ratios)})")
    for what in ("lease", "dense"):
        ratios = [r[f"{what} async /s"] / r[f"{what} sync /s"] for r in rounds]
        print(f"{what} async/sync IDs per second: median {statistics.median(ratios):.2f} ({', '.join(f'{x:.2f}' for x in ratios)})")


if __name__ == "__main__":
    main()
