"""Shard leases in PostgreSQL, for processes on different hosts (an optional extra: needs a
driver, ``pip install shardid[postgres]`` for psycopg 3; psycopg2 works too).

Lock files (:func:`shardid.lease`) keep the processes of one host apart; across hosts, the
database they already share does it::

    from shardid import Layout
    from shardid.postgres import lease

    generator = lease(Layout.INSTAGRAM, "postgresql://app@db/app", range(0, 64))
    generator.next_id()

The default lease *expires* (``kind="expiring"``): a row per shard in a table
(``shardid_leases``) holds the lease's random token and its expiry by the database's clock,
and nothing else: no session state, so it holds behind a transaction pooler (PgBouncer,
Supavisor, Neon's pooled endpoint, RDS Proxy). A background thread renews it every third of
its time to live (``ttl_ms``, 10 s by default); a process that crashes frees its shard one time
to live later. A holder that could not renew for four fifths of the time to live (paused,
cut off) stops on its own: the lease is then lost for good, and its calls raise
:class:`~shardid.LeaseLostError` (with ``retake=True``, the next call takes a new lease,
possibly on another shard).

Each row also records the shard's *ceiling*, written before any ID above it is handed out and
only while the row holds the lease's token, so the next holder starts above every ID the last
one issued: after a crash, on a host whose clock is behind, or when a paused holder is taken
over. In a forked child, the lease takes a new shard on a new connection of its own.

``kind="session"`` holds a session advisory lock per shard instead, for direct connections
only: a crashed holder's shard is free at once. It refuses to work through a pooler it can
detect (:class:`~shardid.SessionPooledError`, or :class:`~shardid.LeaseLostError` when its
statements move to another server session).

A server that cannot be reached (down, refusing, its connection broken and not opened again)
is :class:`~shardid.DatabaseUnreachableError` (a :class:`ConnectionError`) with the driver's
error as its ``__cause__``; the database's own errors (a missing privilege) are the driver's,
as they are. After :meth:`PostgresLease.close`, calls raise :class:`~shardid.ClosedError`. Lease
connections never use server-side prepared statements.

On an event loop, ``await lease_async(...)`` takes the same lease over psycopg's
``AsyncConnection`` (see :class:`AsyncPostgresLease`): the heartbeat is an asyncio task, and
``await generator.next_id()`` never blocks the loop on the database.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Callable
from typing import Any

from shardid import _db
from shardid._errors import InvalidArgumentError, LeaseLostError, ShardIdError
from shardid._lease import DEFAULT_TTL_MS, DatabaseLease, Dialect, check_url
from shardid._shardid import Layout, _CeilingGenerator, _claim_backend, _error, _Hold, _LeaseProtocol, _LeaseTally

__all__ = ["DEFAULT_TTL_MS", "AsyncPostgresLease", "PostgresLease", "lease", "lease_async"]


def default_connect(conninfo: str) -> Any:
    """An autocommit connection to ``conninfo`` with psycopg 3 (no server-side prepared
    statements, which a pooler in transaction mode cannot carry), or with psycopg2 when only it
    is installed."""
    return _db.connect_postgres(conninfo)


class _Postgres(Dialect):
    """psycopg 3, psycopg2, or any DB-API driver of PostgreSQL's."""

    name = "postgres"
    module = "shardid.postgres"

    def connect(self, conninfo: str) -> Any:
        return default_connect(conninfo)

    def code(self, e: BaseException) -> str | None:
        """The SQLSTATE of a psycopg (``sqlstate``) or psycopg2 (``pgcode``) error."""
        code = getattr(e, "sqlstate", None) or getattr(e, "pgcode", None)
        return code if isinstance(code, str) else None

    def lost(self, e: BaseException) -> bool:
        """The DB-API's ``OperationalError`` or ``InterfaceError``, whichever driver raised it."""
        return any(cls.__name__ in ("OperationalError", "InterfaceError") for cls in type(e).__mro__)


class PostgresLease(DatabaseLease):
    """A generator on a shard leased through PostgreSQL; see :func:`lease`. Use it as a context
    manager, or call :meth:`close`, to release the shard before the process ends."""

    dialect = _Postgres()


def lease(layout: Layout, conninfo: str | None, shards: range, **options: Any) -> PostgresLease:
    """Leases the first free shard of ``shards`` through the PostgreSQL server at ``conninfo``
    (a libpq connection string or URL).

    - ``kind``: ``"expiring"`` (the default; works behind transaction poolers) or ``"session"``
      (advisory locks; direct connections only, frees a crashed holder's shard at once).
    - ``ttl_ms``: an expiring lease's time to live (300 to 3,600,000; 10,000 by default): how
      long a crashed holder's shard stays taken, and a third of it is the renewal interval.
    - ``retake``: after the lease is lost, the next call takes a new one instead of raising
      :class:`~shardid.LeaseLostError`.
    - ``table``: the table of leases (``shardid_leases``); ``connect``: a function returning a
      new DB-API connection in autocommit mode, instead of connecting to ``conninfo``.
    - ``backwards_tolerance_ms`` / ``max_borrow_units`` go to the generator.
    """
    return PostgresLease(layout, conninfo, shards, **options)


# What the asyncio lease reads of a psycopg error or connection (the sync lease's, in _db).
_sqlstate = _db.sqlstate
_connection_lost = _db.connection_lost


def _usable(conn: Any) -> bool:
    return not (getattr(conn, "closed", False) or getattr(conn, "broken", False))


class _Behind(Exception):  # noqa: N818 - not an error: a ceiling to record first
    """Raised by an :class:`AsyncPostgresLease`'s ceiling store, which must not block the event
    loop: the generator (native, synchronous) wants ``units`` recorded first. The coroutine
    that asked for the ID records it on the loop and asks again."""

    def __init__(self, units: int, at_least: int) -> None:
        super().__init__(units)
        self.units = units
        self.at_least = at_least


class _AsyncTenure:
    """One lease taken by an :class:`AsyncPostgresLease`: its shard, generator and heartbeat
    task (the statements and their order are the core's ``_LeaseProtocol``'s, as for
    :class:`_Tenure`)."""

    def __init__(self, owner: AsyncPostgresLease, protocol: _LeaseProtocol, shard: int, recorded: int | None,
                 backend: str | None, sent: int) -> None:  # fmt: skip
        self.owner = owner
        self.protocol = protocol
        self.shard = shard
        self.recorded = recorded if recorded is not None else -1
        self.claim = _claim_backend(backend) if backend is not None else None
        self.hold = _Hold(owner.ttl_ms, sent) if protocol.kind == "expiring" else None
        self.generator = _CeilingGenerator(
            owner.layout, shard, recorded, self._store, hold=self.hold, tally=owner._tally, **owner._options
        )
        self.stopped = asyncio.Event()
        self.heartbeat: asyncio.Task[None] | None = None
        if self.hold is not None:
            self.heartbeat = asyncio.get_running_loop().create_task(self._beat(), name=f"shardid-lease-{shard}")

    def lost(self, why: str = "is no longer held") -> LeaseLostError:
        return LeaseLostError(f"the lease on shard {self.shard} {why}: take a new lease", shard=self.shard)

    def _store(self, units: int, at_least: int) -> int:
        # Called by the generator (synchronously, on the loop) before an ID above the last
        # ceiling is handed out: answered at once with the ceiling recorded already when it
        # covers the ID, or sent back to the coroutine, which records ``units`` (a span ahead)
        # without blocking the loop, then asks again.
        if at_least > self.recorded:
            raise _Behind(units, at_least)
        return self.recorded

    async def record(self, units: int, at_least: int) -> None:
        """Records a ceiling that covers the unit ``at_least`` (only while the row holds this
        lease's token): ``units`` (a span ahead of it) plus one more span, since the clock runs
        on while the statement is awaited and the other tasks run; without it, on a busy loop,
        the ceiling recorded could be behind the clock again when the task asks anew."""
        async with self.owner._lock:
            if at_least <= self.recorded:
                return  # another task recorded one that covers it meanwhile: no statement
            units += units - at_least
            sent = self.hold.sending() if self.hold is not None else _Hold.now()
            if sent is None:
                raise self.lost()
            sql, params = self.protocol.record(self.shard, units)
            if not self.protocol.kept(await self.owner._run(sql, params, self)):
                if self.hold is not None:
                    self.hold.lose()
                raise self.lost()
            if self.hold is not None:
                self.hold.renewed(sent)
            self.recorded = units

    async def _beat(self) -> None:
        """The heartbeat task: renews the lease when due; stops the generator once the lease
        is lost."""
        hold = self.hold
        assert hold is not None
        renew = self.protocol.renew(self.shard)
        assert renew is not None
        while not self.stopped.is_set():
            wait = hold.wait()
            if wait is None:
                break
            if wait > 0:
                try:
                    await asyncio.wait_for(self.stopped.wait(), wait)
                except asyncio.TimeoutError:
                    pass
                continue
            sent = hold.sending()
            if sent is None:
                break
            try:
                async with self.owner._lock:
                    row = await self.owner._run(*renew, self)
            except Exception:  # noqa: BLE001 (the database did not answer: try again sooner)
                hold.failed()
                continue
            if not self.protocol.kept(row):
                hold.lose()
                break
            hold.renewed(sent)
        if not self.stopped.is_set():
            self.generator.revoke()

    async def end(self) -> None:
        """Stops the heartbeat and the generator, and frees the shard if still held."""
        self.stopped.set()
        self.generator.close()
        if self.heartbeat is not None and self.heartbeat is not asyncio.current_task():
            try:
                await asyncio.wait_for(self.heartbeat, 5)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                pass
        try:
            async with self.owner._lock:
                await self.owner._run(*self.protocol.release(self.shard), self)
        except Exception:  # noqa: BLE001 (an expiring lease not released expires on its own)
            pass
        if self.claim is not None:
            self.claim.release()


class AsyncPostgresLease:
    """A generator on a shard leased through PostgreSQL for asyncio; take one with
    ``await lease_async(...)`` (the options are :func:`lease`'s).

    The protocol is the sync lease's (the core's ``_LeaseProtocol``, its statements and steps)
    over psycopg's ``AsyncConnection``; the heartbeat is an asyncio task. ``await next_id()``
    hands out an ID from the generator without suspending, except when the generator needs a
    new ceiling recorded first (at most once a span, 100 ms by default): that statement is
    awaited, so the loop runs other tasks meanwhile. Use it from the loop that took it; a
    process that forks takes a lease of its own in the child (with ``await lease_async``).
    """

    def __init__(self, layout: Layout, conninfo: str | None, shards: range, *, table: str = "shardid_leases",
                 kind: str = "expiring", ttl_ms: int = DEFAULT_TTL_MS, retake: bool = False,
                 connect: Callable[[], Any] | None = None, **options: int) -> None:  # fmt: skip
        if not isinstance(shards, range) or shards.step != 1 or shards.start < 0 or shards.stop > 2**31:
            reason = "must be a range with step 1 within 0..2**31"
            raise InvalidArgumentError(f"shards {reason}", argument="shards", reason=reason)
        if connect is None and not isinstance(conninfo, str):
            reason = "must be a connection string or URL, or pass connect="
            raise InvalidArgumentError(f"conninfo {reason}", argument="conninfo", reason=reason)
        if connect is None:
            check_url(conninfo, True, "shardid.postgres")  # type: ignore[arg-type]
        self.layout = layout
        self.conninfo = conninfo
        self.shards = shards
        self.table = table
        self.kind = kind
        self.ttl_ms = ttl_ms
        self.retake = retake
        self._connect_with = connect if connect is not None else self._default_connect
        self._options = options
        self._conn: Any = None
        self._lock = asyncio.Lock()
        self._closed = False
        self._tenure: _AsyncTenure | None = None
        self._protocol()  # checks the kind, time to live and table name before connecting
        # The core counts into it (shardid::lease::Tally), for every shard this lease takes.
        self._tally = _LeaseTally(layout, table)

    async def _default_connect(self) -> Any:
        import psycopg

        # No server-side prepared statements: a pooler in transaction mode cannot carry them.
        return await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True, prepare_threshold=None)  # type: ignore[arg-type]

    async def _connect(self) -> Any:
        """A new connection (``connect=``, or psycopg's); ``DATABASE_UNREACHABLE`` when the
        database cannot be reached, with the driver's error as its cause."""
        try:
            return await self._connect_with()
        except ShardIdError:
            raise
        except Exception as e:
            if not _db.unreachable(e):
                raise
            raise _db.unreachable_error(e) from e

    def _protocol(self) -> _LeaseProtocol:
        holder = f"{socket.gethostname()} pid {os.getpid()}"
        return _LeaseProtocol(self.kind, self.ttl_ms, self.layout, self.table, self.shards.start, self.shards.stop, holder)

    async def _execute(self, sql: str, params: tuple[Any, ...]) -> Any:
        cur = await self._conn.execute(sql, params)
        return await cur.fetchone() if cur.description is not None else None

    async def _run(self, sql: str, params: tuple[Any, ...], tenure: _AsyncTenure) -> Any:
        """As :meth:`PostgresLease._run`, awaited; the caller holds ``_lock``."""
        for attempt in (1, 2):
            fresh = self._conn is None or not _usable(self._conn)
            if fresh:
                if tenure.protocol.kind == "session":
                    raise tenure.lost("lost its database session")
                self._conn = await self._connect()
            try:
                return await self._execute(sql, params)
            except Exception as e:
                if not (_connection_lost(e) or not _usable(self._conn)):
                    raise
                await self._close_conn()
                if tenure.protocol.kind == "session":
                    raise tenure.lost("lost its database session") from e
                if fresh or attempt == 2:
                    raise _db.unreachable_error(e) from e
        raise AssertionError("unreachable")

    async def _close_conn(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                await conn.close()
            except Exception:  # noqa: BLE001, S110 (a broken connection may fail to close)
                pass

    async def _take(self) -> _AsyncTenure:
        # The core's steps and statements (shardid::sql::LeaseProtocol), as PostgresLease._take.
        protocol = self._protocol()
        async with self._lock:
            if self._conn is None or not _usable(self._conn):
                self._conn = await self._connect()
            sent = _Hold.now()
            while True:
                step = protocol.next()
                if step[0] == "taken":
                    break
                if step[0] == "raise":
                    raise _error("DATABASE", reason="the database answered a lease statement with an unexpected row")
                _, sql, params = step
                sent = _Hold.now()
                try:
                    row = await self._execute(sql, params)  # type: ignore[arg-type]
                except Exception as e:
                    protocol.fail(_sqlstate(e))
                    if protocol.next()[0] == "raise":
                        if _connection_lost(e):
                            await self._close_conn()
                        if _db.unreachable(e):
                            raise _db.unreachable_error(e) from e
                        raise
                    continue
                protocol.feed(row)
        _, shard, recorded, backend = step
        tenure = _AsyncTenure(self, protocol, shard, recorded, backend, sent)  # type: ignore[arg-type]
        # After a failover the ceiling may be ahead of this host's clock: wait it out in a
        # thread (the heartbeat running on the loop) rather than fail the first IDs.
        await asyncio.to_thread(_Hold.wait_for_ceiling, self.layout, recorded)  # type: ignore[arg-type]
        return tenure

    def _current(self) -> _AsyncTenure:
        tenure = self._tenure
        if tenure is None:
            raise _error("INVALID_ARGUMENT", argument="lease", reason="is not taken yet: await lease_async(...)")
        if self._closed:
            raise _db.closed_error(f"the lease on shard {tenure.shard}")
        return tenure

    async def _call(self, make: Callable[[_CeilingGenerator], Any]) -> Any:
        tenure = self._current()
        while True:
            try:
                return make(tenure.generator)
            except _Behind as behind:
                await tenure.record(behind.units, behind.at_least)
            except LeaseLostError:
                if self._closed:  # closed meanwhile: its generator was revoked
                    raise _db.closed_error(f"the lease on shard {tenure.shard}") from None
                if not self.retake:
                    raise
                if self._tenure is tenure:  # not retaken by another task meanwhile
                    await tenure.end()
                    self._tenure = await self._take()
                tenure = self._current()

    @property
    def shard(self) -> int:
        """The shard this lease holds (after :meth:`close`, the one it held)."""
        if self._tenure is None:
            raise _error("INVALID_ARGUMENT", argument="lease", reason="is not taken yet: await lease_async(...)")
        return self._tenure.shard

    def stats(self) -> dict[str, int]:
        """What this lease did, over every shard it took, as :meth:`PostgresLease.stats`
        counts it (the core's counters: ``acquisitions``, ``renewals``, ``ceiling_writes``,
        ``late_renewals``, ``losses``, ``held``)."""
        return self._tally.stats()

    @property
    def held(self) -> bool:
        """Whether the lease is held now."""
        tenure = self._tenure
        return tenure is not None and not self._closed and (tenure.hold is None or tenure.hold.holds)

    async def next_id(self) -> int:
        """One ID now (recording a new ceiling first, awaited, when the generator needs one)."""
        return await self._call(lambda g: g.next_id())  # type: ignore[no-any-return]

    async def next_id_at(self, now: Any) -> int:
        """One ID as if the clock read ``now`` (Unix ms or an aware datetime)."""
        return await self._call(lambda g: g.next_id_at(now))  # type: ignore[no-any-return]

    async def next_ids(self, n: int) -> list[int]:
        """``n`` IDs now, in increasing order."""
        return await self._call(lambda g: g.next_ids(n))  # type: ignore[no-any-return]

    async def close(self) -> None:
        """Releases the shard at once; the lease makes no more IDs (:class:`~shardid.ClosedError`).
        Closing twice is fine."""
        if self._closed:
            return
        self._closed = True
        if self._tenure is not None:
            await self._tenure.end()
        async with self._lock:
            await self._close_conn()

    def __await__(self) -> Any:
        return self._start().__await__()

    async def _start(self) -> AsyncPostgresLease:
        if self._tenure is None:
            self._tenure = await self._take()
        return self

    async def __aenter__(self) -> AsyncPostgresLease:
        return await self._start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "held" if self.held else "not taken" if self._tenure is None else "lost"
        shard = self._tenure.shard if self._tenure is not None else None
        return f"<shardid.postgres.AsyncPostgresLease shard={shard} kind={self.kind!r} table={self.table!r} {state}>"


def lease_async(layout: Layout, conninfo: str | None, shards: range, **options: Any) -> AsyncPostgresLease:
    """:func:`lease` for asyncio: ``generator = await lease_async(layout, conninfo, shards)``
    (or ``async with lease_async(...) as generator:``), then ``await generator.next_id()``.
    The options are :func:`lease`'s; ``connect`` is then a coroutine function returning a
    psycopg ``AsyncConnection`` in autocommit mode."""
    return AsyncPostgresLease(layout, conninfo, shards, **options)
