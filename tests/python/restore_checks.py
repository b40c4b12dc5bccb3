"""What the restore tests of every database check alike (tests/postgres, tests/mysql: their
conftests put tests/python on the path)."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from typing import Any

from shardid import Layout, NoFreeShardError, ShardIdError


def probe_lease(lease: Callable[..., Any], url: str, table: str, leased: Collection[int]) -> str:
    """The restored database's first holder of the old holder's shard (Sonyflake's shard 0 in
    `table`), with a clock behind: it asks for an ID of the old holder's last time unit
    (``next_id_at``), as a holder on a host whose clock is up to 2 s behind would draw one.
    (`lease`: the database's, `shardid.postgres.lease` or `shardid.mysql.lease`.) The
    restored row's ceiling is the dump's (or the restore point's): unless the claim saw
    that the table was restored (its timeline, system or origin) and raised the ceiling above
    the database's clock, that ID is one the old holder handed out (`leased`). Returns what
    happened."""
    last_ms = Layout.SONYFLAKE.decode(max(leased)).timestamp_ms
    deadline = time.monotonic() + 30
    while True:
        try:
            held = lease(Layout.SONYFLAKE, url, range(0, 1), table=table, ttl_ms=1_000)
            break
        except NoFreeShardError:  # the restored row's holder, until its TTL ends
            assert time.monotonic() < deadline
            time.sleep(0.1)
    with held:
        try:
            id_ = held.next_id_at(last_ms)
        except ShardIdError as e:  # behind the ceiling: refused, as it should be
            return f"refused ({e.code})"
    assert id_ not in set(leased), f"leased ID {id_} handed out again: the claim kept the restored ceiling"
    return f"ID {id_}, not one of the old holder's"
