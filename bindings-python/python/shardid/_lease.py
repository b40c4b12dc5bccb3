"""The DB-API driver of database leases that :mod:`shardid.postgres` and :mod:`shardid.mysql`
share: it runs the core's lease protocol (``shardid::sql::LeaseProtocol``) on a connection of
any DB-API driver, in the SQL of the database the entry point names. What differs between the
two databases' drivers (how to connect, how an error names itself, when a connection is gone,
how a statement without rows answers) is a :class:`Dialect`; the steps, statements and
parameters are the core's. Not for direct use.
"""

from __future__ import annotations

import atexit
import os
import socket
import threading
import weakref
from collections.abc import Callable
from typing import Any

from shardid import _db
from shardid._errors import InvalidArgumentError, LeaseLostError, ShardIdError
from shardid._shardid import (
    Layout,
    _CeilingGenerator,
    _claim_backend,
    _database_of_url,
    _error,
    _Hold,
    _LeaseProtocol,
    _LeaseTally,
)

#: The default time to live of an expiring lease, in milliseconds.
DEFAULT_TTL_MS = 10_000

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


def _close_at_exit(ref: weakref.ref[DatabaseLease]) -> None:
    """Frees a lease's shard when the interpreter exits normally (a worker told to stop), so
    the next process need not wait for it to expire."""
    held = ref()
    if held is not None:
        try:
            held.close()
        except Exception:  # noqa: BLE001 (nothing to be done at exit; the lease expires on its own)
            pass


def _close_quietly(conn: Any) -> None:
    try:
        conn.close()
    except Exception:  # noqa: BLE001 (a broken connection may fail to close; it is dropped anyway)
        pass


def check_url(conninfo: str, postgres: bool, module: str) -> None:
    """The core's one rule for a connection string (``shardid::sql::Dialect::of_url``):
    ``INVALID_ARGUMENT`` at once for a URL no driver takes, and for one of the other family's
    database than ``module`` leases through."""
    argument = "conninfo" if postgres else "url"
    database = _database_of_url(conninfo, argument)
    if (database == "postgres") != postgres:
        reason = f"names a {database} server, which {module} does not lease through"
        raise InvalidArgumentError(f"{argument} {reason}", argument=argument, reason=reason)


class Dialect:
    """What a lease needs to know of a database's DB-API drivers."""

    #: The core's name of the SQL dialect.
    name = "postgres"
    #: The module whose lease this is, for messages.
    module = "shardid.postgres"

    def connect(self, conninfo: str) -> Any:
        raise NotImplementedError

    def unreachable(self, e: BaseException) -> bool:
        """Whether the driver's error ``e`` says the database cannot be reached (raised as
        ``DATABASE_UNREACHABLE``, ``e`` its cause)."""
        return _db.unreachable(e)

    def check(self, conninfo: str) -> None:
        """Raises ``INVALID_ARGUMENT`` for a connection string the dialect cannot read (before
        any connection)."""

    def code(self, e: BaseException) -> str | None:
        """The code the core's protocol knows the error by, or ``None``."""
        raise NotImplementedError

    def lost(self, e: BaseException) -> bool:
        """Whether ``e`` says the connection is gone (not the database's refusal of a
        statement)."""
        raise NotImplementedError

    def usable(self, conn: Any) -> bool:
        return not (getattr(conn, "closed", False) or getattr(conn, "broken", False))

    def execute(self, conn: Any, sql: str, params: tuple[Any, ...]) -> Any:
        """Runs one statement; its first row, or ``None``."""
        cur = conn.cursor()
        try:
            cur.execute(sql, params)
            return cur.fetchone() if cur.description is not None else None
        finally:
            cur.close()


class _Tenure:
    """One lease taken by the protocol: its shard, token, generator and heartbeat. A
    :class:`DatabaseLease` holds one at a time (another after ``fork()``, or after a loss with
    ``retake=True``)."""

    def __init__(self, owner: DatabaseLease, protocol: _LeaseProtocol, shard: int, recorded: int | None,
                 backend: str | None, sent: int) -> None:  # fmt: skip
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
        self.hold = _Hold(owner.ttl_ms, sent) if protocol.kind == "expiring" else None
        self.generator = _CeilingGenerator(
            owner.layout, shard, recorded, self._store, hold=self.hold, tally=owner._tally, **owner._options
        )
        self.stop = threading.Event()
        self.heartbeat: threading.Thread | None = None
        if self.hold is not None:
            self.heartbeat = threading.Thread(target=self._beat, name=f"shardid-lease-{shard}", daemon=True)
            self.heartbeat.start()

    def lost(self, why: str = "is no longer held") -> LeaseLostError:
        return LeaseLostError(f"the lease on shard {self.shard} {why}: take a new lease", shard=self.shard)

    def _store(self, units: int, at_least: int) -> None:
        # Called before any ID above the last ceiling is handed out, on the thread asking for
        # it; only while the row still holds this lease's token. Records ``units`` (a span
        # ahead of ``at_least``, the unit of the ID asked for).
        sent = self.hold.sending() if self.hold is not None else _Hold.now()
        if sent is None:
            raise self.lost()
        sql, params = self.protocol.record(self.shard, units)
        if not self.protocol.kept(self.owner._run(sql, params, self)):
            if self.hold is not None:
                self.hold.lose()
            raise self.lost()
        if self.hold is not None:
            self.hold.renewed(sent)

    def _beat(self) -> None:
        """The heartbeat: renews the lease when due; stops the generator once the lease is
        lost (taken over, or past its deadline without a renewal)."""
        hold = self.hold
        assert hold is not None
        renew = self.protocol.renew(self.shard)
        assert renew is not None
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
            try:
                row = self.owner._run(*renew, self)
            except Exception:  # noqa: BLE001 (the database did not answer: try again sooner)
                hold.failed()
                continue
            if not self.protocol.kept(row):
                hold.lose()
                break
            hold.renewed(sent)
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


class DatabaseLease:
    """A generator on a shard leased through a database; see :func:`shardid.postgres.lease`
    and :func:`shardid.mysql.lease`. Use it as a context manager, or call :meth:`close`, to
    release the shard before the process ends."""

    #: The dialect of the entry point's database (set by each subclass).
    dialect: Dialect = Dialect()

    def __init__(
        self,
        layout: Layout,
        conninfo: str | None,
        shards: range,
        *,
        table: str = "shardid_leases",
        kind: str = "expiring",
        ttl_ms: int = DEFAULT_TTL_MS,
        retake: bool = False,
        connect: Callable[[], Any] | None = None,
        **options: int,
    ) -> None:
        if not isinstance(shards, range) or shards.step != 1 or shards.start < 0 or shards.stop > 2**31:
            reason = "must be a range with step 1 within 0..2**31"
            raise InvalidArgumentError(f"shards {reason}", argument="shards", reason=reason)
        if connect is None and not isinstance(conninfo, str):
            reason = "must be a connection string or URL, or pass connect="
            raise InvalidArgumentError(f"conninfo {reason}", argument="conninfo", reason=reason)
        self.layout = layout
        self.conninfo = conninfo
        self.shards = shards
        self.table = table
        self.kind = kind
        self.ttl_ms = ttl_ms
        self.retake = retake
        if connect is None:
            check_url(conninfo, self.dialect.name == "postgres", self.dialect.module)  # type: ignore[arg-type]
            self.dialect.check(conninfo)  # type: ignore[arg-type]
        dialect = self.dialect
        self._connect_with = connect if connect is not None else (lambda: dialect.connect(conninfo))  # type: ignore[arg-type]
        self._options = options
        self._conn: Any = None
        self._lock = threading.Lock()
        self._taking = threading.Lock()
        self._closed = False
        self._pid = os.getpid()
        # The SQL the protocol speaks: MySQL once a MySQL server refused MariaDB's.
        self._sql_dialect = self.dialect.name
        self._protocol()  # checks the kind, time to live and table name before connecting
        # The core counts into it (shardid::lease::Tally), for every shard this lease takes.
        self._tally = _LeaseTally(layout, table)
        self._tenure = self._take()
        self._install()
        _leases.add(self)
        atexit.register(_close_at_exit, weakref.ref(self))

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

    def _protocol(self) -> _LeaseProtocol:
        holder = f"{socket.gethostname()} pid {os.getpid()}"
        return _LeaseProtocol(
            self.kind, self.ttl_ms, self.layout, self.table, self.shards.start, self.shards.stop, holder, self._sql_dialect
        )

    def _connect(self) -> Any:
        """A new connection (``connect=``, or the dialect's driver); ``DATABASE_UNREACHABLE``
        when the database cannot be reached, with the driver's error as its cause."""
        try:
            return self._connect_with()
        except ShardIdError:
            raise  # already ours: DATABASE_UNREACHABLE, NOT_MYSQL, UNSUPPORTED (no driver)
        except Exception as e:
            if not self.dialect.unreachable(e):
                raise
            raise _db.unreachable_error(e) from e

    def _run(self, sql: str, params: tuple[Any, ...], tenure: _Tenure) -> Any:
        """Runs a statement of ``tenure``'s on the lease's connection; its first row, or
        ``None``. An expiring lease reconnects when its connection is gone, and sends the
        statement again once on a fresh connection when an old one fails (the database was
        restarted: every statement of the lease can be repeated); a session lease's lock ended
        with its session."""
        dialect = self.dialect
        with self._lock:
            for attempt in (1, 2):
                fresh = self._conn is None or not dialect.usable(self._conn)
                if fresh:
                    if tenure.protocol.kind == "session":
                        raise tenure.lost("lost its database session")
                    self._conn = self._connect()
                try:
                    return dialect.execute(self._conn, sql, params)
                except Exception as e:
                    if not (dialect.lost(e) or not dialect.usable(self._conn)):
                        raise
                    _close_quietly(self._conn)
                    self._conn = None
                    if tenure.protocol.kind == "session":
                        raise tenure.lost("lost its database session") from e
                    if fresh or attempt == 2:
                        raise _db.unreachable_error(e) from e
            raise AssertionError("unreachable")

    def _take(self) -> _Tenure:
        # The steps, statements and parameters are the core's (shardid::sql::LeaseProtocol):
        # this only executes them and feeds back what the database answered.
        protocol = self._protocol()
        dialect = self.dialect
        with self._lock:
            if self._conn is None or not dialect.usable(self._conn):
                self._conn = self._connect()
            conn = self._conn
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
                    row = dialect.execute(conn, sql, params)  # type: ignore[arg-type]
                except Exception as e:
                    protocol.fail(dialect.code(e))
                    if protocol.next()[0] == "raise":
                        if dialect.lost(e):
                            _close_quietly(conn)
                            self._conn = None
                        if dialect.unreachable(e):
                            raise _db.unreachable_error(e) from e
                        raise
                    continue
                protocol.feed(row)
        _, shard, recorded, backend = step
        self._sql_dialect = protocol.dialect
        tenure = _Tenure(self, protocol, shard, recorded, backend, sent)  # type: ignore[arg-type]
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
            if self._conn is not None:
                _inherited.append(self._conn)
            self._conn = None
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

    def stats(self) -> dict[str, int]:
        """What this lease did, over every shard it took, as a dict of counts named by the
        core's table: ``acquisitions``, ``renewals`` (heartbeats, and ceiling writes, which
        renew too), ``ceiling_writes``, ``late_renewals`` (back more than two thirds of the time
        to live after the last renewal was sent), ``losses`` (closing is none) and ``held``
        (1 or 0). :mod:`shardid.prometheus` and :mod:`shardid.opentelemetry` report them too."""
        return self._tally.stats()

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
            if self._conn is not None:
                _close_quietly(self._conn)
                self._conn = None

    def __enter__(self) -> DatabaseLease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "held" if self.held else "lost"
        name = f"{self.dialect.module}.{type(self).__name__}"
        return f"<{name} shard={self._tenure.shard} kind={self.kind!r} table={self.table!r} {state}>"


__all__ = ["DEFAULT_TTL_MS", "DatabaseLease", "Dialect"]
