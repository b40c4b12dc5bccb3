"""Business serial numbers in Django (re-exported by :mod:`shardid.django`): a ``CharField``
whose default is the next serial of a tag, taken in segments from PostgreSQL, MySQL, MariaDB or
SQLite (:class:`shardid.segments.Serials`)::

    # a migration, once:  operations = [InstallSegments(schema="seg"),
    #                                   CreateSerial("orders", "ORD-{yyyy}{MM}{dd}-{seq:6}", zone="Asia/Shanghai")]
    number = SerialField(format="ORD-{yyyy}{MM}{dd}-{seq:6}", tag="orders", zone="Asia/Shanghai", unique=True)

Each process takes its own segments of the day's numbers on its own connection (made from the
settings of the database ``using``); the database can make the same serials itself for rows it
inserts (``db_default=NextSerial(...)``), from the same numbers. On SQLite inside
``transaction.atomic()`` the serial is taken on Django's connection, in the caller's transaction
(:func:`next_serial`): SQLite has one writer per file.
"""

from __future__ import annotations

import functools
from typing import Any

from django.db import NotSupportedError, models
from django.db.migrations.operations.base import Operation

from shardid._shardid import SerialFormat, _check_serial_tag, _serial_statements
from shardid.django import leases as integration

__all__ = ["CreateSerial", "NextSerial", "SerialField", "next_serial"]

# One allocator per (database alias, schema, tag, format, zone) in each process.
_serials: dict[tuple[str, str, str, str, str], Any] = {}


def _close(key: tuple[str, str, str, str, str]) -> None:
    serials = _serials.pop(key, None)
    if serials is not None:
        serials.close()


def next_serial(tag: str, format: str, zone: str, schema: str = "seg", using: str = "default") -> str:
    """The next serial of ``tag``, from segments of the database ``using``: the default of
    :class:`SerialField`.

    On SQLite inside ``transaction.atomic()`` the number is taken on Django's connection, in
    the caller's transaction (as :func:`~shardid.django.dense_id` does, and with the same
    rule: a rollback gives it back, so an object made in a rolled-back transaction must not be
    saved later with its serial); the period's tag is created at its first take, as the serial
    driver creates it."""
    connection = integration._sqlite_transaction(using)
    if connection is not None:
        return _serial_in_transaction(connection, tag, format, zone, schema, using)
    key = (using, schema, tag, format, zone)

    def make() -> Any:
        from shardid.segments import Serials

        integration._check_installed(using, schema, serials=True)
        where, there = integration._where(using, schema)
        serials = Serials(where, tag, format, zone=zone, schema=there)
        # shardid.django.release() (and so Django's test runner, before it drops a test
        # database) closes it with the other connections of the alias.
        integration._closers.append((using, functools.partial(_close, key)))
        return serials

    from shardid._errors import UnknownTagError

    try:
        return str(integration.per_process(_serials, key, make).next_serial())
    except UnknownTagError as e:
        raise integration.unknown_tag(tag, _create_serial_call(tag, format, zone, schema)) from e


def _create_serial_call(tag: str, format: str, zone: str, schema: str) -> str:
    """The operation that registers the serial tag, as written in a migration."""
    return f"CreateSerial({tag!r}, {format!r}, zone={zone!r}" + (f", schema={schema!r})" if schema != "seg" else ")")


# The formats of the serials taken in Django's transaction, parsed once.
_formats: dict[tuple[str, str], SerialFormat] = {}


def _serial_in_transaction(connection: Any, tag: str, format: str, zone: str, schema: str, using: str) -> str:
    """The next serial of ``tag`` taken on Django's SQLite connection, in its transaction: the
    registration read and checked against the format (``SERIAL_MISMATCH``), then one take of
    the current period's numbers (the core's steps, the period's tag created at its first
    take). A registration with ``max_gap`` above 1 takes a random 1 to ``max_gap`` numbers and
    issues the last (the core's draw, as the allocator's steps), so consecutive serials still
    hide the volume."""
    from shardid import now_ms
    from shardid._errors import SerialMismatchError
    from shardid._shardid import _serial_step

    parsed = _formats.get((format, zone))
    if parsed is None:
        parsed = _formats[(format, zone)] = SerialFormat(format, zone)

    def take(conn: Any, steps: Any) -> str:
        canonical, registered_zone, max_gap, _ = steps.serial_info(conn, tag)
        reason = parsed._mismatch(canonical, registered_zone)
        if reason is not None:
            raise SerialMismatchError(f"serial tag {tag} {reason}", tag=tag, reason=reason)
        unix_ms = now_ms()
        size = _serial_step(max_gap)
        first, count, stride = steps.take_period(conn, tag, parsed.period_at(unix_ms), size)
        return parsed.render(first + (count - 1) * stride, unix_ms)

    create = _create_serial_call(tag, format, zone, schema)
    return integration._take_in_transaction(connection, using, schema, tag, serials=True, step=take, create=create)  # type: ignore[no-any-return]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class SerialField(models.CharField):
    """A ``CharField`` whose default is the next serial of ``tag`` in ``format`` and ``zone``
    (``ORD-20261125-000123``): ``max_length`` is the format's length, and the field is not
    editable in forms by default. The tag must be registered with this format and zone
    (:class:`CreateSerial`); a mismatch is ``SerialMismatchError`` at the first serial. On
    SQLite inside ``transaction.atomic()`` the serial is the transaction's: a rollback gives it
    back (:func:`next_serial`).

    ``number = SerialField(format="ORD-{yyyy}{MM}{dd}-{seq:6}", tag="orders", zone="Asia/Shanghai", unique=True)``
    """

    description = "A business serial number taken in segments from the database by shardid"
    # Migrations name the classes by their public path, whichever module defines them.
    __module__ = "shardid.django"

    def __init__(
        self,
        *args: Any,
        format: str,
        tag: str,
        zone: str,
        schema: str = "seg",
        using: str = "default",
        **kwargs: Any,
    ) -> None:
        self.serial_format = SerialFormat(format, zone)  # a bad format or zone fails here
        _check_serial_tag(tag)
        _serial_statements(schema)  # checks the schema's name
        self.tag, self.schema, self.using = tag, schema, using
        kwargs.setdefault("max_length", self.serial_format.length)
        kwargs.setdefault("default", functools.partial(next_serial, tag, format, self.serial_format.zone, schema, using))
        kwargs.setdefault("editable", False)
        super().__init__(*args, **kwargs)

    def parse(self, value: str) -> Any:
        """A serial of this field parsed back (``.number``, ``.period``, ...)."""
        return self.serial_format.parse(value)

    def deconstruct(self) -> Any:
        name, path, args, kwargs = super().deconstruct()
        default = kwargs.get("default")
        if isinstance(default, functools.partial) and default.func is next_serial:
            del kwargs["default"]
        if kwargs.get("max_length") == self.serial_format.length:
            del kwargs["max_length"]
        kwargs.pop("editable", None)
        kwargs.update(format=self.serial_format.format, tag=self.tag, zone=self.serial_format.zone)
        if self.schema != "seg":
            kwargs["schema"] = self.schema
        if self.using != "default":
            kwargs["using"] = self.using
        return name, path, args, kwargs


class NextSerial(models.Func):
    """``<schema>.next_serial(tag, format, zone)``: a serial made by the database, for
    ``db_default`` (PostgreSQL): rows inserted without one get the next of the same period's
    numbers."""

    output_field = models.CharField()
    __module__ = "shardid.django"

    def __init__(self, tag: str, format: str, zone: str, schema: str = "seg") -> None:
        parsed = SerialFormat(format, zone)
        _check_serial_tag(tag)
        self.next_sql = _serial_statements(schema)[4]
        self.params = [tag, format, parsed.zone]
        super().__init__()

    def as_sql(self, compiler: Any, connection: Any, **extra_context: Any) -> Any:
        # The core's statement is "SELECT <schema>.next_serial(%s::text, ...)": its call.
        return self.next_sql.removeprefix("SELECT "), list(self.params)

    def as_mysql(self, compiler: Any, connection: Any, **extra_context: Any) -> Any:
        """Refused: MySQL and MariaDB have no ``next_serial()`` (their serials are the
        clients'), so a migration fails here, saying so, rather than on PostgreSQL's call."""
        raise NotSupportedError(
            "NextSerial is PostgreSQL's: on MySQL and MariaDB a SerialField's default takes the serial "
            "(the database has no next_serial())"
        )


class CreateSerial(Operation):
    """A migration operation that registers the serial tag ``tag`` with ``format`` in ``zone``
    (after :class:`shardid.django.InstallSegments` for the same schema); reversing it removes
    the registration (the periods' numbers stay, so a new registration never repeats them)::

        operations = [CreateSerial("orders", "ORD-{yyyy}{MM}{dd}-{seq:6}", zone="Asia/Shanghai")]
    """

    reduces_to_sql = True
    reversible = True
    __module__ = "shardid.django"

    def __init__(self, tag: str, format: str, zone: str, schema: str = "seg", max_gap: int = 1) -> None:
        self.parsed = SerialFormat(format, zone)
        _check_serial_tag(tag)
        self.create_sql = _serial_statements(schema)[3]
        self.tag, self.format, self.zone, self.schema, self.max_gap = tag, format, self.parsed.zone, schema, max_gap

    def deconstruct(self) -> Any:
        kwargs: dict[str, Any] = {"tag": self.tag, "format": self.format, "zone": self.zone}
        if self.schema != "seg":
            kwargs["schema"] = self.schema
        if self.max_gap != 1:
            kwargs["max_gap"] = self.max_gap
        return self.__class__.__qualname__, [], kwargs

    def state_forwards(self, app_label: str, state: Any) -> None:
        pass

    def _check(self, schema_editor: Any) -> bool:
        """Whether the migration runs on SQLite (else PostgreSQL, MySQL or MariaDB)."""
        vendor = schema_editor.connection.vendor
        if vendor not in ("postgresql", "mysql", "sqlite"):
            raise NotSupportedError("CreateSerial needs PostgreSQL, MySQL, MariaDB or SQLite")
        return vendor == "sqlite"  # type: ignore[no-any-return]

    def _register_mysql(self, schema_editor: Any) -> None:
        """The registration on MySQL or MariaDB (the core's ``MysqlSerials``): its table
        created if missing (a database whose InstallSegments ran before it held it), ``INSERT
        IGNORE``, then the rows of the tag or of its shape say whether it fits."""
        from shardid._errors import SerialMismatchError
        from shardid._shardid import _mysql_registration_problem, _mysql_serial_statements
        from shardid.django.operations import _run_mysql
        from shardid.sql import mysql_serials

        _run_mysql(schema_editor, mysql_serials(self.schema))
        _, register, registered, _ = _mysql_serial_statements(self.schema)
        canonical, shape, pieces, width, reset = self.parsed._registration()
        params = [self.tag, self.format, self.zone, canonical, shape, "\n".join(pieces), width, reset, self.max_gap]
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(register, params)
            cursor.execute(registered, [self.tag, shape])
            # Text (bytes from a driver that returns a binary collation's strings so).
            rows = [(_text(t), _text(c), _text(z)) for t, c, z in cursor.fetchall()]
        reason = _mysql_registration_problem(rows, self.tag, canonical, self.zone)
        if reason is not None:
            raise SerialMismatchError(f"serial tag {self.tag} {reason}", tag=self.tag, reason=reason)

    def database_forwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        if schema_editor.connection.vendor == "mysql":
            self._register_mysql(schema_editor)
            return
        if self._check(schema_editor):
            # The registration in the file itself (main), in the migration's transaction.
            from shardid import _sqlite
            from shardid._errors import SerialMismatchError

            steps = _sqlite.Segments("main")
            conn = schema_editor.connection.connection
            registration = self.parsed._registration()
            reason = steps.register(conn, self.tag, self.format, self.zone, registration, self.max_gap)
            if reason is not None:
                raise SerialMismatchError(f"serial tag {self.tag} {reason}", tag=self.tag, reason=reason)
            return
        canonical, shape, pieces, width, reset = self.parsed._registration()
        params = [self.tag, self.format, self.zone, canonical, shape, pieces, width, reset, self.max_gap]
        schema_editor.execute(self.create_sql, params=params)

    def database_backwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        schema = "main" if self._check(schema_editor) else self.schema
        schema_editor.execute(f"DELETE FROM {schema}.shardid_serials WHERE tag = %s", params=[self.tag])

    def describe(self) -> str:
        return f"Register shardid serial tag {self.tag} ({self.format} in {self.zone})"

    @property
    def migration_name_fragment(self) -> str:
        return "shardid_serial_" + "".join(c if c.isalnum() else "_" for c in self.tag)
