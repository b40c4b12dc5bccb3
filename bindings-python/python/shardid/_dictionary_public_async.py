"""The dictionary client of :mod:`shardid.dictionary` on an event loop (:class:`AsyncDictionary`),
and the one source of the blocking one (:class:`Dictionary`), which
``bindings-python/tools/async_to_sync.py`` makes from this file (``_dictionary_public_generated.py``):
change this file, then run the script. ``if is_async():`` marks what only one of them does. The
steps and the connection are ``shardid._dictionary_async``'s (the blocking ones generated from it,
``shardid._dictionary_generated``). Not for direct use: :mod:`shardid.dictionary` names both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from shardid import _db, _dictionary_async
from shardid._acompat import ALock, is_async
from shardid._shardid import DEFAULT_CACHE, _check_topic, _DictCache, _error, server_for


def _servers(conninfo: str | Sequence[str], topic: str) -> tuple[list[str], int]:
    """The servers ``conninfo`` names (each read by the core's rule for URLs now) and the index
    of the one that holds ``topic``."""
    _check_topic(topic)
    servers = [conninfo] if isinstance(conninfo, str) else list(conninfo)
    if not servers or not all(isinstance(c, str) for c in servers):
        raise _error("INVALID_ARGUMENT", argument="conninfo", reason="must be a connection string or a non-empty list of them")
    for server in servers:
        _dictionary_async._database_of_url(server, "conninfo")  # INVALID_ARGUMENT now for a URL no driver takes
    return servers, server_for(topic, len(servers))


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

    if not is_async():
        __doc__ = """The dictionary of one ``topic`` on the PostgreSQL server at ``conninfo`` (a libpq
        connection string or URL, or a list of them: see the module's documentation), whose
        ``schema`` holds the dictionary's DDL (``dict`` by default); or on MySQL or MariaDB, given
        ``mysql://user:password@host:port/database`` URLs (PyMySQL; ``schema`` is the database
        holding the DDL); or in a SQLite file, given a ``sqlite:///path.db`` URL (the standard
        ``sqlite3``; the tables created on first use, in schema ``main`` by default).

        Thread-safe (one connection, one statement at a time; cached answers need no lock of
        Python's). After ``fork()`` a child opens a connection of its own and keeps the cache.
        """

    topic: str
    schema: str
    cache: _DictCache
    _closed: bool

    def __init__(
        self,
        conninfo: str | Sequence[str],
        topic: str,
        *,
        schema: str | None = None,
        cache_size: int = DEFAULT_CACHE,
    ) -> None:
        self.servers, self.server = _servers(conninfo, topic)
        """``server``: the index in ``servers`` of the server that holds this topic."""
        self.conninfo = self.servers[self.server]
        self._start(topic, _dictionary_async.default_schema(self.conninfo, schema), cache_size)
        self._lock = ALock()
        self._connection: Any = _dictionary_async._AsyncConnection(self.conninfo, self._dialect(self.conninfo), self.cache)

    def _start(self, topic: str, schema: str, cache_size: int) -> None:
        """What every dictionary of this process holds, whoever holds its connection: the
        topic, the schema, the core's cache (reported to exporters from the start until
        closed), and whether it was closed."""
        _check_topic(topic)
        self.topic = topic
        self.schema = schema
        self.cache = _DictCache(cache_size)
        self.cache._register(schema, topic)
        self._closed = False

    def _open(self) -> None:
        if self._closed:
            raise _db.closed_error(f"the Dictionary of topic {self.topic}")

    def _shut(self) -> None:
        """Every later call raises ``CLOSED``; exporters stop reporting it (the object may live
        on)."""
        self._closed = True
        self.cache._unregister()

    def stats(self) -> dict[str, int]:
        """What this dictionary did: its cache's hits and misses both ways (``id_hits``,
        ``id_misses``, ``value_hits``, ``value_misses``) and the statements it sent
        (``statements``, ``retries``; on MySQL one a step)."""
        return self.cache.stats()  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        server = getattr(self, "server", 0)
        return f"{type(self).__name__}(topic={self.topic!r}, schema={self.schema!r}, server={server}, cached={len(self.cache)})"

    def _dialect(self, conninfo: str) -> Any:
        """The database's steps: PostgreSQL's, MySQL's and MariaDB's, or SQLite's."""
        return _dictionary_async.dialect(conninfo, self.schema, self.topic)

    # -- the database ----------------------------------------------------------------------

    async def _run(self, step: str, *args: Any) -> Any:
        """The database's ``step`` on the connection, one at a time."""
        async with self._lock:
            return await self._connection.run(step, *args)

    async def _ask(self, which: str, misses: list[Any], plan: Callable[..., Any], complete: Callable[..., Any]) -> list[Any]:
        """The answers for ``misses`` (strings or IDs the cache lacked when the call began)."""
        if is_async():
            # Once the connection is this task's, the cache is asked again — tasks that wanted
            # the same new strings were answered meanwhile by the one before them — and only
            # what it still lacks is sent. So a thousand tasks asking for one new string send
            # one statement.
            async with self._lock:
                keys, answers, rest = plan(misses, count=False)  # this call's misses are counted
                if rest:
                    found = await self._connection.run(which, rest)
                    answers = complete(keys, answers, rest, found, True)
                return answers  # type: ignore[no-any-return]
        else:
            return self._run(which, misses)  # type: ignore[no-any-return]

    def _committed(self, strings: list[Any], ids: list[Any]) -> bool:
        """Whether the server's answers (pairs of ``strings`` and ``ids``) are committed and may
        be cached now: always here (autocommit). A client that runs in the caller's transaction
        caches them when it commits."""
        return True

    # -- topics ----------------------------------------------------------------------------

    async def create(self) -> None:
        """Creates the topic (IDs from 0) if it does not exist. A dropped topic's name is
        refused (:class:`~shardid.TopicDroppedError`)."""
        self._open()
        await self._run("create")

    async def drop(self) -> None:
        """Drops the topic: its strings and IDs stay readable, nothing new is assigned, its name
        is never used again."""
        self._open()
        await self._run("drop")

    # -- strings to IDs --------------------------------------------------------------------

    async def id(self, value: str) -> int:
        """The ID of ``value``, assigned (the topic's next) if it is new."""
        if self._closed:  # inline, not _open(): a cached answer costs ~0.5 us, a call 0.1 more
            self._open()
        found = self.cache.id(value)
        if found is not None:
            return found
        return (await self.ids((value,)))[0]

    async def ids(self, values: Iterable[str]) -> list[int]:
        """The IDs of ``values``, in order, assigning the topic's next IDs to new strings in the
        order they first appear (a string repeated gets one ID)."""
        self._open()
        values, ids, misses = self.cache.plan_ids(values)
        if misses:
            answers = await self._ask("ids", misses, self.cache.plan_ids, self.cache.complete_ids)
            ids = self.cache.complete_ids(values, ids, misses, answers, self._committed(misses, answers))
        return ids  # type: ignore[return-value]  # every one assigned

    async def lookup(self, values: Iterable[str]) -> list[int | None]:
        """The IDs of ``values``, ``None`` for a string never assigned: never assigns."""
        self._open()
        values, ids, misses = self.cache.plan_ids(values)
        if misses:
            answers = await self._ask("lookup", misses, self.cache.plan_ids, self.cache.complete_ids)
            ids = self.cache.complete_ids(values, ids, misses, answers, self._committed(misses, answers))
        return ids

    # -- IDs to strings --------------------------------------------------------------------

    async def value(self, id: int) -> str | None:
        """The string of ``id``, ``None`` if the topic never assigned it."""
        if self._closed:
            self._open()
        found = self.cache.value(id)
        if found is not None:
            return found
        return (await self.values((id,)))[0]

    async def values(self, ids: Iterable[int]) -> list[str | None]:
        """The strings of ``ids``, in order, ``None`` for an ID never assigned."""
        self._open()
        ids, values, misses = self.cache.plan_values(ids)
        if misses:
            answers = await self._ask("values", misses, self.cache.plan_values, self.cache.complete_values)
            # A string found by ID is cached with it once committed: strings are keyed by both.
            values = self.cache.complete_values(ids, values, misses, answers, self._committed(answers, misses))
        return values

    # -- life --------------------------------------------------------------------------------

    async def close(self) -> None:
        """Closes the connection; every later call raises :class:`~shardid.ClosedError`.
        Closing twice is fine."""
        self._shut()
        async with self._lock:
            await self._connection.close()

    async def __aenter__(self) -> AsyncDictionary:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
