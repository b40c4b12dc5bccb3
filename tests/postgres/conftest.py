"""Fixtures for the PostgreSQL tests: one throwaway cluster for the session, connections to it,
and the conformance vectors."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

import shardid
from shardid.sql import postgres

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster import Cluster  # noqa: E402

VECTORS = Path(__file__).resolve().parents[1] / "vectors"
I64_MAX = 2**63 - 1


def load(name: str) -> Any:
    return json.loads((VECTORS / name).read_text())


def layout_from_spec(spec: dict[str, Any]) -> shardid.Layout:
    return shardid.Layout(
        epoch_ms=int(spec["epoch_ms"]),
        unit_ms=int(spec["unit_ms"]),
        time_bits=spec["time_bits"],
        shard_bits=spec["shard_bits"],
        sequence_bits=spec["sequence_bits"],
        order=spec["order"],
        signed=spec["signed"],
    )


LAYOUTS = {e["name"]: layout_from_spec(e["spec"]) for e in load("layouts.json")["layouts"]}


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    with Cluster() as c:
        yield c


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
