"""What the SQLAlchemy suites of every database check alike (tests/postgres, tests/mysql: their
conftests put tests/python on the path)."""

from __future__ import annotations

from typing import Any

import pytest
import shardid
from shardid.sqlalchemy import ShardId
from sqlalchemy import String, select, text
from sqlalchemy.exc import StatementError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

APP = shardid.Generator(layout=shardid.Layout.TWITTER, shard=33)


def event_model(server_default: Any) -> tuple[Any, Any]:
    """The declarative base and the model of table `sa_events` that
    app_and_database_ids_in_one_table fills: an ID column `ShardId(Layout.TWITTER)` whose
    default is the application's generator on shard 33, and `server_default` the database's."""

    class Base(DeclarativeBase):
        pass

    class Event(Base):
        __tablename__ = "sa_events"
        id: Mapped[int] = mapped_column(
            ShardId(shardid.Layout.TWITTER), primary_key=True, default=APP.next_id, server_default=server_default
        )
        source: Mapped[str] = mapped_column(String(20))

    return Base, Event


def app_and_database_ids_in_one_table(engine: Any, base: Any, event: Any, insert_by_the_database: str) -> None:
    """300 rows of `event` (table `sa_events`, an ID column `ShardId(Layout.TWITTER)` whose
    default is the application's generator on shard 33) added through the ORM, and 300 that
    the database inserts itself (`insert_by_the_database`, source `'db'`), which get its
    next_id() on shard 40: 600 distinct, exact IDs (no float on the way), each from its shard;
    a value that is no ID of the layout is refused before it reaches the server."""
    base.metadata.drop_all(engine)
    base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add_all([event(source="app") for _ in range(300)])
        session.commit()
        # Rows the database inserts itself get its next_id() and its shard.
        session.execute(text(insert_by_the_database))
        session.commit()
        rows = session.scalars(select(event)).all()
        with pytest.raises(StatementError, match="negative"):
            session.execute(select(event).where(event.id == -5)).all()
    assert len(rows) == 600 and len({r.id for r in rows}) == 600
    shards = {(r.source, shardid.Layout.TWITTER.decode(r.id).shard) for r in rows}
    assert shards == {("app", 33), ("db", 40)}
    assert all(isinstance(r.id, int) and r.id > 2**53 for r in rows)  # exact: no float on the way
    base.metadata.drop_all(engine)
    engine.dispose()
