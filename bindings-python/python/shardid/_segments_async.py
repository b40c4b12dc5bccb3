"""The driver of :class:`~shardid.segments.AsyncDenseIds`, and the one source of
:class:`~shardid.segments.DenseIds`' (``_segments_generated.py``, made from this file by
``bindings-python/tools/async_to_sync.py``: threads for tasks, blocking connections for
asyncio's). Change this file, then run the script.

The driver does what the core's allocator (native, ``shardid.segments.DenseIds``) leaves to
Python: the fetches (each server in turn, from the one after the last that answered), waiting
for them, giving the unused rest back, the errors. What a database needs is its dialect object,
chosen once from the URL by the core's rule (``_shardid._database_of_url``): the statements
sent, the connection, and which of the driver's errors lose the connection or say the server
cannot be reached.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable, Sequence
from typing import Any

from shardid import _db, _link_async, _mysql, _sqlite
from shardid._acompat import ASignal, aspawn, is_async
from shardid._errors import (
    ClosedError,
    DatabaseUnreachableError,
    InvalidArgumentError,
    NotMysqlError,
    SegmentUnavailableError,
    UnsupportedError,
)
from shardid._shardid import (
    _UNKNOWN_TAG_SQLSTATE,
    _database_of_url,
    _error,
    _is_redis_url,
    _mysql_segment_statements,
    _mysql_registration_problem,
    _mysql_serial_statements,
    _segment_statements,
    _SegmentProtocol,
    _serial_statements,
)


def check_names(tag: str, schema: str) -> tuple[str, str]:
    """Checks a tag (1 to 200 bytes of text) and a schema name (a plain lower-case identifier);
    returns the statements that take a segment and give one back (PostgreSQL's)."""
    if not isinstance(tag, str) or not 1 <= len(tag.encode()) <= 200:
        reason = "must be 1 to 200 bytes of text"
        raise InvalidArgumentError(f"tag {reason}", argument="tag", reason=reason)
    take, give_back, _ = _segment_statements(schema)
    return take, give_back


# MySQL's error number of a table that does not exist.
_NO_SUCH_TABLE = 1146


def mysql_missing_ddl(e: BaseException, schema: str) -> BaseException:
    """``DATABASE`` naming the DDL to run when the serials' registrations table is not there
    (the segments' DDL alone does not make it on MySQL); ``e`` as it is otherwise."""
    if _mysql._number(e) != _NO_SUCH_TABLE:
        return e
    reason = (
        f"no serials' registrations in database {schema} ({e.args[-1]}): run the DDL of "
        f"python -m shardid.sql --dialect mysql --serials --schema {schema}, after --segments'"
    )
    return _error("DATABASE", reason=reason)


class _SegmentSteps:
    """What the dialects share: a serial period's segment taken and given back by the core's
    protocol (``SegmentProtocol``: the take, the period's tag made at its first take, the
    MySQL family's resend) on one connection, each dialect only running a statement
    (``row``) and naming its server (``server``) and its errors' codes (``code``)."""

    name = ""
    _protocol: Any
    # Each dialect's (or its link's).
    server: Callable[[Any], str]
    row: Callable[..., Any]
    code: Callable[[BaseException], str | None]
    errors: Callable[[], tuple[type[BaseException], ...]]

    async def on(self, conn: Any, start: Any, tag: str) -> Any:
        """Runs the operation ``start(protocol)`` begins on ``conn`` (one server); its result,
        or the driver's error raised as it was, or the core's refusal (``sqlstate``)."""
        start(self._protocol)
        error: BaseException | None = None
        while True:
            step = self._protocol.next()
            if step[0] == "connect":
                self._protocol.connected(self.server(conn))
            elif step[0] == "run":
                try:
                    self._protocol.answer(await self.row(conn, step[2], step[3]))
                except self.errors() as e:
                    error = e
                    self._protocol.failed(self.code(e))
            elif step[0] == "failed" and step[1] is None:
                assert error is not None
                raise error
            elif step[0] == "failed":
                raise self.refused(step[1], tag)
            else:
                return step[1]

    @staticmethod
    def refused(refusal: tuple[str, str, str], tag: str) -> BaseException:
        """The core's refusal of an answer (an unknown tag, an exhausted one, a row no DDL
        makes), with the SQLSTATE PostgreSQL's functions raise for the same case."""
        _, sqlstate, reason = refusal
        return _mysql.ServerError(sqlstate, f"no segment of tag {tag!r}: {reason}")

    async def take(self, conn: Any, server: int, tag: str, size: int) -> tuple[int, int, int]:
        """One segment of ``tag`` on ``conn``, a connection to server ``server`` (tests and
        tools: ``DenseIds`` runs the protocol across its servers itself)."""
        return await self.on(conn, lambda p: p.take(tag, size), tag)  # type: ignore[no-any-return]

    async def take_period(self, conn: Any, tag: str, period: str, period_tag: str, size: int) -> tuple[int, int, int]:
        return await self.on(conn, lambda p: p.take_period(tag, period, size), period_tag)  # type: ignore[no-any-return]

    async def give_back(self, conn: Any, tag: str, first: int, end: int) -> bool:
        return bool(await self.on(conn, lambda p: p.give_back(tag, first, end), tag))


class _AsyncPostgres(_SegmentSteps, _link_async._AsyncPostgresLink):
    """PostgreSQL: the functions of the segments' DDL, over psycopg (psycopg2 too, blocking),
    or asyncpg on the event loop (a ``postgresql+asyncpg://`` URL, or the application's pool
    or connection: :func:`dialect`)."""

    name = "postgres"

    def __init__(self, schema: str, tag: str) -> None:
        check_names(tag, schema)
        self._protocol = _SegmentProtocol(self.name, schema, 1)
        self._create_tag = _segment_statements(schema)[2]
        self._serial_info, _, _, self._register, _, _ = _serial_statements(schema)

    @staticmethod
    async def connect(url: str) -> Any:
        # No server-side prepared statements (psycopg's prepare_threshold=None, asyncpg's
        # statement cache off): a pooler in transaction mode cannot carry them.
        if is_async():  # psycopg 3, or asyncpg for its URL
            return await _db.aconnect_postgres(url, connect_timeout=5, asyncpg=True)
        return await _db.aconnect_postgres(url, connect_timeout=5)

    @staticmethod
    def server(conn: Any) -> str:
        return "postgres"

    @staticmethod
    async def row(conn: Any, sql: str, values: tuple[Any, ...]) -> Any:
        if is_async():
            if _db.numbered(conn):
                # asyncpg's $1: the protocol's statements come in the DB-API's %s.
                return await _db.aexecute(conn, _db.as_numbered(sql), values)
        return await _db.aexecute(conn, sql, values)

    @staticmethod
    def code(e: BaseException) -> str | None:
        return _db.sqlstate(e)

    @staticmethod
    def errors() -> tuple[type[BaseException], ...]:
        # psycopg 3's or psycopg2's errors (whichever is installed), and ours.
        return (Exception,)

    async def create_tag(self, conn: Any, tag: str) -> None:
        await self.row(conn, self._create_tag, (tag, 1))

    # -- serial numbers: the functions of the segments' DDL ----------------------------------

    async def register(self, conn: Any, tag: str, format: str, zone: str, registration: Any, max_gap: int) -> str | None:
        """Registers a serial tag (once). A registration that does not fit is the function's
        error (``SERIAL_MISMATCH``'s SQLSTATE): no reason is returned."""
        canonical, shape, pieces, width, reset = registration
        await self.row(conn, self._register, (tag, format, zone, canonical, shape, pieces, width, reset, max_gap))
        return None

    async def serial_info(self, conn: Any, tag: str) -> tuple[str, str, int]:
        row = await self.row(conn, self._serial_info, (tag,))
        if row is None:  # asyncpg's fetchrow: a function's error, or no row
            raise _mysql.ServerError(_UNKNOWN_TAG_SQLSTATE, f"no serial tag {tag!r}")
        canonical, zone, max_gap = row
        return canonical, zone, max_gap

    @staticmethod
    def serial_error(e: BaseException, schema: str) -> BaseException:
        return e


class _AsyncMysql(_SegmentSteps, _link_async._AsyncMysqlLink):
    """MySQL and MariaDB: the core's statements for them (``shardid::sql::mysql``); over
    PyMySQL, or aiomysql on the event loop."""

    name = "mysql"

    def __init__(self, schema: str, tag: str) -> None:
        check_names(tag, schema)
        _mysql._aiomysql()  # UNSUPPORTED now, without the driver, not at the first fetch
        self._protocol = _SegmentProtocol(self.name, schema, 1)
        self._statements = {d: _mysql_segment_statements(schema, d) for d in _mysql.DIALECTS}
        self._serial_info, self._register, self._registered, _ = _mysql_serial_statements(schema)

    @staticmethod
    def errors() -> tuple[type[BaseException], ...]:
        return (_mysql.pymysql_errors(), _mysql.ServerError, NotMysqlError, DatabaseUnreachableError)

    @staticmethod
    def server(conn: Any) -> str:
        return conn.shardid_dialect  # type: ignore[no-any-return]

    @staticmethod
    async def row(conn: Any, sql: str, values: tuple[Any, ...]) -> Any:
        """The first row, or a statement without rows as ``(rowcount, lastrowid)``."""
        async with conn.cursor() as cur:
            rows = await cur.execute(sql, values)
            if cur.description is None:
                return (rows, cur.lastrowid)
            return await cur.fetchone()

    @staticmethod
    def code(e: BaseException) -> str | None:
        number = _mysql._number(e)
        return None if number is None else str(number)

    async def create_tag(self, conn: Any, tag: str) -> None:
        async with conn.cursor() as cur:
            await cur.execute(self._statements[_mysql.dialect_of(conn)][3], (tag,))

    # -- serial numbers: the core's order (``shardid::serial::mysql``) ------------------------

    async def register(self, conn: Any, tag: str, format: str, zone: str, registration: Any, max_gap: int) -> str | None:
        """Registers a serial tag (once, the core's ``MysqlSerials``): ``INSERT IGNORE``, then
        the rows of the tag or of its shape say whether it fits (the unique shape makes two
        registrations at once safe); the reason of ``SERIAL_MISMATCH``, or ``None``."""
        canonical, shape, pieces, width, reset = registration
        async with conn.cursor() as cur:
            await cur.execute(self._register, (tag, format, zone, canonical, shape, "\n".join(pieces), width, reset, max_gap))
            await cur.execute(self._registered, (tag, shape))
            rows = [tuple(row) for row in await cur.fetchall()]
        return _mysql_registration_problem(rows, tag, canonical, zone)  # type: ignore[no-any-return]

    async def serial_info(self, conn: Any, tag: str) -> tuple[str, str, int]:
        async with conn.cursor() as cur:
            await cur.execute(self._serial_info, (tag,))
            row = await cur.fetchone()
        if row is None:
            raise _mysql.ServerError(_UNKNOWN_TAG_SQLSTATE, f"no serial tag {tag!r}")
        canonical, zone, max_gap = row
        return canonical, zone, 1 if max_gap is None else int(max_gap)

    @staticmethod
    def serial_error(e: BaseException, schema: str) -> BaseException:
        return mysql_missing_ddl(e, schema)


class _AsyncSqlite(_SegmentSteps, _link_async._AsyncSqliteLink):
    """SQLite: the core's statements for it (``shardid::sql::sqlite``), one file, the tables
    created on first use (when the connection opens); over ``sqlite3`` (on a worker thread for
    asyncio)."""

    name = "sqlite"

    def __init__(self, schema: str, tag: str) -> None:
        check_names(tag, schema)
        self._protocol = _SegmentProtocol(self.name, schema, 1)
        self._steps = _sqlite.Segments(schema)
        self.ddl = self._steps.ddl

    @staticmethod
    def errors() -> tuple[type[BaseException], ...]:
        return (sqlite3.Error, _sqlite.StatementError, DatabaseUnreachableError)

    @staticmethod
    def server(conn: Any) -> str:
        return "sqlite"

    @staticmethod
    async def row(conn: Any, sql: str, values: tuple[Any, ...]) -> Any:
        return await _sqlite.arun(_sqlite.one, conn, sql, values)

    @staticmethod
    def code(e: BaseException) -> str | None:
        return getattr(e, "sqlstate", None)

    @staticmethod
    def refused(refusal: tuple[str, str, str], tag: str) -> BaseException:
        _, sqlstate, reason = refusal
        return _sqlite.StatementError(sqlstate, f"no segment of tag {tag!r}: {reason}")

    async def create_tag(self, conn: Any, tag: str) -> None:
        await _sqlite.arun(self._steps.create_tag, conn, tag)

    # -- serial numbers: the core's steps for SQLite ------------------------------------------

    async def register(self, conn: Any, tag: str, format: str, zone: str, registration: Any, max_gap: int) -> str | None:
        """Registers a serial tag (once): inserted, then compared (SQLite has no function to do
        both); the reason of ``SERIAL_MISMATCH``, or ``None``."""
        return await _sqlite.arun(self._steps.register, conn, tag, format, zone, registration, max_gap)

    async def serial_info(self, conn: Any, tag: str) -> tuple[str, str, int]:
        canonical, zone, max_gap, _ = await _sqlite.arun(self._steps.serial_info, conn, tag)
        return canonical, zone, max_gap

    @staticmethod
    def serial_error(e: BaseException, schema: str) -> BaseException:
        return e


def dialect(conninfo: Any, schema: str | None, tag: str) -> tuple[Any, list[Any], str]:
    """The dialect object of the database the connection strings name (the core's rule; every
    one the same database, one file for SQLite), the servers, and the schema (``schema``, or
    the default: ``seg``, ``main`` on SQLite). ``INVALID_ARGUMENT`` at once for a URL no driver
    takes or that the core cannot read.

    On asyncio, the application's asyncpg ``Pool`` or ``Connection`` is one PostgreSQL server
    too (``_db.alend``); the blocking clients refuse them (``UNSUPPORTED``: asyncpg has no
    blocking API)."""
    if _db.is_asyncpg(conninfo) and not isinstance(conninfo, str):
        if is_async():
            if _db.is_asyncpg_pool(conninfo) or _db.is_asyncpg_connection(conninfo):
                return _AsyncPostgres(schema or "seg", tag), [conninfo], schema or "seg"
        reason = f"runs asyncpg's {type(conninfo).__name__} on asyncio only: use AsyncDenseIds or AsyncSerials"
        if is_async():
            reason = f"takes an asyncpg Pool or Connection, not its {type(conninfo).__name__}"
        raise _error("UNSUPPORTED", reason=f"shardid {reason}")
    servers = [conninfo] if isinstance(conninfo, str) else list(conninfo)
    if not servers or not all(isinstance(c, str) for c in servers):
        reason = "must be a connection string or a non-empty list of them"
        raise InvalidArgumentError(f"conninfo {reason}", argument="conninfo", reason=reason)
    if _is_redis_url(servers[0]):  # Redis (issue 57): the executor of the core's Redis steps
        from shardid import _redis

        if is_async():
            return _redis.dialect(servers, schema, tag, asyncio=True)
        return _redis.dialect(servers, schema, tag, asyncio=False)
    # The database, by the core's one rule; every server the same family.
    family = {"mariadb": "mysql"}
    databases = [_database_of_url(c, "conninfo") for c in servers]
    database = databases[0]
    if any(family.get(d, d) != family.get(database, database) for d in databases):
        reason = "must all be PostgreSQL connection strings, all mysql:// URLs, or one sqlite:/// URL"
        raise InvalidArgumentError(f"conninfo {reason}", argument="conninfo", reason=reason)
    if database == "postgres":
        return _AsyncPostgres(schema or "seg", tag), servers, schema or "seg"
    if database == "sqlite":
        if len(servers) > 1:
            # Ticket servers need a stride per server; one file has none: each file would hand
            # out the same numbers.
            reason = "must be one sqlite:/// URL: SQLite files are no ticket servers"
            raise InvalidArgumentError(f"conninfo {reason}", argument="conninfo", reason=reason)
        _sqlite.path_of(servers[0])  # INVALID_ARGUMENT now, not at the first fetch
        schema = _sqlite.schema_of(schema)
        return _AsyncSqlite(schema, tag), servers, schema
    for url in servers:
        _mysql.check_url(url)  # INVALID_ARGUMENT now, not at the first fetch
    return _AsyncMysql(schema or "seg", tag), servers, schema or "seg"


class _AsyncDriver:
    """The Python side of one allocator. Its methods take the allocator as ``ids``; it keeps
    no reference to it (the allocator holds the driver)."""

    def __init__(
        self,
        conninfo: str | Sequence[str],
        tag: str,
        *,
        schema: str | None = None,
        wait_ms: int = 5_000,
    ) -> None:
        self._dialect, self.servers, schema = dialect(conninfo, schema, tag)
        self.conninfo = self.servers[0]
        self.tag = tag
        self.schema = schema
        self.wait_ms = wait_ms
        self._arrived = ASignal()
        self._closed = False
        self._reset(None)

    def _reset(self, ids: Any) -> None:
        """A fresh state for this process (at the start, and in a forked child)."""
        if ids is not None:
            ids._adopt()
        self._conns: list[Any] = [None] * len(self.servers)
        # The take and the give-back across the servers (which one, in turn; the rest to the
        # last one taken from): the core's.
        if self._dialect.name == "redis":
            self._protocol = self._dialect.protocol()
        else:
            self._protocol = _SegmentProtocol(self._dialect.name, self.schema, len(self.servers))
        self._error: BaseException | None = None
        self.fetches = 0
        if is_async():
            self._running: Any = None  # the fetch task whose body runs

    def _start(self, ids: Any, size: int) -> None:
        # Called by the allocator (native) when a fetch becomes due (on the loop, for asyncio).
        if is_async():
            task = aspawn(self._fetch, ids, size, name="shardid-segment")

            def never_ran(task: Any) -> None:
                # A task cancelled before its first step never runs its body, which reports how
                # the fetch ended: the allocator would wait for a fetch under way for good.
                if task.cancelled() and self._running is not task:
                    ids._fetch_failed()
                    self._error = asyncio.CancelledError()
                    self._arrived.notify()

            task.add_done_callback(never_ran)
        else:
            aspawn(self._fetch, ids, size, name="shardid-segment")

    async def _fetch(self, ids: Any, size: int) -> None:
        """Takes one segment (the core's protocol says from which server, and how) and hands it
        to the allocator."""
        if is_async():
            self._running = asyncio.current_task()
        try:
            step, error = await self._execute(lambda p: p.take(self.tag, size))
            if step[0] == "segment":
                ids._fill(*step[1])
                self.fetches += 1
                self._error = None
                return
            ids._fetch_failed()
            self._error = error if step[1] is None else self._dialect.refused(step[1], self.tag)
        except BaseException as e:  # noqa: BLE001 - reported to the callers that wait
            ids._fetch_failed()
            self._error = e
            if isinstance(e, asyncio.CancelledError):
                raise
        finally:
            self._arrived.notify()

    async def _execute(self, start: Any) -> tuple[Any, BaseException | None]:
        """Runs the operation ``start(protocol)`` begins: each step on the server's connection,
        its row or its error's code fed back; the last step and the last driver error."""
        if is_async():
            try:
                return await self._steps(start)
            except asyncio.CancelledError:
                # Cancelled mid-statement, asyncpg returns before the server's answer: its
                # connection (ours, or one the pool lent) is not trusted again. The number the
                # server took, if it did, is a hole: the allocator counted the fetch as failed.
                for conn, source in zip(self._conns, self.servers):
                    if conn is not None and _db.is_asyncpg(conn) and not _db.is_asyncpg_connection(source):
                        conn.terminate()
                raise
            finally:
                # The application's pool lends a connection for one operation (a take, a
                # give-back), given back when it ends, however it ends (a cancelled task too).
                for server, source in enumerate(self.servers):
                    if _db.is_asyncpg_pool(source) and self._conns[server] is not None:
                        await asyncio.shield(self._drop(server))
        return await self._steps(start)

    async def _steps(self, start: Any) -> tuple[Any, BaseException | None]:
        start(self._protocol)
        error: BaseException | None = None
        errors = self._dialect.errors()
        while True:
            step = self._protocol.next()
            if step[0] not in ("connect", "run"):
                return step, error
            server = step[1]
            try:
                conn = await self._connection(server)
                if step[0] == "connect":
                    self._protocol.connected(self._dialect.server(conn))
                else:
                    self._protocol.answer(await self._dialect.row(conn, step[2], step[3]))
            except errors as e:
                # A server that cannot be reached is DATABASE_UNREACHABLE (the driver's error
                # as its cause); the database's own errors are kept as they are.
                error = e
                if not isinstance(e, DatabaseUnreachableError) and self._dialect.unreachable(e):
                    error = _db.unreachable_error(e)
                    error.__cause__ = e
                if self._dialect.gives_up(e):
                    await self._drop(server)  # reconnect at the next fetch
                self._protocol.failed(self._dialect.code(e) if step[0] == "run" else None)

    async def _connection(self, server: int) -> Any:
        if is_async():
            source = self.servers[server]
            if _db.is_asyncpg_connection(source):
                # The application's connection: checked before each statement (open, and in
                # no transaction of the application's), never kept.
                return await _db.alend(source, f"DenseIds of tag {self.tag}", self.wait_ms)
            if _db.is_asyncpg_pool(source):
                # The application's pool: a connection lent for this operation (_execute).
                if self._conns[server] is None:
                    self._conns[server] = await _db.alend(source, f"DenseIds of tag {self.tag}", self.wait_ms)
                return self._conns[server]
        conn = self._conns[server]
        if conn is None or not self._dialect.is_open(conn):
            conn = self._conns[server] = await self._dialect.connect(self.servers[server])
        return conn

    async def _drop(self, server: int) -> None:
        conn, self._conns[server] = self._conns[server], None
        if conn is not None:
            if is_async():
                source = self.servers[server]
                if _db.is_asyncpg_pool(source):
                    await _db.agive_back(source, conn)
                    return
                if not isinstance(source, str):
                    return  # the application's connection: the application's to close
            await self._dialect.close(conn)

    def _unavailable(self, ids: Any = None) -> BaseException:
        """Why no ID can be handed out: closed, no such tag, or no segment (saying whether the
        database cannot be reached, the last fetch failed, or none arrived in time)."""
        if self._closed:
            return _db.closed_error(f"DenseIds of tag {self.tag}")
        error = self._error
        if error is not None and _db.sqlstate(error) == _UNKNOWN_TAG_SQLSTATE:
            return _error("UNKNOWN_TAG", tag=self.tag, create="create_tag")
        if isinstance(error, (NotMysqlError, UnsupportedError, ClosedError)):
            return error  # not a server to wait for (ClosedError: the application's pool or connection)
        if self._never_reached():
            return self._unreachable_error()
        # What the last fetch met, even with a retry under way at the deadline (as Rust's
        # driver says): the retry of an exhausted tag or a refusing server meets it again, and
        # "no segment arrived" hid why (a retry in flight when a loaded machine's wait ended).
        if error is None:
            reason = f"no segment arrived within {self.wait_ms} ms"
        elif isinstance(error, DatabaseUnreachableError):
            reason = str(error)
        else:
            reason = f"the last fetch failed: {_db.describe(error)}"
        unavailable = SegmentUnavailableError(f"no segment of tag {self.tag} is available: {reason}", tag=self.tag, reason=reason)
        unavailable.__cause__ = error
        return unavailable

    def _never_reached(self) -> bool:
        """Whether no server was ever reached: no segment taken, and the last fetch (every server
        in turn) failed because the database cannot be reached."""
        error = self._error
        if self.fetches or error is None:
            return False
        return isinstance(error, DatabaseUnreachableError) or self._dialect.unreachable(error)

    def _unreachable_error(self) -> BaseException:
        """``DATABASE_UNREACHABLE`` for the last fetch's error, once the wait is over (as Node's
        ``denseIds()`` and the leases raise it), the driver's error its cause: a server that
        comes up within the wait is still taken."""
        error = self._error
        assert error is not None
        unreachable = _db.unreachable_error(error)
        if unreachable is not error:
            unreachable.__cause__ = error
        return unreachable

    async def _wait(self, ids: Any, deadline: float) -> float:
        """Waits a little for the fetch under way; raises once past ``deadline`` (0: set it)."""
        if (
            self._closed
            or (self._error is not None and _db.sqlstate(self._error) == _UNKNOWN_TAG_SQLSTATE)
            or isinstance(self._error, (NotMysqlError, UnsupportedError, ClosedError))
        ):
            raise self._unavailable(ids)
        if ids._forked():
            self._reset(ids)  # a forked child: segments of its own
            return deadline
        now = time.monotonic()
        if not deadline:
            return now + self.wait_ms / 1000
        if now >= deadline:
            raise self._unavailable(ids)
        await self._arrived.wait(min(deadline - now, 0.05))
        return deadline

    async def _when_empty(self, ids: Any) -> int:
        """The next ID once both segments are used up: waits for the fetch under way, at most
        ``wait_ms``."""
        deadline = 0.0
        while True:
            deadline = await self._wait(ids, deadline)
            id = ids._try_next_id()
            if id is not None:
                return id  # type: ignore[no-any-return]

    async def next_ids(self, ids: Any, n: int) -> list[int]:
        """``n`` IDs, increasing (waiting for segments as :meth:`_when_empty` does)."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise InvalidArgumentError(f"n {n!r} must be an int of 0 or more", argument="n", reason="must be 0 or more")
        out: list[int] = ids._take_ids(n)
        deadline = 0.0
        while len(out) < n:
            deadline = await self._wait(ids, deadline)
            more = ids._take_ids(n - len(out), True)
            if more:
                out.extend(more)
                deadline = 0.0
        return out

    async def close(self, ids: Any) -> None:
        """Gives the unused rest of the last segment back (if nobody took a segment since: then
        a restart continues at the next number) and closes the connections. Call it when
        nothing else takes IDs any more; closing twice is fine."""
        self._closed = True
        if not ids._shut():  # closed before, or a forked child: nothing of its own to give back
            return
        deadline = time.monotonic() + self.wait_ms / 1000
        while ids._fetching() and time.monotonic() < deadline:
            await self._arrived.wait(0.05)
        unused = ids._unused()
        try:
            if unused is not None:
                first, end, count, lost = unused
                # A server that is down keeps the rest: a hole.
                returned = False
                try:
                    step, _ = await self._execute(lambda p: p.give_back(self.tag, first, end))
                    returned = step == ("given_back", True)
                finally:
                    ids._settle(returned)  # the allocator counts the holes (`skipped`)
        finally:
            for server in range(len(self.servers)):
                await self._drop(server)
