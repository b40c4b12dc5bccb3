"""SQLAlchemy: a ``BIGINT`` column of shardid IDs, checked on the way in.

::

    from sqlalchemy import text
    from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
    from shardid import Generator, Layout
    from shardid.sqlalchemy import ShardId

    ids = Generator(layout=Layout.INSTAGRAM, shard=5)   # or shardid.lease(...) per process

    class Note(Base):
        __tablename__ = "notes"
        id: Mapped[int] = mapped_column(
            ShardId(Layout.INSTAGRAM),
            primary_key=True,
            default=ids.next_id,                         # made in the application
            server_default=text("insta5.next_id()"),     # rows the database inserts itself
        )

``default`` makes IDs in the application, without a round trip; ``server_default`` is the
database's ``<schema>.next_id()`` from :func:`shardid.sql.postgres` (PostgreSQL), for rows
inserted by raw SQL or other services. Give the database a shard the application does not
use. A value that is not an ID of the layout (``-5``, ``2**63``, a float) is refused when the
statement is built, before it reaches the database.

A table whose key column is ``uuid`` (PostgreSQL's type; ``CHAR(32)`` on MySQL and SQLite, as
SQLAlchemy's ``Uuid`` stores it) while the code keeps the 64-bit ID: :class:`ShardIdUuid`
stores each ID as its UUIDv7 (``Layout.to_uuid``, the same bytes as the SQL function
``<schema>.shardid_to_uuid(id)``) and reads the ID back, so ``session.get(Note, 4036916263258161152)``
and ``where(Note.id == some_id)`` keep working after the column moved::

    class Note(Base):
        __tablename__ = "notes"
        id: Mapped[int] = mapped_column(ShardIdUuid(Layout.INSTAGRAM), primary_key=True, default=ids.next_id)
"""

from __future__ import annotations

import uuid as _uuid
from typing import Any

from sqlalchemy.types import BigInteger, TypeDecorator, Uuid

from shardid._shardid import Layout

__all__ = ["ShardId", "ShardIdUuid"]


class ShardId(TypeDecorator[int]):
    """A ``BIGINT`` column of IDs of ``layout`` (default Instagram's). Unsigned layouts
    (Discord's) do not fit ``BIGINT`` and are refused."""

    impl = BigInteger
    cache_ok = True

    def __init__(self, layout: Layout = Layout.INSTAGRAM) -> None:
        if not layout.signed:
            raise ValueError(f"{layout!r} makes unsigned 64-bit IDs, which do not fit a BIGINT column")
        super().__init__()
        self.layout = layout

    def process_bind_param(self, value: Any, dialect: Any) -> int | None:
        if value is None:
            return None
        if isinstance(value, (bool, float)):
            raise TypeError(f"an ID must be an int or a decimal string, not {type(value).__name__}")
        return self.layout.validate_id(value)

    def process_result_value(self, value: Any, dialect: Any) -> int | None:
        return None if value is None else int(value)

    def __repr__(self) -> str:
        return f"ShardId({self.layout!r})"


class ShardIdUuid(TypeDecorator[int]):
    """A ``uuid`` column (SQLAlchemy's ``Uuid``) of IDs of ``layout`` (default Instagram's): an
    ``int`` in Python, its UUIDv7 in the database. A bound value is the ID (an ``int`` or a
    decimal string) or a ``uuid.UUID`` made by ``to_uuid`` of this layout; a UUID read back that
    the bridge did not make for this layout is refused (``InvalidArgumentError``), never read as
    a wrong ID."""

    impl = Uuid
    cache_ok = True

    def __init__(self, layout: Layout = Layout.INSTAGRAM) -> None:
        super().__init__(as_uuid=True)
        self.layout = layout

    def process_bind_param(self, value: Any, dialect: Any) -> _uuid.UUID | None:
        if value is None:
            return None
        if isinstance(value, _uuid.UUID):
            self.layout.from_uuid(value)  # refuses a UUID of another layout, or not the bridge's
            return value
        if isinstance(value, (bool, float)):
            raise TypeError(f"an ID must be an int, a decimal string or a UUID, not {type(value).__name__}")
        return self.layout.to_uuid(value)

    def process_result_value(self, value: Any, dialect: Any) -> int | None:
        return None if value is None else self.layout.from_uuid(value)

    def __repr__(self) -> str:
        return f"ShardIdUuid({self.layout!r})"
