"""Django integration: :class:`ShardIdField`, a ``BigIntegerField`` whose default is a new
shardid ID, usable as ``primary_key=True``.

With no setting at all, or only a layout, each process leases a shard of its own through the
project's database the first time it makes an ID, so workers of a pre-fork server (gunicorn,
uWSGI, Celery) and copies of the app on other hosts never share one::

    SHARDID = {"layout": "instagram"}

On PostgreSQL the lease is a session advisory lock held on a connection of the process's own,
with each shard's ceiling kept in the table ``shardid_leases`` (:mod:`shardid.postgres`, needs
``psycopg``: ``pip install shardid[postgres]``); on SQLite, lock files in a directory next to
the database file (``db.sqlite3-shardid``). The shards are ``0`` to ``max_shard - 1``: the last
one is left for the database's own ``next_id()`` (:class:`InstallPostgres`).

``layout`` is a preset name (``"instagram"``, ``"twitter"``, ``"sonyflake"``), a
:class:`shardid.Layout`, or a dict of :class:`shardid.Layout` keyword arguments. ``lease``
chooses the shards and where they are leased: ``{"shards": [0, 64]}``, ``{"using": "other"}``
(another database alias), or ``{"directory": "/run/myapp/shards", "shards": [0, 64]}`` (lock
files, for processes of one host). A fixed ``shard`` is for exactly one process, and warned
about (``shardid.W001``).

IDs are made in the application, without a round trip to the database, and fit a signed
``BIGINT``: unsigned layouts such as Discord's are refused. Values saved into the field are
checked against the layout (model and form validation; ``-5`` is nobody's ID), and with Django
REST framework installed, a ``ModelSerializer`` writes the field as a decimal string (see
:mod:`shardid.rest_framework`): JavaScript's ``JSON.parse`` rounds integers above 2**53.

With PostgreSQL, the database can make IDs of the same layout itself (for raw SQL, bulk loads,
other services): install ``<schema>.next_id()`` with the migration operation
:class:`InstallPostgres` and make it the column's database default with :class:`NextId`::

    id = ShardIdField(primary_key=True, db_default=NextId("insta"))

Rows the application saves get the application's shard; rows inserted without an ``id`` get
the database's. Give the database a shard no process leases (the last one, by default): the
system checks say so if a migration's shard is among the leased ones (``shardid.E002``).
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
    "release",
]

_lock = threading.Lock()
_generator: Generator | LeasedGenerator | None = None
# (database alias, close) of the connections this process holds for leases.
_closers: list[tuple[str, Any]] = []


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
    'SHARDID = {"layout": "instagram"} (each process leases a shard through the project\'s '
    "database), or add \"lease\": {\"shards\": [0, 64]} to choose the shards"
)
# Where the default lease can be kept: PostgreSQL (advisory locks and a table of ceilings) and
# SQLite (lock files next to the database file).
_LEASE_VENDORS = ("postgresql", "sqlite")


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _default_shards(layout: Layout) -> range:
    """The shards a lease takes from unless told: all but the last, which is left for the
    database's own ``next_id()``."""
    return range(0, max(layout.max_shard, 1))


def config_problems(config: Any, databases: dict[str, str] | None = None) -> list[tuple[str, str, str]]:
    """What is wrong with a ``SHARDID`` setting, as (key, problem, fix) triples: the rules both
    the system checks (``manage.py check``, run at start-up) and :func:`get_generator` apply.

    ``databases`` maps the project's database aliases to their vendors (``"postgresql"``,
    ``"sqlite"``, ...), for a lease kept in a database; ``None`` skips those checks."""
    if config is None:
        config = {}
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
    if "shard" in config and "lease" in config:
        problems.append(("SHARDID", "has both 'shard' and 'lease'", "keep 'lease' (a shard per process); 'shard' is for exactly one process"))
    if "shard" in config:
        shard = config["shard"]
        if not _int(shard) or not 0 <= shard <= layout.max_shard:
            problems.append(("SHARDID['shard']", f"must be an int in 0..={layout.max_shard}, not {shard!r}", "or leave 'shard' out: each process then leases its own"))
    else:
        problems.extend(_lease_problems(config.get("lease", {}), layout, databases))
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


def _lease_problems(value: Any, layout: Layout, databases: dict[str, str] | None) -> list[tuple[str, str, str]]:
    example = '{"shards": [0, 64]}, {"using": "default"} or {"directory": "/run/myapp/shards", "shards": [0, 64]}'
    if not isinstance(value, dict):
        return [("SHARDID['lease']", f"must be a dict, not {type(value).__name__}", f"such as {example}")]
    problems = [
        (f"SHARDID['lease'][{key!r}]", "is not a setting of a lease", "the keys are shards, using and directory")
        for key in value
        if key not in ("directory", "shards", "using")
    ]
    if "directory" in value and "using" in value:
        problems.append(("SHARDID['lease']", "has both 'directory' and 'using'", "lock files in a directory (one host), or a database alias (every host): one of them"))
    if "directory" in value:
        directory = value["directory"]
        if not isinstance(directory, (str, os.PathLike)) or not str(directory):
            problems.append(("SHARDID['lease']['directory']", f"must be a path, not {directory!r}", "a directory every process of the app on this host can write (created if missing)"))
    else:
        using = value.get("using", "default")
        if not isinstance(using, str):
            problems.append(("SHARDID['lease']['using']", f"must be a database alias, not {using!r}", "a key of settings.DATABASES"))
        elif databases is not None:
            vendor = databases.get(using)
            where = "SHARDID['lease']['using']" if "using" in value else "SHARDID"
            if vendor is None:
                problems.append((where, f"leases shards through the database {using!r}, which settings.DATABASES does not have", f"name one of {sorted(databases)}"))
            elif vendor not in _LEASE_VENDORS:
                problems.append(
                    (where, f"leases shards through the database {using!r}, but shardid keeps leases only in PostgreSQL or SQLite, not {vendor}",
                     'lease from lock files: "lease": {"directory": "/run/myapp/shards"} (processes of one host), or a fixed "shard" for exactly one process')
                )
            elif vendor == "postgresql" and importlib.util.find_spec("psycopg") is None:
                problems.append((where, f"leases shards through the PostgreSQL database {using!r} with psycopg 3, which is not installed", "pip install 'shardid[postgres]'"))
    if "shards" in value:
        shards = _lease_shards(value["shards"])
        if shards is None:
            problems.append(("SHARDID['lease']['shards']", f"must be [first, end] or range(first, end), not {value['shards']!r}", "e.g. [0, 64]: shards 0 to 63"))
        elif not (0 <= shards.start < shards.stop <= layout.max_shard + 1):
            problems.append(("SHARDID['lease']['shards']", f"{shards} is empty or outside the layout's shards 0..={layout.max_shard}", "e.g. [0, 64], at least one shard per worker process"))
    return problems


def _database_vendors() -> dict[str, str]:
    from django.db import connections

    return {alias: connections[alias].vendor for alias in connections}


def _database_shards() -> list[tuple[str, int]]:
    """The shards the project's migrations give the database's own ``next_id()``
    (:class:`InstallPostgres`), with the migration that does: read from disk, no connection."""
    from django.db.migrations.loader import MigrationLoader

    try:
        loader = MigrationLoader(None, ignore_no_migrations=True)
    except Exception:  # noqa: BLE001 (a broken migration is reported by Django itself)
        return []
    return [
        (f"{app}.{name}", op.shard)
        for (app, name), migration in sorted(loader.disk_migrations.items())
        for op in migration.operations
        if isinstance(op, InstallPostgres)
    ]


def check_settings(**kwargs: Any) -> list[Any]:
    """The system check of ``settings.SHARDID`` (``manage.py check``, run at start-up): one
    ``shardid.E001`` error per problem, naming the key and the fix; ``shardid.E002`` when a
    migration gives the database's ``next_id()`` (:class:`InstallPostgres`) a shard the
    application's processes can take; and the warning ``shardid.W001`` for a fixed ``shard``,
    which repeats IDs as soon as two processes (workers of one gunicorn, uWSGI or Celery, or
    copies of one deployment) use the setting. A project that really runs one process per shard
    silences it with ``SILENCED_SYSTEM_CHECKS = ["shardid.W001"]``."""
    from django.conf import settings
    from django.core.checks import Error, Warning  # noqa: A004 (Django's name)

    config: Any = getattr(settings, "SHARDID", None)
    messages: list[Any] = [
        Error(f"settings.{key} {problem}", hint=fix, id="shardid.E001")
        for key, problem, fix in config_problems(config, _database_vendors())
    ]
    if messages:
        return messages
    config = config or {}
    layout = _layout_from(config.get("layout", "instagram"))
    if "shard" in config:
        taken = range(config["shard"], config["shard"] + 1)
    else:
        taken = _lease_shards(config.get("lease", {}).get("shards")) or _default_shards(layout)
    for migration, shard in _database_shards():
        if shard in taken:
            messages.append(
                Error(
                    f"migration {migration} installs the database's next_id() on shard {shard}, one of the "
                    f"shards the application's processes take ({taken.start}..{taken.stop - 1}): the two would make the same IDs",
                    hint=f"give the database a shard outside them, such as {layout.max_shard} (the last, which the default lease leaves free)",
                    id="shardid.E002",
                )
            )
    if "shard" in config:
        messages.append(
            Warning(
                f"settings.SHARDID['shard'] = {config['shard']} gives every process that loads these "
                "settings the same shard: two workers (gunicorn, uWSGI, Celery) or two copies of the "
                "app then make the same IDs in the same millisecond",
                hint="leave 'shard' out: each process then leases its own through the database; or, if exactly one "
                'process uses this setting, SILENCED_SYSTEM_CHECKS = ["shardid.W001"]',
                id="shardid.W001",
            )
        )
    return messages


def _sqlite_lease_directory(settings_dict: dict[str, Any]) -> str:
    """Lock files for a SQLite database: ``<file>-shardid`` beside it (as SQLite keeps its own
    ``-wal`` and ``-journal``); a database in memory belongs to one process, which gets a
    directory of its own user's."""
    import tempfile

    name = str(settings_dict.get("NAME") or "")
    if not name or name == ":memory:" or "mode=memory" in name or name.startswith("file:"):
        return os.path.join(tempfile.gettempdir(), f"shardid-sqlite-memory-{os.getuid() if hasattr(os, 'getuid') else 0}")
    return f"{name}-shardid"


def _conninfo(using: str) -> str:
    """A libpq connection string made from Django's settings for the database ``using``."""
    from django.db import connections
    from psycopg.conninfo import make_conninfo

    params = connections[using].get_connection_params()
    return make_conninfo(**{k: v for k, v in params.items() if k in _CONNINFO_KEYS and v not in (None, "")})


def _database_lease(layout: Layout, using: str, shards: range, options: dict[str, Any]) -> Any:
    from django.db import connections

    connection = connections[using]
    if connection.vendor == "sqlite":
        return lease(layout, _sqlite_lease_directory(connection.settings_dict), shards, **options)
    from shardid.postgres import lease as postgres_lease

    generator = postgres_lease(layout, _conninfo(using), shards, **options)
    _closers.append((using, generator.close))
    return generator


def get_generator() -> Generator | LeasedGenerator:
    """The process-wide generator configured by ``settings.SHARDID``, made on first use: with no
    ``shard``, the process leases its own (through the database, unless ``lease`` names a
    directory)."""
    global _generator
    generator = _generator
    if generator is not None:
        return generator
    from django.conf import settings

    with _lock:
        if _generator is None:
            config: Any = getattr(settings, "SHARDID", None) or {}
            problems = config_problems(config, _database_vendors())
            if problems:
                key, problem, fix = problems[0]
                raise ImproperlyConfigured(f"settings.{key} {problem} ({fix})")
            layout = _layout_from(config.get("layout", "instagram"))
            options = {k: v for k, v in config.items() if k not in ("layout", "shard", "lease")}
            if "shard" in config:
                _generator = Generator(layout=layout, shard=config["shard"], **options)
            else:
                spec = config.get("lease", {})
                shards = _lease_shards(spec.get("shards")) or _default_shards(layout)
                if "directory" in spec:
                    _generator = lease(layout, spec["directory"], shards, **options)
                else:
                    _generator = _database_lease(layout, spec.get("using", "default"), shards, options)
        return _generator


def release(using: str | None = None) -> None:
    """Closes the connections this process holds to the database ``using`` (all when
    ``None``) for its shard lease and dense IDs: their shards and unused numbers go back, and
    the next ID takes new ones. Django's test runner calls it before it drops a test database
    (which PostgreSQL refuses while a session is connected)."""
    global _generator
    with _lock:
        for alias, close in [c for c in _closers if using in (None, c[0])]:
            close()
            _closers.remove((alias, close))
            if _generator is not None and getattr(close, "__self__", None) is _generator:
                _generator = None
        for key in [k for k in _dense if using in (None, k[0])]:
            _dense.pop(key).close()


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
                from shardid.segments import DenseIds

                ids = _dense[key] = DenseIds(_conninfo(using), tag, schema=schema)
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
        from shardid.sql import segments_uninstall  # the core's: dense IDs and serials

        schema_editor.execute(segments_uninstall(self.schema), params=None)

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


def _release_before_dropping_test_databases() -> None:
    """Django's test runner (and pytest-django) drop each test database at the end; PostgreSQL
    refuses while a session is connected, and a lease or dense-ID allocator holds one. Django
    has no signal for it, so the one method both runners call releases them first."""
    from django.db.backends.base.creation import BaseDatabaseCreation

    original = BaseDatabaseCreation.destroy_test_db
    if getattr(original, "_shardid_releases", False):
        return

    @functools.wraps(original)
    def destroy_test_db(self: Any, *args: Any, **kwargs: Any) -> Any:
        release(self.connection.alias)
        return original(self, *args, **kwargs)

    destroy_test_db._shardid_releases = True  # type: ignore[attr-defined]
    BaseDatabaseCreation.destroy_test_db = destroy_test_db  # type: ignore[method-assign]


_release_before_dropping_test_databases()

# Business serial numbers: SerialField, NextSerial, CreateSerial (a module of their own).
from shardid._django_serials import CreateSerial, NextSerial, SerialField, next_serial  # noqa: E402

__all__ += ["CreateSerial", "NextSerial", "SerialField", "next_serial"]
