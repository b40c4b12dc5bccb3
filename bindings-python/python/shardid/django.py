"""Django integration: :class:`ShardIdField`, a ``BigIntegerField`` whose default is a new
shardid ID, usable as ``primary_key=True``.

Configure the process-wide generator in settings::

    SHARDID = {"layout": "instagram", "shard": 5}

``layout`` is a preset name (``"instagram"``, ``"twitter"``, ``"sonyflake"``), a
:class:`shardid.Layout`, or a dict of :class:`shardid.Layout` keyword arguments; ``shard``
must be unique among the processes writing to the database. Under a pre-fork server
(gunicorn, uWSGI, Celery) or several copies of one configuration, lease shards instead, so
that each worker process holds its own (see :func:`shardid.lease`)::

    SHARDID = {"layout": "instagram", "lease": {"directory": "/run/myapp/shards", "shards": [0, 64]}}

IDs are made in the application, without a round trip to the database, and fit a signed
``BIGINT``: unsigned layouts such as Discord's are refused. Values saved into the field are
checked against the layout (model and form validation; ``-5`` is nobody's ID), and with Django
REST framework installed, a ``ModelSerializer`` writes the field as a decimal string (see
:mod:`shardid.rest_framework`): JavaScript's ``JSON.parse`` rounds integers above 2**53.

With PostgreSQL, the database can make IDs of the same layout itself (for raw SQL, bulk loads,
other services): install ``<schema>.next_id()`` with the migration operation
:class:`InstallPostgres` and make it the column's database default with :class:`NextId`::

    id = ShardIdField(primary_key=True, db_default=NextId("insta5"))

Rows the application saves get the application's shard; rows inserted without an ``id`` get
the database's. Give the database a shard no process uses.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import threading
from typing import Any

from django.core import checks
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.db import NotSupportedError, models
from django.db.migrations.operations.base import Operation

from shardid import Generator, Layout, LeasedGenerator, ShardIdError, lease
from shardid.dictionary import DEFAULT_CACHE, Dictionary
from shardid.sql import postgres, postgres_uninstall

__all__ = [
    "DenseIdField",
    "check_settings",
    "config_problems",
    "configured_layout",
    "InstallPostgres",
    "InstallSegments",
    "NextId",
    "ShardIdField",
    "dense_id",
    "get_generator",
    "next_id",
]

_lock = threading.Lock()
_generator: Generator | LeasedGenerator | None = None


def _layout_from(value: Any) -> Layout:
    if isinstance(value, Layout):
        return value
    presets = [name.lower() for name in Layout.preset_names()]
    if isinstance(value, str) and value.lower() in presets:
        return Layout.preset(value)
    if isinstance(value, dict):
        return Layout(**value)
    raise ImproperlyConfigured(
        f"must be one of {presets}, a shardid.Layout or a dict of Layout arguments, not {value!r}"
    )


def configured_layout() -> Layout:
    """The layout of ``settings.SHARDID`` (Instagram's when none is set), without making a
    generator: what :class:`ShardIdField` validates values against."""
    from django.conf import settings

    config: Any = getattr(settings, "SHARDID", None)
    try:
        return _layout_from(config.get("layout", "instagram") if isinstance(config, dict) else "instagram")
    except (TypeError, ValueError, ImproperlyConfigured) as e:
        raise ImproperlyConfigured(f"settings.SHARDID['layout'] {e}") from None


def validate_shard_id(value: Any) -> None:
    """A Django validator: ``value`` is an ID the configured layout can make."""
    try:
        configured_layout().validate_id(value)
    except (TypeError, ValueError) as e:
        raise ValidationError(
            "Not an ID of this layout: %(reason)s", code="invalid_shard_id", params={"reason": str(e)}
        ) from None


_KEYS = ("layout", "shard", "lease", "backwards_tolerance_ms", "max_borrow_units")
_EXAMPLE = (
    'SHARDID = {"layout": "instagram", "lease": {"directory": "/run/myapp/shards", "shards": [0, 64]}} '
    '(a shard per worker process, taken at start-up), or {"layout": "instagram", "shard": 5} for '
    "one process"
)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def config_problems(config: Any) -> list[tuple[str, str, str]]:
    """What is wrong with a ``SHARDID`` setting, as (key, problem, fix) triples: the rules both
    the system checks (``manage.py check``, run at start-up) and :func:`get_generator` apply."""
    if config is None:
        return [("SHARDID", "is not set", _EXAMPLE)]
    if not isinstance(config, dict):
        return [("SHARDID", f"must be a dict, not {type(config).__name__}", _EXAMPLE)]
    problems: list[tuple[str, str, str]] = []
    for key in config:
        if key not in _KEYS:
            problems.append((f"SHARDID[{key!r}]", "is not a setting of shardid", f"the keys are {', '.join(_KEYS)}"))
    try:
        layout = _layout_from(config.get("layout", "instagram"))
    except (ImproperlyConfigured, TypeError, ValueError) as e:
        presets = ", ".join(repr(name.lower()) for name in Layout.preset_names())
        fix = f"use a preset ({presets}), a shardid.Layout, or a dict of its keyword arguments (epoch_ms, time_bits, shard_bits, sequence_bits, ...)"
        return [*problems, ("SHARDID['layout']", str(e), fix)]
    if not layout.signed:
        problems.append(
            ("SHARDID['layout']", f"{layout!r} makes unsigned 64-bit IDs, which do not fit a BIGINT column", "use a signed layout such as 'instagram' or 'twitter'")
        )
    if ("shard" in config) == ("lease" in config):
        problems.append(("SHARDID", "needs exactly one of 'shard' and 'lease'", _EXAMPLE))
    if "shard" in config:
        shard = config["shard"]
        if not _int(shard) or not 0 <= shard <= layout.max_shard:
            problems.append(("SHARDID['shard']", f"must be an int in 0..={layout.max_shard}, not {shard!r}", "give each process writing to the database its own shard, or use 'lease'"))
    if "lease" in config:
        problems.extend(_lease_problems(config["lease"], layout))
    for key in ("backwards_tolerance_ms", "max_borrow_units"):
        if key in config and (not _int(config[key]) or config[key] < 0):
            problems.append((f"SHARDID[{key!r}]", f"must be an int >= 0, not {config[key]!r}", "or leave it out for the default"))
    return problems


def _lease_shards(value: Any) -> range | None:
    """The lease's shards as a range: ``[first, end]``, ``(first, end)`` or ``range(first, end)``."""
    if isinstance(value, range) and value.step == 1:
        return value
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(_int(v) for v in value):
        return range(value[0], value[1])
    return None


def _lease_problems(value: Any, layout: Layout) -> list[tuple[str, str, str]]:
    example = '{"directory": "/run/myapp/shards", "shards": [0, 64]}'
    if not isinstance(value, dict):
        return [("SHARDID['lease']", f"must be a dict, not {type(value).__name__}", f"such as {example}")]
    problems = [
        (f"SHARDID['lease'][{key!r}]", "is not a setting of a lease", "the keys are directory and shards")
        for key in value
        if key not in ("directory", "shards")
    ]
    directory = value.get("directory")
    if not isinstance(directory, (str, os.PathLike)) or not str(directory):
        problems.append(("SHARDID['lease']['directory']", f"must be a path, not {directory!r}", "a directory every process of the app on this host can write (created if missing)"))
    shards = _lease_shards(value.get("shards"))
    if shards is None:
        problems.append(("SHARDID['lease']['shards']", f"must be [first, end] or range(first, end), not {value.get('shards')!r}", "e.g. [0, 64]: shards 0 to 63"))
    elif not (0 <= shards.start < shards.stop <= layout.max_shard + 1):
        problems.append(("SHARDID['lease']['shards']", f"{shards} is empty or outside the layout's shards 0..={layout.max_shard}", "e.g. [0, 64], at least one shard per worker process"))
    return problems


def check_settings(**kwargs: Any) -> list[Any]:
    """The system check of ``settings.SHARDID`` (``manage.py check``, run at start-up): one
    ``shardid.E001`` error per problem, naming the key and the fix, and the warning
    ``shardid.W001`` for a fixed ``shard``, which repeats IDs as soon as two processes (workers of
    one gunicorn, uWSGI or Celery, or copies of one deployment) use the setting. A project that
    really runs one process per shard silences it with ``SILENCED_SYSTEM_CHECKS =
    ["shardid.W001"]``."""
    from django.conf import settings
    from django.core.checks import Error, Warning  # noqa: A004 (Django's name)

    config: Any = getattr(settings, "SHARDID", None)
    messages: list[Any] = [
        Error(f"settings.{key} {problem}", hint=fix, id="shardid.E001")
        for key, problem, fix in config_problems(config)
    ]
    if not messages and "shard" in config:
        messages.append(
            Warning(
                f"settings.SHARDID['shard'] = {config['shard']} gives every process that loads these "
                "settings the same shard: two workers (gunicorn, uWSGI, Celery) or two copies of the "
                "app then make the same IDs in the same millisecond",
                hint='lease a shard per process instead: SHARDID = {"layout": ..., "lease": '
                '{"directory": "/run/myapp/shards", "shards": [0, 64]}}; or, if exactly one process '
                'uses this setting, SILENCED_SYSTEM_CHECKS = ["shardid.W001"]',
                id="shardid.W001",
            )
        )
    return messages


def get_generator() -> Generator | LeasedGenerator:
    """The process-wide generator configured by ``settings.SHARDID``, made on first use."""
    global _generator
    generator = _generator
    if generator is not None:
        return generator
    from django.conf import settings

    with _lock:
        if _generator is None:
            config: Any = getattr(settings, "SHARDID", None)
            problems = config_problems(config)
            if problems:
                key, problem, fix = problems[0]
                raise ImproperlyConfigured(f"settings.{key} {problem} ({fix})")
            layout = _layout_from(config.get("layout", "instagram"))
            options = {k: v for k, v in config.items() if k not in ("layout", "shard", "lease")}
            if "lease" in config:
                shards = _lease_shards(config["lease"]["shards"])
                assert shards is not None  # checked above
                _generator = lease(layout, config["lease"]["directory"], shards, **options)
            else:
                _generator = Generator(layout=layout, shard=config["shard"], **options)
        return _generator


def next_id() -> int:
    """A new ID from the process-wide generator: the default of :class:`ShardIdField`."""
    return get_generator().next_id()


class ShardIdField(models.BigIntegerField):
    """A ``BigIntegerField`` whose default is a new ID from the configured generator.

    ``ShardIdField(primary_key=True)`` replaces the auto-incrementing ``id``. Migrations
    record the field without its default (the generator is configuration, not schema), so
    changing ``settings.SHARDID`` needs no migration.
    """

    description = "A time-sortable 64-bit ID made by shardid"
    default_validators = [validate_shard_id]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("default", next_id)
        super().__init__(*args, **kwargs)

    def contribute_to_class(self, cls: Any, name: str, *args: Any, **kwargs: Any) -> None:
        super().contribute_to_class(cls, name, *args, **kwargs)
        # With Django REST framework installed, model serializers write IDs as strings.
        if importlib.util.find_spec("rest_framework") is not None:
            from shardid.rest_framework import register

            register()

    def deconstruct(self) -> Any:
        name, path, args, kwargs = super().deconstruct()
        if kwargs.get("default") is next_id:
            del kwargs["default"]
        return name, path, args, kwargs


class NextId(models.Func):
    """``<schema>.next_id()``: an ID made by the database, for ``db_default`` (PostgreSQL, after
    :class:`InstallPostgres` for the same schema)."""

    output_field = models.BigIntegerField()

    def __init__(self, schema: str) -> None:
        postgres_uninstall(schema)  # checks the name the way the SQL emitter does
        self.schema = schema
        super().__init__()

    def as_sql(self, compiler: Any, connection: Any, **extra_context: Any) -> Any:
        return f"{self.schema}.next_id()", []


class InstallPostgres(Operation):
    """A migration operation that installs ``<schema>.next_id()`` and the decoding functions
    (:func:`shardid.sql.postgres`) for ``layout`` and ``shard``; reversing it removes them.

    ``layout`` is a preset name, a :class:`shardid.Layout` or a dict of its arguments::

        operations = [InstallPostgres(layout="instagram", shard=5, schema="insta5"), ...]
    """

    reduces_to_sql = True
    reversible = True

    def __init__(self, layout: Any, shard: int, schema: str, **options: int) -> None:
        self.layout = layout
        self.shard = shard
        self.schema = schema
        self.options = options
        self.install_sql = postgres(_layout_from(layout), shard, schema, **options)
        self.uninstall_sql = postgres_uninstall(schema)

    def deconstruct(self) -> Any:
        kwargs = {"layout": self.layout, "shard": self.shard, "schema": self.schema, **self.options}
        return self.__class__.__qualname__, [], kwargs

    def state_forwards(self, app_label: str, state: Any) -> None:
        pass

    def _execute(self, schema_editor: Any, sql: str) -> None:
        if schema_editor.connection.vendor != "postgresql":
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


# Dense IDs from segments (shardid.segments), one allocator per (database alias, schema, tag)
# in each process.
_dense: dict[tuple[str, str, str], Any] = {}

# The libpq parameters Django's PostgreSQL backend passes that a conninfo string can carry.
_CONNINFO_KEYS = {
    "dbname", "user", "password", "host", "port", "sslmode", "sslrootcert", "sslcert", "sslkey",
    "sslpassword", "connect_timeout", "application_name", "options", "service", "passfile",
    "target_session_attrs",
}  # fmt: skip


def dense_id(tag: str, schema: str = "seg", using: str = "default") -> int:
    """The next dense ID of ``tag``, from segments of the database ``using`` (its own
    connection, made from Django's settings for that alias): the default of
    :class:`DenseIdField`."""
    key = (using, schema, tag)
    ids = _dense.get(key)
    if ids is None:
        with _lock:
            ids = _dense.get(key)
            if ids is None:
                from django.db import connections
                from psycopg.conninfo import make_conninfo

                from shardid.segments import DenseIds

                params = connections[using].get_connection_params()
                conninfo = make_conninfo(**{k: v for k, v in params.items() if k in _CONNINFO_KEYS and v not in (None, "")})
                ids = _dense[key] = DenseIds(conninfo, tag, schema=schema)
    return ids.next_id()


class DenseIdField(models.BigIntegerField):
    """A ``BigIntegerField`` whose default is the next dense ID of ``tag`` (order numbers,
    invoice numbers), taken in segments from the database (:mod:`shardid.segments`; PostgreSQL,
    after :class:`InstallSegments`). IDs increase per process; across processes they interleave
    by segment. Not editable in forms by default.

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
        return name, path, args, kwargs


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
        s = self.schema
        for function in ("give_back(text, bigint, bigint)", "next_dense_id(text)", "take_segment(text, bigint)", "create_tag(text, bigint)"):
            schema_editor.execute(f"DROP FUNCTION IF EXISTS {s}.{function}", params=None)
        schema_editor.execute(f"DROP TABLE IF EXISTS {s}.shardid_tags", params=None)

    def describe(self) -> str:
        return f"Install shardid's dense IDs from segments in {self.schema}"

    @property
    def migration_name_fragment(self) -> str:
        return f"shardid_segments_{self.schema}"


class _DjangoDictionary(Dictionary):
    """A :class:`~shardid.dictionary.Dictionary` whose statements run on Django's connection
    for ``using`` (the thread's own, in its transaction)."""

    def __init__(self, topic: str, *, schema: str, using: str, cache_size: int) -> None:
        super().__init__("django", topic, schema=schema, cache_size=cache_size)
        self.using = using
        self.server = 0

    def _execute(self, sql: str, params: tuple[Any, ...]) -> Any:
        from django.db import DatabaseError, connections

        try:
            with connections[self.using].cursor() as cursor:
                cursor.execute(sql, [list(p) if isinstance(p, tuple) else p for p in params])
                row = cursor.fetchone()
                return row[0] if row else None
        except DatabaseError as e:
            raise self._translate(e.__cause__ or e) from e

    def _committed(self, strings: list[Any], ids: list[Any]) -> bool:
        # Inside transaction.atomic() the answers may be this transaction's own new strings,
        # which a rollback undoes: cache them when it commits, never before.
        from django.db import connections, transaction

        if not connections[self.using].in_atomic_block:
            return True
        pairs = [(s, i) for s, i in zip(strings, ids) if s is not None and i is not None]
        keep = ([s for s, _ in pairs], [i for _, i in pairs])
        transaction.on_commit(lambda: self.cache.remember_ids(*keep), using=self.using)
        return False

    def close(self) -> None:
        """Nothing to close: the connection is Django's."""

    def __repr__(self) -> str:
        return f"dictionary(topic={self.topic!r}, schema={self.schema!r}, using={self.using!r}, cached={len(self.cache)})"


_dictionaries: dict[tuple[str, str, str], _DjangoDictionary] = {}


def dictionary(topic: str, *, schema: str = "dict", using: str = "default", cache_size: int = DEFAULT_CACHE) -> Dictionary:
    """The string <-> ID dictionary of ``topic`` (:mod:`shardid.dictionary`) on Django's
    connection ``using`` (PostgreSQL, after :class:`InstallDictionary`): one per process and
    topic, its cache shared by every thread::

        from shardid.django import dictionary

        tag_id = dictionary("tags").id(request.POST["tag"])

    The statements run in the caller's transaction: inside ``transaction.atomic()``, a call that
    assigns new IDs holds the topic's lock until that transaction ends (other writers of new
    strings of the topic wait), and a rollback gives the IDs back.
    """
    key = (using, schema, topic)
    found = _dictionaries.get(key)
    if found is None:
        with _lock:
            found = _dictionaries.get(key)
            if found is None:
                found = _dictionaries[key] = _DjangoDictionary(topic, schema=schema, using=using, cache_size=cache_size)
    return found


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


# `manage.py check` (and every management command, and runserver at start-up) reports a bad
# SHARDID setting once this module is imported, which a model using ShardIdField does.
checks.register(check_settings, "shardid")
