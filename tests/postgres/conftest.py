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


# The long poles, run first. run.sh's two workers (--dist worksteal) each start with half of the
# collected order, and an idle one takes half of what the other still has queued; what they cannot
# share is a test already running. Started last, the point-in-time recovery (68 s in CI, most of it
# its 60 s of load) kept one worker busy for a minute after the other had run out. Each entry is a
# test function (all its parameters), with its longest seconds on this machine under load (load 9
# to 12, 2026-12-07; the Django ones take about a quarter of that on an idle machine, the recovery
# as long): a renamed or removed one only stops being moved. The rest keep their order.
LONG_POLES = {
    "test_dump_restore.py::test_point_in_time_recovery_to_a_restore_point_hands_nothing_out_twice": 76,
    "test_django_psycopg2.py::test_a_django_project_on_psycopg2_only": 84,
    "test_django_serials.py::test_django_serial_field_on_postgres": 69,
    "test_django_status_admin.py::test_the_admin_section_shows_leases_tags_and_topics": 67,
    "test_django_default_lease.py::test_gunicorn_workers_lease_their_own_shards": 63,
    "test_django_auto_field.py::test_default_auto_field_with_a_custom_user_admin_and_bulk_create": 49,
    "test_django_postgres.py::test_a_model_on_segments_where_install_segments_never_ran_names_the_operation": 39,
    "test_django_postgres.py::test_django_dense_id_field_on_postgres": 33,
    "test_django_postgres.py::test_django_dictionary_on_postgres": 29,
    "test_failover.py::test_nothing_is_handed_out_twice_across_a_failover": 20,
    "test_dictionary.py::test_kill_and_a_server_crash_mid_load_lose_nothing_and_make_no_hole": 18,
    "test_django_postgres.py::test_django_project_on_postgres": 15,
}


@pytest.hookimpl(trylast=True)  # after pytest's own reordering by fixture scope
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def seconds(item: pytest.Item) -> int:
        function = getattr(item, "originalname", item.name)
        return LONG_POLES.get(f"{item.path.name}::{function}", 0)

    items.sort(key=seconds, reverse=True)  # stable: the rest keep their order


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
