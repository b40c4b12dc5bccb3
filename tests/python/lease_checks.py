"""What the lease suites of every database check alike (their conftests put tests/python on the
path)."""

from __future__ import annotations

from collections.abc import Callable
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
