"""Dense IDs from PostgreSQL segments (号段, as Meituan's Leaf, Didi's Tinyid and TiDB do it): an
optional extra that needs ``psycopg`` (``pip install shardid[postgres]``).

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
(retry later). After a crash at most the current and the prefetched segment are lost.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from shardid._errors import InvalidArgumentError, SegmentUnavailableError, UnknownTagError
from shardid._shardid import _UNKNOWN_TAG_SQLSTATE, _segment_statements, _SegmentAllocator

__all__ = ["DenseIds"]

# The SQLSTATE of an unknown tag, from the core (shardid::sql::UNKNOWN_TAG).
_UNKNOWN_TAG = _UNKNOWN_TAG_SQLSTATE


class DenseIds(_SegmentAllocator):
    """Dense IDs of one tag, taken in segments from the PostgreSQL server at ``conninfo``
    (a libpq connection string or URL) where ``schema`` holds the segments' DDL.

    ``conninfo`` may be a list of ticket servers (each with the DDL of its index, ``--servers
    n --index i``): segments are then taken from whichever answers, in turn, and a server that
    is down costs only its share. IDs from several servers interleave (each server's are one
    residue modulo n), so they no longer increase per allocator.

    Thread-safe: share one per process. In a forked child it starts afresh with segments of
    its own (the parent's are the parent's).

    ``next_id()`` returns the next ID of this allocator (increasing); it raises
    :class:`SegmentUnavailableError` when none arrives within ``wait_ms`` and
    :class:`UnknownTagError` for a tag never created. It is the native base class's method:
    one call with no Python frame, which calls back into this class only to start a fetch
    (``_start``) or to wait for one (``_when_empty``).
    """

    def __init__(
        self,
        conninfo: str | Sequence[str],
        tag: str,
        *,
        schema: str = "seg",
        min_size: int = 1_000,
        max_size: int = 1_000_000,
        target_ms: int = 60_000,
        wait_ms: int = 5_000,
    ) -> None:
        # The statements are the core's; this checks the names too.
        self._take, self._give_back = DenseIds.check_names(tag, schema)
        self.servers = [conninfo] if isinstance(conninfo, str) else list(conninfo)
        if not self.servers or not all(isinstance(c, str) for c in self.servers):
            reason = "must be a connection string or a non-empty list of them"
            raise InvalidArgumentError(f"conninfo {reason}", argument="conninfo", reason=reason)
        self.conninfo = self.servers[0]
        self.tag = tag
        self.schema = schema
        self.wait_ms = wait_ms
        self._arrived = threading.Condition()
        self._closed = False
        self.skipped = 0
        """Numbers taken from the database and neither handed out nor given back (by
        :meth:`close`): the holes this allocator made."""
        self._reset()

    @staticmethod
    def check_names(tag: str, schema: str) -> tuple[str, str]:
        """Checks a tag (1 to 200 bytes of text) and a schema name (a plain lower-case
        identifier); returns the statements that take a segment and give one back."""
        if not isinstance(tag, str) or not 1 <= len(tag.encode()) <= 200:
            reason = "must be 1 to 200 bytes of text"
            raise InvalidArgumentError(f"tag {reason}", argument="tag", reason=reason)
        take, give_back, _ = _segment_statements(schema)
        return take, give_back

    def _reset(self) -> None:
        """A fresh state for this process (at the start, and in a forked child)."""
        self._adopt()
        self._conns: list[Any] = [None] * len(self.servers)
        self._turn = 0  # the server the next fetch tries first
        self._last_server = 0  # the server of the last segment taken, to give its rest back to
        self._error: BaseException | None = None
        self.fetches = 0

    def _fetch(self, size: int) -> None:
        """Takes one segment (in a thread of its own) and hands it to the allocator."""
        import psycopg

        error: BaseException | None = None
        try:
            # Each server in turn, from the one after the last that answered.
            for attempt in range(len(self.servers)):
                server = (self._turn + attempt) % len(self.servers)
                try:
                    conn = self._connection(server)
                    row = conn.execute(self._take, (self.tag, size)).fetchone()
                except psycopg.Error as e:
                    error = e
                    if isinstance(e, psycopg.OperationalError):
                        self._drop(server)  # reconnect at the next fetch
                    if getattr(e, "sqlstate", None) == _UNKNOWN_TAG:
                        break
                    continue
                first, count, stride = row
                self._fill(first, count, stride)
                self._last_server = server
                self._turn = (server + 1) % len(self.servers)
                self.fetches += 1
                self._error = None
                return
            self._fetch_failed()
            self._error = error
        except BaseException as e:  # noqa: BLE001 - reported to the callers that wait
            self._fetch_failed()
            self._error = e
        finally:
            with self._arrived:
                self._arrived.notify_all()

    def _connection(self, server: int) -> Any:
        import psycopg

        conn = self._conns[server]
        if conn is None or conn.closed:
            conn = self._conns[server] = psycopg.connect(self.servers[server], autocommit=True, connect_timeout=5)
        return conn

    def _drop(self, server: int) -> None:
        conn, self._conns[server] = self._conns[server], None
        if conn is not None:
            conn.close()

    def _start(self, size: int) -> None:
        # Called by the allocator (native) when a fetch becomes due.
        threading.Thread(target=self._fetch, args=(size,), name="shardid-segment", daemon=True).start()

    def _unavailable(self) -> BaseException:
        if self._closed:
            reason = "the allocator was closed"
            return SegmentUnavailableError(f"no segment of tag {self.tag} is available: {reason}", tag=self.tag, reason=reason)
        error = self._error
        if getattr(error, "sqlstate", None) == _UNKNOWN_TAG:
            return UnknownTagError(f"no tag {self.tag}: create it first (create_tag)", tag=self.tag)
        reason = f"the database did not answer within {self.wait_ms} ms" + (f" ({error})" if error else "")
        unavailable = SegmentUnavailableError(f"no segment of tag {self.tag} is available: {reason}", tag=self.tag, reason=reason)
        unavailable.__cause__ = error
        return unavailable

    def _wait(self, deadline: float) -> float:
        """Waits a little for the fetch under way; raises once past ``deadline`` (0: set it)."""
        if self._closed or getattr(self._error, "sqlstate", None) == _UNKNOWN_TAG:
            raise self._unavailable()
        if self._forked():
            self._reset()  # a forked child: segments of its own
            return deadline
        now = time.monotonic()
        if not deadline:
            return now + self.wait_ms / 1000
        if now >= deadline:
            raise self._unavailable()
        with self._arrived:
            self._arrived.wait(min(deadline - now, 0.05))
        return deadline

    def _when_empty(self) -> int:
        # Both segments are used up: wait for the fetch under way and retry.
        deadline = 0.0
        while True:
            deadline = self._wait(deadline)
            id = self._try_next_id()
            if id is not None:
                return id

    def next_ids(self, n: int) -> list[int]:
        """``n`` IDs, increasing (waiting for segments as :meth:`next_id` does)."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise InvalidArgumentError(f"n {n!r} must be an int of 0 or more", argument="n", reason="must be 0 or more")
        out = self._take_ids(n)
        deadline = 0.0
        while len(out) < n:
            deadline = self._wait(deadline)
            more = self._take_ids(n - len(out))
            if more:
                out.extend(more)
                deadline = 0.0
        return out

    def close(self) -> None:
        """Gives the unused rest of the last segment back (if nobody took a segment since: then
        a restart continues at the next number) and closes the connection. Call it when no
        other thread takes IDs any more; closing twice is fine."""
        if self._closed or self._forked():
            self._closed = True
            self._shut()
            return
        self._closed = True
        self._shut()
        deadline = time.monotonic() + self.wait_ms / 1000
        with self._arrived:
            while self._fetching() and time.monotonic() < deadline:
                self._arrived.wait(0.05)
        unused = self._unused()
        try:
            if unused is not None:
                first, end, count, lost = unused
                self.skipped += lost
                returned = False
                try:
                    conn = self._connection(self._last_server)
                    row = conn.execute(self._give_back, (self.tag, first, end)).fetchone()
                    returned = bool(row and row[0])
                except Exception:  # noqa: BLE001 - a server that is down keeps the rest: a hole
                    pass
                finally:
                    if not returned:
                        self.skipped += count
        finally:
            for server in range(len(self.servers)):
                self._drop(server)

    def __enter__(self) -> DenseIds:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
