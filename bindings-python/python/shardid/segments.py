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
import sqlite3
import threading
import time
from collections.abc import Sequence
from typing import Any

from shardid import _db, _mysql, _sqlite
from shardid._errors import (
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
from shardid._segments_generated import _Driver, _Mysql, dialect
from shardid._segments_async import _AsyncDriver, check_names
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
    _mysql_registration_problem,
    _mysql_serial_statements,
    _serial_statements,
)

__all__ = ["AsyncDenseIds", "AsyncSerials", "DenseIds", "Serials", "check_names", "create_serial", "create_tag"]

# The SQLSTATE of an unknown tag, from the core (shardid::sql::UNKNOWN_TAG).
_UNKNOWN_TAG = _UNKNOWN_TAG_SQLSTATE


def _connect(conninfo: str) -> Any:
    import psycopg

    return psycopg.connect(conninfo, autocommit=True, connect_timeout=5)


def create_tag(conninfo: str | Sequence[str], tag: str, *, schema: str | None = None) -> None:
    """Creates the tag of dense IDs ``tag`` (from 1) if it is not there (a tag already there is
    left as it is) on the database at ``conninfo``: a PostgreSQL connection string, a
    ``mysql://`` URL (a list: on each ticket server), or one ``sqlite:///path.db`` URL (its
    tables created if missing). ``schema`` as for :class:`DenseIds`.

    Raises ``InvalidArgumentError`` for a bad tag, URL or schema, ``DatabaseUnreachableError``
    when a server cannot be reached (a SQLite file cannot be used); a schema without the DDL
    is the driver's error, as it is."""
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
    database = _check_serials_url(conninfo) if isinstance(conninfo, str) else "postgres"
    if database == "sqlite":
        _create_serial_sqlite(conninfo, tag, format, parsed, _sqlite.schema_of(schema), max_gap)
        return
    if database == "mysql":
        _create_serial_mysql(conninfo, tag, format, parsed, schema or "seg", max_gap)
        return
    create = _serial_statements(schema or "seg")[3]
    canonical, shape, pieces, width, reset = parsed._registration()
    import psycopg

    if isinstance(conninfo, str):
        _check_serials_url(conninfo)
        try:
            conn = _connect(conninfo)
        except psycopg.Error as e:
            raise _serial_database_error(e, tag, parsed.zone) from e
    else:
        conn = conninfo
    try:
        conn.execute(create, (tag, format, parsed.zone, canonical, shape, pieces, width, reset, max_gap))
    except psycopg.Error as e:
        raise _serial_database_error(e, tag, parsed.zone) from e
    finally:
        if isinstance(conninfo, str):
            conn.close()


def _create_serial_sqlite(conninfo: str, tag: str, format: str, parsed: Any, schema: str, max_gap: int) -> None:
    """:func:`create_serial` in a SQLite file: the registration inserted, then compared (SQLite
    has no function to do both)."""
    steps = _sqlite.Segments(schema)
    conn = _sqlite.connect(conninfo, steps.ddl)
    try:
        reason = _sqlite.run(steps.register, conn, tag, format, parsed.zone, parsed._registration(), max_gap)
    except Exception as e:  # noqa: BLE001 - sorted by _serial_database_error
        translated = _serial_database_error(e, tag, parsed.zone)
        if translated is e:
            raise
        raise translated from e
    finally:
        _sqlite.close(conn)
    if reason is not None:
        raise SerialMismatchError(f"serial tag {tag} {reason}", tag=tag, reason=reason)


def _create_serial_mysql(conninfo: str, tag: str, format: str, parsed: Any, schema: str, max_gap: int) -> None:
    """:func:`create_serial` on MySQL or MariaDB (the core's ``MysqlSerials``): ``INSERT
    IGNORE``, then the rows of the tag or of its shape say whether it fits (the unique shape
    makes two registrations at once safe)."""
    _, register, registered, _ = _mysql_serial_statements(schema)
    canonical, shape, pieces, width, reset = parsed._registration()
    conn = _mysql.connect(conninfo)  # DATABASE_UNREACHABLE, NOT_MYSQL
    try:
        with conn.cursor() as cur:
            cur.execute(register, (tag, format, parsed.zone, canonical, shape, "\n".join(pieces), width, reset, max_gap))
            cur.execute(registered, (tag, shape))
            rows = [tuple(row) for row in cur.fetchall()]
    except _mysql.pymysql_errors() as e:
        translated = _mysql_missing_ddl(_serial_database_error(e, tag, parsed.zone, _mysql_unreachable), schema)
        if translated is e:
            raise
        raise translated from e
    finally:
        _mysql.close(conn)
    reason = _mysql_registration_problem(rows, tag, canonical, parsed.zone)
    if reason is not None:
        raise SerialMismatchError(f"serial tag {tag} {reason}", tag=tag, reason=reason)


# MySQL's error number of a table that does not exist.
_NO_SUCH_TABLE = 1146


def _mysql_missing_ddl(e: BaseException, schema: str) -> BaseException:
    """``DATABASE`` naming the DDL to run when the registrations' table is not there (the
    segments' DDL alone does not make it on MySQL); ``e`` as it is otherwise."""
    if _mysql._number(e) != _NO_SUCH_TABLE:
        return e
    reason = (
        f"no serials' registrations in database {schema} ({e.args[-1]}): run the DDL of "
        f"python -m shardid.sql --dialect mysql --serials --schema {schema}, after --segments'"
    )
    return _error("DATABASE", reason=reason)


def _mysql_unreachable(e: BaseException) -> bool:
    """MySQL's rule (``shardid._mysql``): the connection could not be opened, or it is gone."""
    return isinstance(e, DatabaseUnreachableError) or _mysql.lost(e)


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


class _MysqlSerialSteps:
    """Serials' steps on MySQL or MariaDB, in the core's order (``shardid::serial::mysql``): the
    registration read with the core's statement; each period's segments taken by the segments'
    steps (``_Mysql``: the core's ``MysqlFetch``) from a tag of its own (``orders@2026-11-25``),
    which the core's ``create_period`` makes at the period's first take if the serial tag is
    registered."""

    def __init__(self, schema: str, tag: str) -> None:
        self.segments = _Mysql(schema, tag)
        self._info, _, _, self._create_period = _mysql_serial_statements(schema)

    @staticmethod
    def _unknown(tag: str) -> BaseException:
        return _mysql.ServerError(_UNKNOWN_TAG, f"no serial tag {tag!r}")

    def info(self, conn: Any, tag: str) -> tuple[str, str, int]:
        """``(canonical, zone, max_gap)`` of a registered serial tag, or ``UNKNOWN_TAG``."""
        with conn.cursor() as cur:
            cur.execute(self._info, (tag,))
            row = cur.fetchone()
        if row is None:
            raise self._unknown(tag)
        canonical, zone, max_gap = row
        return canonical, zone, 1 if max_gap is None else int(max_gap)

    def take(self, conn: Any, tag: str, period_tag: str, size: int) -> tuple[int, int, int]:
        """A segment of the period's tag ``period_tag``: ``(first, count, stride)``; at the
        period's first take its tag is made, and taken from again."""
        for first_take in (True, False):
            try:
                return self.segments.take(conn, 0, period_tag, size)
            except _mysql.ServerError as e:
                if e.sqlstate != _UNKNOWN_TAG or not first_take:
                    raise
            with conn.cursor() as cur:
                cur.execute(self._create_period, (tag, period_tag))
                made = cur.fetchone()
            if made is None or made[0] is None:  # NULL: the serial tag is not registered
                raise self._unknown(tag)
        raise self._unknown(period_tag)  # not reached: the second take returns or raises

    def give_back(self, conn: Any, period_tag: str, first: int, end: int) -> bool:
        return self.segments.give_back(conn, period_tag, first, end)


class _SerialDriver:
    """What :class:`Serials` (native: the core's allocator of periods) does in Python: one
    psycopg connection, the fetch threads, waiting, giving periods back. Its methods take the
    allocator as ``ids``; it keeps no reference to it."""

    def __init__(self, conninfo: str, tag: str, *, schema: str | None = None, wait_ms: int = 5_000) -> None:
        if not isinstance(conninfo, str):
            reason = "must be a connection string"
            raise InvalidArgumentError(f"conninfo {reason}", argument="conninfo", reason=reason)
        # SQLite's steps (the core's, over sqlite3), MySQL's (the core's statements, over
        # PyMySQL), or neither: PostgreSQL's functions.
        self._sqlite: _sqlite.Segments | None = None
        self._mysql: _MysqlSerialSteps | None = None
        # A PyMySQL connection is for one thread at a time: the fetch thread's statements and a
        # caller's giving a period back take turns.
        self._mysql_lock = threading.Lock()
        database = _check_serials_url(conninfo)
        if database == "sqlite":
            schema = _sqlite.schema_of(schema)
            self._sqlite = _sqlite.Segments(schema)
        elif database == "mysql":
            schema = schema or "seg"
            self._mysql = _MysqlSerialSteps(schema, tag)
        else:
            schema = schema or "seg"
            self._info_sql, self._take, self._give_back_sql, _, _, _ = _serial_statements(schema)
        self.conninfo = conninfo
        self.tag = tag
        self.schema = schema
        self.wait_ms = wait_ms
        self._arrived = threading.Condition()
        self._closed = False
        self.skipped = 0
        """Numbers taken from the database and neither issued nor given back: the holes this
        allocator made (a period's rest another process took segments of after it)."""
        self._conn: Any = None
        self._error: BaseException | None = None
        self.fetches = 0

    def _connection(self) -> Any:
        conn = self._conn
        if self._sqlite is not None:
            if conn is None or not _sqlite.is_open(conn):
                conn = self._conn = _sqlite.connect(self.conninfo, self._sqlite.ddl)
            return conn
        if self._mysql is not None:
            if conn is None or not _mysql.is_open(conn):
                conn = self._conn = _mysql.connect(self.conninfo)
            return conn
        if conn is None or conn.closed:
            conn = self._conn = _connect(self.conninfo)
        return conn

    def _run_mysql(self, step: Any, *args: Any) -> Any:
        """MySQL's ``step`` on the connection, alone (opened again next time when it broke or
        could not be opened)."""
        with self._mysql_lock:
            try:
                return step(self._connection(), *args)
            except Exception as e:
                if isinstance(e, NotMysqlError) or _mysql_unreachable(e):
                    self._drop_all()
                raise

    def _unreachable(self, e: BaseException) -> bool:
        """Whether ``e`` says the database cannot be reached, by its driver's rule."""
        if self._sqlite is not None:
            return _sqlite.unreachable(e)
        if self._mysql is not None:
            return _mysql_unreachable(e)
        return _db.unreachable(e)

    def _run_sqlite(self, step: Any, *args: Any) -> Any:
        """SQLite's ``step`` on the connection (opened again next time when the file could not
        be used)."""
        try:
            return _sqlite.run(step, self._connection(), *args)
        except Exception as e:
            if _sqlite.lost(e):
                self._drop_all()
            raise

    def _execute(self, sql: str, params: tuple[Any, ...]) -> Any:
        import psycopg

        try:
            return self._connection().execute(sql, params).fetchone()
        except psycopg.OperationalError:
            self._drop_all()  # reconnect next time
            raise

    def _info(self) -> tuple[str, str, int]:
        if self._sqlite is not None:
            try:
                canonical, zone, max_gap, _ = self._run_sqlite(self._sqlite.serial_info, self.tag)
            except Exception as e:
                self._drop_all()
                translated = _serial_database_error(e, self.tag, "")
                if translated is e:
                    raise
                raise translated from e
            return canonical, zone, max_gap
        if self._mysql is not None:
            try:
                return self._run_mysql(self._mysql.info, self.tag)  # type: ignore[no-any-return]
            except Exception as e:
                self._drop_all()
                translated = _mysql_missing_ddl(_serial_database_error(e, self.tag, "", _mysql_unreachable), self.schema)
                if translated is e:
                    raise
                raise translated from e
        import psycopg

        try:
            row = self._execute(self._info_sql, (self.tag,))
        except psycopg.Error as e:
            self._drop_all()
            raise _serial_database_error(e, self.tag, "") from e
        canonical, zone, max_gap = row
        return canonical, zone, max_gap

    def _drop_all(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            if self._sqlite is not None:
                _sqlite.close(conn)
            elif self._mysql is not None:
                _mysql.close(conn)
            else:
                conn.close()

    def _start(self, ids: Any, fetch: Any) -> None:
        # Called by the allocator (native) when a fetch becomes due.
        threading.Thread(target=self._fetch, args=(ids, fetch), name="shardid-serial", daemon=True).start()

    def _fetch(self, ids: Any, fetch: Any) -> None:
        try:
            if self._sqlite is not None:
                take = self._sqlite.take_period
                first, count, stride = self._run_sqlite(take, self.tag, fetch.period, fetch.size)
            elif self._mysql is not None:
                period_tag = ids._fetch_tag(fetch)
                first, count, stride = self._run_mysql(self._mysql.take, self.tag, period_tag, fetch.size)
            else:
                first, count, stride = self._execute(self._take, (self.tag, fetch.period, fetch.size))
            if ids._fill(fetch, first, count, stride):
                self.fetches += 1
                self._error = None
            else:  # the period was given up meanwhile
                self._give_back(ids._fetch_tag(fetch), first, first + count * stride, count, 0)
        except BaseException as e:  # noqa: BLE001 - reported to the callers that wait
            ids._fetch_failed(fetch)
            self._error = e
        finally:
            with self._arrived:
                self._arrived.notify_all()

    def _give_back(self, period_tag: str, first: int, end: int, count: int, lost: int) -> None:
        """Gives a period's unused ``first..end`` back; counts what cannot be as skipped."""
        self.skipped += lost
        if count == 0:
            return
        returned = False
        try:
            if self._sqlite is not None:
                returned = self._run_sqlite(self._sqlite.give_back, period_tag, first, end)
            elif self._mysql is not None:
                returned = self._run_mysql(self._mysql.give_back, period_tag, first, end)
            else:
                row = self._execute(self._give_back_sql, (period_tag, first, end))
                returned = bool(row and row[0])
        except Exception:  # noqa: BLE001 - a server that is down keeps the rest: a hole
            pass
        if not returned:
            self.skipped += count

    def _unavailable(self) -> BaseException:
        if self._closed:
            return _db.closed_error(f"Serials of tag {self.tag}")
        error = self._error
        if error is not None and (getattr(error, "sqlstate", None) == _UNKNOWN_TAG or self._unreachable(error)):
            translated = _serial_database_error(error, self.tag, "", self._unreachable)
            if translated is not error and translated.__cause__ is None:
                translated.__cause__ = error
            return translated
        if isinstance(error, (NotMysqlError, UnsupportedError)):
            return error  # not a server to wait for
        reason = f"the database did not answer within {self.wait_ms} ms" + (f" ({error})" if error else "")
        unavailable = SegmentUnavailableError(f"no segment of tag {self.tag} is available: {reason}", tag=self.tag, reason=reason)
        unavailable.__cause__ = error
        return unavailable

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
                self._mysql_lock = threading.Lock()  # a lock the parent's fetch held at the fork stays held
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
        if self._closed or ids._forked():
            self._closed = True
            ids._shut()
            return
        self._closed = True
        ids._shut()
        deadline = time.monotonic() + self.wait_ms / 1000
        with self._arrived:
            while ids._fetching() and time.monotonic() < deadline:
                self._arrived.wait(0.05)
        try:
            for period_tag, first, end, count, lost in ids._close_periods():
                self._give_back(period_tag, first, end, count, lost)
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
    """

    def __init__(self, conninfo: str | Sequence[str], tag: str, **options: Any) -> None:
        made: list[_AsyncDriver] = []

        def driver(conninfo: str | Sequence[str], tag: str, **kw: Any) -> _AsyncDriver:
            made.append(_AsyncDriver(conninfo, tag, **kw))
            return made[0]

        self.native = DenseIds(conninfo, tag, _driver=driver, **options)  # type: ignore[arg-type]
        """The allocator (``shardid.segments.DenseIds``): its attributes are this one's."""
        self._driver = made[0]

    def __getattr__(self, name: str) -> Any:
        if name in ("tag", "schema", "servers", "conninfo", "skipped", "fetches", "wait_ms"):
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
    """

    def __init__(
        self,
        conninfo: str,
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
        if not isinstance(conninfo, str):
            reason = "must be a connection string"
            raise InvalidArgumentError(f"conninfo {reason}", argument="conninfo", reason=reason)
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

    async def _open(self) -> Serials:
        if self._closed:
            raise _db.closed_error(f"Serials of tag {self.tag}")
        if self._serials is None:
            if self._opening is None:
                self._opening = asyncio.Lock()
            async with self._opening:
                if self._serials is None:
                    self._serials = await asyncio.to_thread(self._make)
        return self._serials

    async def next_serial(self) -> str:
        """The next serial, issued now (waiting at most ``wait_ms`` for its period's segment)."""
        serials = await self._open()
        return await asyncio.to_thread(serials.next_serial)

    async def next_serial_at(self, unix_ms: int) -> str:
        """The next serial, issued at ``unix_ms`` (a scripted clock, a replay); a time behind
        the current period is issued at its first instant."""
        serials = await self._open()
        return await asyncio.to_thread(serials.next_serial_at, unix_ms)

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
        if serials is not None:
            await asyncio.to_thread(serials.close)

    async def __aenter__(self) -> AsyncSerials:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"AsyncSerials(tag={self.tag!r}, format={self.format.format!r})"
