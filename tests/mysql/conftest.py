"""Fixtures for the MySQL family's tests: one throwaway MariaDB for the session, PyMySQL
connections to it, and the DDL installed the way a driver does (the core's statements one at a
time)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

from shardid.sql import mysql_statements

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "postgres"))
# tests/python's django_server (gunicorn for the Django test), after both: its conftest is not this one.
sys.path.append(str(Path(__file__).resolve().parents[1] / "python"))
from server import Server  # noqa: E402


# The long poles, run first (as tests/postgres/conftest.py does): run.sh's two workers
# (--dist worksteal) each start with half of the collected order and an idle one takes half of what
# the other still has queued, from its end; a long test started last would keep one worker busy
# after the other ran out. Seconds in CI (--durations of the clean-clone runs of 2026-12-07). A
# module is moved whole (Galera's cluster is module-scoped: split, it would start twice); a
# renamed or removed entry only stops being moved. The rest keep their order.
LONG_POLES = {
    "test_galera.py": 28,  # the cluster's start (14 s) and the test that kills a node (14 s)
    "test_django_mysql.py::test_gunicorn_workers_on_mariadb_with_a_worker_killed": 22,
    "test_dump_restore.py::test_a_mysqldump_restored_into_a_fresh_server_hands_nothing_out_twice": 8,
}


@pytest.hookimpl(trylast=True)  # after pytest's own reordering by fixture scope
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def seconds(item: pytest.Item) -> int:
        function = getattr(item, "originalname", item.name)
        return LONG_POLES.get(f"{item.path.name}::{function}", LONG_POLES.get(item.path.name, 0))

    items.sort(key=seconds, reverse=True)  # stable: the rest keep their order


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    with Server() as s:
        yield s


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A server that is not MySQL: a PostgreSQL cluster (tests/postgres/cluster.py), which waits
    for its client to speak first. Started once, at the first test that takes it, and shared:
    the tests only connect to its port (a cluster each cost about 4 s of a CI run, five times)."""
    from cluster import Cluster

    with Cluster() as c:
        yield c


def open_conn(server: Server, **kw: Any) -> Any:
    kw.setdefault("autocommit", True)
    return pymysql.connect(host="127.0.0.1", port=server.port, user="root", **kw)


@pytest.fixture
def connect(server: Server) -> Iterator[Any]:
    """Opens autocommit connections to the server, closed after the test."""
    opened: list[Any] = []

    def open_one(**kw: Any) -> Any:
        conn = open_conn(server, **kw)
        opened.append(conn)
        return conn

    yield open_one
    for conn in opened:
        try:
            conn.close()
        except Exception:  # noqa: BLE001, S110 - the server restarted under it
            pass


@pytest.fixture
def conn(connect: Any) -> Any:
    return connect()


def install(conn: Any, script: str) -> None:
    """Sends a script's statements one at a time, as a driver does."""
    with conn.cursor() as cur:
        for statement in mysql_statements(script):
            cur.execute(statement)


def one(conn: Any, sql: str, *params: Any) -> Any:
    with conn.cursor() as cur:
        cur.execute(sql, params or None)
        row = cur.fetchone()
    assert row is not None, sql
    return row[0]


def rows(conn: Any, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with conn.cursor() as cur:
        cur.execute(sql, params or None)
        return list(cur.fetchall())
