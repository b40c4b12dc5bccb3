"""A shard lease on Redis 7 or Valkey for asyncio (issue 57) over ``redis.asyncio``: the asyncio
database lease's driver (:class:`shardid._lease.AsyncDatabaseLease`: its generator, heartbeat
task, ceiling records, ``retake`` and close, written once for every database) run over the
core's lease steps (``_RedisLeaseSteps``, native: ``shardid::redis::lease_steps``, the claim,
renewal, ceiling record and release scripts with their keys and arguments, and the reading of
their replies) instead of a SQL protocol. This module only opens the connection
(``shardid._redis``'s asyncio one: no retries, Sentinel URLs too), reads the server's ``run_id``
on each, sends the script a step names with the ``run_id`` of the connection it goes on, and
hands the reply back. Public as :func:`shardid.redis.lease_async`.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from typing import Any

from shardid import _db, _redis
from shardid._acompat import ALock
from shardid._lease import AsyncDatabaseLease
from shardid._redis_lease import DEFAULT_TTL_MS, check_arguments
from shardid._shardid import Layout, _error, _Hold, _LeaseTally, _RedisLeaseSteps

# A script call made for the connection it is sent on: ``make(run_id) -> (script, values)``.
_Make = Callable[[str], tuple[str, list[str]]]


class _ClaimSteps:
    """One claim's steps in the shape the asyncio lease's tenure runs a SQL lease protocol in
    (``_LeaseProtocol``): a renewal, a ceiling's record and the release, each a "statement"
    that is a function of the ``run_id`` of the connection it is sent on (``_Session.run``
    calls it there), and the reading of their replies. The scripts, keys and arguments are the
    core's."""

    kind = "expiring"

    def __init__(self, steps: _RedisLeaseSteps, fencing_token: int) -> None:
        self.steps = steps
        self.fencing_token = fencing_token

    def renew(self, shard: int) -> tuple[_Make, tuple[()]]:
        return (lambda run_id: self.steps.renew(run_id, shard)), ()

    def record(self, shard: int, units: int) -> tuple[_Make, tuple[()]]:
        return (lambda run_id: self.steps.record(run_id, shard, units)), ()

    def release(self, shard: int) -> tuple[_Make, tuple[()]]:
        return (lambda run_id: self.steps.release(run_id, shard)), ()

    @staticmethod
    def kept(reply: Any) -> bool:
        """Whether the reply says the shard still holds this claim's token (``False``: lost for
        good: another claim took it, or the server lost it)."""
        return _RedisLeaseSteps.held(reply)

    def clock_ahead(self, reply: Any) -> int | None:
        """How far this host's clock was ahead of the server's by a renewal's reply, when more
        than the skew a lease allows (the lease then stops with ``ClockSkewError``); the core's
        rule, the SQL leases' own."""
        return self.steps.clock_ahead(reply)

    @staticmethod
    def resend_after(code: Any, resent: int) -> None:
        """Nothing is rolled back whole on Redis: a script that failed is sent again only on a
        new connection (``_Session.run``)."""
        return None


class _Session:
    """What :class:`AsyncDatabaseLease` asks of its session (``_lease_async._AsyncSession`` on a
    SQL database): the claim (``take``), each later script (``run``), ``close``, the lease's
    counters. The caller holds the lease's lock: one script at a time."""

    def __init__(self, layout: Layout, url: str, shards: range, *, ttl_ms: int, schema: str) -> None:
        check_arguments(url, shards)
        self.layout, self.url, self.shards, self.ttl_ms, self.schema = layout, url, shards, ttl_ms, schema
        self._holder = f"{socket.gethostname()} pid {os.getpid()} (python asyncio)"
        # INVALID_ARGUMENT for a bad prefix, time to live or range, before connecting.
        self.key = self._steps().key
        self._link = _redis._AsyncRedis(schema, "lease")  # the connection's rules (its errors, its close)
        self.conn: Any = None
        # The core counts into it (shardid::lease::Tally), for every shard this lease takes.
        self.tally = _LeaseTally(layout, "redis")

    def _steps(self) -> _RedisLeaseSteps:
        """The core's steps of one claim: a new token each."""
        return _RedisLeaseSteps(self.schema, self.layout, self.shards.start, self.shards.stop, self.ttl_ms, self._holder)

    async def run(self, make: _Make, params: tuple[()] = (), tenure: Any = None) -> Any:
        """Sends the script ``make(run_id)`` names, ``run_id`` being the identity of the server of
        the connection it goes on (a script made with the identity of the server before a
        reconnection, sent to the server after it, would not see that the shard's data stepped
        back); its reply. Every error gives the connection up; a script that failed on a
        connection opened before is sent once more on a new one (the server restarted, or a
        sentinel named another primary)."""
        link = self._link
        reconnected = False
        while True:
            fresh = self.conn is None
            try:
                if self.conn is None:
                    self.conn = await link.connect(self.url)
                script, values = make(self.conn.run_id)
                link.server(self.conn)  # this connection's run_id is the one sent
                return await link.row(self.conn, script, tuple(values))
            except link.errors() as e:
                await self.close()
                if fresh or reconnected:
                    if link.unreachable(e):
                        raise _db.unreachable_error(e) from e
                    raise
                reconnected = True
            except BaseException:
                # Cancelled (a timeout around the call) or interrupted with the script on the
                # wire: redis-py drops the socket then, and would open it again by itself at the
                # next command, to whatever server answers by then, under the run_id read here
                # (a restart that lost writes unseen by the next script). Give it up: the next
                # script reads the identity on a connection of its own.
                await self.close()
                raise

    async def take(self) -> tuple[_ClaimSteps, int, int | None, None, int]:
        """Claims the first free shard by the core's steps: ``(steps, shard, recorded, None,
        sent)``, as ``_AsyncSession.take`` answers (no server session: the lease expires)."""
        steps = self._steps()
        sent = _Hold.now()

        def claim(run_id: str) -> tuple[str, list[str]]:
            nonlocal sent
            sent = _Hold.now()
            return steps.claim(run_id)

        claimed = steps.claimed(await self.run(claim))
        if claimed[0] == "clock_skew":
            # This host's clock is too far ahead of the server's (the SQL leases' rule): the
            # shard taken is freed at once, then the error (nothing left claimed).
            _, shard, ahead_ms, max_ms = claimed
            try:
                await self.run(lambda run_id: steps.release(run_id, shard))
            except Exception:  # noqa: BLE001 - the claim expires on its own; the skew is the error
                pass
            finally:
                await self.close()
            raise _error("CLOCK_SKEW", ahead_ms=ahead_ms, max_ms=max_ms)
        if claimed[0] != "shard":
            await self.close()  # nothing held: no connection left open either
        if claimed[0] == "none":
            raise _error("NO_FREE_SHARD", first=self.shards.start, end=self.shards.stop, held_in=f"Redis key {steps.key}")
        if claimed[0] != "shard":
            raise _error("DATABASE", reason="the Redis server answered the claim with a reply no lease script makes")
        _, shard, recorded, fencing_token = claimed
        return _ClaimSteps(steps, fencing_token), shard, recorded, None, sent

    async def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            await self._link.close(conn)


class _Dialect:
    """What the lease's ``repr`` names."""

    module = "shardid.redis"


class AsyncRedisLease(AsyncDatabaseLease):
    """A generator on a shard leased through a Redis server for asyncio; take one with
    ``await lease_async(...)`` (or ``async with lease_async(...) as ids:``): ``await next_id()``,
    ``await next_ids(n)``, ``await next_id_at(now)``, ``shard``, ``fencing_token``, ``held``,
    ``stats()``, ``await close()`` (frees the shard at once; a process that dies frees it when
    its time to live has passed). The heartbeat is an asyncio task; ``await next_id()`` hands an
    ID out without suspending, except when a new ceiling must be recorded first (at most once a
    span, 100 ms by default). Use it from the loop that took it."""

    dialect = _Dialect()
    #: The Redis URL.
    url: str
    #: The lease hash's key (one per layout under the prefix).
    key: str

    def __init__(
        self,
        layout: Layout,
        url: str,
        shards: range,
        *,
        ttl_ms: int = DEFAULT_TTL_MS,
        schema: str = _redis.DEFAULT_PREFIX,
        retake: bool = False,
        **options: int,
    ) -> None:
        # AsyncDatabaseLease's state, its session a Redis one (see _Session).
        session = _Session(layout, url, shards, ttl_ms=ttl_ms, schema=schema)
        self._session = session  # type: ignore[assignment]
        self._tally = session.tally
        self.layout, self.conninfo, self.url, self.shards = layout, url, url, shards
        self.key = self.table = session.key
        self.schema = schema
        self.kind, self.ttl_ms, self.retake, self._options = "expiring", ttl_ms, retake, options
        self._lock = ALock()
        self._taking = ALock()
        self._closed = False
        self._tenure = None
        # try_next_id()'s ceiling kept ahead (``nowait=True``), as AsyncDatabaseLease.__init__
        # sets it: every attribute that __init__ sets, this one must too (it takes a Redis
        # session in place of a SQL one), or _take fails on the one it lacks.
        self._nowait = bool(options.pop("nowait", False))

    @property
    def fencing_token(self) -> int:
        """The fencing token of the current claim: one more than the shard's last claim's (a
        store that writes on the holder's behalf can refuse a smaller one)."""
        tenure = self._tenure
        if tenure is None:
            raise _error("INVALID_ARGUMENT", argument="lease", reason="is not taken yet: await lease_async(...)")
        return tenure.protocol.fencing_token  # type: ignore[attr-defined]

    async def __aenter__(self) -> AsyncRedisLease:
        await self._start()
        return self

    def __repr__(self) -> str:
        state = "closed" if self._closed else "held" if self.held else "not taken" if self._tenure is None else "lost"
        shard = self._tenure.shard if self._tenure is not None else None
        return f"<shardid.redis.AsyncRedisLease shard={shard} key={self.key!r} {state}>"


def lease_async(
    layout: Layout,
    url: str,
    shards: range,
    *,
    ttl_ms: int = DEFAULT_TTL_MS,
    schema: str = _redis.DEFAULT_PREFIX,
    retake: bool = False,
    **options: int,
) -> AsyncRedisLease:
    """:func:`shardid.redis.lease` for asyncio: ``ids = await lease_async(layout, url, shards)``
    (or ``async with lease_async(...) as ids:``), then ``await ids.next_id()``. Leases the first
    free shard of ``shards`` for ``layout`` through the Redis server ``url`` names
    (``redis://``, ``rediss://``, ``unix://``, ``redis+sentinel://``), its keys under ``schema``
    (``shardid``), expiring ``ttl_ms`` (1,000 to 86,400,000; 10,000 by default) after its last
    renewal by the server's clock: a holder that dies frees its shard then; one stopped past it
    ends with ``LeaseLostError`` at its next ceiling (with ``retake=True``, the next call takes a
    new lease). ``backwards_tolerance_ms`` / ``max_borrow_units`` go to the generator.

    Raises ``InvalidArgumentError`` (a bad URL, prefix, time to live or range) at once;
    ``NoFreeShardError``, ``DatabaseUnreachableError`` and ``ClockSkewError`` (this host's clock
    more than 2 s ahead of the server's; the shard it took freed first) when awaited."""
    return AsyncRedisLease(layout, url, shards, ttl_ms=ttl_ms, schema=schema, retake=retake, **options)
