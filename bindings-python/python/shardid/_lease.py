"""The database leases that :mod:`shardid.postgres`, :mod:`shardid.mysql` and
:mod:`shardid.sqlite` share, blocking (:class:`DatabaseLease`: the heartbeat a thread) and on an event loop
(:class:`AsyncDatabaseLease`: the heartbeat a task). Both run the core's lease protocol
(``shardid::sql::LeaseProtocol``) through a session of ``shardid._lease_async`` (the blocking
one generated from it, ``shardid._lease_generated``), in the SQL of the database the entry point
names; what differs between the databases' drivers is the session's dialect object. Not for
direct use.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
import weakref
from collections.abc import Callable
from typing import Any

from shardid import _db, _lease_async, _lease_generated
from shardid._errors import LeaseLostError
from shardid._lease_generated import DEFAULT_TTL_MS, check_url
from shardid._shardid import Layout, _CeilingGenerator, _claim_backend, _error, _Hold, _LeaseProtocol

# Connections a forked child inherited: never closed in the child (closing would end the
# parent's session), never used again.
_inherited: list[Any] = []


# Every lease of this process, so a forked child can tell each that it was forked.
_leases: weakref.WeakSet[DatabaseLease] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for held in list(_leases):
        held._uninstall()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _in_child(ref: weakref.ref[DatabaseLease]) -> Callable[..., Any]:
    """What a lease's generator calls instead of handing out an ID when it is used in a forked
    child (its shard is the parent's): the lease's own method, which takes a shard of its own
    there. The generator is called directly (:meth:`DatabaseLease._install`), and a fork in C
    (uWSGI's prefork, ctypes) skips ``_after_fork_in_child``, which would have sent the call
    there first. Holds the lease weakly: the generator is the lease's."""

    def call(name: str, *args: Any) -> Any:
        held = ref()
        if held is None:
            raise _db.closed_error("the lease")
        held._uninstall()
        return getattr(held, name)(*args)

    return call


def _close_at_exit(ref: weakref.ref[DatabaseLease]) -> None:
    """Frees a lease's shard when the interpreter exits normally (a worker told to stop), so
    the next process need not wait for it to expire."""
    held = ref()
    if held is not None:
        try:
            held.close()
        except Exception:  # noqa: BLE001 (nothing to be done at exit; the lease expires on its own)
            pass


class _Lease:
    """What :class:`DatabaseLease` and :class:`AsyncDatabaseLease` keep of their arguments (the
    entry points' ``lease`` options), their session and their counters."""

    #: The layout of the IDs.
    layout: Layout
    #: The connection string (``None`` with ``connect=``).
    conninfo: str | None
    #: The shards the lease takes one of.
    shards: range
    #: The leases' table.
    table: str
    #: Its schema (``None``: the database's default, see :func:`shardid.postgres.lease`).
    schema: str | None
    #: ``"expiring"`` or ``"session"``.
    kind: str
    #: The time to live of an expiring lease, in milliseconds.
    ttl_ms: int
    #: Whether a lost lease is taken again at the next call.
    retake: bool

    def _keep(self, session: Any, layout: Layout, conninfo: str | None, shards: range, table: str, kind: str,
              ttl_ms: int, retake: bool, options: dict[str, int]) -> None:  # fmt: skip
        self._session = session
        self._tally = session.tally
        self.layout, self.conninfo, self.shards, self.table = layout, conninfo, shards, table
        self.schema = session.schema
        self.kind, self.ttl_ms, self.retake, self._options = kind, ttl_ms, retake, options

    def stats(self) -> dict[str, int]:
        """What this lease did, over every shard it took, as a dict of counts named by the
        core's table: ``acquisitions``, ``renewals`` (heartbeats, and ceiling writes, which
        renew too), ``ceiling_writes``, ``late_renewals`` (back more than two thirds of the time
        to live after the last renewal was sent), ``losses`` (closing is none) and ``held``
        (1 or 0). :mod:`shardid.prometheus` and :mod:`shardid.opentelemetry` report them too."""
        return self._tally.stats()  # type: ignore[no-any-return]

    def _on_fork(self) -> Callable[..., Any] | None:
        """What the generators of this lease call when used in a forked child: ``None``, so they
        raise ``ForkedGeneratorError`` (an asyncio lease: the child takes a lease of its own);
        the blocking lease takes a new shard there."""
        return None


class _Held:
    """What a blocking and an asyncio tenure share: the lease's shard, its hold (an expiring
    lease's deadline), its generator, and how an answer to a renewal or a ceiling's record
    is read. Each subclass runs the statements its own way (a thread, or a task)."""

    #: An expiring lease's deadline (``None``: a session lease; also while a tenure whose
    #: claim failed releases its shard, before the base's ``__init__`` has run).
    hold: _Hold | None = None

    def __init__(self, owner: _Lease, protocol: _LeaseProtocol, shard: int, recorded: int | None, sent: int) -> None:
        self.owner = owner
        self.protocol = protocol
        self.shard = shard
        self.hold = _Hold(owner.ttl_ms, sent) if protocol.kind == "expiring" else None
        self.generator = _CeilingGenerator(
            owner.layout,
            shard,
            recorded,
            self._store,
            hold=self.hold,
            tally=owner._tally,
            on_fork=owner._on_fork(),
            **owner._options,
        )

    def _store(self, units: int, at_least: int) -> Any:
        raise NotImplementedError

    def lost(self, why: str = "is no longer held") -> LeaseLostError:
        return LeaseLostError(f"the lease on shard {self.shard} {why}: take a new lease", shard=self.shard)

    def sending(self) -> int:
        """When a ceiling's record is sent (a renewal too, for an expiring lease);
        LeaseLostError once the lease is past its deadline."""
        sent = self.hold.sending() if self.hold is not None else _Hold.now()
        if sent is None:
            raise self.lost()
        return sent

    def kept(self, row: Any, sent: int) -> bool:
        """Reads the row a renewal or a record sent at ``sent`` answered: the lease renewed
        from then, or lost for good (another holder's token)."""
        if not self.protocol.kept(row):
            if self.hold is not None:
                self.hold.lose()
            return False
        if self.hold is not None:
            self.hold.renewed(sent)
        return True


class _Tenure(_Held):
    """One lease taken by the protocol: its shard, token, generator and heartbeat. A
    :class:`DatabaseLease` holds one at a time (another after ``fork()``, or after a loss with
    ``retake=True``)."""

    owner: DatabaseLease

    def __init__(self, owner: DatabaseLease, protocol: _LeaseProtocol, shard: int, recorded: int | None,
                 backend: str | None, sent: int) -> None:  # fmt: skip
        # Set before the base's __init__: a claim that fails releases the shard (_release).
        self.owner = owner
        self.protocol = protocol
        self.shard = shard
        self.claim = None
        if backend is not None:
            try:
                self.claim = _claim_backend(backend)
            except BaseException:
                self._release()
                raise
        super().__init__(owner, protocol, shard, recorded, sent)
        self.stop = threading.Event()
        self.heartbeat: threading.Thread | None = None
        if self.hold is not None:
            self.heartbeat = threading.Thread(target=self._beat, name=f"shardid-lease-{shard}", daemon=True)
            self.heartbeat.start()

    def _store(self, units: int, at_least: int) -> None:
        # Called before any ID above the last ceiling is handed out, on the thread asking for
        # it; only while the row still holds this lease's token. Records ``units`` (a span
        # ahead of ``at_least``, the unit of the ID asked for).
        sent = self.sending()
        sql, params = self.protocol.record(self.shard, units)
        if not self.kept(self.owner._run(sql, params, self), sent):
            raise self.lost()

    def _beat(self) -> None:
        """The heartbeat: renews the lease when due; stops the generator once the lease is
        lost (taken over, or past its deadline without a renewal)."""
        hold = self.hold
        assert hold is not None
        while not self.stop.is_set():
            wait = hold.wait()
            if wait is None:
                break
            if wait > 0:
                self.stop.wait(wait)
                continue
            sent = hold.sending()
            if sent is None:
                break
            # Made for each renewal: it notes this host's clock, which the core compares with
            # the database's that the renewal returns.
            renew = self.protocol.renew(self.shard)
            assert renew is not None
            try:
                row = self.owner._run(*renew, self)
            except Exception:  # noqa: BLE001 (the database did not answer: try again sooner)
                hold.failed()
                continue
            ahead = self.protocol.clock_ahead(row)
            if ahead is not None:
                # This host's clock is too far ahead of the database's: the generator stops,
                # and says why (ClockSkewError).
                self.generator.revoke_clock_skew(ahead)
                return
            if not self.kept(row, sent):
                break
        if not self.stop.is_set():
            self.generator.revoke()

    def end(self) -> None:
        """Stops the heartbeat and the generator, and frees the shard if still held."""
        self.stop.set()
        self.generator.close()
        if self.heartbeat is not None and self.heartbeat is not threading.current_thread():
            self.heartbeat.join(timeout=5)
        self._release()

    def _release(self) -> None:
        try:
            self.owner._run(*self.protocol.release(self.shard), self)
        except Exception:  # noqa: BLE001 (an expiring lease not released expires on its own)
            pass
        if self.claim is not None:
            self.claim.release()


class DatabaseLease(_Lease):
    """A generator on a shard leased through a database; see :func:`shardid.postgres.lease`
    and :func:`shardid.mysql.lease`. Use it as a context manager, or call :meth:`close`, to
    release the shard before the process ends."""

    #: The dialect of the entry point's database (set by each subclass).
    dialect: Any = _lease_generated._Postgres()

    def __init__(
        self,
        layout: Layout,
        conninfo: str | None,
        shards: range,
        *,
        table: str = "shardid_leases",
        schema: str | None = None,
        kind: str = "expiring",
        ttl_ms: int = DEFAULT_TTL_MS,
        retake: bool = False,
        connect: Callable[[], Any] | None = None,
        **options: int,
    ) -> None:
        session = _lease_generated._Session(
            self.dialect,
            layout,
            conninfo,
            shards,
            table=table,
            schema=schema,
            kind=kind,
            ttl_ms=ttl_ms,
            connect=connect,
        )
        self._keep(session, layout, conninfo, shards, table, kind, ttl_ms, retake, options)
        self._lock = threading.Lock()
        self._taking = threading.Lock()
        self._closed = False
        self._pid = os.getpid()
        self._tenure = self._take()
        self._install()
        _leases.add(self)
        atexit.register(_close_at_exit, weakref.ref(self))

    def _on_fork(self) -> Callable[..., Any] | None:
        return _in_child(weakref.ref(self))

    def _install(self) -> None:
        """Makes ``next_id``, ``next_ids`` and ``next_id_at`` the current generator's own
        methods, so the ID path is the plain generator's (no Python frame in between); with
        ``retake`` they stay this class's, which catch a loss."""
        if not self.retake:
            generator = self._tenure.generator
            self.next_id = generator.next_id  # type: ignore[method-assign]
            self.next_ids = generator.next_ids  # type: ignore[method-assign]
            self.next_id_at = generator.next_id_at  # type: ignore[method-assign]

    def _uninstall(self) -> None:
        """Back to this class's methods, which check for a fork and a closed lease: after
        ``fork()`` (in the child) and :meth:`close`."""
        for name in ("next_id", "next_ids", "next_id_at"):
            self.__dict__.pop(name, None)

    def _run(self, sql: str, params: tuple[Any, ...], tenure: _Tenure) -> Any:
        """A statement of ``tenure``'s on the lease's connection (``_Session.run``)."""
        with self._lock:
            return self._session.run(sql, params, tenure)

    def _take(self) -> _Tenure:
        with self._lock:
            protocol, shard, recorded, backend, sent = self._session.take()
        tenure = _Tenure(self, protocol, shard, recorded, backend, sent)
        # After a failover the ceiling may be ahead of this host's clock: wait it out here, the
        # heartbeat running, rather than fail the first IDs.
        _Hold.wait_for_ceiling(self.layout, recorded)  # type: ignore[arg-type]
        return tenure

    def _closed_error(self) -> Exception:
        return _db.closed_error(f"the lease on shard {self._tenure.shard}")

    def _current(self) -> _Tenure:
        if self._closed:
            raise self._closed_error()
        if os.getpid() != self._pid:
            # A forked child: the parent's connection and heartbeat are not ours.
            if self._session.conn is not None:
                _inherited.append(self._session.conn)
            self._session.conn = None
            self._lock = threading.Lock()
            self._taking = threading.Lock()
            self._pid = os.getpid()
            self._tenure = self._take()
            self._install()
        return self._tenure

    def _call(self, make: Callable[[_CeilingGenerator], Any]) -> Any:
        tenure = self._current()
        try:
            return make(tenure.generator)
        except LeaseLostError:
            if self._closed:  # closed meanwhile: its generator was revoked
                raise self._closed_error() from None
            if not self.retake:
                raise
            with self._taking:
                if self._tenure is tenure:  # not retaken by another thread meanwhile
                    tenure.end()
                    self._tenure = self._take()
            return make(self._current().generator)

    @property
    def shard(self) -> int:
        """The shard this process holds (after :meth:`close`, the one it held)."""
        if self._closed:
            return self._tenure.shard
        return self._current().shard

    @property
    def held(self) -> bool:
        """Whether the lease is held now (an expiring lease: renewed in time and not taken
        over)."""
        tenure = self._tenure
        return not self._closed and os.getpid() == self._pid and (tenure.hold is None or tenure.hold.holds)

    def next_id(self) -> int:
        return self._call(lambda g: g.next_id())  # type: ignore[no-any-return]

    def next_id_at(self, now: Any) -> int:
        return self._call(lambda g: g.next_id_at(now))  # type: ignore[no-any-return]

    def next_ids(self, n: int) -> list[int]:
        return self._call(lambda g: g.next_ids(n))  # type: ignore[no-any-return]

    def close(self) -> None:
        """Releases the shard at once (another process may take it, and continues above this
        one's IDs); the lease makes no more IDs (:class:`~shardid.ClosedError`). Closing twice
        is fine."""
        if self._closed:
            return
        self._closed = True
        self._uninstall()
        if os.getpid() != self._pid:
            return  # an inherited lease: the parent's to close
        self._tenure.end()
        with self._lock:
            self._session.close()

    def __enter__(self) -> DatabaseLease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "held" if self.held else "lost"
        name = f"{self.dialect.module}.{type(self).__name__}"
        return f"<{name} shard={self._tenure.shard} kind={self.kind!r} table={self.table!r} {state}>"


class _Behind(Exception):  # noqa: N818 - not an error: a ceiling to record first
    """Raised by an :class:`AsyncDatabaseLease`'s ceiling store, which must not block the event
    loop: the generator (native, synchronous) wants ``units`` recorded first. The coroutine
    that asked for the ID records it on the loop and asks again."""

    def __init__(self, units: int, at_least: int) -> None:
        super().__init__(units)
        self.units = units
        self.at_least = at_least


class _AsyncTenure(_Held):
    """One lease taken by an :class:`AsyncDatabaseLease`: its shard, generator and heartbeat
    task (the statements and their order are the core's ``_LeaseProtocol``'s, as for
    :class:`_Tenure`)."""

    owner: AsyncDatabaseLease

    def __init__(self, owner: AsyncDatabaseLease, protocol: _LeaseProtocol, shard: int, recorded: int | None,
                 backend: str | None, sent: int) -> None:  # fmt: skip
        self.recorded = recorded if recorded is not None else -1
        self.claim = _claim_backend(backend) if backend is not None else None
        super().__init__(owner, protocol, shard, recorded, sent)
        self.stopped = asyncio.Event()
        self.heartbeat: asyncio.Task[None] | None = None
        if self.hold is not None:
            self.heartbeat = asyncio.get_running_loop().create_task(self._beat(), name=f"shardid-lease-{shard}")

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
            sent = self.sending()
            sql, params = self.protocol.record(self.shard, units)
            if not self.kept(await self.owner._run(sql, params, self), sent):
                raise self.lost()
            self.recorded = units

    async def _beat(self) -> None:
        """The heartbeat task: renews the lease when due; stops the generator once the lease
        is lost."""
        hold = self.hold
        assert hold is not None
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
            renew = self.protocol.renew(self.shard)  # notes this host's clock: one per renewal
            assert renew is not None
            try:
                async with self.owner._lock:
                    row = await self.owner._run(*renew, self)
            except Exception:  # noqa: BLE001 (the database did not answer: try again sooner)
                hold.failed()
                continue
            ahead = self.protocol.clock_ahead(row)
            if ahead is not None:
                # This host's clock is too far ahead of the database's: the generator stops,
                # and says why (ClockSkewError).
                self.generator.revoke_clock_skew(ahead)
                return
            if not self.kept(row, sent):
                break
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


class AsyncDatabaseLease(_Lease):
    """A generator on a shard leased through a database for asyncio; take one with
    ``await lease_async(...)`` (:mod:`shardid.postgres`'s or :mod:`shardid.mysql`'s; the
    options are their ``lease``'s).

    The protocol is the blocking lease's (the core's ``_LeaseProtocol``, its statements and
    steps, run by the same session, ``shardid._lease_async``) over psycopg's
    ``AsyncConnection`` or aiomysql; the heartbeat is an asyncio task. ``await next_id()``
    hands out an ID from the generator without suspending, except when the generator needs a
    new ceiling recorded first (at most once a span, 100 ms by default): that statement is
    awaited, so the loop runs other tasks meanwhile. Use it from the loop that took it; a
    process that forks takes a lease of its own in the child (with ``await lease_async``).
    """

    #: The dialect of the entry point's database (set by each subclass).
    dialect: Any = _lease_async._AsyncPostgres()

    def __init__(self, layout: Layout, conninfo: str | None, shards: range, *, table: str = "shardid_leases",
                 schema: str | None = None, kind: str = "expiring", ttl_ms: int = DEFAULT_TTL_MS,
                 retake: bool = False, connect: Callable[[], Any] | None = None, **options: int) -> None:  # fmt: skip
        session = _lease_async._AsyncSession(
            self.dialect,
            layout,
            conninfo,
            shards,
            table=table,
            schema=schema,
            kind=kind,
            ttl_ms=ttl_ms,
            connect=connect,
        )
        self._keep(session, layout, conninfo, shards, table, kind, ttl_ms, retake, options)
        self._lock = asyncio.Lock()
        self._closed = False
        self._tenure: _AsyncTenure | None = None

    async def _run(self, sql: str, params: tuple[Any, ...], tenure: _AsyncTenure) -> Any:
        """A statement of ``tenure``'s (``_AsyncSession.run``); the caller holds ``_lock``."""
        return await self._session.run(sql, params, tenure)

    async def _take(self) -> _AsyncTenure:
        async with self._lock:
            protocol, shard, recorded, backend, sent = await self._session.take()
        tenure = _AsyncTenure(self, protocol, shard, recorded, backend, sent)
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
            await self._session.close()

    def __await__(self) -> Any:
        return self._start().__await__()

    async def _start(self) -> AsyncDatabaseLease:
        if self._tenure is None:
            self._tenure = await self._take()
        return self

    async def __aenter__(self) -> AsyncDatabaseLease:
        return await self._start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "held" if self.held else "not taken" if self._tenure is None else "lost"
        shard = self._tenure.shard if self._tenure is not None else None
        name = f"{self.dialect.module}.{type(self).__name__}"
        return f"<{name} shard={shard} kind={self.kind!r} table={self.table!r} {state}>"


__all__ = ["DEFAULT_TTL_MS", "AsyncDatabaseLease", "DatabaseLease", "check_url"]
