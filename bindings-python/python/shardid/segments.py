"""Dense IDs from PostgreSQL or MySQL segments (号段, as Meituan's Leaf, Didi's Tinyid and TiDB do
it): an optional extra that needs ``psycopg`` (``pip install shardid[postgres]``; psycopg2
works too), or PyMySQL for a ``mysql://`` or ``mariadb://`` URL (``pip install shardid[mysql]``).

Business serial numbers (``ORD-20261125-000123``: a number that starts again at 1 every day,
month or year in a time zone) come from the same segments, one tag per period::

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
import threading
import time
from collections.abc import Sequence
from typing import Any

from shardid import _db, _mysql
from shardid._errors import (
    DatabaseUnreachableError,
    InvalidArgumentError,
    NotMysqlError,
    SegmentUnavailableError,
    SerialMismatchError,
    UnknownTagError,
    UnknownTimeZoneError,
    UnsupportedError,
)
from shardid._shardid import (
    _SERIAL_MISMATCH_SQLSTATE,
    _UNKNOWN_TAG_SQLSTATE,
    _UNKNOWN_TIME_ZONE_SQLSTATE,
    DenseIds,
    SerialFormat,
    Serials,
    _check_serial_tag,
    _mismatch_reason,
    _segment_statements,
    _serial_statements,
)

__all__ = ["AsyncDenseIds", "DenseIds", "Serials", "check_names", "create_serial"]

# The SQLSTATE of an unknown tag, from the core (shardid::sql::UNKNOWN_TAG).
_UNKNOWN_TAG = _UNKNOWN_TAG_SQLSTATE


def check_names(tag: str, schema: str) -> tuple[str, str]:
    """Checks a tag (1 to 200 bytes of text) and a schema name (a plain lower-case identifier);
    returns the statements that take a segment and give one back."""
    if not isinstance(tag, str) or not 1 <= len(tag.encode()) <= 200:
        reason = "must be 1 to 200 bytes of text"
        raise InvalidArgumentError(f"tag {reason}", argument="tag", reason=reason)
    take, give_back, _ = _segment_statements(schema)
    return take, give_back


class _Driver:
    """What :class:`DenseIds` (native: the core's allocator) does in Python: psycopg
    connections, the fetch threads, waiting. Its methods take the allocator as ``ids``; it
    keeps no reference to it (the allocator holds the driver)."""

    def __init__(
        self,
        conninfo: str | Sequence[str],
        tag: str,
        *,
        schema: str = "seg",
        wait_ms: int = 5_000,
    ) -> None:
        # The statements are the core's; this checks the names too.
        self._take, self._give_back = check_names(tag, schema)
        self.servers = [conninfo] if isinstance(conninfo, str) else list(conninfo)
        if not self.servers or not all(isinstance(c, str) for c in self.servers):
            reason = "must be a connection string or a non-empty list of them"
            raise InvalidArgumentError(f"conninfo {reason}", argument="conninfo", reason=reason)
        self.conninfo = self.servers[0]
        # MySQL and MariaDB: the core's statements for them, over PyMySQL.
        self._mysql = _mysql.Segments(schema) if _mysql.is_url(self.conninfo) else None
        if any(_mysql.is_url(c) != (self._mysql is not None) for c in self.servers):
            reason = "must all be mysql:// URLs or all PostgreSQL connection strings"
            raise InvalidArgumentError(f"conninfo {reason}", argument="conninfo", reason=reason)
        if self._mysql is not None:
            for url in self.servers:
                _mysql.check_url(url)  # INVALID_ARGUMENT now, not at the first fetch
        self.tag = tag
        self.schema = schema
        self.wait_ms = wait_ms
        self._arrived = threading.Condition()
        self._closed = False
        self.skipped = 0
        """Numbers taken from the database and neither handed out nor given back (by
        :meth:`close`): the holes this allocator made."""
        self._reset(None)

    def _reset(self, ids: Any) -> None:
        """A fresh state for this process (at the start, and in a forked child)."""
        if ids is not None:
            ids._adopt()
        self._conns: list[Any] = [None] * len(self.servers)
        self._turn = 0  # the server the next fetch tries first
        self._last_server = 0  # the server of the last segment taken, to give its rest back to
        self._error: BaseException | None = None
        self.fetches = 0

    def _fetch(self, ids: Any, size: int) -> None:
        """Takes one segment (in a thread of its own) and hands it to the allocator."""
        error: BaseException | None = None
        try:
            errors = self._errors()
            # Each server in turn, from the one after the last that answered.
            for attempt in range(len(self.servers)):
                server = (self._turn + attempt) % len(self.servers)
                try:
                    conn = self._connection(server)
                    first, count, stride = self._take_segment(conn, server, size)
                except errors as e:
                    # A server that cannot be reached is DATABASE_UNREACHABLE (the driver's
                    # error as its cause); the database's own errors are kept as they are.
                    error = e
                    if not isinstance(e, DatabaseUnreachableError) and self._unreachable(e):
                        error = _db.unreachable_error(e)
                        error.__cause__ = e
                    if self._lost(e):
                        self._drop(server)  # reconnect at the next fetch
                    if _db.sqlstate(e) == _UNKNOWN_TAG:
                        break
                    continue
                ids._fill(first, count, stride)
                self._last_server = server
                self._turn = (server + 1) % len(self.servers)
                self.fetches += 1
                self._error = None
                return
            ids._fetch_failed()
            self._error = error
        except BaseException as e:  # noqa: BLE001 - reported to the callers that wait
            ids._fetch_failed()
            self._error = e
        finally:
            with self._arrived:
                self._arrived.notify_all()

    # The database's side, PostgreSQL (psycopg) or MySQL (PyMySQL, shardid._mysql): what a
    # fetch or a give-back sends, the driver's errors, and which of them lose the connection.

    def _errors(self) -> tuple[type[BaseException], ...]:
        if self._mysql is not None:
            return (*self._mysql.errors(), NotMysqlError, DatabaseUnreachableError)
        # psycopg 3's or psycopg2's errors (whichever is installed), and ours.
        return (Exception,)

    def _lost(self, e: BaseException) -> bool:
        if self._mysql is not None:
            return isinstance(e, (NotMysqlError, DatabaseUnreachableError)) or _mysql.lost(e)
        return isinstance(e, DatabaseUnreachableError) or _db.connection_lost(e)

    def _unreachable(self, e: BaseException) -> bool:
        if self._mysql is not None:
            return _mysql.lost(e)
        return _db.unreachable(e)

    def _take_segment(self, conn: Any, server: int, size: int) -> tuple[int, int, int]:
        if self._mysql is not None:
            return self._mysql.take(conn, server, self.tag, size)
        return tuple(_db.execute(conn, self._take, (self.tag, size)))  # type: ignore[return-value]

    def _give_back_rest(self, conn: Any, first: int, end: int) -> bool:
        if self._mysql is not None:
            return self._mysql.give_back(conn, self.tag, first, end)
        row = _db.execute(conn, self._give_back, (self.tag, first, end))
        return bool(row and row[0])

    def _connection(self, server: int) -> Any:
        conn = self._conns[server]
        if self._mysql is not None:
            if conn is None or not conn.open:
                conn = self._conns[server] = _mysql.connect(self.servers[server])
            return conn
        if conn is None or conn.closed:
            # psycopg 3, or psycopg2 when only it is installed.
            conn = self._conns[server] = _db.connect_postgres(self.servers[server], connect_timeout=5)
        return conn

    def _drop(self, server: int) -> None:
        conn, self._conns[server] = self._conns[server], None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001, S110 - PyMySQL refuses to close a closed one
                pass

    def _start(self, ids: Any, size: int) -> None:
        # Called by the allocator (native) when a fetch becomes due.
        threading.Thread(target=self._fetch, args=(ids, size), name="shardid-segment", daemon=True).start()

    def _unavailable(self, ids: Any = None) -> BaseException:
        """Why no ID can be handed out: closed, no such tag, or no segment (saying whether the
        database cannot be reached, the last fetch failed, or none arrived in time)."""
        if self._closed:
            return _db.closed_error(f"DenseIds of tag {self.tag}")
        error = self._error
        if error is not None and _db.sqlstate(error) == _UNKNOWN_TAG:
            return UnknownTagError(f"no tag {self.tag}: create it first (create_tag)", tag=self.tag, create="create_tag")
        if isinstance(error, (NotMysqlError, UnsupportedError)):
            return error  # not a server to wait for
        if self._never_reached():
            return self._unreachable_error()
        if error is None or (ids is not None and ids._fetching()):
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
        return isinstance(error, DatabaseUnreachableError) or self._unreachable(error)

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

    def _wait(self, ids: Any, deadline: float) -> float:
        """Waits a little for the fetch under way; raises once past ``deadline`` (0: set it)."""
        if (
            self._closed
            or (self._error is not None and _db.sqlstate(self._error) == _UNKNOWN_TAG)
            or isinstance(self._error, (NotMysqlError, UnsupportedError))
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
        with self._arrived:
            self._arrived.wait(min(deadline - now, 0.05))
        return deadline

    def _when_empty(self, ids: Any) -> int:
        # Both segments are used up: wait for the fetch under way and retry.
        deadline = 0.0
        while True:
            deadline = self._wait(ids, deadline)
            id = ids._try_next_id()
            if id is not None:
                return id

    def next_ids(self, ids: Any, n: int) -> list[int]:
        """``n`` IDs, increasing (waiting for segments as :meth:`next_id` does)."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise InvalidArgumentError(f"n {n!r} must be an int of 0 or more", argument="n", reason="must be 0 or more")
        out = ids._take_ids(n)
        deadline = 0.0
        while len(out) < n:
            deadline = self._wait(ids, deadline)
            more = ids._take_ids(n - len(out), True)
            if more:
                out.extend(more)
                deadline = 0.0
        return out

    def close(self, ids: Any) -> None:
        """Gives the unused rest of the last segment back (if nobody took a segment since: then
        a restart continues at the next number) and closes the connection. Call it when no
        other thread takes IDs any more; closing twice is fine."""
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
        unused = ids._unused()
        try:
            if unused is not None:
                first, end, count, lost = unused
                self.skipped += lost
                returned = False
                try:
                    conn = self._connection(self._last_server)
                    returned = self._give_back_rest(conn, first, end)
                except Exception:  # noqa: BLE001 - a server that is down keeps the rest: a hole
                    pass
                finally:
                    if not returned:
                        self.skipped += count
                    ids._settle(returned)
        finally:
            for server in range(len(self.servers)):
                self._drop(server)


def _connect(conninfo: str) -> Any:
    import psycopg

    return psycopg.connect(conninfo, autocommit=True, connect_timeout=5)


def create_serial(
    conninfo: Any, tag: str, format: str, *, zone: str, schema: str = "seg", max_gap: int = 1
) -> None:
    """Registers the serial tag ``tag`` with ``format`` in ``zone`` (once; again alike is
    nothing) on the server at ``conninfo`` (a connection string, or a psycopg connection used
    as it is), whose ``schema`` holds the segments' DDL. ``max_gap`` above 1 makes each number
    a random 1 to ``max_gap`` above the previous one (volume hiding).

    Raises ``InvalidSerialFormatError``, ``UnknownTimeZoneError``, ``SerialMismatchError`` (the
    tag is registered otherwise, or another tag prints this format)."""
    _check_serial_tag(tag)
    parsed = SerialFormat(format, zone)
    if not isinstance(max_gap, int) or isinstance(max_gap, bool) or not 1 <= max_gap <= 2**31 - 1:
        reason = "must be an int from 1 to 2**31 - 1"
        raise InvalidArgumentError(f"max_gap {reason}", argument="max_gap", reason=reason)
    create = _serial_statements(schema)[3]
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


def _check_serials_url(conninfo: str) -> None:
    """``INVALID_ARGUMENT`` for a URL no driver takes (the core's one rule), ``UNSUPPORTED`` for
    MySQL's and MariaDB's: serials are kept in PostgreSQL only."""
    if _mysql.is_url(conninfo):
        reason = "serials on MySQL and MariaDB: serials are kept in PostgreSQL only"
        raise UnsupportedError(f"unsupported: {reason}", reason=reason)


def _serial_database_error(e: BaseException, tag: str, zone: str) -> BaseException:
    """A database error of a serial tag as its kind (the rest as what it is)."""
    sqlstate = getattr(e, "sqlstate", None)
    message = str(getattr(getattr(e, "diag", None), "message_primary", None) or e)
    if sqlstate == _UNKNOWN_TAG:
        return UnknownTagError(f"no tag {tag}: create it first (create_serial)", tag=tag, create="create_serial")
    if _db.unreachable(e):
        unreachable = _db.unreachable_error(e)
        unreachable.__cause__ = e
        return unreachable
    if sqlstate == _SERIAL_MISMATCH_SQLSTATE:
        reason = _mismatch_reason(message, tag)
        return SerialMismatchError(f"serial tag {tag} {reason}", tag=tag, reason=reason)
    if sqlstate == _UNKNOWN_TIME_ZONE_SQLSTATE:
        return UnknownTimeZoneError(
            f"unknown time zone {zone}: not a name of the IANA tz database (such as Asia/Shanghai, America/New_York, UTC)",
            zone=zone,
        )
    return e


class _SerialDriver:
    """What :class:`Serials` (native: the core's allocator of periods) does in Python: one
    psycopg connection, the fetch threads, waiting, giving periods back. Its methods take the
    allocator as ``ids``; it keeps no reference to it."""

    def __init__(self, conninfo: str, tag: str, *, schema: str = "seg", wait_ms: int = 5_000) -> None:
        if not isinstance(conninfo, str):
            reason = "must be a connection string"
            raise InvalidArgumentError(f"conninfo {reason}", argument="conninfo", reason=reason)
        _check_serials_url(conninfo)
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
        if conn is None or conn.closed:
            conn = self._conn = _connect(self.conninfo)
        return conn

    def _execute(self, sql: str, params: tuple[Any, ...]) -> Any:
        import psycopg

        try:
            return self._connection().execute(sql, params).fetchone()
        except psycopg.OperationalError:
            self._drop_all()  # reconnect next time
            raise

    def _info(self) -> tuple[str, str, int]:
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
            conn.close()

    def _start(self, ids: Any, fetch: Any) -> None:
        # Called by the allocator (native) when a fetch becomes due.
        threading.Thread(target=self._fetch, args=(ids, fetch), name="shardid-serial", daemon=True).start()

    def _fetch(self, ids: Any, fetch: Any) -> None:
        try:
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
        if error is not None and (getattr(error, "sqlstate", None) == _UNKNOWN_TAG or _db.unreachable(error)):
            return _serial_database_error(error, self.tag, "")
        reason = f"the database did not answer within {self.wait_ms} ms" + (f" ({error})" if error else "")
        unavailable = SegmentUnavailableError(f"no segment of tag {self.tag} is available: {reason}", tag=self.tag, reason=reason)
        unavailable.__cause__ = error
        return unavailable

    def _when_empty(self, ids: Any, unix_ms: int | None) -> str:
        # The period's segments are used up (or the first is not there yet): wait for the
        # fetch under way and retry.
        deadline = 0.0
        while True:
            if self._closed or getattr(self._error, "sqlstate", None) == _UNKNOWN_TAG:
                raise self._unavailable()
            if ids._forked():
                ids._adopt()  # a forked child: periods and segments of its own
                self._conn = None  # the parent's connection is the parent's
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


class _AsyncDriver(_Driver):
    """What :class:`AsyncDenseIds` runs: :class:`_Driver`'s rules, with each fetch a task on
    the event loop over psycopg's ``AsyncConnection`` (aiomysql's on ``mysql://`` URLs, with
    ``shardid._mysql``'s steps) instead of a thread."""

    def __init__(self, conninfo: str | Sequence[str], tag: str, **options: Any) -> None:
        super().__init__(conninfo, tag, **options)
        if self._mysql is not None:
            _mysql._aiomysql()  # UNSUPPORTED now, without aiomysql, not at the first fetch
        self._tasks: set[asyncio.Task[None]] = set()
        self._landed: asyncio.Event | None = None

    def _start(self, ids: Any, size: int) -> None:
        # Called by the allocator (native, on the loop: AsyncDenseIds calls it only there).
        task = asyncio.get_running_loop().create_task(self._fetch_async(ids, size), name="shardid-segment")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _event(self) -> asyncio.Event:
        if self._landed is None:
            self._landed = asyncio.Event()
        return self._landed

    async def _connection_async(self, server: int) -> Any:
        conn = self._conns[server]
        if self._mysql is not None:
            if conn is None or conn.closed:
                conn = self._conns[server] = await _mysql.connect_async(self.servers[server])
            return conn
        import psycopg

        if conn is None or conn.closed:
            conn = self._conns[server] = await psycopg.AsyncConnection.connect(
                self.servers[server], autocommit=True, connect_timeout=5, prepare_threshold=None
            )
        return conn

    async def _drop_async(self, server: int) -> None:
        conn, self._conns[server] = self._conns[server], None
        if conn is not None and self._mysql is not None:
            _mysql.close_now(conn)  # aiomysql's close is immediate
        elif conn is not None:
            try:
                await conn.close()
            except Exception:  # noqa: BLE001, S110 - a broken connection may fail to close
                pass

    async def _take_async(self, server: int, size: int) -> tuple[int, int, int]:
        conn = await self._connection_async(server)
        if self._mysql is not None:
            return await self._mysql.take_async(conn, server, self.tag, size)
        cur = await conn.execute(self._take, (self.tag, size))
        return await cur.fetchone()  # type: ignore[no-any-return]

    async def _give_back_async(self, server: int, first: int, end: int) -> bool:
        conn = await self._connection_async(server)
        if self._mysql is not None:
            return await self._mysql.give_back_async(conn, self.tag, first, end)
        cur = await conn.execute(self._give_back, (self.tag, first, end))
        row = await cur.fetchone()
        return bool(row and row[0])

    async def _fetch_async(self, ids: Any, size: int) -> None:
        """:meth:`_Driver._fetch`, awaited: each server in turn, the segment to the allocator."""
        error: BaseException | None = None
        try:
            lost: tuple[type[BaseException], ...] = ()  # psycopg's, which drop the connection
            if self._mysql is not None:
                errors = self._errors()
            else:
                import psycopg

                errors, lost = (psycopg.Error,), (psycopg.OperationalError,)
            for attempt in range(len(self.servers)):
                server = (self._turn + attempt) % len(self.servers)
                try:
                    first, count, stride = await self._take_async(server, size)
                except errors as e:
                    error = e
                    if self._mysql is not None:
                        # As _Driver._fetch: a server that cannot be reached is
                        # DATABASE_UNREACHABLE, the server's own errors as they are.
                        if not isinstance(e, DatabaseUnreachableError) and self._unreachable(e):
                            error = _db.unreachable_error(e)
                            error.__cause__ = e
                        if self._lost(e):
                            await self._drop_async(server)
                    elif isinstance(e, lost):
                        await self._drop_async(server)
                    if getattr(e, "sqlstate", None) == _UNKNOWN_TAG:
                        break
                    continue
                ids._fill(first, count, stride)
                self._last_server = server
                self._turn = (server + 1) % len(self.servers)
                self.fetches += 1
                self._error = None
                return
            ids._fetch_failed()
            self._error = error
        except BaseException as e:  # noqa: BLE001 - reported to the callers that wait
            ids._fetch_failed()
            self._error = e
            if isinstance(e, asyncio.CancelledError):
                raise
        finally:
            landed, self._landed = self._event(), None
            landed.set()

    async def wait_async(self, ids: Any, deadline: float) -> float:
        """:meth:`_Driver._wait`, awaited: a little for the fetch under way; raises once past
        ``deadline`` (0: set it)."""
        if self._closed or getattr(self._error, "sqlstate", None) == _UNKNOWN_TAG:
            raise self._unavailable(ids)
        now = time.monotonic()
        if not deadline:
            return now + self.wait_ms / 1000
        if now >= deadline:
            raise self._unavailable(ids)
        try:
            await asyncio.wait_for(self._event().wait(), min(deadline - now, 0.05))
        except asyncio.TimeoutError:
            pass
        return deadline

    def _when_empty(self, ids: Any) -> int:
        # Only AsyncDenseIds drives this allocator, never with the blocking next_id().
        raise AssertionError("AsyncDenseIds waits with await")

    async def close_async(self, ids: Any) -> None:
        """:meth:`_Driver.close`, awaited."""
        if self._closed:
            return
        self._closed = True
        ids._shut()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=self.wait_ms / 1000)
        unused = ids._unused()
        try:
            if unused is not None:
                first, end, count, lost = unused
                self.skipped += lost
                returned = False
                try:
                    returned = await self._give_back_async(self._last_server, first, end)
                except Exception:  # noqa: BLE001 - a server that is down keeps the rest: a hole
                    pass
                finally:
                    if not returned:
                        self.skipped += count
        finally:
            for server in range(len(self.servers)):
                await self._drop_async(server)


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
        ids = self.native
        found = ids._try_next_id()
        if found is not None:
            return found  # type: ignore[no-any-return]
        deadline = 0.0
        while True:
            deadline = await self._driver.wait_async(ids, deadline)
            found = ids._try_next_id()
            if found is not None:
                return found  # type: ignore[no-any-return]

    async def next_ids(self, n: int) -> list[int]:
        """``n`` IDs, increasing (awaiting segments as :meth:`next_id` does)."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise InvalidArgumentError(f"n {n!r} must be an int of 0 or more", argument="n", reason="must be 0 or more")
        ids = self.native
        out: list[int] = ids._take_ids(n)
        deadline = 0.0
        while len(out) < n:
            deadline = await self._driver.wait_async(ids, deadline)
            more = ids._take_ids(n - len(out))
            if more:
                out.extend(more)
                deadline = 0.0
        return out

    async def close(self) -> None:
        """Gives the unused rest of the last segment back and closes the connections."""
        await self._driver.close_async(self.native)

    async def __aenter__(self) -> AsyncDenseIds:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"AsyncDenseIds(tag={self._driver.tag!r}, schema={self._driver.schema!r}, servers={len(self._driver.servers)})"
