"""The dictionary's steps on each database, and the connection that runs them, for
:class:`~shardid.dictionary.AsyncDictionary`; the one source of
:class:`~shardid.dictionary.Dictionary`'s (``_dictionary_generated.py``, made from this file by
``bindings-python/tools/async_to_sync.py``). Change this file, then run the script.

A dialect object per database, chosen once from the URL by the core's rule
(``_shardid._database_of_url``), has the same five steps (``ids``, ``lookup``, ``values``,
``create``, ``drop``), each on a connection it is given: PostgreSQL's are one call of the DDL's
functions each; MySQL's and MariaDB's are the core's protocol (``shardid::sql::mysql``'s
dictionary): lookups without a lock, then for strings still missing one transaction that locks
the topic row, looks again with a locking read, numbers the rest from the topic's next ID,
inserts them and moves ``next`` on, whose steps (and its run again after the server rolled it
back whole) are the core's ``MysqlAssign`` (``_MysqlAssign``), which ``_assign`` only executes.
Django runs the same steps on its own connections (``shardid.django.dictionary``).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Sequence
from typing import Any

from shardid import _db, _link_async, _mysql, _sqlite
from shardid._acompat import ACREATE_TOPIC, is_async
from shardid._errors import DatabaseUnreachableError, ShardIdError
from shardid._shardid import (
    _TOPIC_DROPPED_SQLSTATE,
    _UNKNOWN_TOPIC_SQLSTATE,
    _database_of_url,
    _dictionary_statements,
    _error,
    _MysqlAssign,
    _MysqlDictSql,
)


def translate(e: BaseException, topic: str) -> BaseException:
    """A driver's error as the dictionary reports it: an unknown or dropped topic as its kind,
    a server that cannot be reached (a SQLite file that cannot be used) as
    ``DATABASE_UNREACHABLE``, the rest as it is."""
    state = _db.sqlstate(e)  # psycopg, psycopg2, or the MySQL and SQLite sides' errors
    if state == _UNKNOWN_TOPIC_SQLSTATE:
        return _error("UNKNOWN_TOPIC", topic=topic, create=ACREATE_TOPIC)
    if state == _TOPIC_DROPPED_SQLSTATE:
        return _error("TOPIC_DROPPED", topic=topic)
    if isinstance(e, sqlite3.Error):
        return _sqlite.translate(e, "the database file")
    if not isinstance(e, DatabaseUnreachableError) and _db.unreachable(e):
        return _db.unreachable_error(e)
    return e


class _AsyncPostgres(_link_async._AsyncPostgresLink):
    """PostgreSQL: the functions of the dictionary's DDL, over psycopg (psycopg2 too, blocking,
    and Django's cursors)."""

    # The statements' places in _dictionary_statements' answer.
    IDS, LOOKUP, VALUES, CREATE, DROP = range(5)

    @staticmethod
    async def connect(url: str) -> Any:
        if is_async():  # psycopg 3, or asyncpg for its URL
            return await _db.aconnect_postgres(url, connect_timeout=5, asyncpg=True)
        return await _db.aconnect_postgres(url, connect_timeout=5)

    def __init__(self, schema: str, topic: str) -> None:
        self.topic = topic
        # The core's statements with the DB-API's %s, and with asyncpg's $1 (_db.numbered).
        self._statements = (_dictionary_statements(schema), _dictionary_statements(schema, numbered=True))

    @staticmethod
    def went_away(e: BaseException, conn: Any) -> bool:
        """Whether the server went away (restart, failover): send the step again on a new one.
        The connection's rule, and psycopg's word that this connection is broken or closed
        (asyncpg's lost errors are the connection's: ``_db.connection_lost``)."""
        if _db.is_asyncpg(conn):
            return _db.connection_lost(e)
        return _db.connection_lost(e) and (getattr(conn, "broken", False) or bool(conn.closed))

    @staticmethod
    def spoilt(conn: Any) -> bool:
        """After a cancelled step: psycopg cancelled the statement on the server and waited for
        the connection; one that is not idle now is not trusted with the next call. asyncpg's
        is never trusted again: its cancellation returns before the server's answer."""
        if _db.is_asyncpg(conn):
            return True
        import psycopg

        return bool(conn.closed or conn.broken or conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE)

    async def _one(self, conn: Any, which: int, params: Sequence[Any]) -> Any:
        sql = self._statements[_db.numbered(conn)][which]
        # Lists as lists: psycopg2 adapts a list, not a tuple, to an array.
        row = await _db.aexecute(conn, sql, [list(p) if isinstance(p, tuple) else p for p in params])
        return row[0] if row else None

    async def ids(self, conn: Any, values: Sequence[str]) -> list[int]:
        return await self._one(conn, self.IDS, (self.topic, list(values)))  # type: ignore[no-any-return]

    async def lookup(self, conn: Any, values: Sequence[str]) -> list[int | None]:
        return await self._one(conn, self.LOOKUP, (self.topic, list(values)))  # type: ignore[no-any-return]

    async def values(self, conn: Any, ids: Sequence[int]) -> list[str | None]:
        return await self._one(conn, self.VALUES, (self.topic, list(ids)))  # type: ignore[no-any-return]

    async def create(self, conn: Any) -> None:
        await self._one(conn, self.CREATE, (self.topic,))

    async def drop(self, conn: Any) -> None:
        await self._one(conn, self.DROP, (self.topic,))


class _AsyncMysql(_link_async._AsyncMysqlLink):
    """MySQL and MariaDB: the core's protocol, over PyMySQL (aiomysql on the event loop), or a
    connection that acts as one (Django's, ``shardid.django.dictionary._DjangoMysql``)."""

    def __init__(self, schema: str, topic: str) -> None:
        self._sqls = {d: _MysqlDictSql(schema, d) for d in _mysql.DIALECTS}
        self._schema = schema
        self.topic = topic
        self._statements: dict[tuple[str, str, int], str] = {}

    @classmethod
    def went_away(cls, e: BaseException, conn: Any) -> bool:
        return cls.lost(e)

    @staticmethod
    def spoilt(conn: Any) -> bool:
        # Cut mid-statement, the answer unread: nothing more can be sent on it.
        return True

    def _sql(self, conn: Any, which: str, n: int = -1) -> str:
        """The statement ``which`` (for ``n`` items, when it takes a list) for ``conn``'s server."""
        dialect = _mysql.dialect_of(conn)
        key = (dialect, which, n)
        found = self._statements.get(key)
        if found is None:
            sql = self._sqls[dialect]
            found = getattr(sql, which)(n) if n >= 0 else getattr(sql, which)()
            if n <= 64:  # a few sizes come back often; the rest render each time
                self._statements[key] = found
        return found

    def _unknown(self) -> _mysql.ServerError:
        return _mysql.ServerError(_UNKNOWN_TOPIC_SQLSTATE, f"no topic {self.topic!r}")

    def _dropped(self) -> _mysql.ServerError:
        return _mysql.ServerError(_TOPIC_DROPPED_SQLSTATE, f"topic {self.topic!r} was dropped")

    async def lookup(self, conn: Any, values: Sequence[str]) -> list[int | None]:
        async with conn.cursor() as cur:
            await cur.execute(self._sql(conn, "find", len(values)), (*values, self.topic))
            rows = await cur.fetchall()
        if not rows:
            raise self._unknown()
        found = {value.decode(): id for _, value, id in rows if value is not None}
        return [found.get(v) for v in values]

    async def ids(self, conn: Any, values: Sequence[str]) -> list[int]:
        answers = await self.lookup(conn, values)
        if None not in answers:
            return answers  # type: ignore[return-value]
        return await self._assign(conn, values, answers)

    async def _assign(self, conn: Any, values: Sequence[str], answers: list[int | None]) -> list[int]:
        """New IDs for the strings of ``values`` still missing: the core's transaction, each
        step sent as it says and its rows or the driver's error number fed back. Inside a
        caller's transaction (Django's atomic()), a rolled-back one is the caller's to run again.
        On asyncio a task cancelled here closes the connection (its answer is unread: nothing
        more can be sent on it), and the server rolls the transaction back, or has committed it
        already: either way the topic stays dense."""
        missing = [v for v, a in zip(values, answers) if a is None]
        resend = bool(getattr(conn, "retryable", True))
        tx = _MysqlAssign(_mysql.dialect_of(conn), self._schema, self.topic, missing, resend)
        error: BaseException | None = None
        step: tuple[Any, ...] = ("begin",)
        while True:
            rows: Sequence[Sequence[Any]] = ()
            # The whole step in the try, the protocol's calls too: an interruption between two
            # statements (a signal at a call or a loop's jump) rolls back as one inside them.
            try:
                step = tx.next()
                if step[0] == "begin":
                    await conn.begin()
                elif step[0] == "commit":
                    await conn.commit()
                elif step[0] == "rollback":
                    await conn.rollback()
                elif step[0] == "run":
                    async with conn.cursor() as cur:
                        await cur.execute(step[1], step[2])
                        rows = await cur.fetchall() or ()
                elif step[0] == "assigned":
                    by_value = dict(zip(missing, step[1]))
                    return [a if a is not None else by_value[v] for v, a in zip(values, answers)]
                elif step[1] == "unknown_topic":
                    raise self._unknown()
                elif step[1] == "topic_dropped":
                    raise self._dropped()
                elif error is not None:
                    raise error
                else:
                    raise _mysql.ServerError("XX000", f"the server's answer for topic {self.topic!r} is not one shardid's DDL makes")
                tx.answer([[c.decode() if isinstance(c, (bytes, bytearray)) else c for c in row] for row in rows])
            except asyncio.CancelledError:
                _mysql.close_now(conn)
                raise
            except Exception as e:  # noqa: BLE001 - fed to the protocol, raised when it fails
                if step[0] in ("failed", "assigned"):
                    raise
                error = e
                tx.failed(_mysql._number(e))
                continue
            except BaseException:
                # Interrupted (KeyboardInterrupt, SystemExit): left rolled back, not mid-transaction.
                try:
                    await conn.rollback()
                except Exception:  # noqa: BLE001, S110 - the connection broke: the server rolls back
                    pass
                raise

    async def values(self, conn: Any, ids: Sequence[int]) -> list[str | None]:
        async with conn.cursor() as cur:
            await cur.execute(self._sql(conn, "find_values", len(ids)), (*ids, self.topic))
            rows = await cur.fetchall()
        if not rows:
            raise self._unknown()
        found = {id: value.decode() for _, id, value in rows if id is not None}
        return [found.get(i) for i in ids]

    async def create(self, conn: Any) -> None:
        async with conn.cursor() as cur:
            await cur.execute(self._sql(conn, "create_topic"), (self.topic,))
            await cur.execute(self._sql(conn, "state"), (self.topic,))
            row = await cur.fetchone()
        # The topic's state after create: UNKNOWN_TOPIC (no row), TOPIC_DROPPED.
        if row is None:
            raise self._unknown()
        if row[0]:
            raise self._dropped()

    async def drop(self, conn: Any) -> None:
        async with conn.cursor() as cur:
            await cur.execute(self._sql(conn, "drop_topic"), (self.topic,))
            await cur.execute(self._sql(conn, "state"), (self.topic,))
            if await cur.fetchone() is None:
                raise self._unknown()


class _AsyncSqlite(_link_async._AsyncSqliteLink):
    """SQLite: the core's protocol (``shardid::sql::sqlite``'s dictionary), over ``sqlite3``
    (on a worker thread for asyncio): lookups in autocommit, the strings still missing numbered
    under ``BEGIN IMMEDIATE``; the tables created on first use."""

    def __init__(self, schema: str, topic: str) -> None:
        self._steps = _sqlite.Dictionary(schema, topic)
        self.ddl = self._steps.ddl
        self.topic = topic

    @classmethod
    def went_away(cls, e: BaseException, conn: Any) -> bool:
        return cls.lost(e)

    @staticmethod
    def spoilt(conn: Any) -> bool:
        # A cancelled step finishes on its thread, under the connection's lock: the
        # connection stays usable.
        return False

    async def ids(self, conn: Any, values: Sequence[str]) -> list[int]:
        return await _sqlite.arun(self._steps.ids, conn, values)

    async def lookup(self, conn: Any, values: Sequence[str]) -> list[int | None]:
        return await _sqlite.arun(self._steps.lookup, conn, values)

    async def values(self, conn: Any, ids: Sequence[int]) -> list[str | None]:
        return await _sqlite.arun(self._steps.values, conn, ids)

    async def create(self, conn: Any) -> None:
        await _sqlite.arun(self._steps.create, conn)

    async def drop(self, conn: Any) -> None:
        await _sqlite.arun(self._steps.drop, conn)


def default_schema(conninfo: str, schema: str | None) -> str:
    """``schema``, or the default of the database ``conninfo`` names: ``dict``, ``main`` on
    SQLite."""
    if _database_of_url(conninfo, "conninfo") == "sqlite":
        return _sqlite.schema_of(schema)
    return "dict" if schema is None else schema


def dialect(conninfo: str, schema: str, topic: str) -> Any:
    """The dialect object of the database ``conninfo`` names (the core's rule; ``INVALID_ARGUMENT``
    at once for a URL no driver takes, or that the core cannot read)."""
    database = _database_of_url(conninfo, "conninfo")
    # UNSUPPORTED now for a SQLAlchemy URL's driver this side does not run; the link's connect
    # takes the driver out again (PostgreSQL's honours it).
    plain = _link_async.plain_url(conninfo)
    if database == "postgres":
        return _AsyncPostgres(schema, topic)
    if database == "sqlite":
        _sqlite.path_of(plain)  # INVALID_ARGUMENT now, not at the first call
        return _AsyncSqlite(_sqlite.schema_of(schema), topic)
    _mysql.check_url(plain)  # INVALID_ARGUMENT now, not at the first call
    _mysql._aiomysql()  # UNSUPPORTED now, without the driver
    return _AsyncMysql(schema, topic)


class _AsyncConnection:
    """One connection to the topic's server, opened at the first step and opened again once
    when the server broke it (every step is safe to run again: a transaction the server lost
    rolled back whole). The caller holds a lock: one step at a time."""

    def __init__(self, conninfo: str, dialect: Any, cache: Any) -> None:
        self.conninfo = conninfo
        self.dialect = dialect
        self._cache = cache
        self._conn: Any = None
        self._pid = os.getpid()

    async def run(self, step: str, *args: Any) -> Any:
        """The dialect's ``step`` on the connection; the errors as :func:`translate` says."""
        if self._pid != os.getpid():  # a forked child: never the parent's socket
            self._conn, self._pid = None, os.getpid()
        for attempt in (1, 2):
            if self._conn is None or not self.dialect.is_open(self._conn):
                self._conn = await self.dialect.connect(self.conninfo)
            self._cache._sent(attempt == 2)
            try:
                return await getattr(self.dialect, step)(self._conn, *args)
            except ShardIdError:
                raise
            except asyncio.CancelledError:
                if self._conn is not None and self.dialect.spoilt(self._conn):
                    await self.close()
                raise
            except Exception as e:
                if not self.dialect.went_away(e, self._conn):
                    raise translate(e, self.dialect.topic) from e
                await self.close()
                if attempt == 2:
                    raise _db.unreachable_error(e) from e
        raise AssertionError("unreachable")

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await self.dialect.close(conn)
