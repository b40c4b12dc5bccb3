"""One rule per database (issue 41): whether a driver's error lost the connection, and whether it
says the server cannot be reached, is the database's rule, read alike by every system's dialect
object (dense IDs and serials, the dictionary, leases), blocking and asyncio. Before, the
leases' MySQL rule (any client error number, by the classes' names) and the dense IDs' (a list
of five numbers, PyMySQL's classes only) disagreed: a refused connection (2002) or a
mysqlclient or Django error was lost for one and not for the other."""

from __future__ import annotations

import sqlite3

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
    ("name", "cases"), [("Mysql", MYSQL), ("Postgres", POSTGRES), ("Sqlite", sqlite_cases())], ids=["mysql", "postgres", "sqlite"]
)
def test_every_systems_dialect_reads_an_error_as_its_database_does(name: str, cases: list) -> None:
    for cls in dialects(name):
        seen = [(cls.lost(e), cls.unreachable(e)) for e, _, _ in cases]
        assert seen == [(lost, unreachable) for _, lost, unreachable in cases], cls


@pytest.mark.parametrize(
    ("name", "cases"), [("Mysql", MYSQL), ("Postgres", POSTGRES), ("Sqlite", sqlite_cases())], ids=["mysql", "postgres", "sqlite"]
)
def test_every_systems_dialect_gives_up_a_connection_that_is_lost_or_could_not_be_opened(name: str, cases: list) -> None:
    """The drivers' one rule for dropping a connection (and opening another next time): lost
    by the database's rule, or never opened (DATABASE_UNREACHABLE, NOT_MYSQL)."""
    not_mysql = NotMysqlError("the server did not greet as MySQL", server="127.0.0.1:1", reason="no greeting")
    for cls in dialects(name):
        seen = [cls.gives_up(e) for e, _, _ in cases]
        assert seen == [lost or isinstance(e, DatabaseUnreachableError) for e, lost, _ in cases], cls
        assert cls.gives_up(not_mysql), cls
