"""Migration operations that install shardid's SQL in the database: ``next_id()`` and the
decoding functions (:class:`InstallPostgres`), dense IDs from segments
(:class:`InstallSegments`) and the string <-> ID dictionary (:class:`InstallDictionary`).
PostgreSQL only; on SQLite, where projects develop, :class:`InstallPostgres` does nothing and
says so."""

from __future__ import annotations

import warnings
from typing import Any

from django.db import NotSupportedError
from django.db.migrations.operations.base import Operation

from shardid.django.conf import layout_from
from shardid.sql import postgres, postgres_uninstall

__all__ = ["InstallDictionary", "InstallPostgres", "InstallSegments"]


class SqliteSkipped(UserWarning):
    """A migration operation of shardid's did nothing on SQLite (PostgreSQL's SQL)."""


class InstallPostgres(Operation):
    """A migration operation that installs ``<schema>.next_id()`` and the decoding functions
    (:func:`shardid.sql.postgres`) for ``layout`` and ``shard``; reversing it removes them.

    ``layout`` is a preset name, a :class:`shardid.Layout` or a dict of its arguments::

        operations = [InstallPostgres(layout="instagram", shard=5, schema="insta5"), ...]

    On SQLite (a project that develops on SQLite and runs on PostgreSQL) it does nothing, with a
    :class:`SqliteSkipped` warning, and :class:`~shardid.django.NextId` is no default there:
    the application's IDs are made as everywhere, and a row inserted without an ID by raw SQL
    gets none. Other databases: ``NotSupportedError``.
    """

    reduces_to_sql = True
    reversible = True

    def __init__(self, layout: Any, shard: int, schema: str, **options: int) -> None:
        self.layout = layout
        self.shard = shard
        self.schema = schema
        self.options = options
        self.install_sql = postgres(layout_from(layout), shard, schema, **options)
        self.uninstall_sql = postgres_uninstall(schema)

    def deconstruct(self) -> Any:
        kwargs = {"layout": self.layout, "shard": self.shard, "schema": self.schema, **self.options}
        return self.__class__.__qualname__, [], kwargs

    def state_forwards(self, app_label: str, state: Any) -> None:
        pass

    def _execute(self, schema_editor: Any, sql: str) -> None:
        vendor = schema_editor.connection.vendor
        if vendor == "sqlite":
            warnings.warn(
                f"InstallPostgres({self.schema!r}) does nothing on SQLite: {self.schema}.next_id() is PostgreSQL's. "
                "IDs the application makes are unaffected; rows inserted by raw SQL without an ID get none here",
                SqliteSkipped,
                stacklevel=2,
            )
            return
        if vendor != "postgresql":
            raise NotSupportedError("InstallPostgres needs PostgreSQL")
        schema_editor.execute(sql, params=None)

    def database_forwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        self._execute(schema_editor, self.install_sql)

    def database_backwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        self._execute(schema_editor, self.uninstall_sql)

    def describe(self) -> str:
        return f"Install shardid's {self.schema}.next_id() for shard {self.shard}"

    @property
    def migration_name_fragment(self) -> str:
        return f"shardid_{self.schema}"


class InstallSegments(Operation):
    """A migration operation that installs dense IDs from segments in ``schema``
    (:func:`shardid.sql.segments`) and creates ``tags``; reversing it removes the functions and
    the table of tags::

        operations = [InstallSegments(schema="seg", tags=["orders", "invoices"])]
    """

    reduces_to_sql = True
    reversible = True

    def __init__(self, schema: str = "seg", tags: list[str] | None = None, servers: int = 1, index: int = 0) -> None:
        from shardid.sql import segments

        self.schema, self.tags, self.servers, self.index = schema, list(tags or []), servers, index
        self.install_sql = segments(schema, servers=servers, index=index)

    def deconstruct(self) -> Any:
        kwargs: dict[str, Any] = {"schema": self.schema, "tags": self.tags}
        if self.servers != 1:
            kwargs.update(servers=self.servers, index=self.index)
        return self.__class__.__qualname__, [], kwargs

    def state_forwards(self, app_label: str, state: Any) -> None:
        pass

    def _check(self, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "postgresql":
            raise NotSupportedError("InstallSegments needs PostgreSQL")

    def database_forwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        self._check(schema_editor)
        schema_editor.execute(self.install_sql, params=None)
        for tag in self.tags:
            schema_editor.execute(f"SELECT {self.schema}.create_tag(%s)", params=[tag])

    def database_backwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        self._check(schema_editor)
        from shardid.sql import segments_uninstall  # the core's: dense IDs and serials

        schema_editor.execute(segments_uninstall(self.schema), params=None)

    def describe(self) -> str:
        return f"Install shardid's dense IDs from segments in {self.schema}"

    @property
    def migration_name_fragment(self) -> str:
        return f"shardid_segments_{self.schema}"


class InstallDictionary(Operation):
    """A migration operation that installs the string <-> ID dictionary in ``schema``
    (:func:`shardid.sql.dictionary`) and creates ``topics``; reversing it removes the functions,
    the topics and their strings::

        operations = [InstallDictionary(schema="dict", topics=["tags", "urls"])]
    """

    reduces_to_sql = True
    reversible = True

    def __init__(self, schema: str = "dict", topics: list[str] | None = None) -> None:
        from shardid.sql import dictionary as ddl, dictionary_uninstall

        self.schema, self.topics = schema, list(topics or [])
        self.install_sql = ddl(schema)
        self.uninstall_sql = dictionary_uninstall(schema)

    def deconstruct(self) -> Any:
        return self.__class__.__qualname__, [], {"schema": self.schema, "topics": self.topics}

    def state_forwards(self, app_label: str, state: Any) -> None:
        pass

    def _check(self, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "postgresql":
            raise NotSupportedError("InstallDictionary needs PostgreSQL")

    def database_forwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        self._check(schema_editor)
        schema_editor.execute(self.install_sql, params=None)
        for topic in self.topics:
            schema_editor.execute(f"SELECT {self.schema}.create_topic(%s)", params=[topic])

    def database_backwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        self._check(schema_editor)
        schema_editor.execute(self.uninstall_sql, params=None)

    def describe(self) -> str:
        return f"Install shardid's string <-> ID dictionary in {self.schema}"

    @property
    def migration_name_fragment(self) -> str:
        return f"shardid_dictionary_{self.schema}"
