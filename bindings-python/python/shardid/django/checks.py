"""The system checks of ``settings.SHARDID`` (``manage.py check``, run at start-up by every
management command and by ``runserver``): registered by :class:`~shardid.django.apps.ShardIdConfig`
when ``"shardid.django"`` is in ``INSTALLED_APPS``, or by the first model field of shardid's
otherwise."""

from __future__ import annotations

from typing import Any

from django.core import checks

from shardid.django.conf import config_problems, default_shards, layout_from, lease_shards, setting

__all__ = ["check_auto_fields", "check_segments_installed", "check_settings", "register"]


def _database_vendors() -> dict[str, str]:
    from django.db import connections

    return {alias: connections[alias].vendor for alias in connections}


def _database_shards() -> list[tuple[str, int, Any]]:
    """The shards and layouts the project's migrations give the database's own ``next_id()``
    (:class:`~shardid.django.InstallPostgres`), with the migration that does: read from disk,
    no connection."""
    from django.db.migrations.loader import MigrationLoader

    from shardid.django.operations import InstallPostgres

    try:
        loader = MigrationLoader(None, ignore_no_migrations=True)
    except Exception:  # noqa: BLE001 (a broken migration is reported by Django itself)
        return []
    return [
        (f"{app}.{name}", op.shard, op.layout)
        for (app, name), migration in sorted(loader.disk_migrations.items())
        for op in migration.operations
        if isinstance(op, InstallPostgres)
    ]


def check_settings(**kwargs: Any) -> list[Any]:
    """The system check of ``settings.SHARDID``: one ``shardid.E001`` error per problem, naming
    the key and the fix; ``shardid.E002`` when a migration gives the database's ``next_id()``
    (:class:`~shardid.django.InstallPostgres`) a shard the application's processes can take, or
    another layout than theirs (one column would then hold IDs of two layouts, which decode and
    sort wrongly);
    and the warning ``shardid.W001`` for a fixed ``shard``, which repeats IDs as soon as two
    processes (workers of one gunicorn, uWSGI or Celery, or copies of one deployment) use the
    setting. A project that really runs one process per shard silences it with
    ``SILENCED_SYSTEM_CHECKS = ["shardid.W001"]``. The warning ``shardid.W002``: the layout runs
    out within five years (the core's :meth:`shardid.Layout.runs_out_soon`, on the system clock)."""
    from django.core.checks import Error, Warning  # noqa: A004 (Django's name)

    config: Any = setting()
    messages: list[Any] = [
        Error(f"settings.{key} {problem}", hint=fix, id="shardid.E001")
        for key, problem, fix in config_problems(config, _database_vendors())
    ]
    if messages:
        return messages
    config = config or {}
    layout = layout_from(config.get("layout", "instagram"))
    if "shard" in config:
        taken = range(config["shard"], config["shard"] + 1)
    else:
        taken = lease_shards(config.get("lease", {}).get("shards")) or default_shards(layout)
    for migration, shard, installed in _database_shards():
        try:
            installed_layout = layout_from(installed)
        except Exception:  # noqa: BLE001 (the operation refused it when the migration was loaded)
            installed_layout = None
        if installed_layout is not None and installed_layout != layout:
            messages.append(
                Error(
                    f"migration {migration} installs the database's next_id() for the layout {installed!r}, but "
                    f"settings.SHARDID['layout'] is {config.get('layout', 'instagram')!r}: rows the database numbers "
                    "and rows the application numbers would hold IDs of two layouts, which decode to the wrong "
                    "time and shard and sort out of order",
                    hint="keep one layout: the migration's (in settings.SHARDID['layout']), or a new migration "
                    "installing next_id() for the setting's layout (in a schema of its own)",
                    id="shardid.E002",
                )
            )
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
    if layout.runs_out_soon():
        name = config.get("layout", "instagram")
        shown = repr(name) if isinstance(name, str) else repr(layout)
        messages.append(
            Warning(
                f"settings.SHARDID['layout'] {shown} runs out on {layout.expires_at:%Y-%m-%d %H:%M} UTC, within five "
                "years: after that moment its generators refuse to make IDs (shardid never wraps them), and moving "
                "a table's keys to a new layout takes releases to do",
                hint="plan the move now: a layout with a later epoch or more time bits for new IDs (`shardid layout` "
                "prints a layout's run-out date), in new tables or a new column; or, once the move is planned, "
                'SILENCED_SYSTEM_CHECKS = ["shardid.W002"]',
                id="shardid.W002",
            )
        )
    return messages


def check_auto_fields(app_configs: Any = None, **kwargs: Any) -> list[Any]:
    """The warning ``shardid.W004``: ``settings.DEFAULT_AUTO_FIELD`` is shardid's
    (:class:`~shardid.django.ShardIdAutoField`, or a subclass) but an installed app's
    ``AppConfig`` pins a ``default_auto_field`` of its own, so that app's models get another
    kind of automatic key (1, 2, 3), without a word from Django. ``startapp`` writes
    ``default_auto_field = 'django.db.models.BigAutoField'`` into every app's ``apps.py``. One
    warning per app, naming its ``AppConfig`` and the line to delete. Django's own apps
    (``django.contrib.*``) pin ``AutoField`` on purpose and are left out (the book: a custom
    user model)."""
    from django.apps import AppConfig, apps
    from django.conf import settings
    from django.core.checks import Warning as DjangoWarning
    from django.utils.module_loading import import_string

    from shardid.django.fields import ShardIdAutoField

    def shardids(path: Any) -> bool:
        try:
            field = import_string(path)
        except Exception:  # noqa: BLE001 (Django reports a path it cannot import itself)
            return False
        return isinstance(field, type) and issubclass(field, ShardIdAutoField)

    setting = getattr(settings, "DEFAULT_AUTO_FIELD", None)
    if not isinstance(setting, str) or not shardids(setting):
        return []
    configs = apps.get_app_configs() if app_configs is None else app_configs
    messages: list[Any] = []
    for config in configs:
        pinned = type(config).default_auto_field
        if pinned is AppConfig.default_auto_field or config.name.split(".")[0] in ("django", "shardid"):
            continue  # the setting's; or Django's own apps, which keep AutoField on purpose
        if not isinstance(pinned, str) or shardids(pinned):
            continue
        where = f"{type(config).__module__}.{type(config).__qualname__}"
        messages.append(
            DjangoWarning(
                f"app {config.label!r}: {where} sets default_auto_field = {pinned!r}, which overrides "
                f"settings.DEFAULT_AUTO_FIELD ({setting!r}): its models' automatic keys are {pinned.rsplit('.', 1)[-1]}'s "
                "(1, 2, 3), not shardid IDs",
                hint=f"delete the default_auto_field line from {where} (startapp writes it) and run makemigrations "
                "(one AlterField per model already migrated); or, to keep that app's keys, "
                'SILENCED_SYSTEM_CHECKS = ["shardid.W004"]',
                obj=config,
                id="shardid.W004",
            )
        )
    return messages


def _unapplied_migrations(using: str) -> bool:
    """Whether the database ``using`` has migrations still to apply."""
    from django.db import connections
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connections[using])
    return bool(executor.migration_plan(executor.loader.graph.leaf_nodes()))


def check_segments_installed(app_configs: Any = None, databases: Any = None, **kwargs: Any) -> list[Any]:
    """The database check ``shardid.E003`` (``manage.py check --database default``; Django runs
    database checks only when asked): a model's :class:`~shardid.django.DenseIdField` or
    :class:`~shardid.django.SerialField` takes numbers from segments in a database where
    :class:`~shardid.django.InstallSegments` never ran, naming that operation. Said once every
    migration is applied: before, one of them may install the segments (``migrate`` runs this
    check before it applies them)."""
    if not databases:
        return []
    from django.apps import apps
    from django.core.checks import Error

    from shardid.django.fields import DenseIdField
    from shardid.django.operations import segments_missing
    from shardid.django.serials import SerialField

    models = apps.get_models() if app_configs is None else [m for c in app_configs for m in c.get_models()]
    users: dict[tuple[str, str, bool], list[str]] = {}
    for model in models:
        for field in model._meta.local_fields:
            if isinstance(field, (DenseIdField, SerialField)) and field.using in databases:
                key = (field.using, field.schema, isinstance(field, SerialField))
                users.setdefault(key, []).append(f"{model._meta.label}.{field.name}")
    messages: list[Any] = []
    for (using, schema, serials), fields in sorted(users.items()):
        problem = segments_missing(using, schema, serials=serials)
        # With migrations still to apply, one of them may be the InstallSegments: `migrate` runs
        # this check before it applies them, and `runserver` already says they are unapplied.
        if problem is not None and not _unapplied_migrations(using):
            messages.append(
                Error(
                    f"{', '.join(fields)}: {problem}",
                    hint=f"operations = [InstallSegments(schema={schema!r}, tags=[...])] in a migration "
                    "(from shardid.django import InstallSegments)",
                    id="shardid.E003",
                )
            )
    return messages


def check_serial_widths(app_configs: Any = None, databases: Any = None, **kwargs: Any) -> list[Any]:
    """The database check ``shardid.W003`` (``manage.py check --database default``): the current
    period of a :class:`~shardid.django.SerialField`'s tag has fewer numbers left than one
    failover would skip at the rate it runs at, so after a promotion its serials would fail
    with ``SERIAL_OVERFLOW`` until the next period — said now, as ``shardid status`` says it
    (the core's status report over Django's connection: the same rule, the same words). Quiet
    where ``shardid.E003`` already speaks (no segments, or migrations to apply)."""
    if not databases:
        return []
    from django.apps import apps
    from django.core.checks import Warning as DjangoWarning
    from django.db import connections

    from shardid import status
    from shardid.django.conf import configured_layout
    from shardid.django.operations import segments_missing
    from shardid.django.serials import SerialField

    models = apps.get_models() if app_configs is None else [m for c in app_configs for m in c.get_models()]
    wanted: dict[tuple[str, str], dict[str, list[str]]] = {}
    for model in models:
        for field in model._meta.local_fields:
            if isinstance(field, SerialField) and field.using in databases:
                tags = wanted.setdefault((field.using, field.schema), {})
                tags.setdefault(field.tag, []).append(f"{model._meta.label}.{field.name}")
    messages: list[Any] = []
    for (using, schema), tags in sorted(wanted.items()):
        if segments_missing(using, schema, serials=True) is not None or _unapplied_migrations(using):
            continue
        connection = connections[using]
        if connection.vendor not in ("postgresql", "mysql", "sqlite"):
            continue  # the field says so itself
        # On SQLite the tables are in the file itself (main), whatever the schema's name.
        where = None if connection.vendor == "sqlite" else schema
        report = status.read(connection, segments_schema=where, layout=configured_layout())
        for warning in report.warnings:
            # "serial period orders@2026-11-25 has 99 numbers left, fewer than a failover skips now (280): ..."
            if not warning.startswith("serial period "):
                continue
            base = warning.split(" ", 3)[2].split("@", 1)[0]
            if base in tags:
                messages.append(
                    DjangoWarning(
                        f"{', '.join(tags[base])}: {warning}",
                        hint="a format with more digits ({seq:N}) under a new tag (CreateSerial), or a period that "
                        "resets less often; the skip follows the period's rate (the book: Poolers, standbys and failovers)",
                        id="shardid.W003",
                    )
                )
    return messages


def register() -> None:
    """Registers the checks (once: Django's registry keeps a set) and the test runner's hook
    that releases this process's database connections before a test database is dropped."""
    checks.register(check_settings, "shardid")
    checks.register(check_auto_fields, "shardid")
    checks.register(check_segments_installed, "shardid", checks.Tags.database)
    checks.register(check_serial_widths, "shardid", checks.Tags.database)
    from shardid.django.leases import release_before_dropping_test_databases
    from shardid.django.public import check_public_id_keys

    checks.register(check_public_id_keys, "shardid")

    release_before_dropping_test_databases()
