"""Shard leases in MySQL 8 and MariaDB 10.6 or later, Galera clusters included, for processes on
different hosts (an optional extra: ``pip install shardid[mysql]`` for PyMySQL; mysqlclient,
or any DB-API driver through ``connect=``, works too)::

    from shardid import Layout
    from shardid.mysql import lease

    generator = lease(Layout.INSTAGRAM, "mysql://app:secret@db:3306/app", range(0, 64))
    generator.next_id()

The same leases as :mod:`shardid.postgres`, run by the same driver on the core's MySQL
statements (``shardid::sql::LeaseProtocol``): a row per shard in a table (``shardid_leases`` in
the URL's database) holds the lease's random token, its ceiling and its expiry by the server's
clock. The default lease *expires* (``kind="expiring"``): a background thread renews it every
third of its time to live, every renewal and ceiling write only while the row holds the token,
and a holder that could not renew for four fifths of it stops on its own. It is the only kind
that holds on a Galera cluster (processes attached to different nodes) and behind a proxy that
moves statements between server connections (ProxySQL, MaxScale).

``kind="session"`` holds a ``GET_LOCK`` per shard instead, for a single server reached
directly: a crashed holder's shard is free at once. It refuses a Galera node
(:class:`~shardid.UnsupportedError`: ``GET_LOCK`` locks one node only) and the pooling it can
detect, as on PostgreSQL (:class:`~shardid.SessionPooledError`, or
:class:`~shardid.LeaseLostError` once its statements reach another connection).

Taking an expiring lease is one statement once the table holds a row per shard (a shard taken
for the first time: two). Errors of the driver (a server that is down, a missing privilege) are
raised as PyMySQL's own exceptions; a URL the core cannot read is
:class:`~shardid.InvalidArgumentError`, a server that does not greet as MySQL
:class:`~shardid.NotMysqlError`.

On an event loop, ``await lease_async(...)`` takes the same lease over aiomysql (``pip install
shardid[mysql-async]``; see :class:`AsyncMysqlLease`): the heartbeat is an asyncio task, and
``await generator.next_id()`` never blocks the loop on the database.
"""

from __future__ import annotations

from typing import Any

from shardid import _lease_async, _lease_generated
from shardid._lease import DEFAULT_TTL_MS, AsyncDatabaseLease, DatabaseLease
from shardid._shardid import Layout

__all__ = ["DEFAULT_TTL_MS", "AsyncMysqlLease", "MysqlLease", "lease", "lease_async"]


class MysqlLease(DatabaseLease):
    """A generator on a shard leased through MySQL or MariaDB; see :func:`lease`. Use it as a
    context manager, or call :meth:`close`, to release the shard before the process ends."""

    dialect = _lease_generated._Mysql()


def lease(layout: Layout, url: str | None, shards: range, **options: Any) -> MysqlLease:
    """Leases the first free shard of ``shards`` through the MySQL or MariaDB server at ``url``
    (``mysql://user:password@host:port/database``, or ``mariadb://``; percent-encode ``@``,
    ``:`` and ``/`` in the password).

    - ``kind``: ``"expiring"`` (the default; Galera clusters and proxies included) or
      ``"session"`` (``GET_LOCK``; one server reached directly, frees a crashed holder's shard
      at once).
    - ``ttl_ms``: an expiring lease's time to live (300 to 3,600,000; 10,000 by default): how
      long a crashed holder's shard stays taken, and a third of it is the renewal interval.
    - ``retake``: after the lease is lost, the next call takes a new one instead of raising
      :class:`~shardid.LeaseLostError`.
    - ``table``: the table of leases (``shardid_leases``, in the URL's database); ``connect``:
      a function returning a new DB-API connection in autocommit mode, instead of connecting
      to ``url``.
    - ``schema``: the table's database (by default the URL's); every statement then names
      ``schema.table``.
    - ``backwards_tolerance_ms`` / ``max_borrow_units`` go to the generator.
    """
    return MysqlLease(layout, url, shards, **options)


class AsyncMysqlLease(AsyncDatabaseLease):
    """A generator on a shard leased through MySQL or MariaDB for asyncio; take one with
    ``await lease_async(...)`` (the options are :func:`lease`'s): the protocol is
    :class:`MysqlLease`'s over aiomysql (``pip install shardid[mysql-async]``), the heartbeat
    an asyncio task (see :class:`shardid._lease.AsyncDatabaseLease`)."""

    dialect = _lease_async._AsyncMysql()


def lease_async(layout: Layout, url: str | None, shards: range, **options: Any) -> AsyncMysqlLease:
    """:func:`lease` for asyncio: ``generator = await lease_async(layout, url, shards)`` (or
    ``async with lease_async(...) as generator:``), then ``await generator.next_id()``. The
    options are :func:`lease`'s; ``connect`` is then a coroutine function returning an aiomysql
    connection in autocommit mode."""
    return AsyncMysqlLease(layout, url, shards, **options)
