"""shardid.sqlalchemy.ShardId on PostgreSQL: the application's generator as the column's
default and the database's <schema>.next_id() as its server default, in one table."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import install

pytest.importorskip("sqlalchemy")

from sqlalchemy import create_engine, text  # noqa: E402
from sqlalchemy_checks import app_and_database_ids_in_one_table, event_model  # noqa: E402

import shardid  # noqa: E402

Base, Event = event_model(text("sa_ids.next_id()"))


def test_app_and_database_ids_in_one_table(cluster: Any, conn: Any) -> None:
    install(conn, shardid.Layout.TWITTER, 40, "sa_ids")
    engine = create_engine(f"postgresql+psycopg://postgres@127.0.0.1:{cluster.port}/postgres")
    app_and_database_ids_in_one_table(engine, Base, Event, "INSERT INTO sa_events (source) SELECT 'db' FROM generate_series(1, 300)")
