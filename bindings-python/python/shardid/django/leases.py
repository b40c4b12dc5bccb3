"""The process-wide generator of ``settings.SHARDID``, and the database connections this
process holds for it and for dense IDs.

With no ``shard`` set, each process leases a shard of its own the first time it makes an ID:
on PostgreSQL, MySQL and MariaDB an expiring lease (:mod:`shardid.postgres`,
:mod:`shardid.mysql`) kept in the table ``shardid_leases`` of the database ``lease["using"]``
(``"default"``), over a connection of its own made with Django's settings for that alias and
Django's driver (psycopg 3 or psycopg2; mysqlclient, or PyMySQL installed as ``MySQLdb``),
which holds behind a transaction pooler, a proxy and on a Galera cluster; on SQLite, lock files
next to the database file. A
lease that is lost (the database was unreachable for longer than its time to live) is replaced
by a new one at the next ID.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.exceptions import ImproperlyConfigured

from shardid import Generator, Layout, LeasedGenerator, lease
from shardid.django.conf import config_problems, default_shards, layout_from, lease_shards, setting

__all__ = ["dense_id", "get_generator", "next_id", "release"]

_lock = threading.Lock()

_T = TypeVar("_T")


def unknown_tag(tag: str, create: str) -> Exception:
    """``UNKNOWN_TAG`` for ``tag`` as a Django project meets it: naming the migration operation
    that creates it (``create``), where the core's clients name their own call (``create_tag``,
    ``create_serial``), which a project following the book never calls."""
    from shardid._shardid import _error

    return _error("UNKNOWN_TAG", tag=tag, create=f"{create} in a migration")  # type: ignore[no-any-return]


def install_segments_call(schema: str, tag: str) -> str:
    """The operation that creates the tag of dense IDs ``tag`` in ``schema``, as written in a
    migration (the schema's DDL is installed again with it, harmlessly)."""
    return f'InstallSegments(schema="{schema}", tags=["{tag}"])'


def per_process(cache: dict[Any, _T], key: Any, make: Callable[[], _T]) -> _T:
    """``cache[key]``, made by ``make()`` the first time it is asked for: once per process,
    however many threads ask at once (a process keeps one client per alias, schema and name).
    ``make()`` runs under the module's lock and must not take it."""
    found = cache.get(key)
    if found is None:
        with _lock:
            found = cache.get(key)
            if found is None:
                found = cache[key] = make()
    return found


_generator: Any = None
# (database alias, close) of the connections this process holds for leases.
_closers: list[tuple[str, Any]] = []
# Dense IDs from segments (shardid.segments), one allocator per (database alias, schema, tag)
# in each process.
_dense: dict[tuple[str, str, str], Any] = {}

# The libpq parameters Django's PostgreSQL backend passes that a conninfo string can carry.
_CONNINFO_KEYS = {
    "dbname", "user", "password", "host", "port", "sslmode", "sslrootcert", "sslcert", "sslkey",
    "sslpassword", "connect_timeout", "application_name", "options", "service", "passfile",
    "target_session_attrs",
}  # fmt: skip


def _database_vendors() -> dict[str, str]:
    from django.db import connections

    return {alias: connections[alias].vendor for alias in connections}


def _sqlite_lease_directory(settings_dict: dict[str, Any]) -> str:
    """Lock files for a SQLite database: ``<file>-shardid`` beside it (as SQLite keeps its own
    ``-wal`` and ``-journal``); a database in memory belongs to one process, which gets a
    directory of its own user's."""
    import tempfile

    name = str(settings_dict.get("NAME") or "")
    if not name or name == ":memory:" or "mode=memory" in name or name.startswith("file:"):
        return os.path.join(tempfile.gettempdir(), f"shardid-sqlite-memory-{os.getuid() if hasattr(os, 'getuid') else 0}")
    return f"{name}-shardid"


def _conninfo(using: str) -> str:
    """A libpq connection string made from Django's settings for the database ``using``
    (whichever driver Django uses: psycopg 3 or psycopg2)."""
    from django.db import connections

    from shardid._db import conninfo

    params = connections[using].get_connection_params()
    return conninfo({k: v for k, v in params.items() if k in _CONNINFO_KEYS and v not in (None, "")})


def _connect(using: str) -> Any:
    """A new autocommit connection of the project's own driver (psycopg 3 or psycopg2) to the
    database ``using``, with Django's settings for it (``OPTIONS`` included; never from its
    connection pool): the lease keeps it for itself."""
    from django.db import connections

    connection = connections[using]
    conn = connection.Database.connect(**connection.get_connection_params())
    if hasattr(conn, "prepare_threshold"):
        conn.prepare_threshold = None  # no server-side prepared statements behind a pooler
    conn.autocommit = True
    return conn


def _connect_mysql(using: str) -> Any:
    """A new autocommit connection of Django's MySQL driver (mysqlclient, or PyMySQL installed
    as ``MySQLdb``) to the database ``using``, with Django's settings for it: the lease keeps it
    for itself. (``autocommit`` is a method of theirs, where psycopg's is an attribute.)"""
    from django.db import connections

    connection = connections[using]
    conn = connection.Database.connect(**connection.get_connection_params())
    conn.autocommit(True)
    return conn


def _mysql_url(using: str) -> str:
    """A ``mysql://`` URL made from Django's settings for the MySQL database ``using`` (what
    :class:`shardid.segments.DenseIds` connects to, over PyMySQL), its parts percent-encoded."""
    from urllib.parse import quote

    from django.db import connections

    params = connections[using].get_connection_params()
    if "unix_socket" in params:
        raise ImproperlyConfigured(
            f"DATABASES[{using!r}]: dense IDs on MySQL connect over TCP (HOST and PORT), not the socket {params['unix_socket']}"
        )
    auth = quote(str(params.get("user", "")), safe="")
    if params.get("password"):
        auth += ":" + quote(str(params["password"]), safe="")
    host = params.get("host") or "127.0.0.1"
    host = f"[{host}]" if ":" in host else host
    return f"mysql://{auth}@{host}:{params.get('port') or 3306}/{quote(str(params.get('database', '')), safe='')}"


def _database_lease(layout: Layout, using: str, spec: dict[str, Any], shards: range, options: dict[str, Any]) -> Any:
    from django.db import connections

    connection = connections[using]
    if connection.vendor == "sqlite":
        return lease(layout, _sqlite_lease_directory(connection.settings_dict), shards, **options)
    from shardid import mysql, postgres
    from shardid.postgres import DEFAULT_TTL_MS

    database_lease: Any = postgres.lease
    connect = functools.partial(_connect, using)
    if connection.vendor == "mysql":
        database_lease, connect = mysql.lease, functools.partial(_connect_mysql, using)
    generator = database_lease(
        layout, None, shards, connect=connect, retake=True,
        kind=spec.get("kind", "expiring"), ttl_ms=spec.get("ttl_ms", DEFAULT_TTL_MS),
        schema=spec.get("schema"), **options,
    )  # fmt: skip
    _closers.append((using, generator.close))
    return generator


def get_generator() -> Generator | LeasedGenerator:
    """The process-wide generator configured by ``settings.SHARDID``, made on first use: with no
    ``shard``, the process leases its own (through the database, unless ``lease`` names a
    directory)."""
    global _generator
    generator = _generator
    if generator is not None:
        return generator  # type: ignore[no-any-return]
    with _lock:
        if _generator is None:
            config: Any = setting() or {}
            problems = config_problems(config, _database_vendors())
            if problems:
                key, problem, fix = problems[0]
                raise ImproperlyConfigured(f"settings.{key} {problem} ({fix})")
            layout = layout_from(config.get("layout", "instagram"))
            options = {k: v for k, v in config.items() if k not in ("layout", "shard", "lease")}
            if "shard" in config:
                _generator = Generator(layout=layout, shard=config["shard"], **options)
            else:
                spec = config.get("lease", {})
                shards = lease_shards(spec.get("shards")) or default_shards(layout)
                if "directory" in spec:
                    _generator = lease(layout, spec["directory"], shards, **options)
                else:
                    _generator = _database_lease(layout, spec.get("using", "default"), spec, shards, options)
        return _generator  # type: ignore[no-any-return]


def release(using: str | None = None) -> None:
    """Closes the connections this process holds to the database ``using`` (all when
    ``None``) for its shard lease and dense IDs: their shards and unused numbers go back, and
    the next ID takes new ones. Django's test runner calls it before it drops a test database
    (which PostgreSQL refuses while a session is connected)."""
    global _generator
    with _lock:
        for alias, close in [c for c in _closers if using in (None, c[0])]:
            close()
            _closers.remove((alias, close))
            if _generator is not None and getattr(close, "__self__", None) is _generator:
                _generator = None
        for key in [k for k in _dense if using in (None, k[0])]:
            _dense.pop(key).close()


def next_id() -> int:
    """A new ID from the process-wide generator: the default of
    :class:`~shardid.django.ShardIdField`."""
    return get_generator().next_id()


def _sqlite_url(using: str) -> str:
    """The ``sqlite:///`` URL of the file of Django's SQLite database ``using``, which the
    allocators open connections of their own to (as they do on PostgreSQL); ``UNSUPPORTED`` for
    an in-memory database (Django's test database unless ``TEST["NAME"]`` names a file), which
    no other connection can share."""
    import os

    from django.db import connections

    from shardid._shardid import _error

    connection = connections[using]
    if connection.is_in_memory_db():
        reason = (
            f"dense IDs and serials outside transaction.atomic() on the in-memory SQLite database {using!r}: "
            f"give it a file (DATABASES[{using!r}]['TEST']['NAME'] = 'test.sqlite3' for the test database)"
        )
        raise _error("UNSUPPORTED", reason=reason)
    return f"sqlite:///{os.path.abspath(str(connection.settings_dict['NAME']))}"


def _where(using: str, schema: str) -> tuple[str, str]:
    """The URL or connection string of Django's database ``using`` for an allocator's own
    connection, and the schema there (``main`` on SQLite: the file itself)."""
    from django.db import connections

    vendor = connections[using].vendor
    if vendor == "mysql":
        return _mysql_url(using), schema
    if vendor == "sqlite":
        return _sqlite_url(using), "main"
    return _conninfo(using), schema


def _check_installed(using: str, schema: str, *, serials: bool) -> None:
    """Before the first allocator of a (database, schema) in this process: ``DATABASE`` naming
    the migration operation that is missing (InstallSegments), rather than the driver's
    ``schema "seg" does not exist`` after the allocator's wait."""
    from shardid._shardid import _error
    from shardid.django.operations import segments_missing

    problem = segments_missing(using, schema, serials=serials)
    if problem is not None:
        raise _error("DATABASE", reason=problem)


# Whether each database alias is Django's SQLite backend, read once (an alias's engine does not
# change while the process runs): PostgreSQL and MySQL pay one dictionary lookup for the check.
_on_sqlite: dict[str, bool] = {}
# (alias, schema, serials) whose tables were found, for numbers taken in Django's transaction.
_installed: set[tuple[str, str, bool]] = set()
_sqlite_steps: Any = None


def _sqlite_transaction(using: str) -> Any:
    """Django's connection ``using`` when it is SQLite and inside ``transaction.atomic()`` (or a
    transaction of ``set_autocommit(False)``), else ``None``. SQLite has one writer per file: a
    transaction holding the write lock would wait for a segment the allocator takes on its own
    connection (which waits for the transaction), and a deferred one that has read would fail
    at its first write after that connection's commit. So inside a transaction the number is
    taken on Django's connection, in it."""
    on_sqlite = _on_sqlite.get(using)
    if on_sqlite is False:
        return None
    from django.db import connections

    connection = connections[using]
    if on_sqlite is None:
        on_sqlite = _on_sqlite[using] = connection.vendor == "sqlite"
    if not on_sqlite:
        return None
    # atomic(), or a transaction of set_autocommit(False) (an open connection that is not in
    # autocommit; before it opens, Django's attribute reads False).
    if connection.in_atomic_block or (connection.connection is not None and not connection.autocommit):
        return connection
    return None


def _take_in_transaction(connection: Any, using: str, schema: str, tag: str, *, serials: bool, step: Any, create: str = "") -> Any:
    """``step(conn, steps)`` with ``conn`` Django's own sqlite3 connection (inside the caller's
    transaction) and ``steps`` the core's SQLite statements (``shardid._sqlite.Segments``):
    ``DATABASE`` when the migration that makes the tables has not run, ``UNKNOWN_TAG`` for a tag
    that does not exist, ``SEGMENT_UNAVAILABLE`` for one the database refuses (exhausted),
    SQLite's errors as Django's (``OperationalError: database is locked``, as the transaction's
    own statements report them)."""
    global _sqlite_steps
    from shardid import _sqlite
    from shardid._errors import SegmentUnavailableError
    from shardid._shardid import _UNKNOWN_TAG_SQLSTATE

    if (using, schema, serials) not in _installed:
        _check_installed(using, schema, serials=serials)
        _installed.add((using, schema, serials))
    if _sqlite_steps is None:
        _sqlite_steps = _sqlite.Segments("main")  # Django's connection attaches no other database
    # As Django's own cursors: no statement in a transaction an error has broken (the atomic()
    # block must end first: TransactionManagementError).
    connection.validate_no_broken_transaction()
    try:
        with connection.wrap_database_errors:
            return step(connection.connection, _sqlite_steps)
    except _sqlite.StatementError as e:
        if e.sqlstate == _UNKNOWN_TAG_SQLSTATE:
            raise unknown_tag(tag, create or install_segments_call(schema, tag)) from e
        reason = f"the take in the transaction failed: {e}"
        raise SegmentUnavailableError(f"no segment of tag {tag} is available: {reason}", tag=tag, reason=reason) from e


def dense_id(tag: str, schema: str = "seg", using: str = "default") -> int:
    """The next dense ID of ``tag``, from segments of the database ``using`` (its own
    connection, made from Django's settings for that alias; on MySQL over PyMySQL, on SQLite
    to the database file): the default of
    :class:`~shardid.django.DenseIdField`.

    On SQLite inside ``transaction.atomic()`` (``ATOMIC_REQUESTS`` included) the number is
    taken on Django's connection, in the caller's transaction: one take of one number (the
    core's statement), which waits for no other connection and is committed with the
    transaction. A rollback gives the number back, so the next transaction takes it again: an
    object made inside a transaction that rolled back must not be saved later with its old
    number (with ``unique=True`` such a save fails with ``IntegrityError``, never a silent
    duplicate). Outside a transaction the segments of the process's allocator are used."""
    connection = _sqlite_transaction(using)
    if connection is not None:

        def take(conn: Any, steps: Any) -> int:
            return steps.take(conn, tag, 1)[0]  # type: ignore[no-any-return]

        return _take_in_transaction(connection, using, schema, tag, serials=False, step=take)  # type: ignore[no-any-return]

    def make() -> Any:
        from shardid.segments import DenseIds

        _check_installed(using, schema, serials=False)
        where, there = _where(using, schema)
        return DenseIds(where, tag, schema=there)

    from shardid._errors import UnknownTagError

    try:
        return per_process(_dense, (using, schema, tag), make).next_id()  # type: ignore[no-any-return]
    except UnknownTagError as e:
        raise unknown_tag(tag, install_segments_call(schema, tag)) from e


def release_before_dropping_test_databases() -> None:
    """Django's test runner (and pytest-django) drop each test database at the end; PostgreSQL
    refuses while a session is connected, and a lease or dense-ID allocator holds one. Django
    has no signal for it, so the one method both runners call releases them first."""
    from django.db.backends.base.creation import BaseDatabaseCreation

    original = BaseDatabaseCreation.destroy_test_db
    if getattr(original, "_shardid_releases", False):
        return

    @functools.wraps(original)
    def destroy_test_db(self: Any, *args: Any, **kwargs: Any) -> Any:
        release(self.connection.alias)
        return original(self, *args, **kwargs)

    destroy_test_db._shardid_releases = True  # type: ignore[attr-defined]
    BaseDatabaseCreation.destroy_test_db = destroy_test_db  # type: ignore[method-assign]
