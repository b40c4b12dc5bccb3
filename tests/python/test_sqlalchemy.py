"""shardid.sqlalchemy.ShardId with the real SQLAlchemy on SQLite: the generator as the column's
default, IDs checked on the way in, read back as ints. (With PostgreSQL and the database's
next_id() as server default: tests/postgres/test_sql.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")

from sqlalchemy import create_engine, select  # noqa: E402
from sqlalchemy.exc import StatementError  # noqa: E402
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column  # noqa: E402

import shardid  # noqa: E402
from shardid.sqlalchemy import ShardId  # noqa: E402

BIG = 4036916263258161152
IDS = shardid.Generator(layout=shardid.Layout.TWITTER, shard=33)


class Base(DeclarativeBase):
    pass


class Note(Base):
    __tablename__ = "notes"
    id: Mapped[int] = mapped_column(ShardId(shardid.Layout.TWITTER), primary_key=True, default=IDS.next_id)
    text: Mapped[str]


def test_the_column_makes_checks_and_reads_ids(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add_all([Note(text=f"n{i}") for i in range(500)])
        session.add(Note(id=str(BIG), text="given as a decimal string"))
        session.commit()
        rows = session.scalars(select(Note).order_by(Note.id)).all()
        assert len({r.id for r in rows}) == 501
        assert all(isinstance(r.id, int) for r in rows)
        assert {shardid.Layout.TWITTER.decode(r.id).shard for r in rows if r.id != BIG} == {33}
        assert session.get(Note, BIG) is not None
        for bad in [-5, 2**63, 4.036916426399811e18, True, "+5"]:
            session.add(Note(id=bad, text="bad"))
            with pytest.raises(StatementError):
                session.flush()
            session.rollback()


def test_unsigned_layouts_do_not_fit_bigint() -> None:
    with pytest.raises(ValueError, match="BIGINT"):
        ShardId(shardid.Layout.DISCORD)
