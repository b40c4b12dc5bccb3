"""Shard leases in PostgreSQL, for processes on different hosts (an optional extra: needs a
driver, ``pip install shardid[postgres]`` for psycopg 3; psycopg2 works too).

Lock files (:func:`shardid.lease`) keep the processes of one host apart; across hosts, the
database they already share does it::

    from shardid import Layout
    from shardid.postgres import lease

    generator = lease(Layout.INSTAGRAM, "postgresql://app@db/app", range(0, 64))
    generator.next_id()

The default lease *expires* (``kind="expiring"``): a row per shard in a table
(``shardid_leases``) holds the lease's random token and its expiry by the database's clock,
and nothing else: no session state, so it holds behind a transaction pooler (PgBouncer,
Supavisor, Neon's pooled endpoint, RDS Proxy). A background thread renews it every third of
its time to live (``ttl_ms``, 10 s by default); a process that crashes frees its shard one time
to live later. A holder that could not renew for four fifths of the time to live (paused,
cut off) stops on its own: the lease is then lost for good, and its calls raise
:class:`~shardid.LeaseLostError` (with ``retake=True``, the next call takes a new lease,
possibly on another shard).

Each row also records the shard's *ceiling*, written before any ID above it is handed out and
only while the row holds the lease's token, so the next holder starts above every ID the last
one issued: after a crash, on a host whose clock is behind, or when a paused holder is taken
over. In a forked child, the lease takes a new shard on a new connection of its own.

``kind="session"`` holds a session advisory lock per shard instead, for direct connections
only: a crashed holder's shard is free at once. It refuses to work through a pooler it can
detect (:class:`~shardid.SessionPooledError`, or :class:`~shardid.LeaseLostError` when its
statements move to another server session).

A server that cannot be reached (down, refusing, its connection broken and not opened again)
is :class:`~shardid.DatabaseUnreachableError` (a :class:`ConnectionError`) with the driver's
error as its ``__cause__``; the database's own errors (a missing privilege) are the driver's,
as they are. After :meth:`PostgresLease.close`, calls raise :class:`~shardid.ClosedError`. Lease
connections never use server-side prepared statements.

On an event loop, ``await lease_async(...)`` takes the same lease over psycopg's
``AsyncConnection`` (see :class:`AsyncPostgresLease`): the heartbeat is an asyncio task, and
``await generator.next_id()`` never blocks the loop on the database.
"""

from __future__ import annotations

from typing import Any

from shardid import _db, _lease_async, _lease_generated
from shardid._lease import DEFAULT_TTL_MS, AsyncDatabaseLease, DatabaseLease
from shardid._shardid import Layout

__all__ = ["DEFAULT_TTL_MS", "AsyncPostgresLease", "PostgresLease", "lease", "lease_async"]


def default_connect(conninfo: str) -> Any:
    """An autocommit connection to ``conninfo`` with psycopg 3 (no server-side prepared
    statements, which a pooler in transaction mode cannot carry), or with psycopg2 when only it
    is installed."""
    return _db.connect_postgres(conninfo)


class PostgresLease(DatabaseLease):
    """A generator on a shard leased through PostgreSQL; see :func:`lease`. Use it as a context
    manager, or call :meth:`close`, to release the shard before the process ends."""

    dialect = _lease_generated._Postgres()


def lease(layout: Layout, conninfo: str | None, shards: range, **options: Any) -> PostgresLease:
    """Leases the first free shard of ``shards`` through the PostgreSQL server at ``conninfo``
    (a libpq connection string or URL).

    - ``kind``: ``"expiring"`` (the default; works behind transaction poolers) or ``"session"``
      (advisory locks; direct connections only, frees a crashed holder's shard at once).
    - ``ttl_ms``: an expiring lease's time to live (300 to 3,600,000; 10,000 by default): how
      long a crashed holder's shard stays taken, and a third of it is the renewal interval.
    - ``retake``: after the lease is lost, the next call takes a new one instead of raising
      :class:`~shardid.LeaseLostError`.
    - ``table``: the table of leases (``shardid_leases``); ``connect``: a function returning a
      new DB-API connection in autocommit mode, instead of connecting to ``conninfo``.
    - ``schema``: the table's schema. By default the one where the search path finds the
      table when the lease starts (else the search path's first schema, where it is made);
      either way every statement then names ``schema.table``, and the table must be owned by
      the connection's user or a role it is a member of (else :class:`~shardid.InvalidArgumentError`
      naming the table and its owner: another role's table could run its triggers as this
      user). Name the application's own schema where other roles may create tables in
      ``public`` (PostgreSQL 14 and older, by default).
    - ``backwards_tolerance_ms`` / ``max_borrow_units`` go to the generator.
    """
    return PostgresLease(layout, conninfo, shards, **options)


class AsyncPostgresLease(AsyncDatabaseLease):
    """A generator on a shard leased through PostgreSQL for asyncio; take one with
    ``await lease_async(...)`` (the options are :func:`lease`'s): the protocol is
    :class:`PostgresLease`'s over psycopg's ``AsyncConnection``, the heartbeat an asyncio task
    (see :class:`shardid._lease.AsyncDatabaseLease`)."""

    dialect = _lease_async._AsyncPostgres()


def lease_async(layout: Layout, conninfo: str | None, shards: range, **options: Any) -> AsyncPostgresLease:
    """:func:`lease` for asyncio: ``generator = await lease_async(layout, conninfo, shards)``
    (or ``async with lease_async(...) as generator:``), then ``await generator.next_id()``.
    The options are :func:`lease`'s; ``connect`` is then a coroutine function returning a
    psycopg ``AsyncConnection`` in autocommit mode."""
    return AsyncPostgresLease(layout, conninfo, shards, **options)
