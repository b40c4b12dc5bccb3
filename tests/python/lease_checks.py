"""What the lease suites of every database check alike (their conftests put tests/python on the
path)."""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shardid import Layout
from together import race


def eight_sessions_at_once_each_get_a_shard(lease: Callable[..., Any], url: str, table: str) -> None:
    """Eight sessions lease shards 0..8 of `table` (which does not exist yet) at once through the
    database `url` names: each gets one, and they are the eight (every concurrent CREATE TABLE
    IF NOT EXISTS but one may fail in the database; the claim must not)."""
    held, errors = race(lambda: lease(Layout.TWITTER, url, range(0, 8), table=table), 8)
    try:
        assert not errors, errors[0]
        assert sorted(g.shard for g in held) == list(range(8))
    finally:
        for g in held:
            g.close()


def read_ids(path: Path) -> array[int]:
    """The IDs a holder process wrote to `path` (8 bytes each, little-endian; a write cut short
    by a kill is left out)."""
    ids = array("Q")
    data = path.read_bytes() if path.exists() else b""
    ids.frombytes(data[: len(data) // 8 * 8])
    return ids


def wait_for_ids(path: Path, n: int) -> None:
    """Until the holder writing `path` has written `n` IDs (at most 30 s)."""
    deadline = time.monotonic() + 30
    while (not path.exists() or path.stat().st_size < 8 * n) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert path.exists() and path.stat().st_size >= 8 * n


def duplicates(ids: list[array[int]] | list[list[int]]) -> int:
    """How many IDs of all the lists together were handed out more than once."""
    every = [i for some in ids for i in some]
    return len(every) - len(set(every))
