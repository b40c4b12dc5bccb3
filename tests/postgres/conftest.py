"""Fixtures for the PostgreSQL tests: one throwaway cluster for the session, connections to it,
and the conformance vectors."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

import shardid
from shardid.sql import postgres

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from cluster import Cluster  # noqa: E402
from pooler import Pooler  # noqa: E402
from vectors import LAYOUTS, layout_from_spec, load  # noqa: E402, F401 (the tests import them from here)

I64_MAX = 2**63 - 1


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "failover: a primary and a standby, the primary killed and the standby promoted (test_failover.py)"
    )


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    with Cluster() as c:
        yield c


# The databases behind the pooler: the Django projects' (one per pool mode), and one for the
# segments and dictionary clients (test_pooled.py).
POOLED_DATABASES = ("dj_tx", "dj_session", "pooled")


@pytest.fixture(scope="session")
def pooler(cluster: Cluster) -> Iterator[Pooler]:
    """PgBouncer in front of the cluster (tests/postgres/pooler.py), started once: the pools
    ``tx`` and ``session`` of the ``postgres`` database, and ``dj_tx_tx`` and
    ``dj_session_session`` of the Django projects' databases."""
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        for db in POOLED_DATABASES:
            conn.execute(f"CREATE DATABASE {db}")
    p = Pooler(cluster.port, databases=POOLED_DATABASES)
    yield p
    p.stop()


@pytest.fixture
def connect(cluster: Cluster) -> Iterator[Any]:
    """Opens autocommit connections to the cluster, closed after the test."""
    opened: list[psycopg.Connection[Any]] = []

    def open_one() -> psycopg.Connection[Any]:
        conn = psycopg.connect(cluster.dsn, autocommit=True)
        opened.append(conn)
        return conn

    yield open_one
    for conn in opened:
        conn.close()


@pytest.fixture
def conn(connect: Any) -> psycopg.Connection[Any]:
    return connect()


def install(conn: psycopg.Connection[Any], layout: shardid.Layout, shard: int, schema: str, **options: int) -> None:
    """Installs the emitted DDL in one transaction, as `psql -1 -f` would."""
    with conn.transaction():
        conn.execute(postgres(layout, shard, schema, **options).encode())  # type: ignore[call-overload]
