"""What the dense-ID suites of every database check alike (tests/postgres, tests/mysql: their
conftests put tests/python on the path)."""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import Any

from together import race

#: A process of 4 threads taking `n` IDs each from `tag` in schema `seg_load`, in batches of
#: 100 appended to `out` (8 bytes an ID): `python -c WORKER <url> <tag> <out> <n> <wait_ms>`.
WORKER = """
import sys, threading
from array import array
from shardid.segments import DenseIds
url, tag, out, n, wait_ms = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
ids = DenseIds(url, tag, schema="seg_load", min_size=50, max_size=2000, target_ms=200, wait_ms=wait_ms)
lock = threading.Lock()
def run():
    for _ in range(n // 100):
        batch = [ids.next_id() for _ in range(50)] + ids.next_ids(50)
        with lock, open(out, "ab") as f:
            f.write(array("q", batch).tobytes())
threads = [threading.Thread(target=run) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
ids.close()
"""


def read_ids(path: Path, *, missing_ok: bool = False) -> list[int]:
    """The IDs a WORKER wrote to `path` (a torn last one left out)."""
    if missing_ok and not path.exists():
        return []
    data = path.read_bytes()
    values = array("q")
    values.frombytes(data[: len(data) - len(data) % 8])
    return list(values)


def burst_makes_one_fetch(ids: Any) -> None:
    """64 threads released at once on a new allocator of a new tag: IDs 1 to 64, one fetch."""
    got, errors = race(ids.next_id, 64)
    assert errors == []
    assert sorted(got) == list(range(1, 65))
    assert ids.fetches == 1
    ids.close()


def assert_dense_topic(first_row: Any, schema: str, topic: str) -> int:
    """Every string of the dictionary's `topic` has one ID, every ID one string, the IDs are
    exactly 0..n-1 and the topic's counter is n. Returns n. `first_row(sql, *params)`: the
    first row of a statement, through the suite's own driver (`%s` placeholders)."""
    count, distinct_ids, lowest, highest = first_row(
        f"SELECT count(*), count(DISTINCT d.id), min(d.id), max(d.id) FROM {schema}.shardid_strings d"
        f" JOIN {schema}.shardid_topics t USING (topic_id) WHERE t.topic = %s",
        topic,
    )
    (following,) = first_row(f"SELECT next FROM {schema}.shardid_topics WHERE topic = %s", topic)
    assert count == distinct_ids, "an ID given to two strings"
    if count:
        assert (lowest, highest) == (0, count - 1), f"holes: {count} strings numbered {lowest}..{highest}"
    assert following == count, f"the counter says {following}, the table holds {count}"
    return int(count)
