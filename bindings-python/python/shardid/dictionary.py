"""A string ↔ ID dictionary on PostgreSQL, MySQL or MariaDB: a string and a topic in, that
string's ID out, the same one forever. IDs of a topic are dense, from 0, with no holes (rolled-back batches give
their numbers back).

Install the DDL once (``python -m shardid.sql --dictionary --schema dict | psql -1 -f -``, or
:func:`shardid.sql.dictionary`), create a topic, then::

    from shardid.dictionary import Dictionary

    urls = Dictionary("postgresql://app@db/app", "urls")
    urls.create()                         # once; idempotent
    urls.id("https://example.com/")       # 0, the same forever
    urls.ids(["/a", "/b", "/a"])          # [1, 2, 1]: one round trip, new strings numbered in order
    urls.lookup(["/a", "/nope"])          # [1, None]: never assigns
    urls.value(2), urls.values([0, 9])    # "/b", ["https://example.com/", None]

On an event loop (FastAPI, Starlette, Django's async views), :class:`AsyncDictionary` is the
same client over psycopg's ``AsyncConnection`` (aiomysql's on ``mysql://`` URLs): the same
calls, awaited (``await urls.id("/a")``), the same cache, rules and statements; a cached answer
never suspends the task, and ``urls.cache.id("/a")`` answers from the cache alone without an
``await``.

Answers are cached (both ways, at most ``cache_size`` each, recently used kept): a mapping never
changes, so a cached answer is never stale and a cached call never touches the database. The
strings of one call that the cache does not hold go to the server in one statement.

Rules (the core's, the same in every language): a topic is 1 to 200 bytes of UTF-8, a string 1
to 2048 bytes (PostgreSQL's ``text`` holds no NUL character, so neither may they), an ID 0 to
2**63 - 1, one call at most 100,000 strings. A bad one raises
:class:`~shardid.InvalidArgumentError` naming it (``values[3]``); an unknown topic
:class:`~shardid.UnknownTopicError`; a new string for a dropped topic
:class:`~shardid.TopicDroppedError`. A broken connection is reopened and the statement sent once
more (every statement is safe to repeat); a database that cannot be reached is
:class:`~shardid.DatabaseUnreachableError` (a :class:`ConnectionError`, the driver's error as its
``__cause__``); the database's own errors are the driver's (psycopg 3, psycopg2 or PyMySQL). After
:meth:`Dictionary.close`, every call raises :class:`~shardid.ClosedError`.

``conninfo`` may be a list: topics are then spread over the servers, each topic on the server
:func:`server_for` names (FNV-1a then jump consistent hash, as in every shardid package). The
list is part of the data: growing it moves some topics (about ``1/(n + 1)`` of them) to the new
server, with their strings to be moved by you.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from shardid import _db, _mysql
from shardid._errors import DatabaseUnreachableError, ShardIdError
from shardid._shardid import (
    _TOPIC_DROPPED_SQLSTATE,
    _UNKNOWN_TOPIC_SQLSTATE,
    DEFAULT_CACHE,
    MAX_BATCH,
    MAX_VALUE_LEN,
    _check_topic,
    _DictCache,
    _dictionary_statements,
    _error,
    server_for,
)

__all__ = ["DEFAULT_CACHE", "MAX_BATCH", "MAX_VALUE_LEN", "AsyncDictionary", "Dictionary", "server_for"]


class Dictionary:
    """The dictionary of one ``topic`` on the PostgreSQL server at ``conninfo`` (a libpq
    connection string or URL, or a list of them: see the module's documentation), whose
    ``schema`` holds the dictionary's DDL; or on MySQL or MariaDB, given
    ``mysql://user:password@host:port/database`` URLs (PyMySQL; ``schema`` is the database
    holding the DDL).

    Thread-safe (one connection, one statement at a time; cached answers need no lock of
    Python's). After ``fork()`` a child opens a connection of its own and keeps the cache.
    """

    def __init__(
        self,
        conninfo: str | Sequence[str],
        topic: str,
        *,
        schema: str = "dict",
        cache_size: int = DEFAULT_CACHE,
    ) -> None:
        _check_topic(topic)
        (self._ids_sql, self._lookup_sql, self._values_sql, self._create_sql, self._drop_sql) = (
            _dictionary_statements(schema)
        )
        servers = [conninfo] if isinstance(conninfo, str) else list(conninfo)
        if not servers or not all(isinstance(c, str) for c in servers):
            raise _error("INVALID_ARGUMENT", argument="conninfo", reason="must be a connection string or a non-empty list of them")
        self.topic = topic
        self.schema = schema
        self.servers = servers
        self.server = server_for(topic, len(servers))
        """The index in ``servers`` of the server that holds this topic."""
        self.conninfo = servers[self.server]
        for server in servers:
            _mysql.is_url(server)  # INVALID_ARGUMENT now for a URL no driver takes (the core's rule)
        # MySQL and MariaDB: the core's statements and steps for them, over PyMySQL.
        self._mysql = _mysql.Dictionary(schema, topic) if _mysql.is_url(self.conninfo) else None
        if self._mysql is not None:
            _mysql.check_url(self.conninfo)  # INVALID_ARGUMENT now, not at the first call
        self.cache = _DictCache(cache_size)
        self.cache._register(schema, topic)
        self._lock = threading.Lock()
        self._conn: Any = None
        self._pid = os.getpid()
        self._closed = False

    # -- the database ----------------------------------------------------------------------

    def _open(self) -> None:
        if self._closed:
            raise _db.closed_error(f"the Dictionary of topic {self.topic}")

    def _connect(self) -> Any:
        if self._mysql is not None:
            return _mysql.connect(self.conninfo)
        # psycopg 3 without server-side prepared statements (a pooler in transaction mode,
        # PgBouncer before 1.21, cannot carry them), or psycopg2 when only it is installed.
        return _db.connect_postgres(self.conninfo, connect_timeout=5)

    def _run_mysql(self, step: Any, *args: Any) -> Any:
        """Runs one step of the MySQL protocol (``shardid._mysql.Dictionary``); reconnects once
        on a broken connection (every step is safe to run again: a transaction the server lost
        rolled back whole)."""
        pymysql = _mysql._pymysql()
        with self._lock:
            if self._pid != os.getpid():  # a forked child: never the parent's socket
                self._conn, self._pid = None, os.getpid()
            for attempt in (1, 2):
                if self._conn is None or not self._conn.open:
                    self._conn = self._connect()
                self.cache._sent(attempt == 2)
                try:
                    return step(self._conn, *args)
                except (pymysql.err.MySQLError, _mysql.ServerError) as e:
                    if not _mysql.lost(e):
                        raise self._translate(e) from e
                    if attempt == 2:
                        raise _db.unreachable_error(e) from e
                    self._drop()
        raise AssertionError("unreachable")

    def _execute(self, sql: str, params: tuple[Any, ...]) -> Any:
        """Runs one statement; returns its one value. Reconnects once on a broken connection."""
        with self._lock:
            if self._pid != os.getpid():  # a forked child: never the parent's socket
                self._conn, self._pid = None, os.getpid()
            for attempt in (1, 2):
                if self._conn is None or self._conn.closed:
                    self._conn = self._connect()
                self.cache._sent(attempt == 2)
                try:
                    # Lists as lists: psycopg2 adapts a list, not a tuple, to an array.
                    row = _db.execute(self._conn, sql, [list(p) if isinstance(p, tuple) else p for p in params])
                    return row[0] if row else None
                except ShardIdError:
                    raise
                except Exception as e:
                    lost = _db.connection_lost(e) and (getattr(self._conn, "broken", False) or bool(self._conn.closed))
                    if not lost:
                        raise self._translate(e) from e
                    # The server went away (restart, failover): every statement here is safe
                    # to send again on a new connection.
                    self._drop()
                    if attempt == 2:
                        raise _db.unreachable_error(e) from e
        raise AssertionError("unreachable")

    def _committed(self, strings: list[Any], ids: list[Any]) -> bool:
        """Whether the server's answers (pairs of ``strings`` and ``ids``) are committed and may
        be cached now: always here (autocommit). A client that runs in the caller's transaction
        caches them when it commits."""
        return True

    def _translate(self, e: BaseException) -> BaseException:
        state = _db.sqlstate(e)  # psycopg, psycopg2, or the MySQL side's ServerError
        if state == _UNKNOWN_TOPIC_SQLSTATE:
            return _error("UNKNOWN_TOPIC", topic=self.topic)
        if state == _TOPIC_DROPPED_SQLSTATE:
            return _error("TOPIC_DROPPED", topic=self.topic)
        if not isinstance(e, DatabaseUnreachableError) and _db.unreachable(e):
            return _db.unreachable_error(e)
        return e

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001, S110 - closing a broken connection
                pass

    # -- topics ----------------------------------------------------------------------------

    def create(self) -> None:
        """Creates the topic (IDs from 0) if it does not exist. A dropped topic's name is
        refused (:class:`~shardid.TopicDroppedError`)."""
        self._open()
        if self._mysql is not None:
            self._run_mysql(self._mysql.create)
            return
        self._execute(self._create_sql, (self.topic,))

    def drop(self) -> None:
        """Drops the topic: its strings and IDs stay readable, nothing new is assigned, its name
        is never used again."""
        self._open()
        if self._mysql is not None:
            self._run_mysql(self._mysql.drop)
            return
        self._execute(self._drop_sql, (self.topic,))

    # -- strings to IDs --------------------------------------------------------------------

    def id(self, value: str) -> int:
        """The ID of ``value``, assigned (the topic's next) if it is new."""
        if self._closed:  # inline, not _open(): a cached answer costs ~0.5 us, a call 0.1 more
            self._open()
        found = self.cache.id(value)
        if found is not None:
            return found
        return self.ids((value,))[0]

    def ids(self, values: Iterable[str]) -> list[int]:
        """The IDs of ``values``, in order, assigning the topic's next IDs to new strings in the
        order they first appear (a string repeated gets one ID)."""
        self._open()
        values, ids, misses = self.cache.plan_ids(values)
        if misses and self._mysql is not None:
            answers = self._run_mysql(self._mysql.ids, misses)
            ids = self.cache.complete_ids(values, ids, misses, answers, self._committed(misses, answers))
        elif misses:
            answers = self._execute(self._ids_sql, (self.topic, misses))
            ids = self.cache.complete_ids(values, ids, misses, answers, self._committed(misses, answers))
        return ids  # type: ignore[return-value]  # every one assigned

    def lookup(self, values: Iterable[str]) -> list[int | None]:
        """The IDs of ``values``, ``None`` for a string never assigned: never assigns."""
        self._open()
        values, ids, misses = self.cache.plan_ids(values)
        if misses:
            if self._mysql is not None:
                answers = self._run_mysql(self._mysql.lookup, misses)
            else:
                answers = self._execute(self._lookup_sql, (self.topic, misses))
            ids = self.cache.complete_ids(values, ids, misses, answers, self._committed(misses, answers))
        return ids

    # -- IDs to strings --------------------------------------------------------------------

    def value(self, id: int) -> str | None:
        """The string of ``id``, ``None`` if the topic never assigned it."""
        if self._closed:
            self._open()
        found = self.cache.value(id)
        if found is not None:
            return found
        return self.values((id,))[0]

    def values(self, ids: Iterable[int]) -> list[str | None]:
        """The strings of ``ids``, in order, ``None`` for an ID never assigned."""
        self._open()
        ids, values, misses = self.cache.plan_values(ids)
        if misses:
            if self._mysql is not None:
                answers = self._run_mysql(self._mysql.values, misses)
            else:
                answers = self._execute(self._values_sql, (self.topic, misses))
            # A string found by ID is cached with it once committed: strings are keyed by both.
            values = self.cache.complete_values(ids, values, misses, answers, self._committed(answers, misses))
        return values

    def stats(self) -> dict[str, int]:
        """What this dictionary did: its cache's hits and misses both ways (``id_hits``,
        ``id_misses``, ``value_hits``, ``value_misses``) and the statements it sent
        (``statements``, ``retries``; on MySQL one a step)."""
        return self.cache.stats()

    # -- life --------------------------------------------------------------------------------

    def close(self) -> None:
        """Closes the connection; every later call raises :class:`~shardid.ClosedError`.
        Closing twice is fine."""
        self._closed = True
        self.cache._unregister()
        with self._lock:
            self._drop()

    def __enter__(self) -> Dictionary:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Dictionary(topic={self.topic!r}, schema={self.schema!r}, server={self.server}, cached={len(self.cache)})"


class AsyncDictionary:
    """:class:`Dictionary` for asyncio: the dictionary of one ``topic`` on the PostgreSQL
    server at ``conninfo`` (or a list of them), over psycopg's ``AsyncConnection``; or on MySQL
    or MariaDB given ``mysql://`` URLs, over aiomysql (``pip install shardid[mysql-async]``),
    with :class:`Dictionary`'s steps for them. Every call that may reach the server is a
    coroutine; a call the cache answers whole returns without suspending, and
    ``cache.id(value)`` / ``cache.value(id)`` answer from the cache alone.

    The cache, the batch planning, the statements and the error rules are the core's, the same
    as :class:`Dictionary`'s. One connection per dictionary, one statement at a time (tasks
    wait their turn on an ``asyncio.Lock``); a task cancelled while its statement runs leaves
    the cache as it was and the connection usable (psycopg cancels the statement on the
    server; a connection it could not bring back is closed, and the next call opens another).
    On MySQL a cancelled statement's connection is closed (its answer is unread) and the server
    rolls back what it had open; the next call opens another. Use it from one event loop.

        urls = AsyncDictionary("postgresql://app@db/app", "urls")
        await urls.create()
        await urls.id("/a")      # or: async with AsyncDictionary(...) as urls:
        await urls.close()
    """

    def __init__(
        self,
        conninfo: str | Sequence[str],
        topic: str,
        *,
        schema: str = "dict",
        cache_size: int = DEFAULT_CACHE,
    ) -> None:
        _check_topic(topic)
        (self._ids_sql, self._lookup_sql, self._values_sql, self._create_sql, self._drop_sql) = (
            _dictionary_statements(schema)
        )
        servers = [conninfo] if isinstance(conninfo, str) else list(conninfo)
        if not servers or not all(isinstance(c, str) for c in servers):
            raise _error("INVALID_ARGUMENT", argument="conninfo", reason="must be a connection string or a non-empty list of them")
        self.topic = topic
        self.schema = schema
        self.servers = servers
        self.server = server_for(topic, len(servers))
        """The index in ``servers`` of the server that holds this topic."""
        self.conninfo = servers[self.server]
        for server in servers:
            _mysql.is_url(server)  # INVALID_ARGUMENT now for a URL no driver takes (the core's rule)
        # MySQL and MariaDB: the core's statements and steps for them, over aiomysql.
        self._mysql = _mysql.Dictionary(schema, topic) if _mysql.is_url(self.conninfo) else None
        if self._mysql is not None:
            _mysql.check_url(self.conninfo)  # INVALID_ARGUMENT now, not at the first call
            _mysql._aiomysql()  # UNSUPPORTED now, without aiomysql
        self._sql = {"ids": self._ids_sql, "lookup": self._lookup_sql, "values": self._values_sql}
        self.cache = _DictCache(cache_size)
        self._lock: asyncio.Lock | None = None
        self._conn: Any = None

    # -- the database ----------------------------------------------------------------------

    async def _execute(self, sql: str, params: tuple[Any, ...]) -> Any:
        """Runs one statement (its turn on the connection awaited); returns its one value."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            return await self._send(sql, params)

    async def _ask(self, which: str, misses: list[Any], plan: Any, complete: Any) -> list[Any]:
        """The answers for ``misses`` (strings or IDs the cache lacked when the call began):
        once the connection is this task's, the cache is asked again — tasks that wanted the
        same new strings were answered meanwhile by the one before them — and only what it
        still lacks is sent. So a thousand tasks asking for one new string send one statement."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            keys, answers, rest = plan(misses)
            if rest:
                if self._mysql is not None:
                    found = await self._run_mysql(getattr(self._mysql, f"{which}_async"), rest)
                else:
                    found = await self._send(self._sql[which], (self.topic, rest))
                answers = complete(keys, answers, rest, found, True)
            return answers  # type: ignore[no-any-return]

    async def _run_mysql(self, step: Any, *args: Any) -> Any:
        """Runs one step of the MySQL protocol (``shardid._mysql.Dictionary``, its ``_async``
        twin), the lock held. Reconnects once on a broken connection (every step is safe to run
        again: a transaction the server lost rolled back whole)."""
        pymysql = _mysql._pymysql()
        for attempt in (1, 2):
            if self._conn is None or self._conn.closed:
                self._conn = await _mysql.connect_async(self.conninfo)
            try:
                return await step(self._conn, *args)
            except (pymysql.err.MySQLError, _mysql.ServerError) as e:
                if not _mysql.lost(e):
                    raise self._translate(e) from e
                await self._drop()
                if attempt == 2:
                    raise _db.unreachable_error(e) from e
            except asyncio.CancelledError:
                # Cut mid-statement, the answer unread: nothing more can be sent on it.
                await self._drop()
                raise
        raise AssertionError("unreachable")

    async def _send(self, sql: str, params: tuple[Any, ...]) -> Any:
        """Runs one statement, the lock held; returns its one value. Reconnects once on a
        broken connection (every statement of the dictionary is safe to send again)."""
        import psycopg

        for attempt in (1, 2):
            if self._conn is None or self._conn.closed:
                # No server-side prepared statements: a pooler in transaction mode cannot
                # carry them.
                self._conn = await psycopg.AsyncConnection.connect(
                    self.conninfo, autocommit=True, connect_timeout=5, prepare_threshold=None
                )
            try:
                cur = await self._conn.execute(sql, params)
                row = await cur.fetchone()
                return row[0] if row else None
            except psycopg.OperationalError as e:
                if not (self._conn.broken or self._conn.closed) or attempt == 2:
                    raise self._translate(e) from e
                await self._drop()  # the server went away: send it again on a new one
            except psycopg.Error as e:
                raise self._translate(e) from e
            except asyncio.CancelledError:
                # psycopg cancelled the statement on the server and waited for the
                # connection; one that is not idle now is not trusted with the next call.
                conn = self._conn
                if conn is not None and (
                    conn.closed or conn.broken or conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE
                ):
                    await self._drop()
                raise
        raise AssertionError("unreachable")

    def _translate(self, e: BaseException) -> BaseException:
        state = getattr(e, "sqlstate", None)
        if state == _UNKNOWN_TOPIC_SQLSTATE:
            return _error("UNKNOWN_TOPIC", topic=self.topic)
        if state == _TOPIC_DROPPED_SQLSTATE:
            return _error("TOPIC_DROPPED", topic=self.topic)
        return e

    async def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and self._mysql is not None:
            _mysql.close_now(conn)  # aiomysql's close is immediate
        elif conn is not None:
            try:
                await conn.close()
            except Exception:  # noqa: BLE001, S110 - closing a broken connection
                pass

    # -- topics ----------------------------------------------------------------------------

    async def create(self) -> None:
        """Creates the topic (IDs from 0) if it does not exist; see :meth:`Dictionary.create`."""
        if self._mysql is not None:
            await self._step(self._mysql.create_async)
            return
        await self._execute(self._create_sql, (self.topic,))

    async def drop(self) -> None:
        """Drops the topic; see :meth:`Dictionary.drop`."""
        if self._mysql is not None:
            await self._step(self._mysql.drop_async)
            return
        await self._execute(self._drop_sql, (self.topic,))

    async def _step(self, step: Any) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await self._run_mysql(step)

    # -- strings to IDs --------------------------------------------------------------------

    async def id(self, value: str) -> int:
        """The ID of ``value``, assigned (the topic's next) if it is new."""
        found = self.cache.id(value)
        if found is not None:
            return found
        return (await self.ids((value,)))[0]

    async def ids(self, values: Iterable[str]) -> list[int]:
        """The IDs of ``values``, in order, assigning the topic's next IDs to new strings in the
        order they first appear."""
        values, ids, misses = self.cache.plan_ids(values)
        if misses:
            answers = await self._ask("ids", misses, self.cache.plan_ids, self.cache.complete_ids)
            ids = self.cache.complete_ids(values, ids, misses, answers, True)
        return ids  # type: ignore[return-value]  # every one assigned

    async def lookup(self, values: Iterable[str]) -> list[int | None]:
        """The IDs of ``values``, ``None`` for a string never assigned: never assigns."""
        values, ids, misses = self.cache.plan_ids(values)
        if misses:
            answers = await self._ask("lookup", misses, self.cache.plan_ids, self.cache.complete_ids)
            ids = self.cache.complete_ids(values, ids, misses, answers, True)
        return ids

    # -- IDs to strings --------------------------------------------------------------------

    async def value(self, id: int) -> str | None:
        """The string of ``id``, ``None`` if the topic never assigned it."""
        found = self.cache.value(id)
        if found is not None:
            return found
        return (await self.values((id,)))[0]

    async def values(self, ids: Iterable[int]) -> list[str | None]:
        """The strings of ``ids``, in order, ``None`` for an ID never assigned."""
        ids, values, misses = self.cache.plan_values(ids)
        if misses:
            answers = await self._ask("values", misses, self.cache.plan_values, self.cache.complete_values)
            values = self.cache.complete_values(ids, values, misses, answers, True)
        return values

    # -- life --------------------------------------------------------------------------------

    async def close(self) -> None:
        """Closes the connection (the next call opens another). The cache stays."""
        if self._lock is None:
            await self._drop()
            return
        async with self._lock:
            await self._drop()

    async def __aenter__(self) -> AsyncDictionary:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"AsyncDictionary(topic={self.topic!r}, schema={self.schema!r}, server={self.server}, cached={len(self.cache)})"
