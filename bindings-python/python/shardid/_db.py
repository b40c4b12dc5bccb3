"""What the database clients (:mod:`shardid.postgres`, :mod:`shardid.segments`,
:mod:`shardid.dictionary`, and their MySQL side) share about drivers: a PostgreSQL connection
with psycopg 3 or psycopg2, and telling the driver's errors apart.

A database that cannot be reached (the connection refused, timed out, its log-in refused, or
broken and not opened again) is :class:`~shardid.DatabaseUnreachableError`, a
:class:`ConnectionError`, with the driver's error as its ``__cause__`` and the driver's words in
its message; the database's own errors (a missing privilege, a missing function) are the
driver's, as they are. An object used after its ``close()`` is :class:`~shardid.ClosedError`.
"""

from __future__ import annotations

import os
from typing import Any

from shardid._errors import ClosedError, DatabaseUnreachableError, ShardIdError
from shardid._shardid import _database_of_url, _error, _redacted


def sqlstate(e: BaseException) -> str | None:
    """The SQLSTATE of a psycopg (``sqlstate``) or psycopg2 (``pgcode``) error."""
    code = getattr(e, "sqlstate", None) or getattr(e, "pgcode", None)
    return code if isinstance(code, str) else None


def connection_lost(e: BaseException) -> bool:
    """Whether ``e`` says the connection is gone: the DB-API's ``OperationalError`` or
    ``InterfaceError``, whichever driver raised it; asyncpg's (no DB-API classes): its
    ``InterfaceError`` (a closed connection), a connection exception (class 08:
    ``ConnectionDoesNotExistError``), the server ending sessions (57P), or the socket's own
    (``ConnectionError``, ``TimeoutError``)."""
    if any(cls.__name__ in ("OperationalError", "InterfaceError") for cls in type(e).__mro__):
        return True
    if is_asyncpg(e):
        state = sqlstate(e)
        return state is not None and state.startswith(("08", "57P"))
    # The socket's own; not DATABASE_UNREACHABLE (a ConnectionError too): never opened, not lost.
    return isinstance(e, (ConnectionError, TimeoutError)) and not isinstance(e, ShardIdError)


def is_asyncpg(thing: object) -> bool:
    """Whether ``thing`` (a connection, a pool, an error) is asyncpg's: its classes share no base
    with the DB-API's."""
    return type(thing).__module__.split(".")[0] == "asyncpg"


def unreachable(e: BaseException) -> bool:
    """Whether a PostgreSQL driver's error says the database could not be reached or the
    connection is gone: a connection-level error (no SQLSTATE), a connection exception (class
    08), the server ending sessions (57P), a log-in refused (class 28) or a database that does
    not exist (3D000)."""
    if isinstance(e, ShardIdError):
        return isinstance(e, DatabaseUnreachableError)
    state = sqlstate(e)
    if state is None:
        return connection_lost(e)
    return state.startswith(("08", "57P", "28")) or state == "3D000"


def describe(e: BaseException) -> str:
    """A driver's error in one line: its message with the whitespace of libpq's several lines
    folded, and the system's reason (``Connection refused``) when the driver's words leave it
    to the error's cause (aiomysql: "Can't connect to MySQL server on '127.0.0.1'")."""
    text = " ".join(str(e).split()) or type(e).__name__
    cause = e.__cause__ or e.__context__
    for _ in range(8):  # a chain of causes, never a loop
        if cause is None:
            break
        if isinstance(cause, OSError) and cause.errno:
            reason = os.strerror(cause.errno)
            if reason.lower() not in text.lower():
                text = f"{text}: {reason}"
            break
        cause = cause.__cause__ or cause.__context__
    return text


def unreachable_error(e: BaseException, conninfo: str | None = None) -> DatabaseUnreachableError:
    """``DATABASE_UNREACHABLE`` for the driver's error ``e`` (raise it ``from e``); ``e`` and
    the message without the password of ``conninfo``, the connection string it failed on
    (:func:`redact`)."""
    if conninfo is not None:
        redact(e, conninfo)
    if isinstance(e, DatabaseUnreachableError):
        return e
    return _error("DATABASE_UNREACHABLE", reason=describe(e))  # type: ignore[return-value]


def redact(e: BaseException, conninfo: str) -> BaseException:
    """``e`` and its causes with the password of ``conninfo`` taken out of their words, in place
    (the core's rule, ``_redacted``): a driver may quote the connection string or its password
    (libpq's "invalid percent-encoded token"), and its error is the cause every traceback and
    log of ours prints. Every client calls it on the errors of opening a connection."""
    seen: BaseException | None = e
    for _ in range(8):  # a chain of causes, never a loop
        if seen is None:
            break
        try:
            seen.args = tuple(_redacted(a, conninfo) if isinstance(a, str) else a for a in seen.args)
            for name in ("pgerror", "msg", "strerror"):  # psycopg2's, PyMySQL's, OSError's copies
                value = getattr(seen, name, None)
                if isinstance(value, str):
                    setattr(seen, name, _redacted(value, conninfo))
        except (AttributeError, TypeError):  # an error class that keeps its words read-only
            pass
        seen = seen.__cause__ or seen.__context__
    return e


def closed_error(what: str) -> ClosedError:
    """``CLOSED``: ``what`` ("the lease on shard 3") was closed."""
    return _error("CLOSED", what=what)  # type: ignore[return-value]


# The drivers a client of each side runs, by family, for a driver a SQLAlchemy URL names after
# its scheme's ``+`` (the core's rule takes it: ``shardid::sql::SQLALCHEMY_DRIVERS``): the
# first is the one to write instead. An application hands its one URL to SQLAlchemy and to
# shardid; a driver a client does not run is refused naming it, never run with another.
_RUNS = {
    ("postgres", True): ("psycopg", "psycopg_async", "asyncpg"),
    ("postgres", False): ("psycopg", "psycopg2"),
    ("mysql", True): ("aiomysql",),
    ("mysql", False): ("pymysql",),
    # sqlite3 either way: aiosqlite is sqlite3 on a worker thread, as the asyncio clients run it.
    ("sqlite", True): ("aiosqlite", "pysqlite"),
    ("sqlite", False): ("pysqlite", "aiosqlite"),
}
_FAMILY = {"postgres": "postgres", "mysql": "mysql", "mariadb": "mysql", "sqlite": "sqlite"}
_SIDE = {True: "asyncio clients (Async...)", False: "blocking clients"}


def split_driver(url: str) -> tuple[str | None, str]:
    """The driver a SQLAlchemy URL names after its scheme's ``+`` and the URL without it
    (``("asyncpg", "postgresql://h/d")`` of ``postgresql+asyncpg://h/d``); ``(None, url)`` for
    any other text. The core's rule (``_database_of_url``) has taken the URL first: it knows
    the families and their drivers; this only takes the name out for the driver that reads it."""
    scheme, sep, rest = url.partition("://")
    base, plus, driver = scheme.partition("+")
    if not sep or not plus or not driver or base not in ("postgres", "postgresql", "mysql", "mariadb", "sqlite"):
        return None, url
    return driver, f"{base}://{rest}"


def driver_url(url: str, *, asyncio: bool) -> tuple[str | None, str]:
    """:func:`split_driver` for a client of one side (``asyncio``), after the core's rule:
    ``UNSUPPORTED`` for a driver that side does not run, naming the one to write."""
    driver, plain = split_driver(url)
    if driver is None:
        return None, plain
    family = _FAMILY[_database_of_url(url, "url")]
    runs = _RUNS[(family, asyncio)]
    if driver not in runs:
        scheme = url.partition("+")[0]
        reason = (
            f"shardid's {_SIDE[asyncio]} do not run {driver} ({scheme}+{driver}://): "
            f"write {scheme}+{runs[0]}:// (the driver they run) or {scheme}://"
        )
        if family == "postgres" and driver == "asyncpg" and not asyncio:
            reason += "; asyncpg runs on asyncio only: use the Async... client"
        raise _error("UNSUPPORTED", reason=reason)
    return driver, plain


def plain_url(url: str, *, asyncio: bool) -> str:
    """``url`` without the driver a SQLAlchemy URL names (:func:`driver_url`, checked for the
    side): what PyMySQL, aiomysql and the SQLite file's rule read."""
    return driver_url(url, asyncio=asyncio)[1]


def connect_postgres(conninfo: str, **params: Any) -> Any:
    """An autocommit connection to ``conninfo`` with psycopg 3 (no server-side prepared
    statements, which a pooler in transaction mode cannot carry), or with psycopg2 when only it
    is installed; ``params`` are libpq's (``connect_timeout=5``). ``DATABASE_UNREACHABLE`` when
    the server cannot be reached. A SQLAlchemy URL's driver is honoured (``postgresql+psycopg2://``:
    psycopg2, ``postgresql+psycopg://``: psycopg 3 only)."""
    driver, conninfo = driver_url(conninfo, asyncio=False)
    try:
        if driver == "psycopg2":
            raise ImportError("the URL names psycopg2")
        import psycopg
    except ImportError:
        if driver == "psycopg":
            reason = "needs psycopg 3 for a postgresql+psycopg:// URL: pip install 'shardid[postgres]'"
            raise _error("UNSUPPORTED", reason=f"shardid {reason}") from None
        try:
            import psycopg2
        except ImportError:
            if driver == "psycopg2":
                reason = "needs psycopg2 for a postgresql+psycopg2:// URL: pip install psycopg2-binary"
                raise _error("UNSUPPORTED", reason=f"shardid {reason}") from None
            reason = "needs a PostgreSQL driver: pip install 'shardid[postgres]' (psycopg 3), or psycopg2"
            raise _error("UNSUPPORTED", reason=f"shardid {reason}") from None
        try:
            conn = psycopg2.connect(conninfo, **params)
        except psycopg2.Error as e:
            raise unreachable_error(e, conninfo) from e
        conn.autocommit = True
        return conn
    try:
        return psycopg.connect(conninfo, autocommit=True, prepare_threshold=None, **params)
    except psycopg.Error as e:
        raise unreachable_error(e, conninfo) from e


async def aconnect_postgres(conninfo: str, *, asyncpg: bool = False, **params: Any) -> Any:
    """:func:`connect_postgres` on the event loop: psycopg 3's ``AsyncConnection``, or, for a
    client that runs asyncpg (``asyncpg``: the dictionary, the lease, the dense IDs and the
    serials), asyncpg's ``Connection`` for a ``postgresql+asyncpg://`` URL (or a URL where only
    asyncpg is installed). A client that does not refuses asyncpg's URL (``UNSUPPORTED``), never
    runs psycopg for it."""
    driver, conninfo = driver_url(conninfo, asyncio=True)
    if driver == "asyncpg":
        if not asyncpg:
            reason = "runs psycopg 3 here, not yet asyncpg: write postgresql+psycopg:// for this client"
            raise _error("UNSUPPORTED", reason=f"shardid {reason}")
        return await aconnect_asyncpg(conninfo, **params)
    try:
        import psycopg
    except ImportError:
        if asyncpg and driver is None and "://" in conninfo and _installed("asyncpg"):
            return await aconnect_asyncpg(conninfo, **params)
        reason = "needs psycopg 3 on asyncio (or asyncpg for a postgresql+asyncpg:// URL): pip install 'shardid[postgres]'"
        raise _error("UNSUPPORTED", reason=f"shardid {reason}") from None
    try:
        return await psycopg.AsyncConnection.connect(conninfo, autocommit=True, prepare_threshold=None, **params)
    except psycopg.Error as e:
        raise unreachable_error(e, conninfo) from e


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


async def aconnect_asyncpg(url: str, **params: Any) -> Any:
    """An asyncpg ``Connection`` to ``url`` (``postgresql://``: asyncpg reads URLs, not libpq's
    ``key=value``), its statement cache off: the core's statements are few and need no named
    prepared statement, which a pooler in transaction mode (PgBouncer) cannot carry, as
    asyncpg's documentation says. ``params``: libpq's ``connect_timeout`` only.
    ``DATABASE_UNREACHABLE`` when the server cannot be reached."""
    try:
        import asyncpg
    except ImportError:
        reason = "needs asyncpg for a postgresql+asyncpg:// URL: pip install asyncpg"
        raise _error("UNSUPPORTED", reason=f"shardid {reason}") from None
    timeout = float(params.get("connect_timeout", 60))
    try:
        return await asyncpg.connect(url, statement_cache_size=0, timeout=timeout)
    except Exception as e:  # refused, timed out, the log-in or the database refused, a bad URL
        raise unreachable_error(e, url) from e


async def alend(source: Any, what: str, wait_ms: int) -> Any:
    """A connection of the application's asyncpg ``source`` for ``what`` (``"DenseIds of tag
    orders"``): its ``Pool`` lends one (give it back with :func:`agive_back` when the operation
    ends), waiting at most ``wait_ms``; its ``Connection`` is used as it is. ``CLOSED`` when the
    application closed it (the pool's ``close()``: nothing to wait for); ``INVALID_ARGUMENT``
    for a connection inside a transaction of the application's: a segment taken there would be
    handed out, then rolled back with the transaction and taken again (every number twice)."""
    import asyncio

    if is_asyncpg_pool(source):
        if source.is_closing():
            raise closed_error(f"the asyncpg pool given to {what}")
        try:
            conn = await source.acquire(timeout=wait_ms / 1000)
        except asyncio.TimeoutError:
            reason = f"the asyncpg pool given to {what} lent no connection within {wait_ms} ms: every one is in use"
            raise _error("DATABASE", reason=reason) from None
        except Exception:
            if source.is_closing():  # closed while the lending waited
                raise closed_error(f"the asyncpg pool given to {what}") from None
            raise
    else:
        conn = source
    if conn.is_closed():
        raise closed_error(f"the asyncpg connection given to {what}")
    if conn.is_in_transaction():
        if conn is not source:
            await agive_back(source, conn)
        reason = (
            "is an asyncpg connection inside a transaction: a number taken there would be rolled back "
            "with it and handed out again; give shardid a connection outside any transaction, or the pool"
        )
        raise _error("INVALID_ARGUMENT", argument="conninfo", reason=reason)
    return conn


async def agive_back(pool: Any, conn: Any) -> None:
    """Gives ``conn`` back to the asyncpg ``pool`` that lent it (:func:`alend`); the pool resets
    it, or ends it when it broke."""
    try:
        await pool.release(conn)
    except Exception:  # noqa: BLE001, S110 - a pool closing meanwhile ends it itself
        pass


def is_open(conn: Any) -> bool:
    """Whether a psycopg 3 (blocking or asyncio), psycopg2 or asyncpg connection is still open."""
    if is_asyncpg(conn):
        return not conn.is_closed()
    return not conn.closed


def numbered(conn: Any) -> bool:
    """Whether ``conn`` takes ``$1`` placeholders (asyncpg) rather than the DB-API's ``%s``: the
    core renders its statements for each (``Placeholders``)."""
    return is_asyncpg(conn)


# Statements of the DB-API's rendering already read in asyncpg's (a few per client).
_NUMBERED: dict[str, str] = {}


def as_numbered(sql: str) -> str:
    """A statement the core rendered in the DB-API's ``format`` style (psycopg's grammar: ``%s``
    a parameter, ``%%`` a percent sign) read in asyncpg's numbered style (``$1``, ``$2``, ...;
    a percent sign as it is): the same statement, exactly, for the segments' and serials'
    statements, whose bindings (``_SegmentProtocol``, ``_serial_statements``) render only the
    ``format`` style today. Where the core renders a statement with ``numbered=`` (the lease,
    the dictionary), its own rendering is used."""
    found = _NUMBERED.get(sql)
    if found is None:
        out: list[str] = []
        n = 0
        i = 0
        while i < len(sql):
            if sql.startswith("%s", i):
                n += 1
                out.append(f"${n}")
                i += 2
            elif sql.startswith("%%", i):
                out.append("%")
                i += 2
            else:
                out.append(sql[i])
                i += 1
        found = "".join(out)
        if len(_NUMBERED) < 256:
            _NUMBERED[sql] = found
    return found


def is_asyncpg_pool(thing: object) -> bool:
    """Whether ``thing`` is an asyncpg ``Pool`` (it lends connections: ``acquire``/``release``)
    rather than one of its connections."""
    return is_asyncpg(thing) and callable(getattr(thing, "acquire", None)) and callable(getattr(thing, "release", None))


def is_asyncpg_connection(thing: object) -> bool:
    """Whether ``thing`` is an asyncpg ``Connection`` (or the proxy a pool's ``acquire`` returns)."""
    return is_asyncpg(thing) and callable(getattr(thing, "fetchrow", None)) and callable(getattr(thing, "is_in_transaction", None))


def close(conn: Any) -> None:
    """Closes a connection, one already broken too."""
    try:
        conn.close()
    except Exception:  # noqa: BLE001, S110 - a broken connection may fail to close
        pass


async def aclose(conn: Any) -> None:
    """:func:`close`, awaited (psycopg's ``AsyncConnection``, asyncpg's ``Connection``: a broken
    one is terminated, as its close would wait on the socket)."""
    try:
        if is_asyncpg(conn) and conn.is_closed():
            return
        await conn.close()
    except Exception:  # noqa: BLE001, S110 - a broken connection may fail to close
        pass


async def aexecute(conn: Any, sql: str, params: tuple[Any, ...] | list[Any]) -> Any:
    """:func:`execute` on psycopg's ``AsyncConnection``, or on asyncpg's ``Connection`` (the
    statement rendered with ``$1`` placeholders: :func:`numbered`): its first row as a tuple."""
    if is_asyncpg(conn):
        row = await conn.fetchrow(sql, *params)
        return None if row is None else tuple(row)
    async with conn.cursor() as cur:
        await cur.execute(sql, params)
        return await cur.fetchone() if cur.description is not None else None


def execute(conn: Any, sql: str, params: tuple[Any, ...] | list[Any]) -> Any:
    """Runs one statement through the DB-API (psycopg 3 or psycopg2); its first row, or
    ``None``."""
    cur = conn.cursor()
    try:
        cur.execute(sql, params)
        return cur.fetchone() if cur.description is not None else None
    finally:
        cur.close()


def conninfo(params: dict[str, Any]) -> str:
    """A libpq connection string of ``params`` (values quoted as libpq reads them), without
    psycopg 3's ``make_conninfo``: a project on psycopg2 has none."""

    def quote(value: Any) -> str:
        text = str(value)
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"

    return " ".join(f"{key}={quote(value)}" for key, value in params.items())
