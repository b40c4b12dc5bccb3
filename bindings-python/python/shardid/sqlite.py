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
"""

from __future__ import annotations

from typing import Any

from shardid import _lease_async, _lease_generated
from shardid._errors import InvalidArgumentError
from shardid._lease import DEFAULT_TTL_MS, AsyncDatabaseLease, DatabaseLease
from shardid._shardid import Layout

__all__ = ["DEFAULT_TTL_MS", "AsyncSqliteLease", "SqliteLease", "lease", "lease_async"]


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
