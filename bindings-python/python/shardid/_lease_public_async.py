"""The database lease that :mod:`shardid.postgres`, :mod:`shardid.mysql` and :mod:`shardid.sqlite`
share on an event loop (:class:`AsyncDatabaseLease`: the heartbeat a task), and the one source of
the blocking one (:class:`DatabaseLease`: the heartbeat a thread, a forked child taking a shard of
its own), which ``bindings-python/tools/async_to_sync.py`` makes from this file
(``_lease_public_generated.py``): change this file, then run the script. ``if is_async():``
marks what only one of them does. Both run the core's lease protocol
(``shardid::sql::LeaseProtocol``) through a session of ``shardid._lease_async`` (the blocking
one generated from it, ``shardid._lease_generated``), in the SQL of the database the entry point
names; what differs between the databases' drivers is the session's dialect object. Not for
direct use: :mod:`shardid._lease` names both.
"""

from __future__ import annotations

import atexit
import os
import weakref
from collections.abc import Callable
from typing import Any

from shardid import _db, _lease_async
from shardid._acompat import AFlag, AHeartbeat, ALock, ajoin, aspawn, ato_thread, is_async
from shardid._errors import LeaseLostError
from shardid._lease_async import DEFAULT_TTL_MS
from shardid._shardid import Layout, _CeilingGenerator, _claim_backend, _error, _Hold, _LeaseProtocol

if not is_async():
    # Connections a forked child inherited: never closed in the child (closing would end the
    # parent's session), never used again.
    _inherited: list[Any] = []

    # Every lease of this process, so a forked child can tell each that it was forked.
    _leases: weakref.WeakSet[AsyncDatabaseLease] = weakref.WeakSet()

    def _after_fork_in_child() -> None:
        for held in list(_leases):
            _uninstall(held)

    def _install(held: AsyncDatabaseLease) -> None:
        """Makes ``next_id``, ``next_ids`` and ``next_id_at`` the current generator's own
        methods, so the ID path is the plain generator's (no Python frame in between); with
        ``retake`` they stay the lease's, which catch a loss."""
        if not held.retake and held._tenure is not None:
            generator = held._tenure.generator
            held.next_id = generator.next_id  # type: ignore[method-assign]
            held.next_ids = generator.next_ids  # type: ignore[method-assign]
            held.next_id_at = generator.next_id_at  # type: ignore[method-assign]

    def _uninstall(held: AsyncDatabaseLease) -> None:
        """Back to the lease's methods, which check for a fork and a closed lease: after
        ``fork()`` (in the child) and :meth:`AsyncDatabaseLease.close`."""
        for name in ("next_id", "next_ids", "next_id_at"):
            held.__dict__.pop(name, None)

    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)

    def _in_child(ref: weakref.ref[AsyncDatabaseLease]) -> Callable[..., Any]:
        """What a lease's generator calls instead of handing out an ID when it is used in a
        forked child (its shard is the parent's): the lease's own method, which takes a shard
        of its own there. The generator is called directly (:func:`_install`),
        and a fork in C (uWSGI's prefork, ctypes) skips ``_after_fork_in_child``, which would
        have sent the call there first. Holds the lease weakly: the generator is the lease's."""

        def call(name: str, *args: Any) -> Any:
            held = ref()
            if held is None:
                raise _db.closed_error("the lease")
            _uninstall(held)
            return getattr(held, name)(*args)

        return call

    def _close_at_exit(ref: weakref.ref[AsyncDatabaseLease]) -> None:
        """Frees a lease's shard when the interpreter exits normally (a worker told to stop),
        so the next process need not wait for it to expire."""
        held = ref()
        if held is not None:
            try:
                held.close()
            except Exception:  # noqa: BLE001 (nothing to be done at exit; the lease expires on its own)
                pass

else:
    import time

    #: How far ahead of the clock a lease taken with ``nowait=True`` keeps a recorded ceiling
    #: (:meth:`AsyncDatabaseLease.try_next_id`), in milliseconds: a record about every
    #: second, and an event loop blocked longer than this makes a call find none. Less than an
    #: expiring lease's time to live, so a successor after a crash waits for nothing more.
    NOWAIT_LEAD_MS = 1_000


class _Behind(Exception):  # noqa: N818 - not an error: a ceiling to record first
    """Raised by an asyncio lease's ceiling store, which must not block the event loop: the
    generator (native, synchronous) wants ``units`` recorded first. The coroutine that asked
    for the ID records it on the loop and asks again. (A blocking lease records at once.)"""

    def __init__(self, units: int, at_least: int) -> None:
        super().__init__(units)
        self.units = units
        self.at_least = at_least


class _AsyncTenure:
    """One lease taken by the protocol: its shard, its hold (an expiring lease's deadline), its
    generator and heartbeat. An :class:`AsyncDatabaseLease` holds one at a time (another after
    a loss with ``retake=True``, or, blocking, after ``fork()``); the statements and their
    order are the core's ``_LeaseProtocol``'s."""

    #: An expiring lease's deadline (``None``: a session lease; also while a tenure whose
    #: start failed releases its shard).
    hold: _Hold | None = None
    generator: _CeilingGenerator
    heartbeat: AHeartbeat | None = None

    def __init__(self, owner: AsyncDatabaseLease, protocol: _LeaseProtocol, shard: int, recorded: int | None) -> None:
        self.owner = owner
        self.protocol = protocol
        self.shard = shard
        self.recorded = recorded if recorded is not None else -1
        self.claim: Any = None
        self.stopped = AFlag()

    async def start(self, backend: str | None, sent: int) -> None:
        """Claims the server session (a session lease: ``backend``, checked by the core against
        every lease of this process), makes the generator and starts the heartbeat. When any of
        it fails, the claimed row is released at once, so another lease takes the shard without
        waiting for it to expire."""
        try:
            if backend is not None:
                self.claim = _claim_backend(backend)
            if self.protocol.kind == "expiring":
                self.hold = _Hold(self.owner.ttl_ms, sent)
            on_fork: Callable[..., Any] | None = None
            if not is_async():
                # Used in a forked child, the generator sends the call to the lease, which
                # takes a shard of its own there (an asyncio lease's raises ForkedGeneratorError).
                on_fork = _in_child(weakref.ref(self.owner))
            self.generator = _CeilingGenerator(
                self.owner.layout,
                self.shard,
                None if self.recorded < 0 else self.recorded,
                self._store,
                hold=self.hold,
                tally=self.owner._tally,
                on_fork=on_fork,
                **self.owner._options,
            )
        except BaseException:
            await self._release()
            raise
        if self.hold is not None:
            self.heartbeat = aspawn(self._beat, name=f"shardid-lease-{self.shard}")

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

    def _store(self, units: int, at_least: int) -> int | None:
        if is_async():
            # Called by the generator (synchronously, on the loop) before an ID above the last
            # ceiling is handed out: answered at once with the ceiling recorded already when it
            # covers the ID, or sent back to the coroutine, which records ``units`` (a span
            # ahead) without blocking the loop, then asks again.
            if at_least > self.recorded:
                raise _Behind(units, at_least)
            return self.recorded
        else:
            # Called before any ID above the last ceiling is handed out, on the thread asking
            # for it; only while the row still holds this lease's token. Records ``units`` (a
            # span ahead of ``at_least``, the unit of the ID asked for).
            self.record(units, at_least)
            return None

    async def record(self, units: int, at_least: int) -> None:
        """Records a ceiling that covers the unit ``at_least`` (only while the row holds this
        lease's token): ``units``, a span ahead of it."""
        async with self.owner._lock:
            if is_async():
                if at_least <= self.recorded:
                    return  # another task recorded one that covers it meanwhile: no statement
                # One more span: the clock runs on while the statement is awaited and the
                # other tasks run; without it, on a busy loop, the ceiling recorded could be
                # behind the clock again when the task asks anew.
                units += units - at_least
            sent = self.sending()
            sql, params = self.protocol.record(self.shard, units)
            if not self.kept(await self.owner._run(sql, params, self), sent):
                raise self.lost()
            self.recorded = units

    async def _beat(self) -> None:
        """The heartbeat: renews the lease when due; stops the generator once the lease is
        lost (taken over, or past its deadline without a renewal)."""
        hold = self.hold
        assert hold is not None
        while not self.stopped.is_set():
            wait = hold.wait()
            if wait is None:
                break
            if wait > 0:
                await self.stopped.wait(wait)
                continue
            sent = hold.sending()
            if sent is None:
                break
            # Made for each renewal: it notes this host's clock, which the core compares with
            # the database's that the renewal returns.
            renew = self.protocol.renew(self.shard)
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
        await ajoin(self.heartbeat, 5)
        await self._release()

    async def _release(self) -> None:
        try:
            async with self.owner._lock:
                await self.owner._run(*self.protocol.release(self.shard), self)
        except Exception:  # noqa: BLE001 (an expiring lease not released expires on its own)
            pass
        if self.claim is not None:
            self.claim.release()


class AsyncDatabaseLease:
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

    if not is_async():
        __doc__ = """A generator on a shard leased through a database; see :func:`shardid.postgres.lease`
        and :func:`shardid.mysql.lease`. Use it as a context manager, or call :meth:`close`, to
        release the shard before the process ends."""

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
        self._session = session
        self._tally = session.tally
        self.layout, self.conninfo, self.shards, self.table = layout, conninfo, shards, table
        self.schema = session.schema
        self.kind, self.ttl_ms, self.retake, self._options = kind, ttl_ms, retake, options
        # One statement at a time on the lease's connection; one retake at a time.
        self._lock = ALock()
        self._taking = ALock()
        self._closed = False
        self._tenure: _AsyncTenure | None = None
        if is_async():
            # try_next_id's ceiling kept ahead by a task of each tenure (``nowait=True``).
            self._nowait = bool(options.pop("nowait", False))
        else:
            # A blocking lease is taken here; an asyncio one when awaited.
            self._pid = os.getpid()
            self._start()
            _leases.add(self)
            atexit.register(_close_at_exit, weakref.ref(self))

    def stats(self) -> dict[str, int]:
        """What this lease did, over every shard it took, as a dict of counts named by the
        core's table: ``acquisitions``, ``renewals`` (heartbeats, and ceiling writes, which
        renew too), ``ceiling_writes``, ``late_renewals`` (back more than two thirds of the time
        to live after the last renewal was sent), ``losses`` (closing is none) and ``held``
        (1 or 0). :mod:`shardid.prometheus` and :mod:`shardid.opentelemetry` report them too."""
        return self._tally.stats()  # type: ignore[no-any-return]

    async def _run(self, sql: str, params: tuple[Any, ...], tenure: _AsyncTenure) -> Any:
        """A statement of ``tenure``'s (``_AsyncSession.run``); the caller holds ``_lock``."""
        return await self._session.run(sql, params, tenure)

    async def _take(self) -> _AsyncTenure:
        async with self._lock:
            protocol, shard, recorded, backend, sent = await self._session.take()
        tenure = _AsyncTenure(self, protocol, shard, recorded)
        await tenure.start(backend, sent)
        # After a failover the ceiling may be ahead of this host's clock: wait it out here (on
        # a worker thread, for asyncio), the heartbeat running, rather than fail the first IDs.
        await ato_thread(_Hold.wait_for_ceiling, self.layout, recorded)
        if is_async():
            if self._nowait:
                # A ceiling ahead before the first try_next_id(), then kept ahead.
                await self._record_ahead(tenure)
                aspawn(self._keep_ahead, tenure, name=f"shardid-lease-{tenure.shard}-ahead")
        return tenure

    def _current(self) -> _AsyncTenure:
        tenure = self._tenure
        if tenure is None:
            raise _error("INVALID_ARGUMENT", argument="lease", reason="is not taken yet: await lease_async(...)")
        if self._closed:
            raise _db.closed_error(f"the lease on shard {tenure.shard}")
        if not is_async():
            if os.getpid() != self._pid:
                # A forked child: the parent's connection and heartbeat are not ours.
                if self._session.conn is not None:
                    _inherited.append(self._session.conn)
                self._session.conn = None
                self._lock = ALock()
                self._taking = ALock()
                self._pid = os.getpid()
                self._tenure = tenure = self._take()
                _install(self)
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
                async with self._taking:
                    if self._tenure is tenure:  # not retaken by another task meanwhile
                        await tenure.end()
                        self._tenure = await self._take()
                tenure = self._current()

    @property
    def shard(self) -> int:
        """The shard this lease holds (after :meth:`close`, the one it held)."""
        tenure = self._tenure
        if tenure is None:
            raise _error("INVALID_ARGUMENT", argument="lease", reason="is not taken yet: await lease_async(...)")
        if not is_async():
            if not self._closed:
                return self._current().shard  # a forked child's own
        return tenure.shard

    @property
    def held(self) -> bool:
        """Whether the lease is held now (an expiring lease: renewed in time and not taken
        over)."""
        tenure = self._tenure
        if tenure is None or self._closed:
            return False
        if not is_async():
            if os.getpid() != self._pid:
                return False  # a forked child holds the parent's lease only after it took one
        return tenure.hold is None or tenure.hold.holds

    async def next_id(self) -> int:
        """One ID now (a new ceiling recorded first when the generator needs one)."""
        return await self._call(lambda g: g.next_id())  # type: ignore[no-any-return]

    async def next_id_at(self, now: Any) -> int:
        """One ID as if the clock read ``now`` (Unix ms or an aware datetime)."""
        return await self._call(lambda g: g.next_id_at(now))  # type: ignore[no-any-return]

    async def next_ids(self, n: int) -> list[int]:
        """``n`` IDs now, in increasing order."""
        return await self._call(lambda g: g.next_ids(n))  # type: ignore[no-any-return]

    async def close(self) -> None:
        """Releases the shard at once (another process may take it, and continues above this
        one's IDs); the lease makes no more IDs (:class:`~shardid.ClosedError`). Closing twice
        is fine."""
        if self._closed:
            return
        self._closed = True
        if not is_async():
            _uninstall(self)
            if os.getpid() != self._pid:
                return  # an inherited lease: the parent's to close
        if self._tenure is not None:
            await self._tenure.end()
        async with self._lock:
            await self._session.close()

    if is_async():

        def __await__(self) -> Any:
            return self._start().__await__()

        def try_next_id(self) -> int:
            """One ID now, without awaiting (named as the Rust async lease's, which does the
            same; asyncio's ``get_nowait`` habit), for code that cannot await: a SQLAlchemy
            column default run inside an ``AsyncSession``'s flush
            (``default=lambda: app.state.ids.try_next_id()``). Needs the lease taken with
            ``nowait=True``, which keeps a ceiling recorded ``NOWAIT_LEAD_MS`` ahead of the
            clock by a task (a record about every second, as long as the lease lives): the ID
            comes from the generator in this process, and an ID above the last recorded
            ceiling is never handed out (a successor starts above the ceiling, so it must be
            durable first; ``await next_id()`` records one itself when it must). When none
            covers the ID yet, because the event loop was blocked longer than the lead or the
            database did not answer the records meanwhile, nothing is handed out:
            :class:`~shardid.SequenceExhaustedError`, retry at its ``retry_at_ms``. A lost
            lease raises :class:`~shardid.LeaseLostError` here even with ``retake=True``
            (the next awaited call takes a new shard). Thread-safe, as the generator is."""
            tenure = self._current()
            if not self._nowait:
                reason = "was not taken with nowait=True: only then does it keep a ceiling ahead for try_next_id()"
                raise _error("INVALID_ARGUMENT", argument="lease", reason=reason)
            try:
                return tenure.generator.next_id()  # type: ignore[no-any-return]
            except _Behind:
                retry_at = int(time.time() * 1000) + NOWAIT_LEAD_MS // 4
                raise _error("SEQUENCE_EXHAUSTED", retry_at_ms=retry_at) from None
            except LeaseLostError:
                if self._closed:  # closed meanwhile: its generator was revoked
                    raise _db.closed_error(f"the lease on shard {tenure.shard}") from None
                raise

        async def _record_ahead(self, tenure: _AsyncTenure) -> None:
            """Records a ceiling twice ``NOWAIT_LEAD_MS`` ahead of the clock when the one
            recorded is less than ``NOWAIT_LEAD_MS`` ahead: the tenure's own record (only while
            the row holds this lease's token)."""
            layout = self.layout
            lead = max(1, NOWAIT_LEAD_MS // layout.unit_ms)
            # The clock's time unit, as the generator counts them (the ID's bits above the
            # shard and sequence).
            now = layout.compose(int(time.time() * 1000), 0, 0) >> (layout.shard_bits + layout.sequence_bits)
            if tenure.recorded < now + lead:
                # record() adds the difference again: 2 leads ahead.
                await tenure.record(now + lead + lead // 2, now + lead)

        async def _keep_ahead(self, tenure: _AsyncTenure) -> None:
            """The task of a ``nowait=True`` tenure: :meth:`_record_ahead` every quarter of the
            lead, until the tenure ends (closed, lost, or retaken). A record the database did
            not answer is tried again at the next turn."""
            while not tenure.stopped.is_set() and self._tenure is tenure:
                try:
                    await self._record_ahead(tenure)
                except LeaseLostError:
                    return
                except Exception:  # noqa: BLE001, S110 - the database did not answer: next turn
                    pass
                await tenure.stopped.wait(NOWAIT_LEAD_MS / 4000)

    async def _start(self) -> AsyncDatabaseLease:
        if self._tenure is None:
            self._tenure = await self._take()
            if not is_async():
                _install(self)
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
