"""The database side of a lease taken on an event loop (:mod:`shardid.postgres`'s
``lease_async``, :mod:`shardid.mysql`'s, :mod:`shardid.sqlite`'s), and the one source of the blocking leases'
(``_lease_generated.py``, made from this file by ``bindings-python/tools/async_to_sync.py``). Change
this file, then run the script.

A dialect object per database (PostgreSQL over psycopg, psycopg2 blocking; MySQL and MariaDB
over PyMySQL, aiomysql on the loop; SQLite over ``sqlite3``, on a worker thread on the loop)
says how to connect, how a statement answers and how an
error names itself; a :class:`_AsyncSession` runs the core's lease protocol
(``shardid::sql::LeaseProtocol``: its steps, statements and parameters) on one connection of
it, reconnecting as the protocol allows. The tenure (the generator and its heartbeat) is the
lease's own (``shardid._lease``, ``shardid.postgres``).
"""

from __future__ import annotations

import os
import socket
import sqlite3
from collections.abc import Callable
from typing import Any

from shardid import _db, _link_async, _mysql, _sqlite
from shardid._acompat import asleep, is_async
from shardid._errors import InvalidArgumentError, ShardIdError
from shardid._shardid import _database_of_url, _error, _Hold, _LeaseProtocol, _LeaseTally, _sqlite_path

#: The default time to live of an expiring lease, in milliseconds.
DEFAULT_TTL_MS = 10_000

class _AsyncPostgres(_link_async._AsyncPostgresLink):
    """psycopg 3's ``AsyncConnection`` (blocking: psycopg 3, psycopg2, or any DB-API driver of
    PostgreSQL's given as ``connect=``)."""

    #: The core's name of the SQL dialect.
    name = "postgres"
    #: The module whose lease this is, for messages.
    module = "shardid.postgres"

    @staticmethod
    async def connect(conninfo: str) -> Any:
        # No server-side prepared statements: a pooler in transaction mode cannot carry them.
        if is_async():  # psycopg 3, or asyncpg for its URL
            return await _db.aconnect_postgres(conninfo, asyncpg=True)
        return await _db.aconnect_postgres(conninfo)

    @staticmethod
    def check(conninfo: str) -> None:
        """Raises ``INVALID_ARGUMENT`` for a connection string the dialect cannot read (before
        any connection): libpq reads it when connecting."""

    @staticmethod
    def code(e: BaseException) -> str | None:
        """The code the core's protocol knows the error by: its SQLSTATE."""
        return _db.sqlstate(e)

    @staticmethod
    def usable(conn: Any) -> bool:
        if _db.is_asyncpg(conn):
            return _db.is_open(conn)
        return not (getattr(conn, "closed", False) or getattr(conn, "broken", False))

    @staticmethod
    async def execute(conn: Any, sql: str, params: tuple[Any, ...]) -> Any:
        """Runs one statement; its first row, or ``None``."""
        return await _db.aexecute(conn, sql, params)

    @staticmethod
    async def close(conn: Any) -> None:
        await _db.aclose(conn)


class _AsyncMysql(_link_async._AsyncMysqlLink):
    """aiomysql (blocking: PyMySQL, mysqlclient, or any DB-API driver of MySQL's given as
    ``connect=``)."""

    # Rendered for MariaDB first; the core renders MySQL's once a server refuses MariaDB's.
    name = "mariadb"
    module = "shardid.mysql"

    @staticmethod
    async def connect(conninfo: str) -> Any:
        return await _mysql.aconnect(conninfo)

    @staticmethod
    def check(conninfo: str) -> None:
        _mysql.check_url(conninfo)

    @staticmethod
    def code(e: BaseException) -> str | None:
        number = _mysql._number(e)
        return None if number is None else str(number)

    @staticmethod
    def usable(conn: Any) -> bool:
        return _mysql.ais_open(conn)

    @staticmethod
    async def execute(conn: Any, sql: str, params: tuple[Any, ...]) -> Any:
        """Runs one statement: its first row; a statement without rows (an ``UPDATE``, an
        ``INSERT``) answers ``(rowcount, lastrowid)``, the core reading the last insert ID."""
        cur = await conn.cursor()
        try:
            await cur.execute(sql, params)
            if cur.description is not None:
                return await cur.fetchone()
            return (cur.rowcount, cur.lastrowid or 0)
        finally:
            await cur.close()

    @staticmethod
    async def close(conn: Any) -> None:
        await _mysql.aclose(conn)


class _AsyncSqlite(_link_async._AsyncSqliteLink):
    """``sqlite3`` on one file (the driver objects of ``shardid._sqlite``: its connection set
    up as the core says, one step at a time per connection, its errors as the other databases'
    of the same kind); on a worker thread for asyncio. The lease is the core's SQLite rendering
    (``shardid::sql::sqlite::SqliteLease``): an expiring lease only, the table created on the
    first claim's error."""

    name = "sqlite"
    module = "shardid.sqlite"

    @staticmethod
    async def connect(conninfo: str) -> Any:
        # No DDL here: the protocol creates its table (CREATE TABLE IF NOT EXISTS) when the
        # first claim fails.
        return await _sqlite.aconnect(conninfo)

    @staticmethod
    def check(conninfo: str) -> None:
        """``INVALID_ARGUMENT`` on ``url`` for a URL the core cannot read as a file."""
        _sqlite_path(conninfo, "url")

    @staticmethod
    def code(e: BaseException) -> str | None:
        """SQLite's primary result code (the protocol makes its table on any error of the
        first claim, whatever the code)."""
        code = _sqlite._code(e) if isinstance(e, sqlite3.Error) else None
        return None if code is None else str(code)

    @staticmethod
    def usable(conn: Any) -> bool:
        return _sqlite.is_open(conn)

    @staticmethod
    async def execute(conn: Any, sql: str, params: tuple[Any, ...]) -> Any:
        """Runs one statement alone on ``conn``: its first row, or ``None``."""
        return await _sqlite.arun(_sqlite.one, conn, sql, params)

    @staticmethod
    async def close(conn: Any) -> None:
        await _sqlite.aclose(conn)


# The family of each database the core names, as the entry points lease through them.
_FAMILY = {"postgres": "postgres", "mysql": "mysql", "mariadb": "mysql", "sqlite": "sqlite"}


def check_url(conninfo: str, dialect: str, module: str) -> None:
    """The core's one rule for a connection string (``shardid::sql::Dialect::of_url``):
    ``INVALID_ARGUMENT`` at once for a URL no driver takes, and for another family's database
    than the one ``module`` leases through (``dialect``: its dialect's name)."""
    argument = "conninfo" if dialect == "postgres" else "url"
    database = _database_of_url(conninfo, argument)
    if _FAMILY.get(database) != _FAMILY[dialect]:
        reason = f"names a {database} database, which {module} does not lease through"
        raise InvalidArgumentError(f"{argument} {reason}", argument=argument, reason=reason)
    _link_async.plain_url(conninfo)  # UNSUPPORTED now for a SQLAlchemy URL's driver not run here


class _AsyncSession:
    """The lease's connection and what it runs: the options checked, the protocol's steps to
    take a shard, and each later statement (a ceiling, a renewal, the release). The caller
    holds the lease's lock: one statement at a time."""

    def __init__(
        self,
        dialect: Any,
        layout: Any,
        conninfo: str | None,
        shards: range,
        *,
        table: str = "shardid_leases",
        schema: str | None = None,
        kind: str = "expiring",
        ttl_ms: int = DEFAULT_TTL_MS,
        connect: Callable[[], Any] | None = None,
    ) -> None:
        if not isinstance(shards, range) or shards.step != 1 or shards.start < 0 or shards.stop > 2**31:
            reason = "must be a range with step 1 within 0..2**31"
            raise InvalidArgumentError(f"shards {reason}", argument="shards", reason=reason)
        if connect is None and not isinstance(conninfo, str):
            reason = "must be a connection string or URL, or pass connect="
            raise InvalidArgumentError(f"conninfo {reason}", argument="conninfo", reason=reason)
        if connect is None:
            check_url(conninfo, dialect.name, dialect.module)  # type: ignore[arg-type]
            if dialect.name != "postgres":  # PostgreSQL's connect honours the URL's driver
                conninfo = _link_async.plain_url(conninfo)  # type: ignore[arg-type]
            dialect.check(conninfo)
        self.dialect = dialect
        self.layout = layout
        self.conninfo = conninfo
        self.shards = shards
        self.table = table
        self.schema = schema
        self.kind = kind
        self.ttl_ms = ttl_ms
        self._connect_with = connect
        self.conn: Any = None
        # The SQL the protocol speaks: MySQL once a MySQL server refused MariaDB's.
        self.sql_dialect = dialect.name
        self.protocol()  # checks the kind, time to live and table name before connecting
        # The core counts into it (shardid::lease::Tally), for every shard this lease takes.
        self.tally = _LeaseTally(layout, table)

    def protocol(self) -> _LeaseProtocol:
        holder = f"{socket.gethostname()} pid {os.getpid()}"
        return _LeaseProtocol(
            self.kind,
            self.ttl_ms,
            self.layout,
            self.table,
            self.shards.start,
            self.shards.stop,
            holder,
            self.sql_dialect,
            self.schema,
            # asyncpg's $1 for its connections (_db.numbered), the DB-API's %s otherwise.
            numbered=self.conn is not None and _db.numbered(self.conn),
        )

    async def connect(self) -> Any:
        """A new connection (``connect=``, or the dialect's driver); ``DATABASE_UNREACHABLE``
        when the database cannot be reached, with the driver's error as its cause."""
        try:
            if self._connect_with is not None:
                return await self._connect_with()
            return await self.dialect.connect(self.conninfo)
        except ShardIdError:
            raise  # already ours: DATABASE_UNREACHABLE, NOT_MYSQL, UNSUPPORTED (no driver)
        except Exception as e:
            if not self.dialect.unreachable(e):
                raise
            raise _db.unreachable_error(e) from e

    async def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            await self.dialect.close(conn)

    async def run(self, sql: str, params: tuple[Any, ...], tenure: Any) -> Any:
        """Runs a statement of ``tenure``'s on the lease's connection; its first row, or
        ``None``. An expiring lease reconnects when its connection is gone, and sends the
        statement again once on a fresh connection when an old one fails (the database was
        restarted: every statement of the lease can be repeated); a session lease's lock ended
        with its session. A statement the database rolled back whole (a deadlock, a Galera
        node refusing writes while the cluster evicts a node) is sent again after the
        protocol's wait (``resend_after``), while the lease is not past its deadline."""
        dialect = self.dialect
        reconnected = False
        resent = 0
        while True:
            fresh = self.conn is None or not dialect.usable(self.conn)
            if fresh:
                if tenure.protocol.kind == "session":
                    raise tenure.lost("lost its database session")
                self.conn = await self.connect()
            try:
                return await dialect.execute(self.conn, sql, params)
            except Exception as e:
                if dialect.lost(e) or not dialect.usable(self.conn):
                    await self.close()
                    if tenure.protocol.kind == "session":
                        raise tenure.lost("lost its database session") from e
                    if fresh or reconnected:
                        raise _db.unreachable_error(e) from e
                    reconnected = True
                    continue
                wait = tenure.protocol.resend_after(dialect.code(e), resent)
                if wait is None or (tenure.hold is not None and tenure.hold.sending() is None):
                    raise
            resent += 1
            await asleep(wait / 1000)

    async def take(self) -> tuple[_LeaseProtocol, int, int | None, str | None, int]:
        """Takes a shard by the core's steps: ``(protocol, shard, recorded, backend, sent)``."""
        # The steps, statements and parameters are the core's (shardid::sql::LeaseProtocol):
        # this only executes them and feeds back what the database answered.
        dialect = self.dialect
        if self.conn is None or not dialect.usable(self.conn):
            self.conn = await self.connect()
        conn = self.conn
        protocol = self.protocol()  # rendered for the connection's driver
        sent = _Hold.now()
        while True:
            step = protocol.next()
            if step[0] == "taken":
                break
            if step[0] == "raise":
                raise _error("DATABASE", reason="the database answered a lease statement with an unexpected row")
            _, sql, params = step
            sent = _Hold.now()
            try:
                row = await dialect.execute(conn, sql, params)
            except Exception as e:
                protocol.fail(dialect.code(e))
                if protocol.next()[0] == "raise":
                    if dialect.lost(e):
                        await self.close()
                    if dialect.unreachable(e):
                        raise _db.unreachable_error(e) from e
                    raise
                continue
            protocol.feed(row)
        _, shard, recorded, backend = step
        self.sql_dialect = protocol.dialect
        return protocol, shard, recorded, backend, sent  # type: ignore[return-value]
