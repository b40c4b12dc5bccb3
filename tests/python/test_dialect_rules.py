"""One rule per database (issue 41): whether a driver's error lost the connection, and whether it
says the server cannot be reached, is the database's rule, read alike by every system's dialect
object (dense IDs and serials, the dictionary, leases), blocking and asyncio. Before, the
leases' MySQL rule (any client error number, by the classes' names) and the dense IDs' (a list
of five numbers, PyMySQL's classes only) disagreed: a refused connection (2002) or a
mysqlclient or Django error was lost for one and not for the other."""

from __future__ import annotations

import sqlite3

import asyncpg
import psycopg
import pymysql
import pytest

from shardid import (
    _dictionary_async,
    _dictionary_generated,
    _lease_async,
    _lease_generated,
    _segments_async,
    _segments_generated,
)
from shardid._errors import DatabaseUnreachableError, NotMysqlError

MODULES = [_segments_async, _segments_generated, _dictionary_async, _dictionary_generated, _lease_async, _lease_generated]


def dialects(name: str) -> list[type]:
    """The dialect class ``name`` of every system, asyncio and blocking."""
    return [getattr(m, f"_Async{name}" if m.__name__.endswith("_async") else f"_{name}") for m in MODULES]


class OperationalError(Exception):
    """mysqlclient's and Django's errors carry the same class names as PyMySQL's."""


class InterfaceError(Exception):
    pass


def unreachable_error() -> DatabaseUnreachableError:
    return DatabaseUnreachableError("the database cannot be reached: refused", reason="refused")


# (error, lost, unreachable)
MYSQL = [
    (pymysql.err.OperationalError(2006, "MySQL server has gone away"), True, True),
    (pymysql.err.OperationalError(2013, "Lost connection to MySQL server during query"), True, True),
    (pymysql.err.OperationalError(2002, "Can't connect to local MySQL server"), True, True),
    (pymysql.err.OperationalError(2003, "Can't connect to MySQL server"), True, True),
    (pymysql.err.InterfaceError(0, ""), True, True),
    (OperationalError(2006, "MySQL server has gone away"), True, True),
    (InterfaceError("(0, '')"), True, True),
    (pymysql.err.OperationalError(1213, "Deadlock found when trying to get lock"), False, False),
    (pymysql.err.OperationalError(1205, "Lock wait timeout exceeded"), False, False),
    (pymysql.err.ProgrammingError(1146, "Table 'seg.shardid_tags' doesn't exist"), False, False),
    (unreachable_error(), False, True),
]

POSTGRES = [
    (psycopg.OperationalError("connection to server at 127.0.0.1 failed: Connection refused"), True, True),
    (psycopg.InterfaceError("the connection is closed"), True, True),
    (psycopg.errors.AdminShutdown("terminating connection due to administrator command"), True, True),
    (psycopg.errors.UndefinedTable('relation "seg.shardid_tags" does not exist'), False, False),
    (psycopg.errors.UniqueViolation("duplicate key value violates unique constraint"), False, False),
    (unreachable_error(), False, True),
]

# asyncpg (issue 56): no DB-API classes; its errors read by their SQLSTATE and the socket's own.
POSTGRES_ASYNCPG = [
    (ConnectionRefusedError(111, "Connection refused"), True, True),
    (TimeoutError(), True, True),
    (asyncpg.exceptions.InterfaceError("connection is closed"), True, True),
    (asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed in the middle of operation"), True, True),
    (asyncpg.exceptions.AdminShutdownError("terminating connection due to administrator command"), True, True),
    (asyncpg.exceptions.InvalidCatalogNameError('database "nosuch" does not exist'), False, True),
    (asyncpg.exceptions.InvalidPasswordError('password authentication failed for user "u"'), False, True),
    (asyncpg.exceptions.UndefinedTableError('relation "seg.shardid_tags" does not exist'), False, False),
    (asyncpg.exceptions.UniqueViolationError("duplicate key value violates unique constraint"), False, False),
    (asyncpg.exceptions.RaiseError("unknown topic"), False, False),
    (unreachable_error(), False, True),
]


def sqlite_error(run: object) -> BaseException:
    try:
        run()  # type: ignore[operator]
    except sqlite3.Error as e:
        return e
    raise AssertionError("no error")


def sqlite_cases() -> list:
    # Errors the driver raised (SQLite's own result codes): the file could not be opened (the
    # driver's error, translated to DATABASE_UNREACHABLE by shardid._sqlite, which is what
    # the drivers then see), a missing table, a constraint, a closed connection.
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (a UNIQUE)")
    db.execute("INSERT INTO t VALUES (1)")
    closed = sqlite3.connect(":memory:")
    closed.close()
    return [
        (sqlite_error(lambda: sqlite3.connect("/nonexistent/dir/x.db")), False, False),
        (sqlite_error(lambda: db.execute("SELECT * FROM missing")), False, False),
        (sqlite_error(lambda: db.execute("INSERT INTO t VALUES (1)")), False, False),
        (sqlite_error(lambda: closed.execute("SELECT 1")), True, False),
        (unreachable_error(), True, True),
    ]


@pytest.mark.parametrize(
    ("name", "cases"),
    [("Mysql", MYSQL), ("Postgres", POSTGRES), ("Postgres", POSTGRES_ASYNCPG), ("Sqlite", sqlite_cases())],
    ids=["mysql", "postgres", "postgres-asyncpg", "sqlite"],
)
def test_every_systems_dialect_reads_an_error_as_its_database_does(name: str, cases: list) -> None:
    for cls in dialects(name):
        seen = [(cls.lost(e), cls.unreachable(e)) for e, _, _ in cases]
        assert seen == [(lost, unreachable) for _, lost, unreachable in cases], cls


@pytest.mark.parametrize(
    ("name", "cases"),
    [("Mysql", MYSQL), ("Postgres", POSTGRES), ("Postgres", POSTGRES_ASYNCPG), ("Sqlite", sqlite_cases())],
    ids=["mysql", "postgres", "postgres-asyncpg", "sqlite"],
)
def test_every_systems_dialect_gives_up_a_connection_that_is_lost_or_could_not_be_opened(name: str, cases: list) -> None:
    """The drivers' one rule for dropping a connection (and opening another next time): lost
    by the database's rule, or never opened (DATABASE_UNREACHABLE, NOT_MYSQL)."""
    not_mysql = NotMysqlError("the server did not greet as MySQL", server="127.0.0.1:1", reason="no greeting")
    for cls in dialects(name):
        seen = [cls.gives_up(e) for e, _, _ in cases]
        assert seen == [lost or isinstance(e, DatabaseUnreachableError) for e, lost, _ in cases], cls
        assert cls.gives_up(not_mysql), cls


class _Cursor:
    """A cursor of a connection whose server answers the detecting statement, or refuses it."""

    def __init__(self, refusal: BaseException | None, sent: list[str]) -> None:
        self.refusal, self.sent = refusal, sent

    def execute(self, sql: str) -> None:
        self.sent.append(sql)
        if self.refusal is not None:
            raise self.refusal

    def __enter__(self) -> _Cursor:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class _AsyncCursor(_Cursor):
    async def execute(self, sql: str) -> None:  # type: ignore[override]
        super().execute(sql)

    async def __aenter__(self) -> _AsyncCursor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        pass


# (the server's answer to the detecting statement, the dialect: or the error raised as it is)
DETECTED = [
    (None, "mariadb"),
    (pymysql.err.OperationalError(1193, "Unknown system variable 'wsrep_on'"), "mysql"),
    (OperationalError(1193, "Unknown system variable 'wsrep_on'"), "mysql"),  # mysqlclient, Django
    (pymysql.err.OperationalError(1045, "Access denied"), None),
    (pymysql.err.OperationalError(2013, "Lost connection to MySQL server during query"), None),
    (InterfaceError("(0, '')"), None),
    (OperationalError(2**70, "a number no server sends"), None),
]


@pytest.mark.parametrize(("refusal", "dialect"), DETECTED, ids=[str(d) if r is None else f"{r.args[0]}" for r, d in DETECTED])
def test_mysql_dialect_is_detected_by_the_cores_statement_and_rule_blocking_and_asyncio(refusal: BaseException | None, dialect: str | None) -> None:
    """Python asks the core's statement and rule (shardid::sql::mysql::DETECT_DIALECT,
    Dialect::detected), as Node and Rust do: MariaDB answers, MySQL refuses with 1193, and any
    other error is the driver's own, raised as it is."""
    import asyncio

    from shardid import _mysql
    from shardid._shardid import _MYSQL_DETECT_DIALECT

    sent: list[str] = []
    blocking = type("Conn", (), {"cursor": lambda self: _Cursor(refusal, sent)})()
    asynchronous = type("AConn", (), {"cursor": lambda self: _AsyncCursor(refusal, sent)})()
    for detect in (lambda: _mysql.detect(blocking), lambda: asyncio.run(_mysql.detect_async(asynchronous))):
        if dialect is None:
            with pytest.raises(type(refusal)) as raised:
                detect()
            assert raised.value is refusal
        else:
            assert detect() == dialect
    assert sent == [_MYSQL_DETECT_DIALECT] * 2
    assert _MYSQL_DETECT_DIALECT == "SELECT @@global.wsrep_on"
