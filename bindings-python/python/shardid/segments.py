"""Dense IDs from PostgreSQL or MySQL segments (号段, as Meituan's Leaf, Didi's Tinyid and TiDB do
it): an optional extra that needs ``psycopg`` (``pip install shardid[postgres]``; psycopg2
works too), or PyMySQL for a ``mysql://`` or ``mariadb://`` URL (``pip install shardid[mysql]``);
a ``sqlite:///path.db`` URL needs nothing (the standard ``sqlite3``; the tables are created on
first use, in schema ``main``).

Business serial numbers (``ORD-20261125-000123``: a number that starts again at 1 every day,
month or year in a time zone) come from the same segments, one tag per period (on PostgreSQL,
MySQL, MariaDB or SQLite)::

    # once: python -m shardid.sql --serial orders --format 'ORD-{yyyy}{MM}{dd}-{seq:6}' \\
    #           --zone Asia/Shanghai --schema seg | psql -f -   (or create_serial() below)
    from shardid.segments import Serials

    orders = Serials("postgresql://app@db/app", "orders", "ORD-{yyyy}{MM}{dd}-{seq:6}", zone="Asia/Shanghai")
    orders.next_serial()                # 'ORD-20261125-000001', ... ('ORD-20261126-000001' after midnight)
    orders.parse("ORD-20261125-000123").number   # 123
    orders.close()

Short, dense, increasing numbers — order numbers, invoice numbers — that a 64-bit time-sortable
ID is not. The application takes a range of numbers from a row of the database in one
statement, hands them out from memory, and fetches the next range in the background before the
first runs out::

    # once: python -m shardid.sql --segments --schema seg | psql -1 -f -
    #       psql -c "SELECT seg.create_tag('orders')"
    from shardid.segments import DenseIds

    orders = DenseIds("postgresql://app@db/app", "orders")
    orders.next_id()      # 1, 2, 3, ... (per process, in increasing order)
    orders.close()        # gives the unused rest back: a restart continues at the next number

The allocator is the core's (``shardid::segment``): two segments, the next fetched once a
tenth of the current one is used, one fetch in flight at a time, a failed fetch retried after a
backoff, segment sizes adapted to last about ``target_ms``. ``next_id()`` never waits on the
database while the prefetch arrives in time; when both segments are used up it waits for the
fetch already under way, at most ``wait_ms``, then raises :class:`SegmentUnavailableError`
(retry later), saying why: the database cannot be reached (its ``__cause__`` is then a
:class:`~shardid.DatabaseUnreachableError`, whose own cause is the driver's error), the last
fetch failed, or no segment arrived in time. After :meth:`DenseIds.close`, calls raise
:class:`~shardid.ClosedError`. After a crash at most the current and the prefetched segment are
lost.

On an event loop, :class:`AsyncDenseIds` is the same allocator whose fetches are tasks on the
loop over psycopg's ``AsyncConnection``: ``await orders.next_id()`` returns at once while a
segment holds IDs and awaits the fetch under way when both are used up.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import signal
import sqlite3
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any

from shardid import _db, _mysql, _redis, _sqlite
from shardid._redis import create_tag_from
from shardid._errors import (
    ClosedError,
    DatabaseUnreachableError,
    InvalidArgumentError,
    NotMysqlError,
    SegmentUnavailableError,
    SerialMismatchError,
    UnknownTimeZoneError,
    UnsupportedError,
)

# The drivers: _segments_async.py is the source, _segments_generated.py (the blocking one, DenseIds')
# is generated from it by bindings-python/tools/async_to_sync.py.
from shardid._segments_generated import _Driver as _GeneratedDriver
from shardid._segments_generated import _Postgres, dialect  # noqa: F401
from shardid._segments_async import _AsyncDriver, check_names
from shardid._segments_async import dialect as _async_dialect
from shardid._shardid import (
    _SERIAL_MISMATCH_SQLSTATE,
    _UNKNOWN_TAG_SQLSTATE,
    _UNKNOWN_TIME_ZONE_SQLSTATE,
    DenseIds,
    SerialFormat,
    Serials,
    _check_serial_tag,
    _database_of_url,
    _error,
    _mismatch_reason,
)

__all__ = [
    "AsyncDenseIds",
    "AsyncSerials",
    "DenseIds",
    "Serials",
    "check_names",
    "create_serial",
    "create_tag",
    "create_tag_from",
]

# The SQLSTATE of an unknown tag, from the core (shardid::sql::UNKNOWN_TAG).
_UNKNOWN_TAG = _UNKNOWN_TAG_SQLSTATE


def create_tag(conninfo: str | Sequence[str], tag: str, *, schema: str | None = None) -> None:
    """Creates the tag of dense IDs ``tag`` (from 1) if it is not there (a tag already there is
    left as it is) on the database at ``conninfo``: a PostgreSQL connection string, a
    ``mysql://`` URL (a list: on each ticket server), or one ``sqlite:///path.db`` URL (its
    tables created if missing). ``schema`` as for :class:`DenseIds`.

    Raises ``InvalidArgumentError`` for a bad tag, URL or schema, ``DatabaseUnreachableError``
    when a server cannot be reached (a SQLite file cannot be used); a schema without the DDL
    is the driver's error, as it is.

    On a Redis URL (``redis://``, ``rediss://``, ``unix://``: ``pip install shardid[redis]``;
    ``schema`` the keys' prefix, ``shardid`` by default) the tag is made from 1 only on a
    server that holds shardid's data: a new server, or one that restarted empty, is refused
    (``InvalidArgumentError``) so that numbers are never handed out twice after a loss; create
    the first tag with :func:`create_tag_from`."""
    if _redis.is_redis_url(conninfo):
        _redis.create_tag(conninfo, tag, schema)  # type: ignore[arg-type]
        return
    steps, servers, _ = dialect(conninfo, schema, tag)
    errors = steps.errors()
    for url in servers:
        conn = steps.connect(url)
        try:
            steps.create_tag(conn, tag)
        except errors as e:
            if not isinstance(e, DatabaseUnreachableError) and steps.unreachable(e):
                raise _db.unreachable_error(e) from e
            raise
        finally:
            steps.close(conn)


def create_serial(
    conninfo: Any, tag: str, format: str, *, zone: str, schema: str | None = None, max_gap: int = 1
) -> None:
    """Registers the serial tag ``tag`` with ``format`` in ``zone`` (once; again alike is
    nothing) on the server at ``conninfo`` (a connection string, or a psycopg connection used
    as it is), whose ``schema`` holds the segments' DDL (``seg`` by default); on MySQL or
    MariaDB (a ``mysql://`` or ``mariadb://`` URL, PyMySQL) the database ``schema`` holds the
    segments' DDL and then the registrations' (:func:`shardid.sql.mysql_serials`); or in the
    SQLite file of a ``sqlite:///path.db`` URL (``schema`` ``main`` by default; the tables
    created if missing). ``max_gap`` above 1 makes each number a random 1 to ``max_gap`` above
    the previous one (volume hiding).

    Raises ``InvalidSerialFormatError``, ``UnknownTimeZoneError``, ``SerialMismatchError`` (the
    tag is registered otherwise, or another tag prints this format), ``DatabaseUnreachableError``
    when the server cannot be reached."""
    _check_serial_tag(tag)
    parsed = SerialFormat(format, zone)
    if not isinstance(max_gap, int) or isinstance(max_gap, bool) or not 1 <= max_gap <= 2**31 - 1:
        reason = "must be an int from 1 to 2**31 - 1"
        raise InvalidArgumentError(f"max_gap {reason}", argument="max_gap", reason=reason)
    if isinstance(conninfo, str):
        _check_serials_url(conninfo)
        steps, _, schema = dialect(conninfo, schema, tag)
    else:  # a psycopg connection, used as it is (in its transaction) and left open
        steps, schema = _Postgres(schema or "seg", tag), schema or "seg"
    conn = None
    try:
        conn = steps.connect(conninfo) if isinstance(conninfo, str) else conninfo
        reason = steps.register(conn, tag, format, parsed.zone, parsed._registration(), max_gap)
    except Exception as e:  # noqa: BLE001 - sorted by _serial_database_error
        unreachable = lambda e: isinstance(e, DatabaseUnreachableError) or steps.unreachable(e)  # noqa: E731
        translated = steps.serial_error(_serial_database_error(e, tag, parsed.zone, unreachable), schema)
        if translated is e:
            raise
        raise translated from e
    finally:
        if conn is not None and isinstance(conninfo, str):
            steps.close(conn)
    if reason is not None:
        raise SerialMismatchError(f"serial tag {tag} {reason}", tag=tag, reason=reason)


def _check_serials_url(conninfo: str) -> str:
    """The database ``conninfo`` names (``"postgres"``, ``"mysql"`` for MySQL and MariaDB, or
    ``"sqlite"``): ``INVALID_ARGUMENT`` for a URL no driver takes (the core's one rule) or that
    the core cannot read."""
    database = _database_of_url(conninfo, "conninfo")
    if database == "sqlite":
        _sqlite.path_of(conninfo)  # INVALID_ARGUMENT now
    elif database in ("mysql", "mariadb"):
        _mysql.check_url(conninfo)  # INVALID_ARGUMENT now
        return "mysql"
    elif database != "postgres":
        reason = f"serials on {database}: serials are kept in PostgreSQL, MySQL, MariaDB and SQLite"
        raise UnsupportedError(f"unsupported: {reason}", reason=reason)
    return database  # type: ignore[no-any-return]


def _serial_database_error(e: BaseException, tag: str, zone: str, unreachable: Any = _db.unreachable) -> BaseException:
    """A database error of a serial tag as its kind (the rest as what it is); ``unreachable``
    is the database's rule of a server that cannot be reached (PostgreSQL's by default)."""
    sqlstate = getattr(e, "sqlstate", None)
    message = str(getattr(getattr(e, "diag", None), "message_primary", None) or e)
    if sqlstate == _UNKNOWN_TAG:
        return _error("UNKNOWN_TAG", tag=tag, create="create_serial")
    if isinstance(e, sqlite3.Error):
        return _sqlite.translate(e, "the database file")
    if unreachable(e):
        error = _db.unreachable_error(e)
        if error is not e:  # already one (SQLite's): its cause is the driver's error
            error.__cause__ = e
        return error
    if sqlstate == _SERIAL_MISMATCH_SQLSTATE:
        reason = _mismatch_reason(message, tag)
        return SerialMismatchError(f"serial tag {tag} {reason}", tag=tag, reason=reason)
    if sqlstate == _UNKNOWN_TIME_ZONE_SQLSTATE:
        return UnknownTimeZoneError(
            f"unknown time zone {zone}: not a name of the IANA tz database (such as Asia/Shanghai, America/New_York, UTC)",
            zone=zone,
        )
    return e


# -- the unused rest given back when the process ends --------------------------------------------
#
# A clean close() gives the unused rest of a segment back, so a restart continues at the next
# number; Django, gunicorn and most services never call it, and every manage.py run or worker
# restart skipped up to two segments (issue 59). Each allocator that starts a fetch is kept here,
# weakly (one the application drops is not kept alive), and closed:
# - at a normal exit (atexit: the end of the script, sys.exit, a gunicorn sync worker's graceful
#   exit, Ctrl-C's KeyboardInterrupt);
# - on SIGTERM, whose default action ends the process without atexit, only where the process
#   has no handler of its own when the first fetch starts (gunicorn's workers have one: they
#   exit gracefully, through atexit) and only in the main thread, where handlers are
#   installed. uvicorn (0.29 and later) has its own while it serves, then puts back the default
#   action and sends itself the signal again: the process ends by SIGTERM, without atexit, and
#   nothing here can run (measured with uvicorn 0.54, alone and as gunicorn's UvicornWorker:
#   the next process started 1,000 further); close in the application's lifespan shutdown.
#   The handler gives back, then restores the default action and sends the signal again, so
#   the process still ends as SIGTERM ends it (a parent sees the same status). A handler the
#   application installs later replaces it, as it should.
# Bounded: EXIT_BUDGET_S in all (a fetch in flight is waited for at most that, then the rest is a
# hole, never a duplicate). On SIGTERM the work runs in a thread joined with that bound: the
# handler runs in the main thread, which may hold the driver's lock at that moment.
# The asyncio allocators are not closed here (their loop is gone at exit): `async with`, or
# close() in the application's shutdown (FastAPI's lifespan).
EXIT_BUDGET_S = 2.0
_open: weakref.WeakSet[Any] = weakref.WeakSet()
_hooked = False


def _taking(ids: Any) -> None:
    """``ids`` starts a fetch: close it when the process ends (the hooks installed once)."""
    global _hooked
    _open.add(ids)
    if _hooked:
        return
    _hooked = True
    atexit.register(_close_all)
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        try:
            signal.signal(signal.SIGTERM, _on_sigterm)
        except (ValueError, OSError):  # not the main interpreter
            pass


def _close_all() -> None:
    """Closes every allocator kept (a closed one returns at once), within ``EXIT_BUDGET_S``."""
    deadline = time.monotonic() + EXIT_BUDGET_S
    for ids in list(_open):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            ids.wait_ms = max(1, min(int(ids.wait_ms), int(left * 1000)))
            ids.close()
        except Exception:  # noqa: BLE001 - the process is ending: what is not given back is a hole
            pass


def _on_sigterm(signum: int, frame: Any) -> None:
    worker = threading.Thread(target=_close_all, name="shardid-exit", daemon=True)
    worker.start()
    worker.join(EXIT_BUDGET_S + 0.5)
    if signal.getsignal(signum) is _on_sigterm:
        signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


class _Driver(_GeneratedDriver):
    """The blocking driver of :class:`DenseIds` (``_segments_generated.py``), whose allocators
    give their unused rest back when the process ends."""

    def _start(self, ids: Any, size: int) -> None:
        _taking(ids)
        super()._start(ids, size)


def _serials_unavailable(driver: Any, not_servers: tuple[type[BaseException], ...]) -> BaseException:
    """Why a serial driver (blocking or asyncio) has no segment to give: closed, the tag unknown
    or the database unreachable (as their kinds), an error in ``not_servers`` as it is (not a
    server to wait for), else ``SegmentUnavailableError`` after its wait."""
    if driver._closed:
        return _db.closed_error(f"Serials of tag {driver.tag}")
    error = driver._error
    if error is not None and (getattr(error, "sqlstate", None) == _UNKNOWN_TAG or driver._unreachable(error)):
        translated = _serial_database_error(error, driver.tag, "", driver._unreachable)
        if translated is not error and translated.__cause__ is None:
            translated.__cause__ = error
        return translated
    if isinstance(error, not_servers):
        return error
    reason = f"the database did not answer within {driver.wait_ms} ms" + (f" ({error})" if error else "")
    unavailable = SegmentUnavailableError(f"no segment of tag {driver.tag} is available: {reason}", tag=driver.tag, reason=reason)
    unavailable.__cause__ = error
    return unavailable


class _SerialDriver:
    """What :class:`Serials` (native: the core's allocator of periods) does in Python: one
    connection, the fetch threads, waiting, giving periods back. What a database needs is the
    dense IDs' dialect object (``_segments_async.py``: its ``serial_info``, ``take_period``,
    ``give_back`` and the connection), chosen from the URL by the core's rule. Its methods take
    the allocator as ``ids``; it keeps no reference to it."""

    def __new__(cls, conninfo: Any, tag: str, **options: Any) -> Any:
        # The allocator (native) makes its driver by this name: an asyncio one (AsyncSerials
        # over asyncpg) comes made, its registration read on the loop already.
        if isinstance(conninfo, _Made):
            return conninfo.driver
        return super().__new__(cls)

    def __init__(self, conninfo: str, tag: str, *, schema: str | None = None, wait_ms: int = 5_000) -> None:
        if not isinstance(conninfo, str):
            reason = "must be a connection string"
            raise InvalidArgumentError(f"conninfo {reason}", argument="conninfo", reason=reason)
        _check_serials_url(conninfo)
        self._dialect, _, schema = dialect(conninfo, schema, tag)
        # One statement at a time on the connection (a PyMySQL connection is for one thread):
        # the fetch thread's and a caller's giving a period back take turns.
        self._lock = threading.Lock()
        self.conninfo = conninfo
        self.tag = tag
        self.schema = schema
        self.wait_ms = wait_ms
        self._arrived = threading.Condition()
        self._closed = False
        self._conn: Any = None
        self._error: BaseException | None = None
        self.fetches = 0

    def _run(self, step: Any, *args: Any) -> Any:
        """The dialect's ``step`` on the connection, alone (opened again next time when it
        broke or could not be opened)."""
        with self._lock:
            try:
                conn = self._conn
                if conn is None or not self._dialect.is_open(conn):
                    conn = self._conn = self._dialect.connect(self.conninfo)
                return step(conn, *args)
            except Exception as e:
                if self._dialect.gives_up(e):
                    self._drop_all()
                raise

    def _unreachable(self, e: BaseException) -> bool:
        """Whether ``e`` says the database cannot be reached, by its driver's rule."""
        return isinstance(e, DatabaseUnreachableError) or self._dialect.unreachable(e)

    def _translated(self, e: BaseException) -> BaseException:
        """``e`` as its kind (``_serial_database_error``, then what the database's serials DDL
        explains), or ``e`` itself."""
        return self._dialect.serial_error(_serial_database_error(e, self.tag, "", self._unreachable), self.schema)  # type: ignore[no-any-return]

    def _info(self) -> tuple[str, str, int]:
        try:
            return self._run(self._dialect.serial_info, self.tag)  # type: ignore[no-any-return]
        except Exception as e:
            self._drop_all()
            translated = self._translated(e)
            if translated is e:
                raise
            raise translated from e

    def _drop_all(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            self._dialect.close(conn)

    def _start(self, ids: Any, fetch: Any) -> None:
        _taking(ids)
        # Called by the allocator (native) when a fetch becomes due.
        threading.Thread(target=self._fetch, args=(ids, fetch), name="shardid-serial", daemon=True).start()

    def _fetch(self, ids: Any, fetch: Any) -> None:
        try:
            take = self._dialect.take_period
            first, count, stride = self._run(take, self.tag, fetch.period, ids._fetch_tag(fetch), fetch.size)
            if ids._fill(fetch, first, count, stride):
                self.fetches += 1
                self._error = None
            else:  # the period was given up meanwhile
                self._give_back(ids, ids._fetch_tag(fetch), first, first + count * stride, count, 0)
        except BaseException as e:  # noqa: BLE001 - reported to the callers that wait
            ids._fetch_failed(fetch)
            self._error = e
        finally:
            with self._arrived:
                self._arrived.notify_all()

    def _give_back(self, ids: Any, period_tag: str, first: int, end: int, count: int, lost: int) -> None:
        """Gives a period's unused ``first..end`` back; the allocator counts what cannot be as
        skipped (the core's ``SerialAllocator::settle``)."""
        returned = False
        try:
            returned = count > 0 and self._run(self._dialect.give_back, period_tag, first, end)
        except Exception:  # noqa: BLE001 - a server that is down keeps the rest: a hole
            pass
        finally:
            ids._settle(first, end, count, lost, returned)

    def _unavailable(self) -> BaseException:
        return _serials_unavailable(self, (NotMysqlError, UnsupportedError))

    def _when_empty(self, ids: Any, unix_ms: int | None) -> str:
        # The period's segments are used up (or the first is not there yet): wait for the
        # fetch under way and retry.
        deadline = 0.0
        while True:
            if self._closed or getattr(self._error, "sqlstate", None) == _UNKNOWN_TAG or isinstance(self._error, NotMysqlError):
                raise self._unavailable()
            if ids._forked():
                ids._adopt()  # a forked child: periods and segments of its own
                self._conn = None  # the parent's connection is the parent's
                self._lock = threading.Lock()  # a lock the parent's fetch held at the fork stays held
                self.fetches = 0
            now = time.monotonic()
            if not deadline:
                deadline = now + self.wait_ms / 1000
            elif now >= deadline:
                raise self._unavailable()
            serial = ids._try_next_serial(unix_ms)
            if serial is not None:
                return str(serial)
            # A fetch under way notifies; a failed one is retried after a backoff.
            with self._arrived:
                self._arrived.wait(min(deadline - now, 0.05 if ids._fetching() else 0.002))

    def close(self, ids: Any) -> None:
        """Gives every period's unused rest back and closes the connection. Call it when no
        other thread takes serials any more; closing twice is fine."""
        self._closed = True
        if not ids._shut():  # closed before, or a forked child: nothing of its own to give back
            return
        deadline = time.monotonic() + self.wait_ms / 1000
        with self._arrived:
            while ids._fetching() and time.monotonic() < deadline:
                self._arrived.wait(0.05)
        try:
            for period_tag, first, end, count, lost in ids._close_periods():
                self._give_back(ids, period_tag, first, end, count, lost)
        finally:
            self._drop_all()


class AsyncDenseIds:
    """:class:`DenseIds` for asyncio: the core's allocator (the same object, ``native``) with
    its fetches run as tasks on the event loop over psycopg's ``AsyncConnection``. Use it from
    one event loop::

        orders = AsyncDenseIds("postgresql://app@db/app", "orders")
        await orders.next_id()   # no suspension while a segment holds IDs
        await orders.close()     # gives the unused rest back

    The options are :class:`DenseIds`'s. On ``mysql://`` URLs the fetches run over aiomysql
    (``pip install shardid[mysql-async]``), with :class:`DenseIds`'s steps for MySQL.

    On asyncpg: a ``postgresql+asyncpg://`` URL (its own connection, asyncpg's statement cache
    off), or the application's asyncpg ``Pool`` (a connection lent for each fetch and given
    back when it ends: none kept between fetches) or ``Connection`` (used between the
    application's statements; a fetch while it is inside a transaction is refused, as the
    transaction's rollback would take the numbers back after they were handed out). Behind
    PgBouncer in transaction mode the application's pool needs ``statement_cache_size=0``.
    """

    def __init__(self, conninfo: Any, tag: str, **options: Any) -> None:
        made: list[_AsyncDriver] = []

        def driver(conninfo: str | Sequence[str], tag: str, **kw: Any) -> _AsyncDriver:
            made.append(_AsyncDriver(conninfo, tag, **kw))
            return made[0]

        self.native = DenseIds(conninfo, tag, _driver=driver, **options)  # type: ignore[arg-type]
        """The allocator (``shardid.segments.DenseIds``): its attributes are this one's."""
        self._driver = made[0]

    def __getattr__(self, name: str) -> Any:
        if name == "skipped":
            return self.native.skipped  # the allocator's count
        if name in ("tag", "schema", "servers", "conninfo", "fetches", "wait_ms"):
            return getattr(self._driver, name)
        raise AttributeError(name)

    async def next_id(self) -> int:
        """The next ID (increasing); awaits the fetch under way when both segments are used up,
        at most ``wait_ms``."""
        found = self.native._try_next_id()
        if found is not None:
            return found  # type: ignore[no-any-return]
        return await self._driver._when_empty(self.native)

    async def next_ids(self, n: int) -> list[int]:
        """``n`` IDs, increasing (awaiting segments as :meth:`next_id` does)."""
        return await self._driver.next_ids(self.native, n)

    def stats(self) -> dict[str, int]:
        """What this allocator did: :meth:`DenseIds.stats` (the same allocator, the same counts)."""
        return self.native.stats()  # type: ignore[no-any-return]

    async def close(self) -> None:
        """Gives the unused rest of the last segment back and closes the connections."""
        await self._driver.close(self.native)

    async def __aenter__(self) -> AsyncDenseIds:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"AsyncDenseIds(tag={self._driver.tag!r}, schema={self._driver.schema!r}, servers={len(self._driver.servers)})"


class _Made:
    """An asyncio serial driver handed to the allocator in place of a connection string."""

    def __init__(self, driver: _AsyncSerialDriver) -> None:
        self.driver = driver


class _AsyncSerialDriver:
    """:class:`_SerialDriver` on the event loop, over asyncpg (a ``postgresql+asyncpg://`` URL,
    the application's ``Pool`` or ``Connection``): the fetches and the periods given back are
    tasks; the statements are the dense IDs' dialect's (``_segments_async``: the core's
    ``SegmentProtocol`` for a period's take and give-back, its registration read by the
    segments' DDL). One statement at a time; a pool lends a connection for each and has it
    back when it ends."""

    def __init__(self, source: Any, tag: str, *, schema: str | None = None, wait_ms: int = 5_000) -> None:
        self._dialect, servers, schema = _async_dialect(source, schema, tag)
        self._source = servers[0]
        self.conninfo = source
        self.tag = tag
        self.schema = schema
        self.wait_ms = wait_ms
        self._lock = asyncio.Lock()
        self._arrived = asyncio.Event()
        self._closed = False
        self._conn: Any = None  # a connection of its own (a URL's)
        self._error: BaseException | None = None
        self._registration: tuple[str, str, int] | None = None
        self.fetches = 0

    async def _run(self, step: Any, *args: Any) -> Any:
        """The dialect's ``step`` on a connection, alone: its own (opened again when it broke),
        or one the application's pool lends, or the application's connection."""
        async with self._lock:
            source = self._source
            if not isinstance(source, str):
                conn = await _db.alend(source, f"Serials of tag {self.tag}", self.wait_ms)
                try:
                    return await step(conn, *args)
                finally:
                    if _db.is_asyncpg_pool(source):
                        await asyncio.shield(_db.agive_back(source, conn))
            try:
                if self._conn is None or not self._dialect.is_open(self._conn):
                    self._conn = await self._dialect.connect(source)
                return await step(self._conn, *args)
            except asyncio.CancelledError:
                conn, self._conn = self._conn, None
                if conn is not None and _db.is_asyncpg(conn):
                    conn.terminate()  # cancelled mid-statement: not trusted again
                raise
            except Exception as e:
                if self._dialect.gives_up(e):
                    await self._drop_own()
                raise

    async def _drop_own(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await self._dialect.close(conn)

    async def _load(self) -> None:
        """Reads the registration (the allocator's ``_info``), on the loop, before the
        allocator is made."""
        try:
            self._registration = await self._run(self._dialect.serial_info, self.tag)
        except Exception as e:
            await self._drop_own()
            translated = _serial_database_error(e, self.tag, "", self._unreachable)
            if translated is e:
                raise
            raise translated from e

    def _info(self) -> tuple[str, str, int]:
        assert self._registration is not None
        return self._registration

    def _drop_all(self) -> None:
        """The allocator refused the registration (``SERIAL_MISMATCH``): the connection goes."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.terminate()

    def _unreachable(self, e: BaseException) -> bool:
        return isinstance(e, DatabaseUnreachableError) or self._dialect.unreachable(e)

    def _start(self, ids: Any, fetch: Any) -> None:
        # Called by the allocator (native, on the loop) when a fetch becomes due.
        ran: list[bool] = []
        task = asyncio.get_running_loop().create_task(self._fetch(ids, fetch, ran), name="shardid-serial")
        _tasks.add(task)

        def ended(task: asyncio.Task[None]) -> None:
            _tasks.discard(task)
            if task.cancelled() and not ran:  # cancelled before its first step: never reported
                ids._fetch_failed(fetch)
                self._notify()

        task.add_done_callback(ended)

    async def _fetch(self, ids: Any, fetch: Any, ran: list[bool]) -> None:
        ran.append(True)
        try:
            take = self._dialect.take_period
            first, count, stride = await self._run(take, self.tag, fetch.period, ids._fetch_tag(fetch), fetch.size)
            if ids._fill(fetch, first, count, stride):
                self.fetches += 1
                self._error = None
            else:  # the period was given up meanwhile
                await self._give_back_now(ids, ids._fetch_tag(fetch), first, first + count * stride, count, 0)
        except BaseException as e:  # noqa: BLE001 - reported to the callers that wait
            ids._fetch_failed(fetch)
            self._error = e
            if isinstance(e, asyncio.CancelledError):
                raise
        finally:
            self._notify()

    def _notify(self) -> None:
        event, self._arrived = self._arrived, asyncio.Event()
        event.set()

    def _give_back(self, ids: Any, period_tag: str, first: int, end: int, count: int, lost: int) -> None:
        # Called by the allocator (native, on the loop) when a period ends: given back by a task.
        task = asyncio.get_running_loop().create_task(
            self._give_back_now(ids, period_tag, first, end, count, lost), name="shardid-serial-give-back"
        )
        _tasks.add(task)
        task.add_done_callback(_tasks.discard)

    async def _give_back_now(self, ids: Any, period_tag: str, first: int, end: int, count: int, lost: int) -> None:
        returned = False
        try:
            returned = count > 0 and bool(await self._run(self._dialect.give_back, period_tag, first, end))
        except Exception:  # noqa: BLE001 - a server that is down keeps the rest: a hole
            pass
        finally:
            ids._settle(first, end, count, lost, returned)

    def _unavailable(self) -> BaseException:
        # ClosedError: the application's asyncpg pool or connection, closed by it.
        return _serials_unavailable(self, (UnsupportedError, ClosedError))

    def _when_empty(self, ids: Any, unix_ms: int | None) -> str:
        # The allocator's blocking wait: never on the loop (AsyncSerials awaits _await_serial).
        raise self._unavailable()

    async def _await_serial(self, ids: Any, unix_ms: int | None) -> str:
        """The next serial once the fetch under way is in, at most ``wait_ms``."""
        deadline = time.monotonic() + self.wait_ms / 1000
        while True:
            error = self._error
            if self._closed or getattr(error, "sqlstate", None) == _UNKNOWN_TAG or isinstance(error, (UnsupportedError, ClosedError)):
                raise self._unavailable()
            serial = ids._try_next_serial(unix_ms)
            if serial is not None:
                return str(serial)
            now = time.monotonic()
            if now >= deadline:
                raise self._unavailable()
            arrived = self._arrived
            try:
                await asyncio.wait_for(arrived.wait(), min(deadline - now, 0.05 if ids._fetching() else 0.002))
            except asyncio.TimeoutError:
                pass

    async def close(self, ids: Any) -> None:
        """Gives every period's unused rest back and closes its own connection."""
        self._closed = True
        if not ids._shut():
            return
        deadline = time.monotonic() + self.wait_ms / 1000
        while ids._fetching() and time.monotonic() < deadline:
            arrived = self._arrived
            try:
                await asyncio.wait_for(arrived.wait(), 0.05)
            except asyncio.TimeoutError:
                pass
        try:
            for period_tag, first, end, count, lost in ids._close_periods():
                await self._give_back_now(ids, period_tag, first, end, count, lost)
        finally:
            await self._drop_own()


# Tasks of the asyncio serial drivers, held until done (the loop keeps only weak references).
_tasks: set[asyncio.Task[Any]] = set()


class AsyncSerials:
    """:class:`Serials` for asyncio, with the same numbers, periods, errors and ``stats()``::

        async with AsyncSerials("postgresql://app@db/app", "orders", "ORD-{yyyy}{MM}{dd}-{seq:6}",
                                zone="Asia/Shanghai") as orders:
            await orders.next_serial()   # ORD-20261125-000001

    The allocator is a :class:`Serials` (made at the first call): every call that may wait on
    the database — connecting and checking the registration, a serial (its period's segment may
    be used up and fetched, a period's rest given back at its end), closing — runs it on a
    worker thread (:func:`asyncio.to_thread`), as the SQLite clients' asyncio side does, so the
    event loop never waits on a driver. A bad format, zone or URL is refused at once, here; a bad
    tag or schema, an unregistered tag, a database that cannot be reached at the first call.

    On asyncpg (a ``postgresql+asyncpg://`` URL, the application's asyncpg ``Pool`` or
    ``Connection``, as :class:`AsyncDenseIds` takes them) the allocator runs on the loop, a
    serial at hand returned without suspending, and its fetches and the periods given back are
    tasks (``_AsyncSerialDriver``).
    """

    def __init__(
        self,
        conninfo: Any,
        tag: str,
        format: str,
        *,
        zone: str,
        schema: str | None = None,
        min_size: int | None = None,
        max_size: int | None = None,
        target_ms: int | None = None,
        wait_ms: int | None = None,
    ) -> None:
        # asyncpg (its URL, the application's pool or connection): the allocator on the loop,
        # its fetches tasks (_AsyncSerialDriver); otherwise on a worker thread (above).
        self._asyncpg: Any = None
        if _db.is_asyncpg(conninfo) or (isinstance(conninfo, str) and _db.split_driver(conninfo)[0] == "asyncpg"):
            if isinstance(conninfo, str):
                _check_serials_url(conninfo)
                _db.driver_url(conninfo, asyncio=True)
            _async_dialect(conninfo, schema, tag)  # UNSUPPORTED now for another asyncpg object
            self._asyncpg = conninfo
        elif not isinstance(conninfo, str):
            reason = "must be a connection string, or an asyncpg Pool or Connection"
            raise InvalidArgumentError(f"conninfo {reason}", argument="conninfo", reason=reason)
        else:
            _check_serials_url(conninfo)  # INVALID_ARGUMENT now for a URL no driver takes
        self.format = SerialFormat(format, zone)  # INVALID_SERIAL_FORMAT, UNKNOWN_TIME_ZONE now
        """The format (``parse``, ``render``, ``period_at`` need no connection)."""
        self.tag = tag
        self._make = lambda: Serials(
            conninfo,
            tag,
            format,
            zone=zone,
            schema=schema,
            min_size=min_size,
            max_size=max_size,
            target_ms=target_ms,
            wait_ms=wait_ms,
        )
        self._serials: Serials | None = None
        self._opening: asyncio.Lock | None = None
        self._closed = False
        self._driver: _AsyncSerialDriver | None = None
        self._limits: dict[str, Any] = {
            "schema": schema,
            "min_size": min_size,
            "max_size": max_size,
            "target_ms": target_ms,
            "wait_ms": wait_ms,
        }
        self._zone, self._format = zone, format

    async def _open(self) -> Serials:
        if self._closed:
            raise _db.closed_error(f"Serials of tag {self.tag}")
        if self._serials is None:
            if self._opening is None:
                self._opening = asyncio.Lock()
            async with self._opening:
                if self._serials is None and self._asyncpg is not None:
                    self._serials = await self._open_on_loop()
                if self._serials is None:
                    made = await asyncio.to_thread(self._make)
                    if self._closed:  # closed while it was being made: closed too, never used
                        await asyncio.to_thread(made.close)
                        raise _db.closed_error(f"Serials of tag {self.tag}")
                    self._serials = made
        return self._serials

    async def _open_on_loop(self) -> Serials:
        """The allocator over asyncpg: its registration read on the loop first, then the
        allocator made with the driver (no I/O)."""
        wait_ms = self._limits["wait_ms"]
        driver = _AsyncSerialDriver(
            self._asyncpg, self.tag, schema=self._limits["schema"], wait_ms=5_000 if wait_ms is None else wait_ms
        )
        await driver._load()
        made = Serials(_Made(driver), self.tag, self._format, zone=self._zone, **self._limits)  # type: ignore[arg-type]
        self._driver = driver
        return made

    async def _issue(self, unix_ms: int | None) -> str:
        serials = await self._open()
        driver = self._driver
        if driver is None:  # on a worker thread
            if unix_ms is None:
                return await asyncio.to_thread(serials.next_serial)
            return await asyncio.to_thread(serials.next_serial_at, unix_ms)
        serial = serials._try_next_serial(unix_ms)
        if serial is not None:
            return str(serial)
        return await driver._await_serial(serials, unix_ms)

    async def next_serial(self) -> str:
        """The next serial, issued now (waiting at most ``wait_ms`` for its period's segment)."""
        return await self._issue(None)

    async def next_serial_at(self, unix_ms: int) -> str:
        """The next serial, issued at ``unix_ms`` (a scripted clock, a replay); a time behind
        the current period is issued at its first instant."""
        return await self._issue(unix_ms)

    def parse(self, serial: str) -> Any:
        """Parses a serial of this format back (no connection needed)."""
        return self.format.parse(serial)

    def render(self, number: int, unix_ms: int) -> str:
        """The serial of ``number`` at ``unix_ms``, by this format (nothing is taken)."""
        return self.format.render(number, unix_ms)

    def stats(self) -> dict[str, int]:
        """What the allocator did: :meth:`Serials.stats` (empty until the first call connects)."""
        return {} if self._serials is None else self._serials.stats()

    async def close(self) -> None:
        """Gives every period's unused rest back and closes the connection; later calls raise
        :class:`~shardid.ClosedError`. Closing twice is fine."""
        self._closed = True
        serials, self._serials = self._serials, None
        if serials is not None and self._driver is not None:
            await self._driver.close(serials)
        elif serials is not None:
            await asyncio.to_thread(serials.close)

    async def __aenter__(self) -> AsyncSerials:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"AsyncSerials(tag={self.tag!r}, format={self.format.format!r})"
