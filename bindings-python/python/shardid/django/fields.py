"""Model fields and expressions: :class:`ShardIdField` (a time-sortable ID made in the
application), :class:`ShardIdAutoField` (the same, for ``DEFAULT_AUTO_FIELD``), :class:`ShardIdUUIDField`
(the same ID kept in a ``uuid`` column as its UUIDv7), :class:`DenseIdField` (a dense number from
database segments) and :class:`NextId` (the database's own ``next_id()``, for ``db_default``)."""

from __future__ import annotations

import functools
import importlib.util
import uuid
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from shardid.django.conf import configured_layout
from shardid.django.leases import dense_id, next_id

__all__ = ["DenseIdField", "NextId", "ShardIdAutoField", "ShardIdField", "ShardIdUUIDField", "validate_shard_id"]


def validate_shard_id(value: Any) -> None:
    """A Django validator: ``value`` is an ID the configured layout can make."""
    try:
        configured_layout().validate_id(value)
    except (TypeError, ValueError) as e:
        raise ValidationError(
            "Not an ID of this layout: %(reason)s", code="invalid_shard_id", params={"reason": str(e)}
        ) from None


def _register_checks() -> None:
    """The system checks and the test runner's hook, for projects that use the fields without
    ``"shardid.django"`` in ``INSTALLED_APPS`` (its ``AppConfig.ready()`` does it otherwise)."""
    from django.test.signals import setting_changed

    from shardid.django.checks import register

    register()
    setting_changed.connect(_forget_layout, dispatch_uid="shardid.django.fields")


# The layout every saved value is checked against, read from the settings once: reading them
# costs ~20 us (an absent SHARDID is an AttributeError inside Django's LazySettings), more than
# the check. Settings change only under override_settings, which says so (setting_changed).
_saving_layout: Any = None


def _layout_for_saves() -> Any:
    global _saving_layout
    layout = _saving_layout
    if layout is None:
        layout = _saving_layout = configured_layout()
    return layout


def _forget_layout(*, setting: str, **kwargs: Any) -> None:
    global _saving_layout
    if setting == "SHARDID":
        _saving_layout = None


class ShardIdField(models.BigIntegerField):
    """A ``BigIntegerField`` whose default is a new ID from the configured generator.

    ``ShardIdField(primary_key=True)`` replaces the auto-incrementing ``id``. Migrations
    record the field without its default (the generator is configuration, not schema), so
    changing ``settings.SHARDID`` needs no migration.

    Not editable by default, as an ``AutoField`` is not: the admin and model forms leave it
    out (an ID typed into a change page would save a second row under the new key), and Django
    REST framework makes it read-only. ``editable=True`` puts it back. Every value saved is
    checked against the layout on its way to the database (``create(id=-5)``, ``bulk_create``,
    ``update``, a fixture): :class:`~shardid.InvalidIdError`, a ``ValueError``, for one the
    layout cannot hold.
    """

    description = "A time-sortable 64-bit ID made by shardid"
    default_validators = [validate_shard_id]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("default", next_id)
        kwargs.setdefault("editable", False)
        super().__init__(*args, **kwargs)

    def get_db_prep_save(self, value: Any, connection: Any) -> Any:
        prepared = super().get_db_prep_save(value, connection)
        # An expression (the database's own next_id(), F()) is the database's to compute.
        if isinstance(prepared, int) and not isinstance(prepared, bool):
            _layout_for_saves().validate_id(prepared)
        return prepared

    def contribute_to_class(self, cls: Any, name: str, *args: Any, **kwargs: Any) -> None:
        super().contribute_to_class(cls, name, *args, **kwargs)
        _register_checks()
        # With Django REST framework installed, model serializers write IDs as strings.
        if importlib.util.find_spec("rest_framework") is not None:
            from shardid.rest_framework import register

            register()

    def deconstruct(self) -> Any:
        name, path, args, kwargs = super().deconstruct()
        if kwargs.get("default") is next_id:
            del kwargs["default"]
        # Migrations name `editable` only when it is not this field's default (False).
        if kwargs.pop("editable", True):
            kwargs["editable"] = True
        if type(self) is ShardIdField:
            path = "shardid.django.ShardIdField"  # where migrations import it from
        return name, path, args, kwargs


class ShardIdAutoField(models.BigAutoField):
    """The primary key Django adds to models, keyed by shardid IDs: set
    ``DEFAULT_AUTO_FIELD = "shardid.django.ShardIdAutoField"`` and every model without an
    explicit primary key, in an app that does not pin its own ``default_auto_field``, takes its
    IDs from the application's generator (``settings.SHARDID``; a lease per process).

    A ``BigAutoField`` (Django requires an ``AutoField`` subclass there) whose default is
    :func:`~shardid.django.next_id`: an instance has its ID from the start, ``save()`` inserts
    without a first ``UPDATE``, and ``bulk_create()`` sends the IDs with the rows, so it works
    on every backend, with or without ``RETURNING``. The column stays the ``BigAutoField``'s
    (an identity or autoincrement ``bigint``: rows inserted without an ``id`` by other means
    still get one), so a migration from ``BigAutoField`` is one ``AlterField`` that changes no
    column type; the default is configuration, not schema, and stays out of migrations.
    """

    description = "A time-sortable 64-bit ID made by shardid, as the automatic primary key"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("default", next_id)
        super().__init__(*args, **kwargs)

    @property
    def validators(self) -> list[Any]:
        """``BigAutoField``'s validators and the check that a value is an ID of the layout."""
        return [*super().validators, validate_shard_id]

    def contribute_to_class(self, cls: Any, name: str, *args: Any, **kwargs: Any) -> None:
        super().contribute_to_class(cls, name, *args, **kwargs)
        _register_checks()

    def deconstruct(self) -> Any:
        name, path, args, kwargs = super().deconstruct()
        if kwargs.get("default") is next_id:
            del kwargs["default"]
        if type(self) is ShardIdAutoField:
            path = "shardid.django.ShardIdAutoField"
        return name, path, args, kwargs


class ShardIdUUIDField(models.UUIDField):
    """A time-sortable ID of the configured layout kept in a ``uuid`` column as its UUIDv7
    (``Layout.to_uuid``: the ID's time in ``unix_ts_ms``, the whole ID in the random bits), for a
    table moving its keys to UUIDs while the code, the URLs and other services keep the 64-bit ID.

    The model's attribute is the ID, an ``int``, as with :class:`ShardIdField`; the database
    holds its UUID (PostgreSQL's ``uuid``, ``char(32)`` elsewhere, as Django's ``UUIDField``).
    A lookup takes either: ``Note.objects.get(id=4036916263258161152)`` and
    ``Note.objects.get(id=uuid.UUID("01813ba5-..."))`` find the same row. A UUID the bridge did
    not make for this layout is refused (:class:`~shardid.InvalidArgumentError`, a
    ``ValueError``), never read as a wrong ID. The UUIDs sort as the IDs do, so an index on the
    column keeps the insertion order the ``bigint`` had.

    The default is a new ID (as :class:`ShardIdField`'s), not editable in forms unless
    ``editable=True``. Moving a column from :class:`ShardIdField` to this field converts each
    value in the database (PostgreSQL: ``USING <schema>.shardid_to_uuid(id)``, from
    :class:`InstallPostgres`'s SQL): see the book's UUIDv7 page.
    """

    description = "A time-sortable 64-bit ID made by shardid, stored as its UUIDv7"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("default", next_id)
        kwargs.setdefault("editable", False)
        super().__init__(*args, **kwargs)

    def to_python(self, value: Any) -> Any:
        """The ID held by ``value``: an ``int`` or a decimal string (the ID itself), a
        ``uuid.UUID`` or its text (the bridge's UUID of the ID)."""
        if value is None or hasattr(value, "resolve_expression"):
            return value
        layout = _layout_for_saves()
        try:
            if isinstance(value, uuid.UUID) or (isinstance(value, str) and not value.isdecimal()):
                return layout.from_uuid(value)
            if isinstance(value, bool):
                raise TypeError("an ID is not a bool")
            return layout.validate_id(value)
        except (TypeError, ValueError) as e:
            raise ValidationError(
                "Not an ID or a UUID of this layout: %(reason)s", code="invalid_shard_id", params={"reason": str(e)}
            ) from None

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        """The UUID the column holds for ``value`` (an ID, or a UUID checked to be this layout's),
        in the form the connection's backend takes (a ``uuid.UUID`` or its 32 hex digits)."""
        if value is None or hasattr(value, "resolve_expression"):
            return value
        if isinstance(value, uuid.UUID):
            _layout_for_saves().from_uuid(value)  # refuses a UUID of another layout
        else:
            if isinstance(value, str) and not value.isdecimal():
                value = uuid.UUID(value)
                _layout_for_saves().from_uuid(value)
            else:
                value = _layout_for_saves().to_uuid(value)
        return super().get_db_prep_value(value, connection, prepared)

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> int | None:
        """The ID a UUID read from the column holds; ``InvalidArgumentError`` for a UUID the
        bridge did not make for this layout (a row another program wrote)."""
        if value is None:
            return None
        # Django's backends without a uuid type hand back the text; its converter (which runs
        # before this one) makes a UUID of it on SQLite and MySQL.
        return _layout_for_saves().from_uuid(value if isinstance(value, uuid.UUID) else uuid.UUID(str(value)))

    def value_to_string(self, obj: Any) -> str:
        """Serialized (fixtures, ``dumpdata``) as the UUID, as the column holds it."""
        value = self.value_from_object(obj)
        return "" if value is None else str(_layout_for_saves().to_uuid(value))

    def contribute_to_class(self, cls: Any, name: str, *args: Any, **kwargs: Any) -> None:
        super().contribute_to_class(cls, name, *args, **kwargs)
        _register_checks()
        if importlib.util.find_spec("rest_framework") is not None:
            from shardid.rest_framework import register

            register()

    def deconstruct(self) -> Any:
        name, path, args, kwargs = super().deconstruct()
        if kwargs.get("default") is next_id:
            del kwargs["default"]
        if kwargs.pop("editable", True):
            kwargs["editable"] = True
        if type(self) is ShardIdUUIDField:
            path = "shardid.django.ShardIdUUIDField"
        return name, path, args, kwargs


class NextId(models.Func):
    """``<schema>.next_id()``: an ID made by the database, for ``db_default`` (PostgreSQL, after
    :class:`~shardid.django.InstallPostgres` for the same schema). On SQLite it is no default
    (``NULL``), as ``InstallPostgres`` installs nothing there."""

    output_field = models.BigIntegerField()

    def __init__(self, schema: str) -> None:
        from shardid.sql import postgres_uninstall

        postgres_uninstall(schema)  # checks the name the way the SQL emitter does
        self.schema = schema
        super().__init__()

    def as_sql(self, compiler: Any, connection: Any, **extra_context: Any) -> Any:
        return f"{self.schema}.next_id()", []

    def as_sqlite(self, compiler: Any, connection: Any, **extra_context: Any) -> Any:
        # A project that develops on SQLite, where InstallPostgres installs nothing: no database
        # default (a raw INSERT without an ID fails its NOT NULL, as it should, rather than the
        # migration failing on PostgreSQL's schema-qualified call).
        return "NULL", []

    def deconstruct(self) -> Any:
        path = "shardid.django.NextId" if type(self) is NextId else f"{type(self).__module__}.{type(self).__qualname__}"
        return path, (self.schema,), {}


class DenseIdField(models.BigIntegerField):
    """A ``BigIntegerField`` whose default is the next dense ID of ``tag`` (order numbers,
    invoice numbers), taken in segments from the database (:mod:`shardid.segments`; PostgreSQL,
    MySQL, MariaDB or a SQLite file, after :class:`~shardid.django.InstallSegments`). IDs increase per process; across processes
    they interleave by segment. Not editable in forms by default.

    On SQLite inside ``transaction.atomic()`` the number is taken on Django's connection, in the
    caller's transaction (:func:`~shardid.django.dense_id`): committed with it, given back by its
    rollback, so an object made in a transaction that rolled back must not be saved later with
    its old number (``unique=True`` makes such a save fail with ``IntegrityError``).

    ``number = DenseIdField(tag="orders", unique=True)``
    """

    description = "A dense ID taken in segments from the database by shardid"

    def __init__(self, *args: Any, tag: str, schema: str = "seg", using: str = "default", **kwargs: Any) -> None:
        from shardid.segments import check_names  # the names as the driver checks them

        check_names(tag, schema)
        self.tag, self.schema, self.using = tag, schema, using
        kwargs.setdefault("default", functools.partial(dense_id, tag, schema, using))
        kwargs.setdefault("editable", False)
        super().__init__(*args, **kwargs)

    def contribute_to_class(self, cls: Any, name: str, *args: Any, **kwargs: Any) -> None:
        super().contribute_to_class(cls, name, *args, **kwargs)
        _register_checks()

    def deconstruct(self) -> Any:
        name, path, args, kwargs = super().deconstruct()
        default = kwargs.get("default")
        if isinstance(default, functools.partial) and default.func is dense_id:
            del kwargs["default"]
        kwargs.pop("editable", None)
        kwargs["tag"] = self.tag
        if self.schema != "seg":
            kwargs["schema"] = self.schema
        if self.using != "default":
            kwargs["using"] = self.using
        if type(self) is DenseIdField:
            path = "shardid.django.DenseIdField"
        return name, path, args, kwargs
