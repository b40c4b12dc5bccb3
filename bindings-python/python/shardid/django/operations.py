"""Migration operations that install shardid's SQL in the database: ``next_id()`` and the
decoding functions (:class:`InstallPostgres`), dense IDs from segments
(:class:`InstallSegments`) and the string <-> ID dictionary (:class:`InstallDictionary`).

Each renders the SQL of the database the migration runs on: PostgreSQL's, or on Django's MySQL
backend MySQL 8's or MariaDB's (``schema`` then names the database the objects go in, created if
missing), sent one statement at a time (:func:`shardid.sql.mysql_statements`). On SQLite the
segments' and the dictionary's tables go in the database file itself (schema ``main``: Django's
connection attaches no other, so ``schema`` names nothing there); :class:`InstallPostgres` does
nothing and says so (SQLite has no stored functions: no ``next_id()``)."""

from __future__ import annotations

import warnings
from typing import Any

from django.db import NotSupportedError
from django.db.migrations.operations.base import Operation

from shardid.django.conf import layout_from
from shardid._segments_generated import check_names
from shardid._shardid import _check_topic
from shardid.sql import mysql, mysql_statements, postgres, postgres_uninstall

__all__ = ["InstallDictionary", "InstallPostgres", "InstallSegments"]


class SqliteSkipped(UserWarning):
    """A migration operation of shardid's did nothing on SQLite (its SQL is PostgreSQL's or the
    MySQL family's)."""


def _dialect(schema_editor: Any, operation: str) -> str:
    """``"postgres"``, ``"mysql"``, ``"mariadb"`` or ``"sqlite"``: the SQL the migration's
    database takes."""
    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        return "postgres"
    if connection.vendor == "mysql":
        return "mariadb" if connection.mysql_is_mariadb else "mysql"
    if connection.vendor == "sqlite":
        return "sqlite"
    raise NotSupportedError(f"{operation} needs PostgreSQL, MySQL, MariaDB or SQLite, not {connection.vendor}")


def _run_sqlite(schema_editor: Any, script: str) -> None:
    """A SQLite script of the core's, one statement at a time (in the migration's transaction)."""
    from shardid import _sqlite

    for statement in _sqlite.statements(script):
        schema_editor.execute(statement, params=None)


def _run_mysql(schema_editor: Any, script: str | list[str]) -> None:
    """A MySQL script (``DELIMITER`` and all, as the core renders it), or a list of statements,
    one statement at a time."""
    for statement in mysql_statements(script) if isinstance(script, str) else script:
        schema_editor.execute(statement, params=None)


def _uninstall_mysql(script: str | list[str]) -> list[str]:
    """The statements that remove what the core's MySQL ``script`` (or list of statements)
    creates in its database: each routine it creates, then each table (the database itself
    stays: it may hold other things)."""
    routines, tables = [], []
    for statement in mysql_statements(script) if isinstance(script, str) else script:
        code = "\n".join(line for line in statement.splitlines() if not line.lstrip().startswith("--"))
        words = code.split(None, 6)
        if words[:2] in (["CREATE", "FUNCTION"], ["CREATE", "PROCEDURE"]):
            routines.append(f"DROP {words[1]} IF EXISTS {words[2].split('(')[0]}")
        elif words[:5] == ["CREATE", "TABLE", "IF", "NOT", "EXISTS"]:
            tables.append(f"DROP TABLE IF EXISTS {words[5].split('(')[0]}")
    return routines + tables[::-1]


def segments_missing(using: str, schema: str, serials: bool = False) -> str | None:
    """Why the fields that take numbers from segments in ``schema`` of the database ``using``
    (:class:`~shardid.django.DenseIdField`, :class:`~shardid.django.SerialField` when
    ``serials``) cannot work there, naming the migration operation that is missing; ``None``
    when :class:`InstallSegments` has run (its table is there). One query, on Django's own
    connection; ``None`` on a database shardid's SQL does not cover (the field says so itself)."""
    from django.db import connections

    connection = connections[using]
    if connection.vendor not in ("postgresql", "mysql", "sqlite"):
        return None
    table = "shardid_serials" if serials else "shardid_tags"
    if connection.vendor == "sqlite":
        # The tables are in the file itself (main), whatever the schema's name.
        found = table in connection.introspection.table_names()
    else:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = %s AND table_name = %s",
                [schema, table],
            )
            (found,) = cursor.fetchone()
    if found:
        return None
    where = "database" if connection.vendor == "mysql" else "schema"
    then = ', then CreateSerial(tag, format, zone=...) for each serial tag' if serials else ""
    return (
        f"the database {using!r} has no {where} {schema} with shardid's segments (no table {schema}.{table}): "
        f"no migration has run InstallSegments(schema={schema!r}) from shardid.django{then}; add it to a "
        "migration the model's migration depends on, and run manage.py migrate"
    )


class InstallPostgres(Operation):
    """A migration operation that installs ``<schema>.next_id()`` and the decoding functions
    (:func:`shardid.sql.postgres`; on MySQL and MariaDB :func:`shardid.sql.mysql`, for raw SQL
    inserts and the ``BEFORE INSERT`` trigger its comments show) for ``layout`` and ``shard``;
    reversing it removes them.

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

    def _skipped_on_sqlite(self, schema_editor: Any) -> bool:
        """On SQLite, says that nothing is installed (a project developing there keeps the
        migration)."""
        if schema_editor.connection.vendor != "sqlite":
            return False
        warnings.warn(
            f"InstallPostgres({self.schema!r}) does nothing on SQLite: {self.schema}.next_id() is PostgreSQL's or the MySQL family's. "
            "IDs the application makes are unaffected; rows inserted by raw SQL without an ID get none here",
            SqliteSkipped,
            stacklevel=3,
        )
        return True

    def _mysql_sql(self, dialect: str) -> str:
        return mysql(layout_from(self.layout), self.shard, self.schema, dialect=dialect, **self.options)

    def database_forwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        if self._skipped_on_sqlite(schema_editor):
            return
        dialect = _dialect(schema_editor, "InstallPostgres")
        if dialect == "postgres":
            schema_editor.execute(self.install_sql, params=None)
        else:
            _run_mysql(schema_editor, self._mysql_sql(dialect))

    def database_backwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        if self._skipped_on_sqlite(schema_editor):
            return
        dialect = _dialect(schema_editor, "InstallPostgres")
        if dialect == "postgres":
            schema_editor.execute(self.uninstall_sql, params=None)
        else:
            _run_mysql(schema_editor, _uninstall_mysql(self._mysql_sql(dialect)))

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

    def _mysql_sql(self, dialect: str) -> list[str]:
        """The statements of the segments' DDL, then of the serials' registrations (which
        PostgreSQL's and SQLite's segments DDL holds): two scripts of the core's."""
        from shardid.sql import mysql_serials, segments

        ddl = segments(self.schema, servers=self.servers, index=self.index, dialect=dialect)
        return mysql_statements(ddl) + mysql_statements(mysql_serials(self.schema))

    def database_forwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        dialect = _dialect(schema_editor, "InstallSegments")
        if dialect == "sqlite":
            from shardid import _sqlite

            steps = _sqlite.Segments("main")
            _run_sqlite(schema_editor, steps.ddl)
            for tag in self.tags:
                check_names(tag, "main")
                steps.create_tag(schema_editor.connection.connection, tag)
            return
        if dialect == "postgres":
            schema_editor.execute(self.install_sql, params=None)
        else:
            _run_mysql(schema_editor, self._mysql_sql(dialect))
        for tag in self.tags:
            schema_editor.execute(f"SELECT {self.schema}.create_tag(%s)", params=[tag])

    def database_backwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        dialect = _dialect(schema_editor, "InstallSegments")
        if dialect == "sqlite":
            from shardid._shardid import _SqliteSql

            _run_sqlite(schema_editor, _SqliteSql("main").segments_uninstall())
            return
        if dialect != "postgres":
            _run_mysql(schema_editor, _uninstall_mysql(self._mysql_sql(dialect)))
            return
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

    def _mysql_sql(self, dialect: str) -> str:
        from shardid.sql import dictionary as ddl

        return ddl(self.schema, dialect=dialect)

    def database_forwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        dialect = _dialect(schema_editor, "InstallDictionary")
        if dialect == "sqlite":
            from shardid import _sqlite

            _run_sqlite(schema_editor, _sqlite.Dictionary("main", "").ddl)
            for topic in self.topics:
                _check_topic(topic)
                _sqlite.Dictionary("main", topic).create(schema_editor.connection.connection)
            return
        if dialect == "postgres":
            schema_editor.execute(self.install_sql, params=None)
        else:
            _run_mysql(schema_editor, self._mysql_sql(dialect))
        for topic in self.topics:
            schema_editor.execute(f"SELECT {self.schema}.create_topic(%s)", params=[topic])

    def database_backwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        dialect = _dialect(schema_editor, "InstallDictionary")
        if dialect == "sqlite":
            from shardid._shardid import _SqliteSql

            _run_sqlite(schema_editor, _SqliteSql("main").dictionary_uninstall())
            return
        if dialect == "postgres":
            schema_editor.execute(self.uninstall_sql, params=None)
        else:
            _run_mysql(schema_editor, _uninstall_mysql(self._mysql_sql(dialect)))

    def describe(self) -> str:
        return f"Install shardid's string <-> ID dictionary in {self.schema}"

    @property
    def migration_name_fragment(self) -> str:
        return f"shardid_dictionary_{self.schema}"
