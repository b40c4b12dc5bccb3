"""shardid.sqlalchemy.ShardId on MariaDB (SQLAlchemy's mysql+pymysql): the application's generator as
the column's default, and the database's <database>.next_id() for rows inserted by raw SQL,
through the BEFORE INSERT trigger the DDL's comments show (MySQL takes no stored function as a
column DEFAULT; the column keeps DEFAULT 0)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import install

pytest.importorskip("sqlalchemy")

from sqlalchemy import DDL, create_engine, event, text  # noqa: E402
from sqlalchemy_checks import app_and_database_ids_in_one_table, event_model  # noqa: E402

import shardid  # noqa: E402
from shardid.sql import mysql  # noqa: E402

Base, Event = event_model(text("0"))

# The trigger that makes the database's next_id() the id's default, created with the table.
event.listen(
    Event.__table__,
    "after_create",
    DDL("CREATE TRIGGER sa_events_id BEFORE INSERT ON sa_events FOR EACH ROW SET NEW.id = IF(NEW.id IS NULL OR NEW.id = 0, sa_ids.next_id(), NEW.id)"),
)


def test_app_and_database_ids_in_one_table(server: Any, conn: Any) -> None:
    install(conn, mysql(shardid.Layout.TWITTER, 40, "sa_ids", dialect="mariadb"))
    conn.cursor().execute("CREATE DATABASE IF NOT EXISTS sa_db")
    engine = create_engine(f"mysql+pymysql://root@127.0.0.1:{server.port}/sa_db")
    app_and_database_ids_in_one_table(engine, Base, Event, "INSERT INTO sa_events (source) SELECT 'db' FROM seq_1_to_300")
