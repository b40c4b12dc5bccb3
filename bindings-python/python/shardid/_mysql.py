"""MySQL and MariaDB for :mod:`shardid.segments` and :mod:`shardid.dictionary`, over PyMySQL
(``pip install shardid[mysql]``), and on an event loop over aiomysql (``pip install
shardid[mysql-async]``: ``AsyncDictionary``, ``AsyncDenseIds``). Not for direct use: give them a
``mysql://user:password@host:port/database`` (or ``mariadb://``) URL.

The steps of each system (``shardid._segments_async``, ``shardid._dictionary_async``: written
once for asyncio, the blocking ones generated from them) call these: the connections, with
PyMySQL or aiomysql, and telling their errors apart.

Everything here executes the core's statements (``shardid::sql::mysql``) in the order the core
documents; the numbers and the checks are the core's. What is PyMySQL's own: the connection (the
URL read by the core, percent-decoded), its errors (the server's own reported as they are; a
server that cannot be reached is ``DATABASE_UNREACHABLE`` with PyMySQL's error as its cause),
and telling a server that is not MySQL from one that is down.
"""

from __future__ import annotations

import asyncio
from typing import Any

from shardid import _db
from shardid._shardid import _MYSQL_DETECT_DIALECT, _error, _mysql_detected, _mysql_url

# The statements' dialects: MySQL's server_id, or MariaDB's Galera-aware name of the server
# (shardid::sql::Dialect::server_identity).
DIALECTS = ("mysql", "mariadb")
# How long the TCP connection may take, and then the server's greeting, before the server is
# taken for down or for something else than MySQL (a server greets at once; the greeting's bound
# is short so that DenseIds' wait, 5 s by default, sees the error).
CONNECT_TIMEOUT_S = 5
GREETING_TIMEOUT_S = 2


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


# What PyMySQL raises when it read a greeting that is not MySQL's and choked on it.
_UNREADABLE = (ValueError, IndexError, UnicodeDecodeError, KeyError)


def _options(url: str) -> tuple[dict[str, Any], str | None]:
    """What PyMySQL and aiomysql are given to open an autocommit ``utf8mb4`` connection to the
    server ``url`` names, and the database (``database=`` to one, ``db=`` to the other)."""
    user, password, host, port, database = _mysql_url(url)
    options: dict[str, Any] = {"host": host, "port": port, "user": user, "password": password or "",
                               "autocommit": True, "charset": "utf8mb4", "connect_timeout": CONNECT_TIMEOUT_S}  # fmt: skip
    return options, database


def _not_opened(e: BaseException, options: dict[str, Any]) -> BaseException:
    """Why a connection could not be opened, either driver's: ``NOT_MYSQL`` when the server
    accepted it but did not greet as MySQL (no greeting in time, or one the driver could not
    read), else ``DATABASE_UNREACHABLE`` (refused, timed out, log-in refused)."""
    server = f"{options['host']}:{options['port']}"
    if isinstance(e, asyncio.TimeoutError):
        # aiomysql has no read timeout: the TCP connection has its own bound (2003), so a
        # connection past it was connected, then got no greeting.
        return _error("NOT_MYSQL", server=server, reason="no greeting in time")
    if isinstance(e, _UNREADABLE):
        return _error("NOT_MYSQL", server=server, reason=f"{type(e).__name__}: {e}")
    err = _pymysql().err
    number = _number(e)
    # PyMySQL's read timeout (the greeting's bound) passed, or a greeting of another protocol.
    timed_out = number == 2013 and "timed out" in str(e)
    if timed_out or isinstance(e, (err.InternalError, err.ProgrammingError)) and number is None:
        return _error("NOT_MYSQL", server=server, reason=f"{e}")
    return _error("DATABASE_UNREACHABLE", reason=_db.describe(e))


def connect(url: str) -> Any:
    """A PyMySQL connection (autocommit) to the server ``url`` names. ``NOT_MYSQL`` when the
    server accepts the connection but does not greet as MySQL (PyMySQL would wait forever);
    ``DATABASE_UNREACHABLE`` when it cannot be opened (refused, timed out, log-in refused)."""
    pymysql = _pymysql()
    options, database = _options(url)
    try:
        # read_timeout bounds the greeting and the log-in only: set back to None below, so a
        # statement may wait on a lock as long as the server lets it.
        conn = pymysql.connect(**options, database=database, read_timeout=GREETING_TIMEOUT_S)
    except (pymysql.err.MySQLError, *_UNREADABLE) as e:
        raise _not_opened(_db.redact(e, url), options) from e
    conn._read_timeout = None  # see read_timeout above
    conn.shardid_dialect = detect(conn)
    return conn


async def aconnect(url: str) -> Any:
    """:func:`connect` over aiomysql: an autocommit connection on the event loop, the same
    errors. aiomysql has no read timeout: the TCP connection has ``CONNECT_TIMEOUT_S``, the
    greeting and the log-in the ``GREETING_TIMEOUT_S`` after it."""
    pymysql, aiomysql = _pymysql(), _aiomysql()
    options, database = _options(url)
    opening = asyncio.ensure_future(
        asyncio.wait_for(aiomysql.connect(**options, db=database), CONNECT_TIMEOUT_S + GREETING_TIMEOUT_S)
    )
    try:
        # Shielded: aiomysql leaves the socket of a connection cancelled halfway open (for the
        # garbage collector, maybe after the loop closed); a caller cancelled meanwhile leaves
        # it to finish, and it is closed when it does.
        conn = await asyncio.shield(opening)
    except asyncio.CancelledError:
        opening.add_done_callback(_close_unwanted)
        raise
    except (asyncio.TimeoutError, pymysql.err.MySQLError, *_UNREADABLE) as e:
        raise _not_opened(_db.redact(e, url), options) from e
    try:
        conn.shardid_dialect = await detect_async(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _close_unwanted(opening: asyncio.Future[Any]) -> None:
    if not opening.cancelled() and opening.exception() is None:
        close_now(opening.result())


def is_open(conn: Any) -> bool:
    """Whether a PyMySQL (or mysqlclient) connection is still open."""
    return bool(getattr(conn, "open", True))


def ais_open(conn: Any) -> bool:
    """Whether an aiomysql connection is still open."""
    return not getattr(conn, "closed", False)


def close(conn: Any) -> None:
    """Closes a PyMySQL connection (PyMySQL refuses to close a closed one)."""
    try:
        conn.close()
    except Exception:  # noqa: BLE001, S110 - already closed
        pass


async def aclose(conn: Any) -> None:
    """Closes an aiomysql connection (at once: see :func:`close_now`)."""
    close_now(conn)


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
            await cur.execute(_MYSQL_DETECT_DIALECT)
    except Exception as e:
        return _detected(e)
    return _detected(None)


def detect(conn: Any) -> str:
    """The dialect of the server ``conn`` reaches (one round trip): ``"mariadb"`` when it knows
    MariaDB's variables, ``"mysql"`` when it refuses them (the core's statement and rule:
    ``shardid::sql::mysql::DETECT_DIALECT``, ``Dialect::detected``)."""
    try:
        with conn.cursor() as cur:
            cur.execute(_MYSQL_DETECT_DIALECT)
    except Exception as e:
        return _detected(e)
    return _detected(None)


def _detected(refusal: Exception | None) -> str:
    """The dialect of a server by its answer to the detecting statement (``refusal``: the error
    it refused it with, ``None``: it answered), by the core's rule; ``refusal`` raised when it
    says nothing of the dialect."""
    number = None if refusal is None else _number(refusal)
    dialect = None if refusal is not None and number is None else _mysql_detected(number)
    if dialect is None:
        assert refusal is not None  # an answer names a dialect
        raise refusal
    return dialect


def dialect_of(conn: Any) -> str:
    """The dialect ``connect`` (or Django's connection) recorded on ``conn``, or learnt now."""
    dialect = getattr(conn, "shardid_dialect", None)
    if dialect is None:
        dialect = conn.shardid_dialect = detect(conn)
    return dialect  # type: ignore[no-any-return]


def lost(e: BaseException) -> bool:
    """Whether ``e`` means the connection is gone (open another): an ``InterfaceError``, or an
    ``OperationalError`` with one of the client's error numbers (CR_*, 2000 to 2999: the server
    went away, the connection broke) or PyMySQL's 0 (a closed connection). Read by the classes'
    names, so that PyMySQL's, aiomysql's, mysqlclient's and Django's errors count alike: every
    system's MySQL dialect (dense IDs, serials, the dictionary, leases) uses this one rule."""
    names = {cls.__name__ for cls in type(e).__mro__}
    if "InterfaceError" in names:
        return True
    number = _number(e)
    return "OperationalError" in names and number is not None and (number == 0 or 2000 <= number <= 2999)


def _number(e: BaseException) -> int | None:
    """MySQL's error number of a PyMySQL, mysqlclient or Django error (their first argument)."""
    return e.args[0] if e.args and isinstance(e.args[0], int) else None


__all__ = [
    "ServerError",
    "check_url",
    "close_now",
    "connect",
    "aconnect",
    "detect",
    "detect_async",
    "dialect_of",
    "lost",
]
