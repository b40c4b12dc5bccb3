"""Shard leases on PostgreSQL, for processes on different hosts (an optional extra: needs
``psycopg``, ``pip install shardid[postgres]``).

Lock files (:func:`shardid.lease`) keep the processes of one host apart; across hosts, the
database they already share does it::

    from shardid import Layout
    from shardid.postgres import lease

    generator = lease(Layout.INSTAGRAM, "postgresql://app@db/app", range(0, 64))
    generator.next_id()

Each lease holds a PostgreSQL session advisory lock for its shard on a connection of its own,
so two processes never hold one shard, and a process that dies (or loses its connection)
frees it. A table (``shardid_leases`` by default) records each shard's *ceiling*, written
before any ID above it is handed out, so the next holder starts above every ID the last one
issued — after a crash, or on a host whose clock is behind. In a forked child, the lease takes
a new shard on a new connection of its own.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from shardid._errors import InvalidArgumentError, LeaseLostError, NoFreeShardError
from shardid._shardid import _LOST_CREATE_RACE, Layout, _CeilingGenerator, _postgres_lease_sql

__all__ = ["PostgresLease", "lease"]

# Connections a forked child inherited: never closed in the child (closing would end the
# parent's session), never used again.
_inherited: list[Any] = []


class PostgresLease:
    """A generator on a shard leased through PostgreSQL; see :func:`lease`."""

    def __init__(
        self, layout: Layout, conninfo: str, shards: range, *, table: str = "shardid_leases", **options: int
    ) -> None:
        if shards.step != 1 or shards.start < 0 or shards.stop > 2**31:
            reason = "must be a range with step 1 within 0..2**31"
            raise InvalidArgumentError(f"shards {reason}", argument="shards", reason=reason)
        # The statements, the lock's key and the layout's signature (the protocol is the
        # core's: shardid::sql::PostgresLease); raises InvalidArgumentError for a bad table.
        self._sql = _postgres_lease_sql(layout, table)
        self.layout = layout
        self.conninfo = conninfo
        self.shards = shards
        self.table = table
        self._options = options
        self._signature = self._sql["signature"]
        self._key = self._sql["key"]
        self._take()

    def _take(self) -> None:
        import psycopg

        conn = psycopg.connect(self.conninfo, autocommit=True)
        try:
            try:
                conn.execute(self._sql["create_table"])
            except psycopg.Error as e:
                if e.sqlstate not in _LOST_CREATE_RACE:  # created by another session at once
                    raise
            for shard in self.shards:
                row = conn.execute(self._sql["try_lock"], (self._key, shard)).fetchone()
                if row and row[0]:
                    break
            else:
                start, stop = self.shards.start, self.shards.stop
                raise NoFreeShardError(
                    f"no free shard: every shard in {start}..{stop} is leased by a live process (table {self.table})",
                    first=start,
                    end=stop,
                    held_in=f"table {self.table}",
                    shards=self.shards,
                )
            conn.execute(self._sql["insert"], (self._signature, shard))
            holder = f"{socket.gethostname()} pid {os.getpid()}"
            row = conn.execute(self._sql["claim"], (holder, self._signature, shard)).fetchone()
            ceiling = row[0] if row else 0
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self._pid = os.getpid()
        self._shard = shard
        self._generator = _CeilingGenerator(self.layout, shard, ceiling or None, self._store, **self._options)

    def _store(self, units: int) -> None:
        # Only while this session still holds the shard's lock: a lost connection (and lock)
        # stops the generator at its ceiling instead of extending it under a new holder.
        import psycopg

        try:
            cur = self._conn.execute(self._sql["record"], (units, self._signature, self._shard, self._key, self._shard))
        except psycopg.OperationalError as e:  # the session, and with it the shard's lock, is gone
            raise LeaseLostError(str(e), shard=self._shard) from e
        if cur.rowcount != 1:
            raise LeaseLostError(
                f"the lease on shard {self._shard} is no longer held: take a new lease", shard=self._shard
            )

    def _current(self) -> _CeilingGenerator:
        if os.getpid() != self._pid:
            _inherited.append(self._conn)
            self._take()
        return self._generator

    @property
    def shard(self) -> int:
        """The shard this process holds."""
        return self._current().shard

    def next_id(self) -> int:
        return self._current().next_id()

    def next_id_at(self, now: Any) -> int:
        return self._current().next_id_at(now)

    def next_ids(self, n: int) -> list[int]:
        return self._current().next_ids(n)

    def close(self) -> None:
        """Releases the shard (closes the lease's connection)."""
        if os.getpid() == self._pid:
            self._conn.close()


def lease(layout: Layout, conninfo: str, shards: range, **options: Any) -> PostgresLease:
    """Leases the first free shard of ``shards`` through the PostgreSQL server at ``conninfo``
    (a libpq connection string or URL); ``table=`` names the ceilings table, and
    ``backwards_tolerance_ms`` / ``max_borrow_units`` go to the generator."""
    return PostgresLease(layout, conninfo, shards, **options)
