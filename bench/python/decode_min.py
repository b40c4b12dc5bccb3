"""The Python binding's per-call cost, as the minimum of repeated runs (less sensitive to a
shared machine than medians): ``python bench/python/decode_min.py`` with the wheel installed."""

import timeit

import shardid

L = shardid.Layout.TWITTER
i = shardid.Generator(L, 5).next_id()
d = min(timeit.repeat("L.decode(i)", globals=globals(), number=200000, repeat=15)) / 200000 * 1e9
v = min(timeit.repeat("L.validate_id(i)", globals=globals(), number=200000, repeat=15)) / 200000 * 1e9
print(f"decode {d:.1f} ns  validate_id {v:.1f} ns")
