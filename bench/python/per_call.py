"""The Python per-call paths of the database-backed systems, in nanoseconds: `DenseIds.next_id`,
`Serials.next_serial` and `Dictionary.id` (a cache hit), on a SQLite file with segments of
1,000,000 fetched once, so each call is the binding and the core's memory path, not the
database. For comparing two builds of the binding (a change against its base), not peers:

    python3 -m venv /tmp/a && /tmp/a/bin/pip install <wheel of the base>
    python3 -m venv /tmp/b && /tmp/b/bin/pip install <wheel of the change>
    for i in 1 2 3 4 5 6 7 8; do /tmp/a/bin/python bench/python/per_call.py; /tmp/b/bin/python bench/python/per_call.py; done

Each process prints the best of 5 timings of 100,000 calls per path; compare the medians over
the processes (this machine is shared: whole processes run slow at times).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable

from shardid.dictionary import Dictionary
from shardid.segments import DenseIds, Serials, create_serial, create_tag

N = 100_000  # within one segment: no fetch while timing
FORMAT = "S-{yyyy}{MM}{dd}-{seq:9}"


def best_of(runs: int, loop: Callable[[], None]) -> float:
    """The fastest of `runs` timings of `loop`, in ns per call."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        loop()
        times.append(time.perf_counter() - start)
    return min(times) / N * 1e9


def main() -> None:
    url = f"sqlite:///{tempfile.mkdtemp()}/per_call.db"
    create_tag(url, "t")
    create_serial(url, "s", FORMAT, zone="UTC")
    ids = DenseIds(url, "t", min_size=1_000_000, max_size=1_000_000)
    serials = Serials(url, "s", FORMAT, zone="UTC", min_size=1_000_000, max_size=1_000_000)
    words = Dictionary(url, "words")
    words.create()
    known = [f"w{i}" for i in range(1000)]
    words.ids(known)

    def dense() -> None:
        next_id = ids.next_id
        for _ in range(N):
            next_id()

    def serial() -> None:
        next_serial = serials.next_serial
        for _ in range(N):
            next_serial()

    def dictionary() -> None:
        id_of = words.id
        for i in range(N):
            id_of(known[i % 1000])

    paths = {"dense": dense, "serial": serial, "dictionary": dictionary}
    for loop in paths.values():
        loop()  # the segments fetched, the code warm
    print(" ".join(f"{name} {best_of(5, loop):.1f}" for name, loop in paths.items()))
    ids.close()
    serials.close()
    words.close()


if __name__ == "__main__":
    main()
