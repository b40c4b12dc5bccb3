"""A shard lease on Redis 7 or Valkey (issue 57) over redis-py: the executor of the core's lease
steps (``_RedisLeaseSteps``, native: ``shardid::redis::lease_steps``, the scripts of a claim, a
renewal, a ceiling's record and a release, and the reading of their replies) around the core's
ceiling generator and hold (``_CeilingGenerator``, ``_Hold``), as every database lease is. This
module only opens the connection (``shardid._redis``'s: one connection, no retries, Sentinel
URLs too), reads the server's ``run_id`` on each, sends the script a step names and hands the
reply back, and renews on a thread of its own. Public as :func:`shardid.redis.lease`.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from shardid import _db, _redis
from shardid._errors import InvalidArgumentError, LeaseLostError
from shardid._shardid import Layout, _CeilingGenerator, _error, _Hold, _RedisLeaseSteps

DEFAULT_TTL_MS = 10_000


def check_arguments(url: str, shards: range) -> None:
    """``InvalidArgumentError`` for a URL that is not Redis's or unreadable, or shards that are
    not a range of step 1, before anything connects: the blocking and the asyncio lease's
    checks (the prefix, time to live and range are the core's, ``_RedisLeaseSteps``)."""
    if not _redis.is_redis_url(url):
        reason = "must be a Redis URL (redis://, rediss://, unix:// or redis+sentinel://)"
        raise InvalidArgumentError(f"url {reason}", argument="url", reason=reason)
    _redis.check_url(url, "url")
    if not isinstance(shards, range) or shards.step != 1:
        reason = "must be a range of shards (step 1)"
        raise InvalidArgumentError(f"shards {reason}", argument="shards", reason=reason)


class RedisLease:
    """A generator on a shard leased through a Redis server: ``next_id()``, ``next_ids(n)``,
    ``shard``, ``fencing_token``, ``held``, ``close()`` (frees the shard at once; a process that
    dies frees it when its time to live has passed). Thread-safe."""

    def __init__(
        self, layout: Layout, url: str, shards: range, *, ttl_ms: int = DEFAULT_TTL_MS, schema: str = _redis.DEFAULT_PREFIX
    ) -> None:
        check_arguments(url, shards)
        self._url = url
        self._steps = _RedisLeaseSteps(schema, layout, shards.start, shards.stop, ttl_ms, f"pid {os.getpid()} (python)")
        self._link = _redis._Redis(schema, "lease")  # the connection's rules (its errors, its close)
        self._lock = threading.Lock()
        self._conn: Any = None
        self._closed = False
        self._wake = threading.Event()
        sent = _Hold.now()
        # The claim is made (the client's clock read by the core) just before it is sent.
        claimed = self._steps.claimed(self._send(lambda run_id: self._steps.claim(run_id)))
        if claimed[0] == "clock_skew":
            # This host's clock is too far ahead of the server's (the SQL leases' rule): the
            # shard taken is freed at once, then the error (nothing left claimed).
            _, shard, ahead_ms, max_ms = claimed
            try:
                self._send(lambda run_id: self._steps.release(run_id, shard))
            except Exception:  # noqa: BLE001 - the claim expires on its own; the skew is the error
                pass
            finally:
                self._disconnect()
            raise _error("CLOCK_SKEW", ahead_ms=ahead_ms, max_ms=max_ms)
        if claimed[0] == "none":
            raise _error("NO_FREE_SHARD", first=shards.start, end=shards.stop, held_in=f"Redis key {self._steps.key}")
        if claimed[0] != "shard":
            raise _error("DATABASE", reason="the Redis server answered the claim with a reply no lease script makes")
        _, self.shard, recorded, self.fencing_token = claimed
        self._hold = _Hold(ttl_ms, sent)
        self._generator = _CeilingGenerator(layout, self.shard, recorded, self._store, hold=self._hold)
        self._beat = threading.Thread(target=self._heartbeat, name="shardid-lease", daemon=True)
        self._beat.start()
        _Hold.wait_for_ceiling(layout, recorded)

    def _send(self, make: Any) -> Any:
        """Runs the script call ``make(run_id)`` names on the connection (opened again, and its
        server's run_id read again, after any error); its reply."""
        with self._lock:
            try:
                if self._conn is None:
                    self._conn = self._link.connect(self._url)
                script, values = make(self._conn.run_id)
                self._link.server(self._conn)  # this connection's run_id is the one sent
                return self._link.row(self._conn, script, tuple(values))
            except self._link.errors() as e:
                conn, self._conn = self._conn, None
                if conn is not None:
                    self._link.close(conn)
                if self._link.unreachable(e):
                    raise _db.unreachable_error(e) from e
                raise

    def _lost(self) -> LeaseLostError:
        return _error("LEASE_LOST", shard=self.shard)  # type: ignore[return-value]

    def _store(self, units: int, at_least: int) -> None:
        """The generator's ceiling store: records ``units`` while the shard holds this lease's
        token (and renews)."""
        sent = self._hold.sending()
        if sent is None or self._closed:
            raise self._lost()
        reply = self._send(lambda run_id: self._steps.record(run_id, self.shard, units))
        if not _RedisLeaseSteps.held(reply):
            self._hold.lose()
            raise self._lost()
        self._hold.renewed(sent)

    def _heartbeat(self) -> None:
        while not self._closed:
            wait = self._hold.wait()
            if wait is None:
                self._generator.revoke()
                return
            if wait > 0:
                self._wake.wait(wait)
                continue
            sent = self._hold.sending()
            if sent is None:
                self._generator.revoke()
                return
            try:
                reply = self._send(lambda run_id: self._steps.renew(run_id, self.shard))
            except Exception:  # noqa: BLE001 - the server is away: the hold decides when the lease ends
                self._hold.failed()
                self._wake.wait(0.1)
                continue
            ahead = self._steps.clock_ahead(reply)
            if ahead is not None:
                # This host's clock moved too far ahead of the server's since the claim: the
                # generator stops, and says why (ClockSkewError), as a SQL lease's does.
                self._generator.revoke_clock_skew(ahead)
                return
            if _RedisLeaseSteps.held(reply):
                self._hold.renewed(sent)
            else:
                self._hold.lose()
                if not self._closed:
                    self._generator.revoke()
                return

    @property
    def held(self) -> bool:
        return not self._closed and self._hold.holds

    def next_id(self) -> int:
        self._check()
        return self._generator.next_id()  # type: ignore[no-any-return]

    def next_ids(self, n: int) -> list[int]:
        self._check()
        return self._generator.next_ids(n)  # type: ignore[no-any-return]

    def _check(self) -> None:
        if self._closed:
            raise _db.closed_error(f"the Redis lease of shard {self.shard}")

    def close(self) -> None:
        """Stops the heartbeat and frees the shard at once (best effort: an unreleased lease
        expires on its own). Closing twice is fine."""
        if self._closed:
            return
        self._closed = True
        self._generator.close()
        self._wake.set()
        self._beat.join(5)
        try:
            self._send(lambda run_id: self._steps.release(run_id, self.shard))
        except Exception:  # noqa: BLE001 - the lease expires on its own
            pass
        self._disconnect()

    def _disconnect(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._link.close(self._conn)
                self._conn = None

    def __enter__(self) -> RedisLease:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def lease(layout: Layout, url: str, shards: range, *, ttl_ms: int = DEFAULT_TTL_MS, schema: str = _redis.DEFAULT_PREFIX) -> RedisLease:
    """Leases the first free shard of ``shards`` for ``layout`` through the Redis server ``url``
    names (``redis://``, ``rediss://``, ``unix://``, ``redis+sentinel://``), its keys under
    ``schema`` (``shardid``), expiring ``ttl_ms`` (1,000 to 86,400,000; 10,000 by default) after
    its last renewal by the server's clock: a holder that dies frees its shard then; one stopped
    past it ends with ``LeaseLostError`` at its next ceiling. Renewed by a thread of its own.

    Raises ``InvalidArgumentError`` (a bad URL, prefix, time to live or range),
    ``NoFreeShardError``, ``DatabaseUnreachableError``, ``ClockSkewError`` when this host's clock
    is more than 2 s ahead of the server's (the shard it took freed first)."""
    return RedisLease(layout, url, shards, ttl_ms=ttl_ms, schema=schema)
