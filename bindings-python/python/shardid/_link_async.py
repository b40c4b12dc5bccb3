"""A connection to each database, as the dense IDs' and the dictionary's dialect objects open,
test and close it (their base classes): psycopg's ``AsyncConnection``, aiomysql and ``sqlite3`` on
a worker thread here, psycopg 3 or psycopg2, PyMySQL and ``sqlite3`` in ``_link_generated.py``, which ``bindings-python/tools/async_to_sync.py``
makes from this file. Change this file, then run the script."""

from __future__ import annotations

from typing import Any

from shardid import _db, _mysql, _sqlite


class _AsyncPostgresLink:
    """PostgreSQL: autocommit, no server-side prepared statements (a pooler in transaction mode
    cannot carry them), ``DATABASE_UNREACHABLE`` when the server cannot be reached."""

    @staticmethod
    async def connect(url: str) -> Any:
        return await _db.aconnect_postgres(url, connect_timeout=5)

    @staticmethod
    def is_open(conn: Any) -> bool:
        return _db.is_open(conn)

    @staticmethod
    async def close(conn: Any) -> None:
        await _db.aclose(conn)


class _AsyncMysqlLink:
    """MySQL and MariaDB: autocommit, the server's dialect recorded on the connection,
    ``NOT_MYSQL`` for a server that does not greet as MySQL."""

    @staticmethod
    async def connect(url: str) -> Any:
        return await _mysql.aconnect(url)

    @staticmethod
    def is_open(conn: Any) -> bool:
        return _mysql.ais_open(conn)

    @staticmethod
    async def close(conn: Any) -> None:
        await _mysql.aclose(conn)


class _AsyncSqliteLink:
    """SQLite: a file, autocommit, the core's connection setup, and the tables of the system
    (``self.ddl``) created on first use; ``DATABASE_UNREACHABLE`` when the file cannot be used."""

    ddl = ""

    async def connect(self, url: str) -> Any:
        return await _sqlite.aconnect(url, self.ddl)

    @staticmethod
    def is_open(conn: Any) -> bool:
        return _sqlite.is_open(conn)

    @staticmethod
    async def close(conn: Any) -> None:
        await _sqlite.aclose(conn)
