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
"""

from __future__ import annotations

from typing import Any

from shardid import _mysql
from shardid._errors import DatabaseUnreachableError
from shardid._lease import DEFAULT_TTL_MS, DatabaseLease, Dialect
from shardid._shardid import Layout

__all__ = ["DEFAULT_TTL_MS", "MysqlLease", "lease"]

# The client's errors (CR_*, 2000 to 2999: the server went away, the connection broke), and
# the ones PyMySQL raises with number 0 (a closed connection).
_CLIENT_ERRORS = range(2000, 3000)


def _number(e: BaseException) -> int | None:
    """The error number of a PyMySQL or mysqlclient error (their first argument)."""
    args = getattr(e, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


class _Mysql(Dialect):
    """PyMySQL, mysqlclient, or any DB-API driver of MySQL's."""

    # Rendered for MariaDB first; the core renders MySQL's once a server refuses MariaDB's.
    name = "mariadb"
    module = "shardid.mysql"

    def connect(self, conninfo: str) -> Any:
        return _mysql.connect(conninfo)

    def check(self, conninfo: str) -> None:
        _mysql.check_url(conninfo)

    def code(self, e: BaseException) -> str | None:
        number = _number(e)
        return None if number is None else str(number)

    def lost(self, e: BaseException) -> bool:
        if any(cls.__name__ == "InterfaceError" for cls in type(e).__mro__):
            return True
        number = _number(e)
        is_operational = any(cls.__name__ == "OperationalError" for cls in type(e).__mro__)
        return is_operational and (number in _CLIENT_ERRORS or number == 0)

    def usable(self, conn: Any) -> bool:
        return bool(getattr(conn, "open", True))

    def unreachable(self, e: BaseException) -> bool:
        return isinstance(e, DatabaseUnreachableError) or self.lost(e)

    def execute(self, conn: Any, sql: str, params: tuple[Any, ...]) -> Any:
        """Runs one statement: its first row; a statement without rows (an ``UPDATE``, an
        ``INSERT``) answers ``(rowcount, lastrowid)``, the core reading the last insert ID."""
        cur = conn.cursor()
        try:
            cur.execute(sql, params)
            if cur.description is not None:
                return cur.fetchone()
            return (cur.rowcount, cur.lastrowid or 0)
        finally:
            cur.close()


class MysqlLease(DatabaseLease):
    """A generator on a shard leased through MySQL or MariaDB; see :func:`lease`. Use it as a
    context manager, or call :meth:`close`, to release the shard before the process ends."""

    dialect = _Mysql()


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
    - ``backwards_tolerance_ms`` / ``max_borrow_units`` go to the generator.
    """
    return MysqlLease(layout, url, shards, **options)
