"""MySQL and MariaDB for :mod:`shardid.segments` and :mod:`shardid.dictionary`, over PyMySQL
(``pip install shardid[mysql]``), and on an event loop over aiomysql (``pip install
shardid[mysql-async]``: ``AsyncDictionary``, ``AsyncDenseIds``). Not for direct use: give them a
``mysql://user:password@host:port/database`` (or ``mariadb://``) URL.

Each step exists twice, ``take`` and ``take_async``, ``ids`` and ``ids_async``: the same
statements in the same order, the second awaiting aiomysql's cursor (PyMySQL's, on asyncio, with
PyMySQL's errors); what they decide from the rows is one function both call.

Everything here executes the core's statements (``shardid::sql::mysql``) in the order the core
documents; the numbers and the checks are the core's. What is PyMySQL's own: the connection (the
URL read by the core, percent-decoded), its errors (the server's own reported as they are; a
server that cannot be reached is ``DATABASE_UNREACHABLE`` with PyMySQL's error as its cause),
and telling a server that is not MySQL from one that is down.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from shardid._shardid import (
    _TOPIC_DROPPED_SQLSTATE,
    _UNKNOWN_TOPIC_SQLSTATE,
    _assign_new,
    _database_of_url,
    _error,
    _mysql_segment_statements,
    _mysql_url,
    _MysqlDictSql,
    _MysqlFetch,
    _topic_base,
)

# MySQL's error numbers the drivers act on.
_DEADLOCK = 1213
_LOCK_WAIT_TIMEOUT = 1205
_UNKNOWN_VARIABLE = 1193
# The statements' dialects: MySQL's server_id, or MariaDB's Galera-aware name of the server
# (shardid::sql::Dialect::server_identity).
DIALECTS = ("mysql", "mariadb")
# The client's: the server went away or the connection broke. Reconnect.
_LOST = {2003, 2006, 2013, 2014, 2055, 0}
# A transaction rolled back by the server (a deadlock, a lock wait timeout): run it again.
_RETRIES = 5
# How long the TCP connection may take, and then the server's greeting, before the server is
# taken for down or for something else than MySQL (a server greets at once; the greeting's bound
# is short so that DenseIds' wait, 5 s by default, sees the error).
CONNECT_TIMEOUT_S = 5
GREETING_TIMEOUT_S = 2


def is_url(conninfo: object, argument: str = "conninfo") -> bool:
    """Whether ``conninfo`` is a MySQL or MariaDB URL, by the core's one rule for every client
    (``shardid::sql::Dialect::of_url``): ``INVALID_ARGUMENT`` on ``argument`` at once for a URL
    no driver takes (``postgresql+psycopg://...``, ``nonsense``), naming the schemes taken."""
    return isinstance(conninfo, str) and _database_of_url(conninfo, argument) != "postgres"


def check_url(url: str) -> None:
    """``INVALID_ARGUMENT`` on ``url`` for a URL the core cannot read."""
    _mysql_url(url)


class ServerError(Exception):
    """An answer of the server the core refused (an unknown tag, a row no DDL makes), with the
    SQLSTATE PostgreSQL's functions raise for the same case, so the drivers' checks of
    ``sqlstate`` hold for both databases."""

    def __init__(self, sqlstate: str, message: str) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


def _pymysql() -> Any:
    try:
        import pymysql
    except ImportError:
        raise _error(
            "UNSUPPORTED", reason="a mysql:// URL needs PyMySQL: pip install shardid[mysql]"
        ) from None
    return pymysql


def _aiomysql() -> Any:
    _pymysql()
    try:
        import aiomysql
    except ImportError:
        raise _error(
            "UNSUPPORTED", reason="a mysql:// URL on asyncio needs aiomysql: pip install shardid[mysql-async]"
        ) from None
    return aiomysql


def pymysql_errors() -> type[BaseException]:
    """PyMySQL's base class of the server's and the client's errors."""
    return _pymysql().err.MySQLError  # type: ignore[no-any-return]


def connect(url: str) -> Any:
    """A PyMySQL connection (autocommit) to the server ``url`` names. ``NOT_MYSQL`` when the
    server accepts the connection but does not greet as MySQL (PyMySQL would wait forever);
    ``DATABASE_UNREACHABLE`` when it cannot be opened (refused, timed out, log-in refused)."""
    pymysql = _pymysql()
    user, password, host, port, database = _mysql_url(url)
    try:
        conn = pymysql.connect(
            host=host,
            port=port,
            user=user,
            password=password or "",
            database=database,
            autocommit=True,
            charset="utf8mb4",
            connect_timeout=CONNECT_TIMEOUT_S,
            # Bounds the greeting and the log-in only: set back to None below, so a statement
            # may wait on a lock as long as the server lets it.
            read_timeout=GREETING_TIMEOUT_S,
        )
    except pymysql.err.MySQLError as e:
        number = e.args[0] if e.args and isinstance(e.args[0], int) else None
        timed_out = number == 2013 and "timed out" in str(e)
        # Connected, then no greeting in time or a greeting of another protocol.
        if timed_out or isinstance(e, (pymysql.err.InternalError, pymysql.err.ProgrammingError)) and number is None:
            raise _error("NOT_MYSQL", server=f"{host}:{port}", reason=f"{e}") from e
        raise _error("DATABASE_UNREACHABLE", reason=" ".join(str(e).split())) from e
    except (ValueError, IndexError, UnicodeDecodeError, KeyError) as e:
        # PyMySQL read a greeting that is not MySQL's and choked on it.
        raise _error("NOT_MYSQL", server=f"{host}:{port}", reason=f"{type(e).__name__}: {e}") from e
    conn._read_timeout = None  # see read_timeout above
    conn.shardid_dialect = detect(conn)
    return conn


async def connect_async(url: str) -> Any:
    """:func:`connect` over aiomysql: an autocommit connection on the event loop, the same
    errors. aiomysql has no read timeout: the TCP connection has ``CONNECT_TIMEOUT_S``, the
    greeting and the log-in the ``GREETING_TIMEOUT_S`` after it."""
    pymysql, aiomysql = _pymysql(), _aiomysql()
    user, password, host, port, database = _mysql_url(url)
    opening = asyncio.ensure_future(
        asyncio.wait_for(
            aiomysql.connect(
                host=host,
                port=port,
                user=user,
                password=password or "",
                db=database,
                autocommit=True,
                charset="utf8mb4",
                connect_timeout=CONNECT_TIMEOUT_S,
            ),
            CONNECT_TIMEOUT_S + GREETING_TIMEOUT_S,
        )
    )
    try:
        # Shielded: aiomysql leaves the socket of a connection cancelled halfway open (for the
        # garbage collector, maybe after the loop closed); a caller cancelled meanwhile leaves
        # it to finish, and it is closed when it does.
        conn = await asyncio.shield(opening)
    except asyncio.CancelledError:
        opening.add_done_callback(_close_unwanted)
        raise
    except asyncio.TimeoutError as e:
        # The TCP connection has its own bound (2003 below): connected, then no greeting.
        raise _error("NOT_MYSQL", server=f"{host}:{port}", reason="no greeting in time") from e
    except pymysql.err.MySQLError as e:
        number = e.args[0] if e.args and isinstance(e.args[0], int) else None
        if isinstance(e, (pymysql.err.InternalError, pymysql.err.ProgrammingError)) and number is None:
            raise _error("NOT_MYSQL", server=f"{host}:{port}", reason=f"{e}") from e
        raise _error("DATABASE_UNREACHABLE", reason=" ".join(str(e).split())) from e
    except (ValueError, IndexError, UnicodeDecodeError, KeyError) as e:
        raise _error("NOT_MYSQL", server=f"{host}:{port}", reason=f"{type(e).__name__}: {e}") from e
    try:
        conn.shardid_dialect = await detect_async(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _close_unwanted(opening: asyncio.Future[Any]) -> None:
    if not opening.cancelled() and opening.exception() is None:
        close_now(opening.result())


def close_now(conn: Any) -> None:
    """Closes an aiomysql connection at once (no goodbye to the server, which then rolls back
    what the connection had open): also one cut mid-statement by a cancelled task, whose next
    bytes nobody will read."""
    try:
        conn.close()
    except Exception:  # noqa: BLE001, S110 - already closed
        pass


async def detect_async(conn: Any) -> str:
    """:func:`detect` on an aiomysql connection."""
    try:
        async with conn.cursor() as cur:
            await cur.execute("SELECT @@global.wsrep_on")
            await cur.fetchall()
    except Exception as e:
        if _number(e) == _UNKNOWN_VARIABLE:
            return "mysql"
        raise
    return "mariadb"


def detect(conn: Any) -> str:
    """The dialect of the server ``conn`` reaches (one round trip): ``"mariadb"`` when it knows
    MariaDB's variables, ``"mysql"`` when it refuses them (``shardid::sql::mysql::DETECT_DIALECT``)."""
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT @@global.wsrep_on")
            cur.fetchall()
    except Exception as e:
        if _number(e) == _UNKNOWN_VARIABLE:
            return "mysql"
        raise
    return "mariadb"


def dialect_of(conn: Any) -> str:
    """The dialect ``connect`` (or Django's connection) recorded on ``conn``, or learnt now."""
    dialect = getattr(conn, "shardid_dialect", None)
    if dialect is None:
        dialect = conn.shardid_dialect = detect(conn)
    return dialect  # type: ignore[no-any-return]


def lost(e: BaseException) -> bool:
    """Whether ``e`` means the connection is gone (reconnect)."""
    pymysql = _pymysql()
    if isinstance(e, pymysql.err.InterfaceError):
        return True
    return isinstance(e, pymysql.err.OperationalError) and bool(e.args) and e.args[0] in _LOST


def _number(e: BaseException) -> int | None:
    """MySQL's error number of a PyMySQL, mysqlclient or Django error (their first argument)."""
    return e.args[0] if e.args and isinstance(e.args[0], int) else None


# -- segments ---------------------------------------------------------------------------------


class Segments:
    """The segment statements of one database, and the stride each server's tag has (learnt
    at its first fetch, as the core's ``MysqlFetch`` says)."""

    def __init__(self, schema: str) -> None:
        self._statements = {d: _mysql_segment_statements(schema, d) for d in DIALECTS}
        self._strides: dict[int, int] = {}

    @staticmethod
    def errors() -> tuple[type[BaseException], ...]:
        return (_pymysql().err.MySQLError, ServerError)

    @staticmethod
    def connect(url: str) -> Any:
        return connect(url)

    @staticmethod
    def lost(e: BaseException) -> bool:
        return lost(e)

    def take(self, conn: Any, server: int, tag: str, size: int) -> tuple[int, int, int]:
        """One segment of ``tag``: ``(first, count, stride)``. A take the row refuses as too
        large is followed by a read of the largest size it allows, and a take of that."""
        read, take, _ = self._statements[dialect_of(conn)]
        fetch = _MysqlFetch(size, self._strides.get(server))
        with conn.cursor() as cur:
            while True:
                want = fetch.step()
                try:
                    if want is None:
                        cur.execute(read, (tag,))
                        self._read(fetch, server, tag, cur.fetchone())
                        continue
                    rows = cur.execute(take, (want, want, want, tag, want, want))
                except pymysql_errors() as e:
                    if self._again(fetch, e):
                        continue
                    raise
                segment = fetch.took(rows, cur.lastrowid)
                if segment is not None:
                    return self._segment(segment, tag)

    async def take_async(self, conn: Any, server: int, tag: str, size: int) -> tuple[int, int, int]:
        """:meth:`take` on an aiomysql connection."""
        read, take, _ = self._statements[conn.shardid_dialect]
        fetch = _MysqlFetch(size, self._strides.get(server))
        async with conn.cursor() as cur:
            while True:
                want = fetch.step()
                try:
                    if want is None:
                        await cur.execute(read, (tag,))
                        self._read(fetch, server, tag, await cur.fetchone())
                        continue
                    rows = await cur.execute(take, (want, want, want, tag, want, want))
                except pymysql_errors() as e:
                    if self._again(fetch, e):
                        continue
                    raise
                segment = fetch.took(rows, cur.lastrowid)
                if segment is not None:
                    return self._segment(segment, tag)

    def _read(self, fetch: Any, server: int, tag: str, row: Any) -> None:
        """The tag's row read: its stride learnt, or no segment at all."""
        problem = fetch.read(row)
        if problem is not None:
            raise ServerError(problem, f"no segment of tag {tag!r}: {problem}")
        self._strides[server] = fetch.stride

    @staticmethod
    def _again(fetch: Any, e: BaseException) -> bool:
        """Rolled back whole (a Galera certification conflict, a deadlock): the core says
        whether to send the same step again."""
        number = _number(e)
        return number is not None and bool(fetch.rolled_back(number))

    @staticmethod
    def _segment(segment: Any, tag: str) -> tuple[int, int, int]:
        if isinstance(segment, str):
            raise ServerError(segment, f"no segment of tag {tag!r}: {segment}")
        return segment  # type: ignore[no-any-return]

    def give_back(self, conn: Any, tag: str, first: int, end: int) -> bool:
        give_back = self._statements[dialect_of(conn)][2]
        with conn.cursor() as cur:
            return bool(cur.execute(give_back, (first, tag, end, first, first)) == 1)

    async def give_back_async(self, conn: Any, tag: str, first: int, end: int) -> bool:
        give_back = self._statements[conn.shardid_dialect][2]
        async with conn.cursor() as cur:
            return bool(await cur.execute(give_back, (first, tag, end, first, first)) == 1)


# -- the dictionary ----------------------------------------------------------------------------


class Dictionary:
    """The dictionary's protocol on one connection (see ``shardid::sql::mysql``'s dictionary):
    lookups without a lock, then for strings still missing one transaction that locks the topic
    row, looks again with a locking read, numbers the rest from the topic's next ID (the core's
    ``assign_new``), inserts them and moves ``next`` on."""

    def __init__(self, schema: str, topic: str) -> None:
        self._sqls = {d: _MysqlDictSql(schema, d) for d in DIALECTS}
        self.topic = topic
        self._statements: dict[tuple[str, str, int], str] = {}

    def _sql(self, conn: Any, which: str, n: int = -1) -> str:
        """The statement ``which`` (for ``n`` items, when it takes a list) for ``conn``'s server."""
        dialect = dialect_of(conn)
        key = (dialect, which, n)
        found = self._statements.get(key)
        if found is None:
            sql = self._sqls[dialect]
            found = getattr(sql, which)(n) if n >= 0 else getattr(sql, which)()
            if n <= 64:  # a few sizes come back often; the rest render each time
                self._statements[key] = found
        return found

    def _unknown(self) -> ServerError:
        return ServerError(_UNKNOWN_TOPIC_SQLSTATE, f"no topic {self.topic!r}")

    def _dropped(self) -> ServerError:
        return ServerError(_TOPIC_DROPPED_SQLSTATE, f"topic {self.topic!r} was dropped")

    def _found(self, rows: Sequence[Any]) -> dict[str, int]:
        """The IDs the find statement's ``rows`` give (no lock). ``UNKNOWN_TOPIC`` for no topic."""
        if not rows:
            raise self._unknown()
        return {value.decode(): id for _, value, id in rows if value is not None}

    def lookup(self, conn: Any, values: Sequence[str]) -> list[int | None]:
        with conn.cursor() as cur:
            cur.execute(self._sql(conn, "find", len(values)), (*values, self.topic))
            found = self._found(cur.fetchall())
        return [found.get(v) for v in values]

    async def lookup_async(self, conn: Any, values: Sequence[str]) -> list[int | None]:
        async with conn.cursor() as cur:
            await cur.execute(self._sql(conn, "find", len(values)), (*values, self.topic))
            found = self._found(await cur.fetchall())
        return [found.get(v) for v in values]

    def _retries(self, conn: Any) -> int:
        # Inside a caller's transaction (Django's atomic()), a rolled-back one is the caller's
        # to run again.
        return _RETRIES if getattr(conn, "retryable", True) else 1

    def ids(self, conn: Any, values: Sequence[str]) -> list[int]:
        answers = self.lookup(conn, values)
        if None not in answers:
            return answers  # type: ignore[return-value]
        retries = self._retries(conn)
        for attempt in range(1, retries + 1):
            try:
                return self._assign(conn, values, answers)
            except Exception as e:
                # Rolled back whole by the server: safe to run again.
                if _number(e) not in (_DEADLOCK, _LOCK_WAIT_TIMEOUT) or attempt == retries:
                    raise
        raise AssertionError("unreachable")

    async def ids_async(self, conn: Any, values: Sequence[str]) -> list[int]:
        answers = await self.lookup_async(conn, values)
        if None not in answers:
            return answers  # type: ignore[return-value]
        retries = self._retries(conn)
        for attempt in range(1, retries + 1):
            try:
                return await self._assign_async(conn, values, answers)
            except Exception as e:
                if _number(e) not in (_DEADLOCK, _LOCK_WAIT_TIMEOUT) or attempt == retries:
                    raise
        raise AssertionError("unreachable")

    def _numbered(self, locked: Any, missing: Sequence[str], rechecked: Sequence[Any]) -> tuple[list[Any], list[int | None], int]:
        """From the topic's row (``locked``) and the locking read of ``missing``
        (``rechecked``): the insert's parameters (empty: nothing new), the IDs of ``missing``,
        and the topic's next ID after the insert."""
        if locked is None:
            raise self._unknown()
        topic_id, next_id, dropped, moved = locked
        # After a step back (another server or origin, or marked restored) the lock statement
        # already moved next past what the topic's rate could have assigned.
        base = _topic_base(next_id, bool(moved))
        found = {value.decode(): id for value, id in rechecked}
        still: list[int | None] = [found.get(v) for v in missing]
        new = _assign_new(still, base)
        if new and dropped:
            raise self._dropped()
        params: list[Any] = []
        for i, id in new:
            params += (topic_id, missing[i], id)
            still[i] = id
        return params, still, base + len(new)

    @staticmethod
    def _merged(values: Sequence[str], answers: list[int | None], missing: Sequence[str], still: list[int | None]) -> list[int]:
        by_value = dict(zip(missing, still))
        return [a if a is not None else by_value[v] for v, a in zip(values, answers)]  # type: ignore[misc]

    def _assign(self, conn: Any, values: Sequence[str], answers: list[int | None]) -> list[int]:
        missing = [v for v, a in zip(values, answers) if a is None]
        conn.begin()
        try:
            with conn.cursor() as cur:
                cur.execute(self._sql(conn, "lock"), (self.topic,))
                locked = cur.fetchone()
                if locked is not None:
                    cur.execute(self._sql(conn, "recheck", len(missing)), (locked[0], *missing))
                params, still, following = self._numbered(locked, missing, cur.fetchall() if locked else ())
                if params:
                    cur.execute(self._sql(conn, "insert", len(params) // 3), params)
                    cur.execute(self._sql(conn, "advance"), (following, self.topic))
            conn.commit()
        except BaseException:
            try:
                conn.rollback()
            except Exception:  # noqa: BLE001, S110 - the connection broke: the server rolls back
                pass
            raise
        return self._merged(values, answers, missing, still)

    async def _assign_async(self, conn: Any, values: Sequence[str], answers: list[int | None]) -> list[int]:
        """:meth:`_assign` on an aiomysql connection. A task cancelled here closes the
        connection (its answer is unread: nothing more can be sent on it), and the server rolls
        the transaction back, or has committed it already: either way the topic stays dense."""
        missing = [v for v, a in zip(values, answers) if a is None]
        try:
            await conn.begin()
            async with conn.cursor() as cur:
                await cur.execute(self._sql(conn, "lock"), (self.topic,))
                locked = await cur.fetchone()
                if locked is not None:
                    await cur.execute(self._sql(conn, "recheck", len(missing)), (locked[0], *missing))
                params, still, following = self._numbered(locked, missing, await cur.fetchall() if locked else ())
                if params:
                    await cur.execute(self._sql(conn, "insert", len(params) // 3), params)
                    await cur.execute(self._sql(conn, "advance"), (following, self.topic))
            await conn.commit()
        except asyncio.CancelledError:
            close_now(conn)
            raise
        except BaseException:
            try:
                await conn.rollback()
            except Exception:  # noqa: BLE001, S110 - the connection broke: the server rolls back
                pass
            raise
        return self._merged(values, answers, missing, still)

    def _values(self, rows: Sequence[Any], ids: Sequence[int]) -> list[str | None]:
        if not rows:
            raise self._unknown()
        found = {id: value.decode() for _, id, value in rows if id is not None}
        return [found.get(i) for i in ids]

    def values(self, conn: Any, ids: Sequence[int]) -> list[str | None]:
        with conn.cursor() as cur:
            cur.execute(self._sql(conn, "find_values", len(ids)), (*ids, self.topic))
            return self._values(cur.fetchall(), ids)

    async def values_async(self, conn: Any, ids: Sequence[int]) -> list[str | None]:
        async with conn.cursor() as cur:
            await cur.execute(self._sql(conn, "find_values", len(ids)), (*ids, self.topic))
            return self._values(await cur.fetchall(), ids)

    def _state(self, row: Any) -> None:
        """The topic's state after create: ``UNKNOWN_TOPIC`` (no row), ``TOPIC_DROPPED``."""
        if row is None:
            raise self._unknown()
        if row[0]:
            raise self._dropped()

    def create(self, conn: Any) -> None:
        with conn.cursor() as cur:
            cur.execute(self._sql(conn, "create_topic"), (self.topic,))
            cur.execute(self._sql(conn, "state"), (self.topic,))
            self._state(cur.fetchone())

    async def create_async(self, conn: Any) -> None:
        async with conn.cursor() as cur:
            await cur.execute(self._sql(conn, "create_topic"), (self.topic,))
            await cur.execute(self._sql(conn, "state"), (self.topic,))
            self._state(await cur.fetchone())

    def drop(self, conn: Any) -> None:
        with conn.cursor() as cur:
            cur.execute(self._sql(conn, "drop_topic"), (self.topic,))
            cur.execute(self._sql(conn, "state"), (self.topic,))
            if cur.fetchone() is None:
                raise self._unknown()

    async def drop_async(self, conn: Any) -> None:
        async with conn.cursor() as cur:
            await cur.execute(self._sql(conn, "drop_topic"), (self.topic,))
            await cur.execute(self._sql(conn, "state"), (self.topic,))
            if await cur.fetchone() is None:
                raise self._unknown()


__all__ = [
    "Dictionary",
    "Segments",
    "ServerError",
    "check_url",
    "close_now",
    "connect",
    "connect_async",
    "detect",
    "detect_async",
    "dialect_of",
    "is_url",
    "lost",
]
