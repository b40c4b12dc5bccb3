"""Public IDs in Python: shardid.PublicIds against the same binding's Layout.decode (the
target: encode and decode at most 2x it) and against sqids (PyPI ``sqids``, the short-ID
library users compare with; it encodes without hiding: no key), on the same 1,000
consecutive Instagram-layout IDs of one millisecond, in one run.

    scripts/bench-python.sh public_ids

Each statement is timed once per round, in turn (21 rounds of 20,000 calls, sqids 1,000,
cycling over the 1,000 IDs or their texts): medians of the rounds and of their ratios, in ns
per call.
"""

from __future__ import annotations

import statistics
import timeit

from sqids import Sqids

import shardid

KEY = b"benchmark key 16"
ROUNDS, NUMBER = 21, 20_000
BASE = "shardid Layout.decode -> 3 fields"


def main() -> None:
    from itertools import cycle

    layout = shardid.Layout.INSTAGRAM
    first = layout.compose(1_700_000_000_000, 5, 0)
    ids = list(range(first, first + 1000))
    sqids = Sqids()
    # (statement, the values it cycles over): each timed once per round, in turn, so that a
    # shared machine's drift falls on all alike; medians of the rounds and of their ratios.
    cases: dict[str, tuple[str, dict[str, object]]] = {
        BASE: ("p = layout.decode(next(it)); p.timestamp_ms; p.shard; p.sequence", {"layout": layout, "values": ids}),
    }
    for encoding in ("base32", "base58"):
        public = shardid.PublicIds(KEY, "note", encoding)
        texts = [public.encode(i) for i in ids]
        cases[f"shardid PublicIds.encode ({encoding})"] = ("public.encode(next(it))", {"public": public, "values": ids})
        cases[f"shardid PublicIds.decode ({encoding})"] = ("public.decode(next(it))", {"public": public, "values": texts})
    texts = [sqids.encode([i]) for i in ids]
    assert [sqids.decode(t)[0] for t in texts] == ids
    cases["sqids encode([id])"] = ("sqids.encode([next(it)])", {"sqids": sqids, "values": ids})
    cases["sqids decode(text)[0]"] = ("sqids.decode(next(it))[0]", {"sqids": sqids, "values": texts})
    cases["loop floor: next(it)"] = ("next(it)", {"values": ids})
    slow = {"sqids encode([id])", "sqids decode(text)[0]"}

    timers = {}
    for name, (stmt, env) in cases.items():
        env = {**env, "cycle": cycle}
        timers[name] = timeit.Timer(stmt, setup="it = cycle(values)", globals=env)
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(ROUNDS):
        for name, timer in timers.items():
            number = NUMBER // 20 if name in slow else NUMBER
            samples[name].append(timer.timeit(number=number) / number * 1e9)

    def ratio(name: str, base: str = BASE) -> float:
        return statistics.median(v / b for v, b in zip(samples[name], samples[base]))

    width = max(map(len, cases))
    print(f"{'benchmark':<{width}}  ns per call (median of {ROUNDS} rounds)   / Layout.decode (median of the rounds' ratios)")
    for name in cases:
        print(f"{name:<{width}}  {statistics.median(samples[name]):10.1f}   {ratio(name):8.2f}")
    print("\nRatios (targets in parentheses):")
    for encoding in ("base32", "base58"):
        for op in ("encode", "decode"):
            print(f"  PublicIds.{op} ({encoding}) / Layout.decode = {ratio(f'shardid PublicIds.{op} ({encoding})'):.2f} (at most 2)")
    print(f"  sqids encode / PublicIds.encode (base32)   = {ratio('sqids encode([id])', 'shardid PublicIds.encode (base32)'):.1f}x (above 1)")
    print(f"  sqids decode / PublicIds.decode (base32)   = {ratio('sqids decode(text)[0]', 'shardid PublicIds.decode (base32)'):.1f}x (above 1)")


if __name__ == "__main__":
    main()
