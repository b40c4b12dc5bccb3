"""A connection to each database, as every system's dialect objects open, test and close it,
and which of its driver's errors lose it or say the server cannot be reached (their base
classes: one rule per database): psycopg's ``AsyncConnection``, aiomysql and ``sqlite3`` on
a worker thread here, psycopg 3 or psycopg2, PyMySQL and ``sqlite3`` in ``_link_generated.py``, which ``bindings-python/tools/async_to_sync.py``
makes from this file. Change this file, then run the script."""

from __future__ import annotations

from typing import Any

from shardid import _db, _mysql, _sqlite
from shardid._acompat import is_async
from shardid._errors import DatabaseUnreachableError, NotMysqlError


def plain_url(url: str) -> str:
    """``url`` without the driver a SQLAlchemy URL names (``mysql+aiomysql://``), once checked
    that this side's clients run it (``_db.driver_url``: ``UNSUPPORTED`` naming the one to
    write): what the MySQL drivers and the SQLite file's rule read. PostgreSQL's connect
    reads the driver itself (``_db.connect_postgres``)."""
    if is_async():
        return _db.plain_url(url, asyncio=True)
    return _db.plain_url(url, asyncio=False)


class _AsyncLink:
    """What every database's link decides alike from its own ``lost``."""

    @staticmethod
    def lost(e: BaseException) -> bool:
        raise NotImplementedError

    @classmethod
    def gives_up(cls, e: BaseException) -> bool:
        """Whether a client gives up its connection after ``e`` (and opens another next
        time): it could not be opened (``DATABASE_UNREACHABLE``, ``NOT_MYSQL``), or the
        database's rule says it is lost."""
        return isinstance(e, (DatabaseUnreachableError, NotMysqlError)) or cls.lost(e)


class _AsyncPostgresLink(_AsyncLink):
    """PostgreSQL: autocommit, no server-side prepared statements (a pooler in transaction mode
    cannot carry them), ``DATABASE_UNREACHABLE`` when the server cannot be reached."""

    @staticmethod
    async def connect(url: str) -> Any:
        return await _db.aconnect_postgres(url, connect_timeout=5)

    @staticmethod
    def is_open(conn: Any) -> bool:
        return _db.is_open(conn)

    @staticmethod
    def lost(e: BaseException) -> bool:
        """The DB-API's ``OperationalError`` or ``InterfaceError``, whichever driver raised it:
        the connection is gone (open another)."""
        return _db.connection_lost(e)

    @staticmethod
    def unreachable(e: BaseException) -> bool:
        """Whether ``e`` says the database cannot be reached (``DATABASE_UNREACHABLE``, ``e``
        its cause): PostgreSQL's rule (``_db.unreachable``)."""
        return _db.unreachable(e)

    @staticmethod
    async def close(conn: Any) -> None:
        await _db.aclose(conn)


class _AsyncMysqlLink(_AsyncLink):
    """MySQL and MariaDB: autocommit, the server's dialect recorded on the connection,
    ``NOT_MYSQL`` for a server that does not greet as MySQL."""

    @staticmethod
    async def connect(url: str) -> Any:
        return await _mysql.aconnect(plain_url(url))

    @staticmethod
    def is_open(conn: Any) -> bool:
        return _mysql.ais_open(conn)

    @staticmethod
    def lost(e: BaseException) -> bool:
        """MySQL's rule of a connection that is gone (``_mysql.lost``)."""
        return _mysql.lost(e)

    @staticmethod
    def unreachable(e: BaseException) -> bool:
        """A server that could not be reached at connect time, or a connection that is gone."""
        return isinstance(e, DatabaseUnreachableError) or _mysql.lost(e)

    @staticmethod
    async def close(conn: Any) -> None:
        await _mysql.aclose(conn)


class _AsyncSqliteLink(_AsyncLink):
    """SQLite: a file, autocommit, the core's connection setup, and the tables of the system
    (``self.ddl``) created on first use; ``DATABASE_UNREACHABLE`` when the file cannot be used."""

    ddl = ""

    async def connect(self, url: str) -> Any:
        return await _sqlite.aconnect(plain_url(url), self.ddl)

    @staticmethod
    def is_open(conn: Any) -> bool:
        return _sqlite.is_open(conn)

    @staticmethod
    def lost(e: BaseException) -> bool:
        """SQLite's rule: the file can no longer be used on this connection (``_sqlite.lost``)."""
        return _sqlite.lost(e)

    @staticmethod
    def unreachable(e: BaseException) -> bool:
        """A file that cannot be used (``_sqlite.unreachable``)."""
        return _sqlite.unreachable(e)

    @staticmethod
    async def close(conn: Any) -> None:
        await _sqlite.aclose(conn)
