"""shardid's Python binding against its peers, in one run.

Run with `scripts/bench-python.sh` (builds and installs the wheel into target/python-venv).
Every figure is the median over many bursts; each burst starts right after a millisecond
boundary and stays below the Twitter layout's cap (4096 IDs per ms), so no generator waits.
Reports ns per ID and the ratios the issue sets targets for.
"""

from __future__ import annotations

import statistics
import time
import timeit
import uuid
from typing import Callable

import snowflake  # snowflake-id
import uuid_utils
from snowflake_id_toolkit import TwitterSnowflakeID, TwitterSnowflakeIDGenerator

import shardid

BURST = 1000
ROUNDS = 300
TWITTER_EPOCH = shardid.Layout.TWITTER.epoch_ms


def next_millisecond() -> None:
    start = time.time_ns() // 1_000_000
    while time.time_ns() // 1_000_000 == start:
        pass


def per_call(make: Callable[[], object], burst: int = BURST, rounds: int = ROUNDS) -> float:
    """Median ns per call of `make`, over `rounds` bursts of `burst` calls."""
    samples = []
    loop = range(burst)
    for _ in range(rounds):
        next_millisecond()
        start = time.perf_counter_ns()
        for _ in loop:
            make()
        samples.append((time.perf_counter_ns() - start) / burst)
    return statistics.median(samples)


def duplicates(make: Callable[[], object], n: int = 200_000) -> int:
    ids = [make() for _ in range(n)]
    return len(ids) - len(set(ids))


def main() -> None:
    gen = shardid.Generator(shardid.Layout.TWITTER, 1)
    sf = snowflake.SnowflakeGenerator(1, epoch=TWITTER_EPOCH)
    toolkit = TwitterSnowflakeIDGenerator(node_id=1, epoch=TWITTER_EPOCH)
    makers: dict[str, Callable[[], object]] = {
        "shardid Generator.next_id": gen.next_id,
        "uuid_utils.uuid7": uuid_utils.uuid7,
        "snowflake-id next(SnowflakeGenerator)": sf.__next__,
        "snowflake-id-toolkit generate_next_id": toolkit.generate_next_id,
        "uuid.uuid4 (stdlib)": uuid.uuid4,
    }
    results = {name: per_call(make) for name, make in makers.items()}

    batch = 4000  # below the cap: one batch per millisecond
    batch_ns = per_call(lambda: gen.next_ids(batch), burst=1, rounds=ROUNDS) / batch
    results[f"shardid Generator.next_ids({batch}), per ID"] = batch_ns

    # Decoding has no cap: time the statements themselves (no wrapper function around them),
    # median of repeated timeit runs.
    some_id = gen.next_id()
    env = {
        "layout": shardid.Layout.TWITTER,
        "i": some_id,
        "TwitterSnowflakeID": TwitterSnowflakeID,
        "Snowflake": snowflake.Snowflake,
        "E": TWITTER_EPOCH,
    }
    decoders = {
        "shardid Layout.decode -> 3 fields": "p = layout.decode(i); p.timestamp_ms; p.shard; p.sequence",
        "snowflake-id-toolkit TwitterSnowflakeID -> 3 fields": "x = TwitterSnowflakeID(i); x.timestamp_ms(E); x.node_id(); x.sequence()",
        "snowflake-id Snowflake.parse -> 3 fields": "s = Snowflake.parse(i, E); s.milliseconds; s.instance; s.seq",
    }
    for name, stmt in decoders.items():
        timer = timeit.Timer(stmt, globals=env)
        runs = timer.repeat(repeat=30, number=20_000)
        results[name] = statistics.median(runs) / 20_000 * 1e9

    width = max(map(len, results))
    print(f"{'benchmark':<{width}}  ns per ID (median of {ROUNDS} bursts)")
    for name, ns in results.items():
        print(f"{name:<{width}}  {ns:10.1f}")

    print("\nDuplicates in 200,000 IDs made flat out (above the cap):")
    for name in ("shardid Generator.next_id", "snowflake-id next(SnowflakeGenerator)",
                 "snowflake-id-toolkit generate_next_id"):
        print(f"  {name}: {duplicates(makers[name])}")

    r = results
    print("\nRatios (targets in parentheses):")
    print(f"  next_id / uuid_utils.uuid7           = {r['shardid Generator.next_id'] / r['uuid_utils.uuid7']:.2f} (at most 0.5)")
    print(f"  snowflake-id / next_id               = {r['snowflake-id next(SnowflakeGenerator)'] / r['shardid Generator.next_id']:.1f}x (at least 5x)")
    print(f"  next_ids({batch}) per ID              = {batch_ns:.1f} ns (at most 20 ns)")
    print(f"  toolkit decode / shardid decode      = {r['snowflake-id-toolkit TwitterSnowflakeID -> 3 fields'] / r['shardid Layout.decode -> 3 fields']:.1f}x (at least 3x)")


if __name__ == "__main__":
    main()
