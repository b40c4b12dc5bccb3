"""SQLite for :mod:`shardid.segments` (dense IDs, serials) and :mod:`shardid.dictionary`, over
the standard :mod:`sqlite3` module: no server, no extra to install. Not for direct use: give the
clients a ``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db`` URL (SQLAlchemy's and
dj-database-url's form; the core's ``sqlite_path`` reads it).

Everything here executes the core's statements (``shardid::sql::sqlite``) in the order the core
documents (see its ``mod.rs``): the numbers and the checks are the core's. What is ``sqlite3``'s
own:

- the connection: autocommit (``isolation_level=None``: ``sqlite3`` would otherwise open a
  deferred transaction before each write and hold the write lock from every other process until
  it commits), the core's ``CONNECTION_SETUP`` (busy timeout, WAL, ``synchronous = FULL``), then
  the system's tables (``CREATE ... IF NOT EXISTS``), once per connection: created on first use;
- one lock per connection: each step (a take, a dictionary batch in its ``BEGIN IMMEDIATE``
  transaction) runs whole before the next starts, also when an asyncio task that awaited it was
  cancelled (its thread finishes the step);
- its errors, as the Rust driver reports them: a file that cannot be used (a missing
  directory, no permission, read-only, not a SQLite database) is ``DATABASE_UNREACHABLE`` with
  SQLite's message and the path, as a server that cannot be reached is elsewhere, ``sqlite3``'s
  error its ``__cause__``; a write lock held past the busy timeout (``database is locked``) is
  ``sqlite3``'s own error, the database's refusal of the statement, as a lock wait timeout is
  PyMySQL's; a named ``CHECK`` of the DDL (``shardid_tag``, ``shardid_topic``, ...) is
  ``INVALID_ARGUMENT``.

asyncio runs the same code on a worker thread (:func:`arun`, ``asyncio.to_thread``): SQLite's
calls block, and a step is short.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from shardid._errors import DatabaseUnreachableError, InvalidArgumentError
from shardid._shardid import (
    _SQLITE_BUSY_TIMEOUT_MS,
    _SQLITE_MAX_LIST,
    _TOPIC_DROPPED_SQLSTATE,
    _UNKNOWN_TAG_SQLSTATE,
    _UNKNOWN_TOPIC_SQLSTATE,
    _error,
    _sqlite_path,
    _sqlite_period_fits,
    _sqlite_period_tag,
    _SqliteAssign,
    _SqliteSql,
    _SqliteTake,
)

T = TypeVar("T")

BUSY_TIMEOUT_MS: int = _SQLITE_BUSY_TIMEOUT_MS
"""How long a connection waits for the write lock another holds (the core's default, 5 s)
before ``database is locked``."""

# SQLite's primary result codes of a file that cannot be used, DATABASE_UNREACHABLE as a server
# that cannot be reached is, as the Rust driver reports them (core/src/driver/sqlite.rs):
# SQLITE_CANTOPEN (a missing directory, no permission), SQLITE_NOTADB and SQLITE_CORRUPT (not a
# SQLite database), SQLITE_READONLY. SQLITE_BUSY and SQLITE_LOCKED (the write lock held past the
# busy timeout) are the database's refusal of the statement, not a lost connection: sqlite3's
# error as it is, as a lock wait timeout is PyMySQL's. By sqlite3's words too, for Pythons
# before 3.11 (no ``sqlite_errorcode``).
_BUSY, _LOCKED, _READONLY, _CORRUPT, _CANTOPEN, _NOTADB = 5, 6, 8, 11, 14, 26
_WORDS = {
    "database is locked": _BUSY,
    "database table is locked": _LOCKED,
    "unable to open database file": _CANTOPEN,
    "file is not a database": _NOTADB,
    "database disk image is malformed": _CORRUPT,
    "readonly database": _READONLY,
}


class StatementError(Exception):
    """An answer of the database the core refused (an unknown tag or topic, an exhausted tag, a
    row no DDL makes), with the SQLSTATE PostgreSQL's functions raise for the same case, so the
    drivers' checks of ``sqlstate`` hold for every database."""

    def __init__(self, sqlstate: str, message: str) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


class Connection(sqlite3.Connection):
    """A ``sqlite3`` connection that records which tables it created and holds the lock of its
    steps."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shardid_lock = threading.Lock()
        self.shardid_ready: set[str] = set()
        self.shardid_closed = False
        self.shardid_file = "the database file"
        self.shardid_pid = os.getpid()
        _open.add(self)

    def __del__(self) -> None:
        # The parent's connection dropped in a forked child whose fork skipped Python's hooks
        # (``_after_fork_in_child``: a fork in C, as uWSGI's prefork and ctypes make): kept for
        # ever, never closed here, as the hook would have kept it.
        try:
            theirs = self.shardid_pid != os.getpid()
        except Exception:  # noqa: BLE001 - __init__ failed, or the interpreter is shutting down
            return
        if theirs:
            _inherited.append(self)


# Every connection of this process, and in a forked child those of its parent, kept for ever:
# SQLite forbids using a connection across fork() (closing it included: the child would unmap
# the parent's WAL index and may try to checkpoint it). The drivers open a fresh one in the
# child; the garbage collector must not close the parent's there.
_open: weakref.WeakSet[Connection] = weakref.WeakSet()
_inherited: list[Connection] = []


def _after_fork_in_child() -> None:
    _inherited.extend(_open)
    for conn in _inherited:
        conn.shardid_closed = True  # is_open() says so: the drivers open another
    _open.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


def path_of(url: str) -> str:
    """The file ``url`` names, or ``INVALID_ARGUMENT`` on ``conninfo``."""
    return _sqlite_path(url, "conninfo")  # type: ignore[no-any-return]


def _code(e: sqlite3.Error) -> int | None:
    """SQLite's primary result code of ``e``."""
    code = getattr(e, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF
    text = str(e).lower()
    return next((c for words, c in _WORDS.items() if words in text), None)


def translate(e: BaseException, file: str) -> BaseException:
    """``e`` as the other databases' error of the same kind (raise it ``from e``): see
    ``_WORDS``; a named ``CHECK`` of shardid's DDL is ``INVALID_ARGUMENT``; the rest as it is."""
    if not isinstance(e, sqlite3.Error):
        return e
    code = _code(e)
    if code in (_CANTOPEN, _NOTADB, _CORRUPT, _READONLY):
        return _error("DATABASE_UNREACHABLE", reason=f"{e}: {file}")
    return _checked(e)


def schema_of(given: str | None) -> str:
    """The schema on SQLite: the file itself, ``main`` (the default); any other name is
    ``INVALID_ARGUMENT`` (the clients attach no database), as in Node."""
    if given is None or given == "main":
        return "main"
    reason = "on SQLite is the file itself: 'main' (the default)"
    raise InvalidArgumentError(f"schema {reason}", argument="schema", reason=reason)


def unreachable(e: BaseException) -> bool:
    """Whether ``e`` (translated) says to retry later: ``DATABASE_UNREACHABLE``."""
    return isinstance(e, DatabaseUnreachableError)


def lost(e: BaseException) -> bool:
    """Whether the connection must be opened again: the file could not be used (it may be
    back next time), or the connection was closed. A busy database is not lost, only busy."""
    return isinstance(e, DatabaseUnreachableError) or (isinstance(e, sqlite3.ProgrammingError) and "closed" in str(e))


def _checked(e: sqlite3.Error) -> BaseException:
    """A named ``CHECK`` of shardid's DDL as ``INVALID_ARGUMENT``; the rest as it is."""
    text = str(e)
    marker = "CHECK constraint failed: shardid_"
    if isinstance(e, sqlite3.IntegrityError) and marker in text:
        name = text.split(marker, 1)[1].split()[0] if text.split(marker, 1)[1] else ""
        argument = {"serial_tag": "tag", "next": "first"}.get(name, name or "argument")
        reason = f"is refused by the database: {text}"
        return InvalidArgumentError(f"{argument} {reason}", argument=argument, reason=reason)
    return e


def set_up(conn: sqlite3.Connection, busy_timeout_ms: int) -> None:
    """The core's connection setup on ``conn``. On a new file that other connections are
    switching to WAL mode at the same moment, the switch can fail at once with "database is
    locked": SQLite runs no busy handler for a journal-mode change it could deadlock on. So a
    busy setup is tried again every 10 ms until the busy timeout is over, as the handler would
    have waited (the same in the Rust and Node drivers)."""
    deadline = time.monotonic() + busy_timeout_ms / 1000
    while True:
        try:
            conn.executescript(_SqliteSql.setup(busy_timeout_ms))
            return
        except sqlite3.OperationalError as e:
            busy = getattr(e, "sqlite_errorcode", 5) & 0xFF == 5 and "locked" in str(e)
            if not busy or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def connect(url: str, ddl: str = "", busy_timeout_ms: int | None = None) -> Connection:
    """An autocommit connection to the file ``url`` names, set up as the core says, with the
    tables of ``ddl`` created if missing. ``DATABASE_UNREACHABLE`` when the file cannot be used;
    ``INVALID_ARGUMENT`` for a URL the core refuses."""
    path = path_of(url)
    if busy_timeout_ms is None:
        busy_timeout_ms = BUSY_TIMEOUT_MS
    try:
        conn = sqlite3.connect(
            path,
            timeout=busy_timeout_ms / 1000,
            isolation_level=None,
            check_same_thread=False,  # one lock per connection: see the module's docs
            factory=Connection,
        )
    except sqlite3.Error as e:
        raise translate(e, path) from e
    conn.shardid_file = path
    try:
        set_up(conn, busy_timeout_ms)
        if ddl:
            ensure(conn, ddl)
    except BaseException as e:
        conn.close()
        translated = translate(e, path)
        if translated is e:
            raise
        raise translated from e
    return conn  # type: ignore[no-any-return]


def statements(script: str) -> list[str]:
    """The statements of a script (the core's DDL), one at a time, as SQLite's own tokenizer
    ends them (``sqlite3.complete_statement``): for a connection that must not run a script
    whole (``executescript`` commits the caller's transaction first; Django's migrations run in
    one)."""
    out: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            if pending.strip():
                out.append(pending.strip())
            pending = ""
    return out


def ensure(conn: Connection, ddl: str) -> None:
    """Creates the tables of ``ddl`` on ``conn`` once (``CREATE ... IF NOT EXISTS``)."""
    if ddl not in conn.shardid_ready:
        conn.executescript(ddl)
        conn.shardid_ready.add(ddl)


async def aconnect(url: str, ddl: str = "", busy_timeout_ms: int | None = None) -> Connection:
    """:func:`connect` on a worker thread."""
    return await asyncio.to_thread(connect, url, ddl, busy_timeout_ms)


def is_open(conn: Connection) -> bool:
    # Another process's (a fork in C skips ``_after_fork_in_child``): never used in this one.
    return not conn.shardid_closed and conn.shardid_pid == os.getpid()


def close(conn: Connection) -> None:
    """Closes ``conn`` once no step runs on it (one inherited across fork() is left alone)."""
    if conn.shardid_pid != os.getpid() or any(conn is inherited for inherited in _inherited):
        return
    with conn.shardid_lock:
        conn.shardid_closed = True
        try:
            conn.close()
        except Exception:  # noqa: BLE001, S110 - closing is all that is left to do
            pass


async def aclose(conn: Connection) -> None:
    await asyncio.to_thread(close, conn)


def run(step: Callable[..., T], conn: Connection, *args: Any) -> T:
    """``step(conn, *args)`` alone on ``conn``."""
    with conn.shardid_lock:
        if conn.shardid_closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        return step(conn, *args)


async def arun(step: Callable[..., T], conn: Connection, *args: Any) -> T:
    """:func:`run` on a worker thread."""
    return await asyncio.to_thread(run, step, conn, *args)


def rows(conn: Connection, sql: str, params: Sequence[Any]) -> list[Any]:
    """Every row of one statement; its errors as :func:`translate` says."""
    try:
        return conn.execute(sql, tuple(params)).fetchall()
    except sqlite3.Error as e:
        translated = translate(e, getattr(conn, "shardid_file", "the database file"))
        if translated is e:
            raise
        raise translated from e


def one(conn: Connection, sql: str, params: Sequence[Any]) -> Any:
    """The first row of one statement, or ``None``."""
    found = rows(conn, sql, params)
    return found[0] if found else None


def _chunks(items: Sequence[T]) -> list[Sequence[T]]:
    return [items[i : i + _SQLITE_MAX_LIST] for i in range(0, len(items), _SQLITE_MAX_LIST)] or [items]


class Segments:
    """The steps of dense IDs and serial numbers in one schema (``main``, or an attached
    database): a take, giving back, creating a tag, registering and taking serials."""

    def __init__(self, schema: str) -> None:
        self.sql = sql = _SqliteSql(schema)
        self.ddl = sql.segments_ddl()
        self._take, self._read, self._give_back, self._create_tag = sql.take(), sql.read(), sql.give_back(), sql.create_tag()
        self._info = sql.serial_info()

    def take(self, conn: Connection, tag: str, size: int) -> tuple[int, int, int]:
        """One segment of ``tag``: ``(first, count, stride)``, by the core's steps
        (``SqliteTake``): the take; no row, the read that says why (an unknown tag, an
        exhausted one), or that the tag was created meanwhile: the take again."""
        steps = _SqliteTake(size)
        while True:
            sql, params = (self._read, (tag,)) if steps.reading else (self._take, (size, tag))
            row = one(conn, sql, params)
            segment, problem = steps.answer(None if row is None else tuple(row))
            if problem is not None:
                sqlstate, words = problem
                raise StatementError(sqlstate, f"no segment of tag {tag!r}: {words}")
            if segment is not None:
                return segment

    def give_back(self, conn: Connection, tag: str, first: int, end: int) -> bool:
        return one(conn, self._give_back, (first, end, tag)) is not None

    def create_tag(self, conn: Connection, tag: str, first: int = 1) -> bool:
        """Creates ``tag`` (its first number ``first``) if it does not exist; whether it did."""
        return one(conn, self._create_tag, (tag, first)) is not None

    # -- serial numbers ------------------------------------------------------------------

    def serial_info(self, conn: Connection, tag: str) -> tuple[str, str, int, str]:
        """``(canonical, zone, max_gap, reset)`` of a registered serial tag, or ``UNKNOWN_TAG``."""
        row = one(conn, self._info, (tag,))
        if row is None:
            raise StatementError(_UNKNOWN_TAG_SQLSTATE, f"no serial tag {tag!r}")
        return tuple(row)  # type: ignore[return-value]

    def register(self, conn: Connection, tag: str, format: str, zone: str, registration: Any, max_gap: int) -> str | None:
        """Registers a serial tag (once); the reason of ``SERIAL_MISMATCH`` when the tag is
        registered otherwise or another tag prints this format, else ``None``."""
        canonical, shape, pieces, width, reset = registration
        try:
            one(
                conn,
                self.sql.serial_create(len(pieces)),
                (tag, format, zone, canonical, shape, *pieces, width, reset, max_gap),
            )
        except sqlite3.IntegrityError as e:
            if "shardid_serials.shape" not in str(e):
                raise
            return "would print the serials of another tag: give each tag a format of its own"
        known_canonical, known_zone, known_gap, _ = self.serial_info(conn, tag)
        if (known_canonical, known_zone, known_gap) != (canonical, zone, max_gap):
            return f"is registered with format {known_canonical} in {known_zone}, max_gap {known_gap}"
        return None

    def take_period(self, conn: Connection, tag: str, period: str, size: int) -> tuple[int, int, int]:
        """A segment of ``tag``'s numbers in ``period``: the period's first take, where its tag
        does not exist yet, makes it (from 1) if the period fits the registration, and takes
        again (the core's order: ``take_period`` of ``shardid::serial``'s driver)."""
        period_tag = _sqlite_period_tag(tag, period)
        for first_take in (True, False):
            try:
                return self.take(conn, period_tag, size)
            except StatementError as e:
                if e.sqlstate != _UNKNOWN_TAG_SQLSTATE or not first_take:
                    raise
            reset = self.serial_info(conn, tag)[3]
            if not _sqlite_period_fits(reset, period):
                reason = f"is not a period of a tag that resets every {reset}"
                raise InvalidArgumentError(f"period {period!r} {reason}", argument="period", reason=reason)
            self.create_tag(conn, period_tag, 1)
        raise AssertionError("not reached: the second take returns or raises")


class Dictionary:
    """The dictionary's steps for one topic in one schema, in the core's order (see
    ``shardid::sql::sqlite``'s dictionary): lookups in autocommit, then the strings still missing
    numbered under ``BEGIN IMMEDIATE``."""

    def __init__(self, schema: str, topic: str) -> None:
        self.sql = _SqliteSql(schema)
        self.ddl = self.sql.dictionary_ddl()
        self.schema = schema
        self.topic = topic

    def _unknown(self) -> StatementError:
        return StatementError(_UNKNOWN_TOPIC_SQLSTATE, f"no topic {self.topic!r}")

    def _dropped(self) -> StatementError:
        return StatementError(_TOPIC_DROPPED_SQLSTATE, f"topic {self.topic!r} was dropped")

    def lookup(self, conn: Connection, values: Sequence[str]) -> list[int | None]:
        found: dict[str, int] = {}
        for chunk in _chunks(values):
            got = rows(conn, self.sql.find(len(chunk)), (self.topic, *chunk))
            if not got:
                raise self._unknown()
            found.update((value, id) for _, _, value, id in got if value is not None)
        return [found.get(v) for v in values]

    def ids(self, conn: Connection, values: Sequence[str]) -> list[int]:
        answers = self.lookup(conn, values)
        if None not in answers:
            return answers  # type: ignore[return-value]
        missing = list(dict.fromkeys(v for v, a in zip(values, answers) if a is None))
        assigned = self._assign(conn, missing)
        return [a if a is not None else assigned[v] for v, a in zip(values, answers)]

    def _assign(self, conn: Connection, missing: list[str]) -> dict[str, int]:
        """IDs for ``missing`` (distinct): the core's writer (``SqliteAssign``: ``BEGIN
        IMMEDIATE``, the re-check under the write lock, the numbering, the inserts, the guarded
        advance, the commit; on any error, an interruption too, the rollback: no number lost,
        none given twice), each step sent as it says. Inside a transaction the caller holds
        (Django's ``atomic()``, where ``BEGIN IMMEDIATE`` is refused) a savepoint of it: the
        caller's commit or rollback decides."""
        tx = _SqliteAssign(self.schema, self.topic, missing, conn.in_transaction)
        error: Exception | None = None
        try:
            while True:
                step = tx.next()
                if step[0] == "assigned":
                    return dict(zip(missing, step[1]))
                if step[0] == "failed":
                    if step[1] == "unknown_topic":
                        raise self._unknown()
                    if step[1] == "topic_dropped":
                        raise self._dropped()
                    if error is not None:
                        raise error
                    raise StatementError("XX000", f"the row of topic {self.topic!r} moved under the write lock")
                try:
                    found = rows(conn, step[1], step[2])
                except Exception as e:  # noqa: BLE001 - rolled back by the next steps, then raised
                    error = error or e  # the first: a rollback's own error would hide it
                    tx.failed()
                    continue
                tx.answer(found)
        except Exception:
            raise  # the protocol's failures: rolled back already
        except BaseException:
            # Interrupted (KeyboardInterrupt, SystemExit) anywhere between two statements: left
            # rolled back, not inside the transaction holding the write lock.
            tx.interrupted()
            while (step := tx.next())[0] == "run":
                try:
                    rows(conn, step[1], step[2])
                except Exception:  # noqa: BLE001 - no transaction left: SQLite rolled it back
                    tx.failed()
                    continue
                tx.answer([])
            raise

    def values(self, conn: Connection, ids: Sequence[int]) -> list[str | None]:
        found: dict[int, str] = {}
        for chunk in _chunks(ids):
            got = rows(conn, self.sql.find_values(len(chunk)), (self.topic, *chunk))
            if not got:
                raise self._unknown()
            found.update((id, value) for _, id, value in got if id is not None)
        return [found.get(i) for i in ids]

    def create(self, conn: Connection) -> None:
        one(conn, self.sql.create_topic(), (self.topic,))
        state = one(conn, self.sql.state(), (self.topic,))
        if state is None:
            raise self._unknown()
        if state[0]:
            raise self._dropped()

    def drop(self, conn: Connection) -> None:
        if one(conn, self.sql.drop_topic(), (self.topic,)) is None:
            raise self._unknown()
