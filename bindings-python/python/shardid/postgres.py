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

from shardid._errors import InvalidArgumentError, LeaseLostError
from shardid._shardid import Layout, _CeilingGenerator, _PostgresLeaseProtocol

__all__ = ["PostgresLease", "lease"]

# Connections a forked child inherited: never closed in the child (closing would end the
# parent's session), never used again.
_inherited: list[Any] = []


class PostgresLease:
    """A generator on a shard leased through PostgreSQL; see :func:`lease`. Use it as a context
    manager, or call :meth:`close`, to release the shard before the process ends."""

    def __init__(
        self, layout: Layout, conninfo: str, shards: range, *, table: str = "shardid_leases", **options: int
    ) -> None:
        if shards.step != 1 or shards.start < 0 or shards.stop > 2**31:
            reason = "must be a range with step 1 within 0..2**31"
            raise InvalidArgumentError(f"shards {reason}", argument="shards", reason=reason)
        self.layout = layout
        self.conninfo = conninfo
        self.shards = shards
        self.table = table
        self._options = options
        self._conn: Any = None
        # Checks the table name (InvalidArgumentError) before connecting.
        self._protocol(os.getpid())
        self._take()

    def _protocol(self, pid: int) -> _PostgresLeaseProtocol:
        holder = f"{socket.gethostname()} pid {pid}"
        return _PostgresLeaseProtocol(self.layout, self.table, self.shards.start, self.shards.stop, holder)

    def _take(self) -> None:
        import psycopg

        # The steps, statements and parameters are the core's (shardid::sql::Acquire): this
        # only executes them and feeds back the first column of each answer.
        protocol = self._protocol(os.getpid())
        conn = psycopg.connect(self.conninfo, autocommit=True)
        try:
            while (step := protocol.next()) is not None:
                sql, params, tolerate = step
                try:
                    cur = conn.execute(sql, params)
                    row = cur.fetchone() if cur.description else None
                except psycopg.Error as e:
                    if e.sqlstate not in tolerate:
                        raise
                    row = None
                protocol.feed(row[0] if row else None)
        except BaseException:
            conn.close()
            raise
        taken = protocol.taken
        assert taken is not None
        self._conn = conn
        self._pid = os.getpid()
        self._shard, ceiling = taken
        self._record = protocol
        self._generator = _CeilingGenerator(self.layout, self._shard, ceiling, self._store, **self._options)

    def _store(self, units: int) -> None:
        # Only while this session still holds the shard's lock: a lost connection (and lock)
        # stops the generator at its ceiling instead of extending it under a new holder.
        import psycopg

        sql, params = self._record.record(self._shard, units)
        try:
            cur = self._conn.execute(sql, params)
        except psycopg.OperationalError as e:  # the session, and with it the shard's lock, is gone
            raise LeaseLostError(str(e), shard=self._shard) from e
        if cur.rowcount != 1:
            raise LeaseLostError(
                f"the lease on shard {self._shard} is no longer held: take a new lease", shard=self._shard
            )

    def _current(self) -> _CeilingGenerator:
        if self._conn is None:
            raise LeaseLostError(f"the lease on shard {self._shard} was closed: take a new lease", shard=self._shard)
        if os.getpid() != self._pid:
            _inherited.append(self._conn)
            self._take()
        return self._generator

    @property
    def shard(self) -> int:
        """The shard this process holds (after :meth:`close`, the one it held)."""
        if self._conn is None:
            return self._shard
        return self._current().shard

    def next_id(self) -> int:
        return self._current().next_id()

    def next_id_at(self, now: Any) -> int:
        return self._current().next_id_at(now)

    def next_ids(self, n: int) -> list[int]:
        return self._current().next_ids(n)

    def close(self) -> None:
        """Releases the shard at once (closes the lease's connection, which ends its lock);
        the lease makes no more IDs. Closing twice is fine."""
        if self._conn is not None and os.getpid() == self._pid:
            self._conn.close()
        self._conn = None

    def __enter__(self) -> PostgresLease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def lease(layout: Layout, conninfo: str, shards: range, **options: Any) -> PostgresLease:
    """Leases the first free shard of ``shards`` through the PostgreSQL server at ``conninfo``
    (a libpq connection string or URL); ``table=`` names the ceilings table, and
    ``backwards_tolerance_ms`` / ``max_borrow_units`` go to the generator."""
    return PostgresLease(layout, conninfo, shards, **options)
