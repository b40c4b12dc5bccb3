"""Shard leases in a SQLite file, for processes that share the file on one host (no server,
no extra to install: the standard :mod:`sqlite3`)::

    from shardid import Layout
    from shardid.sqlite import lease

    generator = lease(Layout.INSTAGRAM, "sqlite:///var/app.db", range(0, 64))
    generator.next_id()

The URL is SQLAlchemy's and dj-database-url's: ``sqlite:///relative/path.db`` or
``sqlite:////absolute/path.db``. The lease is :mod:`shardid.postgres`'s expiring lease, run by
the same driver on the core's SQLite statements (``shardid::sql::sqlite::SqliteLease``): a row
per shard in a table (``shardid_leases``, created on first use) holds the lease's random token,
its ceiling and its expiry by SQLite's clock; a claim is one statement under the file's write
lock. A background thread renews it every third of its time to live, every renewal and ceiling
write only while the row holds the token, and a holder that could not renew for four fifths of
it stops on its own (:class:`~shardid.LeaseLostError`). A crashed holder's shard is free one
time to live later.

Only the expiring kind: SQLite has no advisory locks, so ``kind="session"`` is
:class:`~shardid.UnsupportedError` (the lock-file leases of :func:`shardid.lease` free a
crashed holder's shard at once for the processes of one host). A file that cannot be used (a
missing directory, no permission, not a SQLite database) is
:class:`~shardid.DatabaseUnreachableError`, ``sqlite3``'s error its ``__cause__``; a write lock
held past the busy timeout is ``sqlite3``'s own ``OperationalError``.

On an event loop, ``await lease_async(...)`` takes the same lease with each statement on a
worker thread (see :class:`AsyncSqliteLease`).

The UUIDv7 bridge in SQL: SQLite has no stored functions, so :func:`uuid_functions` registers
``shardid_to_uuid``, ``shardid_to_uuid_text`` and ``shardid_from_uuid`` on a ``sqlite3``
connection (the names and results of the MySQL family's DDL), each calling the core's bridge.
"""

from __future__ import annotations

import sqlite3
import uuid
from typing import Any

from shardid import _lease_async, _lease_generated
from shardid._errors import InvalidArgumentError
from shardid._lease import DEFAULT_TTL_MS, AsyncDatabaseLease, DatabaseLease
from shardid._shardid import Layout

__all__ = ["DEFAULT_TTL_MS", "UUID_FUNCTIONS", "AsyncSqliteLease", "SqliteLease", "lease", "lease_async", "uuid_functions"]


def _no_connect(options: dict[str, Any]) -> None:
    """``connect=`` is refused: the lease's connections are ``shardid._sqlite``'s (set up as
    the core says, one statement at a time), not any ``sqlite3`` connection."""
    if options.get("connect") is not None:
        reason = "is not taken on SQLite: give the file's sqlite:/// URL"
        raise InvalidArgumentError(f"connect {reason}", argument="connect", reason=reason)


class SqliteLease(DatabaseLease):
    """A generator on a shard leased through a SQLite file; see :func:`lease`. Use it as a
    context manager, or call :meth:`close`, to release the shard before the process ends."""

    dialect = _lease_generated._Sqlite()


def lease(layout: Layout, url: str, shards: range, **options: Any) -> SqliteLease:
    """Leases the first free shard of ``shards`` through the SQLite file ``url`` names
    (``sqlite:///relative/path.db``, ``sqlite:////absolute/path.db``).

    - ``ttl_ms``: the lease's time to live (300 to 3,600,000; 10,000 by default): how long a
      crashed holder's shard stays taken, and a third of it is the renewal interval.
    - ``retake``: after the lease is lost, the next call takes a new one instead of raising
      :class:`~shardid.LeaseLostError`.
    - ``table``: the table of leases (``shardid_leases``); ``schema``: ``main`` (the default:
      the file) or an attached database; every statement names ``schema.table``.
    - ``backwards_tolerance_ms`` / ``max_borrow_units`` go to the generator.
    """
    _no_connect(options)
    return SqliteLease(layout, url, shards, **options)


class AsyncSqliteLease(AsyncDatabaseLease):
    """A generator on a shard leased through a SQLite file for asyncio; take one with
    ``await lease_async(...)`` (the options are :func:`lease`'s): the protocol is
    :class:`SqliteLease`'s, each statement on a worker thread, the heartbeat an asyncio task
    (see :class:`shardid._lease.AsyncDatabaseLease`)."""

    dialect = _lease_async._AsyncSqlite()


def lease_async(layout: Layout, url: str, shards: range, **options: Any) -> AsyncSqliteLease:
    """:func:`lease` for asyncio: ``generator = await lease_async(layout, url, shards)`` (or
    ``async with lease_async(...) as generator:``), then ``await generator.next_id()``."""
    _no_connect(options)
    return AsyncSqliteLease(layout, url, shards, **options)


# The SQL functions of the UUIDv7 bridge uuid_functions() registers: the MySQL family's names
# (core/src/sql/mysql/next_id.rs; tests/python/test_sqlite_uuid.py checks they are its DDL's),
# as Rust's shardid::sql::sqlite::UUID_FUNCTIONS.
UUID_FUNCTIONS = ("shardid_to_uuid", "shardid_to_uuid_text", "shardid_from_uuid")


def uuid_functions(conn: sqlite3.Connection, layout: Layout) -> None:
    """Registers the UUIDv7 bridge of ``layout`` on ``conn`` (SQLite has no stored functions: a
    connection's application-defined functions are its way), with the MySQL family's names:

    - ``shardid_to_uuid(id)``: the ID's UUID as its 16 bytes, a ``BLOB``, which SQLite compares
      byte by byte, so a ``BLOB`` column of them sorts as the IDs do;
    - ``shardid_to_uuid_text(id)``: its text (``0131fe7e-a8e5-7b04-8000-...``; lower case, so
      a ``TEXT`` column sorts as the IDs do too);
    - ``shardid_from_uuid(u)``: the ID back, from the 16 bytes or the text (8-4-4-4-12).

    Each is :meth:`Layout.to_uuid` / :meth:`Layout.from_uuid` (the core's bridge), so SQL gives
    the same bytes as every other language, and ``NULL`` gives ``NULL``. A refusal (a UUID the
    bridge did not make, of another version, of another layout; an ID outside the layout) fails
    the statement, never a wrong ID: ``sqlite3`` reports an exception raised by a function as
    ``OperationalError('user-defined function raised exception')``, its
    :class:`~shardid.InvalidArgumentError` given to ``sys.unraisablehook`` only under
    ``sqlite3.enable_callback_tracebacks(True)`` (the module's rule). Deterministic functions,
    so they can index a column (``CREATE INDEX ... ON t (shardid_to_uuid(id))``) on the
    connections that register them."""
    if not isinstance(layout, Layout):
        reason = "must be a shardid.Layout"
        raise InvalidArgumentError(f"layout {reason}", argument="layout", reason=reason)

    def to_uuid(id: Any) -> bytes | None:  # noqa: A002 (SQL's argument)
        return None if id is None else layout.to_uuid(id).bytes

    def to_uuid_text(id: Any) -> str | None:  # noqa: A002 (SQL's argument)
        return None if id is None else str(layout.to_uuid(id))

    def from_uuid(u: Any) -> int | None:
        if isinstance(u, bytes):
            if len(u) != 16:
                reason = "must be 16 bytes"
                raise InvalidArgumentError(f"uuid {reason}", argument="uuid", reason=reason)
            u = uuid.UUID(bytes=u)
        return None if u is None else layout.from_uuid(u)

    for name, function in zip(UUID_FUNCTIONS, (to_uuid, to_uuid_text, from_uuid)):
        conn.create_function(name, 1, function, deterministic=True)
