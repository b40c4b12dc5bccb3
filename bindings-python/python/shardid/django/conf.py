"""``settings.SHARDID``, read and checked: the rules both the system checks (``manage.py
check``) and the process's generator (:mod:`shardid.django.leases`) apply."""

from __future__ import annotations

import os
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from shardid import Layout

KEYS = ("layout", "shard", "lease", "backwards_tolerance_ms", "max_borrow_units")
LEASE_KEYS = ("directory", "shards", "using", "kind", "ttl_ms", "schema")
EXAMPLE = (
    'SHARDID = {"layout": "instagram"} (each process leases a shard through the project\'s '
    "database), or add \"lease\": {\"shards\": [0, 64]} to choose the shards"
)
# Where the default lease can be kept: PostgreSQL, MySQL and MariaDB (a table of leases; Django's
# vendor "mysql" is both) and SQLite (lock files next to the database file).
LEASE_VENDORS = ("postgresql", "mysql", "sqlite")


def layout_from(value: Any) -> Layout:
    """A layout from its setting: a preset name, a :class:`shardid.Layout`, or a dict of its
    keyword arguments."""
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


def setting() -> Any:
    """``settings.SHARDID``, or ``None`` when the project sets none."""
    from django.conf import settings

    return getattr(settings, "SHARDID", None)


def configured_layout() -> Layout:
    """The layout of ``settings.SHARDID`` (Instagram's when none is set), without making a
    generator: what :class:`~shardid.django.ShardIdField` validates values against."""
    config: Any = setting()
    try:
        return layout_from(config.get("layout", "instagram") if isinstance(config, dict) else "instagram")
    except (TypeError, ValueError, ImproperlyConfigured) as e:
        raise ImproperlyConfigured(f"settings.SHARDID['layout'] {e}") from None


def is_int(value: Any) -> bool:
    """Whether a setting's value is an ``int`` (a ``bool`` is not, though Python says it is)."""
    return isinstance(value, int) and not isinstance(value, bool)


def default_shards(layout: Layout) -> range:
    """The shards a lease takes from unless told: all but the last, which is left for the
    database's own ``next_id()``."""
    return range(0, max(layout.max_shard, 1))


def lease_shards(value: Any) -> range | None:
    """The lease's shards as a range: ``[first, end]``, ``(first, end)`` or ``range(first, end)``."""
    if isinstance(value, range) and value.step == 1:
        return value
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(is_int(v) for v in value):
        return range(value[0], value[1])
    return None


def config_problems(config: Any, databases: dict[str, str] | None = None) -> list[tuple[str, str, str]]:
    """What is wrong with a ``SHARDID`` setting, as (key, problem, fix) triples.

    ``databases`` maps the project's database aliases to their vendors (``"postgresql"``,
    ``"sqlite"``, ...), for a lease kept in a database; ``None`` skips those checks."""
    if config is None:
        config = {}
    if not isinstance(config, dict):
        return [("SHARDID", f"must be a dict, not {type(config).__name__}", EXAMPLE)]
    problems: list[tuple[str, str, str]] = []
    for key in config:
        if key not in KEYS:
            problems.append((f"SHARDID[{key!r}]", "is not a setting of shardid", f"the keys are {', '.join(KEYS)}"))
    try:
        layout = layout_from(config.get("layout", "instagram"))
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
        if not is_int(shard) or not 0 <= shard <= layout.max_shard:
            problems.append(("SHARDID['shard']", f"must be an int in 0..={layout.max_shard}, not {shard!r}", "or leave 'shard' out: each process then leases its own"))
    else:
        problems.extend(_lease_problems(config.get("lease", {}), layout, databases))
    for key in ("backwards_tolerance_ms", "max_borrow_units"):
        if key in config and (not is_int(config[key]) or config[key] < 0):
            problems.append((f"SHARDID[{key!r}]", f"must be an int >= 0, not {config[key]!r}", "or leave it out for the default"))
    return problems


def _lease_problems(value: Any, layout: Layout, databases: dict[str, str] | None) -> list[tuple[str, str, str]]:
    from shardid._shardid import _check_lease

    example = '{"shards": [0, 64]}, {"using": "default"} or {"directory": "/run/myapp/shards", "shards": [0, 64]}'
    if not isinstance(value, dict):
        return [("SHARDID['lease']", f"must be a dict, not {type(value).__name__}", f"such as {example}")]
    problems = [
        (f"SHARDID['lease'][{key!r}]", "is not a setting of a lease", f"the keys are {', '.join(LEASE_KEYS)}")
        for key in value
        if key not in LEASE_KEYS
    ]
    if "directory" in value and "using" in value:
        problems.append(("SHARDID['lease']", "has both 'directory' and 'using'", "lock files in a directory (one host), or a database alias (every host): one of them"))
    if "directory" in value:
        directory = value["directory"]
        if not isinstance(directory, (str, os.PathLike)) or not str(directory):
            problems.append(("SHARDID['lease']['directory']", f"must be a path, not {directory!r}", "a directory every process of the app on this host can write (created if missing)"))
        for key in ("kind", "ttl_ms", "schema"):
            if key in value:
                problems.append((f"SHARDID['lease'][{key!r}]", "is a setting of a lease kept in a database, not in lock files", "leave it out, or lease through a database alias ('using')"))
    else:
        kind, ttl_ms = value.get("kind", "expiring"), value.get("ttl_ms", 10_000)
        reason = _check_lease(kind, ttl_ms) if isinstance(kind, str) and is_int(ttl_ms) and ttl_ms >= 0 else None
        if not isinstance(kind, str) or (reason is not None and reason[0] == "kind"):
            problems.append(("SHARDID['lease']['kind']", f"must be 'expiring' or 'session', not {kind!r}", "leave it out for the default, 'expiring', which works behind connection poolers"))
        elif not is_int(ttl_ms) or ttl_ms < 0 or reason is not None:
            problems.append(("SHARDID['lease']['ttl_ms']", f"must be an int within 300..=3600000, not {ttl_ms!r}", "leave it out for the default, 10000 (10 s)"))
        schema = value.get("schema")
        if schema is not None and not isinstance(schema, str):
            problems.append(("SHARDID['lease']['schema']", f"must be a schema's name, not {schema!r}", "the schema of the lease table (PostgreSQL; the database on MySQL), or leave it out"))
        using = value.get("using", "default")
        if not isinstance(using, str):
            problems.append(("SHARDID['lease']['using']", f"must be a database alias, not {using!r}", "a key of settings.DATABASES"))
        elif databases is not None:
            vendor = databases.get(using)
            where = "SHARDID['lease']['using']" if "using" in value else "SHARDID"
            if vendor is None:
                problems.append((where, f"leases shards through the database {using!r}, which settings.DATABASES does not have", f"name one of {sorted(databases)}"))
            elif vendor not in LEASE_VENDORS:
                problems.append(
                    (where, f"leases shards through the database {using!r}, but shardid keeps leases only in PostgreSQL, MySQL, MariaDB or SQLite, not {vendor}",
                     'lease from lock files: "lease": {"directory": "/run/myapp/shards"} (processes of one host), or a fixed "shard" for exactly one process')
                )
    if "shards" in value:
        shards = lease_shards(value["shards"])
        if shards is None:
            problems.append(("SHARDID['lease']['shards']", f"must be [first, end] or range(first, end), not {value['shards']!r}", "e.g. [0, 64]: shards 0 to 63"))
        elif not (0 <= shards.start < shards.stop <= layout.max_shard + 1):
            problems.append(("SHARDID['lease']['shards']", f"{shards} is empty or outside the layout's shards 0..={layout.max_shard}", "e.g. [0, 64], at least one shard per worker process"))
    return problems
