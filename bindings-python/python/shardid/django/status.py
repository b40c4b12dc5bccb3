"""What shardid's admin pages (:mod:`shardid.django.admin`) show: the project's leases, tags and
topics as :mod:`shardid.status` reads them (the figures of ``shardid status``), found where the
project keeps them. This module only finds the places and lays the rows out as text; every
figure is the status API's, computed in the core."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Section", "page", "places"]


@dataclass
class Section:
    """One table of a page: the rows of one place (a database, a schema), or why there are
    none (``problem``: the feature is not installed there, the database is unreachable)."""

    where: str
    columns: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    problem: str | None = None


def _migration_schemas() -> tuple[list[str], list[str]]:
    """The schemas the project's migrations install segments and the dictionary in (read from
    disk, no connection), in the order found, each once."""
    from django.db.migrations.loader import MigrationLoader

    from shardid.django.operations import InstallDictionary, InstallSegments

    try:
        loader = MigrationLoader(None, ignore_no_migrations=True)
    except Exception:  # noqa: BLE001 (a broken migration is reported by Django itself)
        return [], []
    segments: dict[str, None] = {}
    dictionaries: dict[str, None] = {}
    for _, migration in sorted(loader.disk_migrations.items()):
        for op in migration.operations:
            if isinstance(op, InstallSegments):
                segments[op.schema] = None
            elif isinstance(op, InstallDictionary):
                dictionaries[op.schema] = None
    return list(segments), list(dictionaries)


def places() -> dict[str, Any]:
    """Where the project keeps each feature's rows: the lease's database alias
    (``SHARDID["lease"]["using"]``, ``"default"``; ``None`` when the lease is kept in lock
    files or the shard is fixed) and its schema (``SHARDID["lease"]["schema"]``, ``None``: found
    as the lease finds it), and the database ``"default"``'s schemas of segments and of
    the dictionary that its migrations install (``"seg"`` and ``"dict"``, the operations'
    defaults, when none does)."""
    from shardid.django.conf import setting

    config = setting() or {}
    lease = config.get("lease", {}) if isinstance(config, dict) else {}
    lease = lease if isinstance(lease, dict) else {}  # a wrong one is shardid.E001's to report
    in_database = isinstance(config, dict) and "shard" not in config and "directory" not in lease
    segments, dictionaries = _migration_schemas()
    return {
        "lease": lease.get("using", "default") if in_database else None,
        "lease_schema": lease.get("schema"),
        "segments": segments or ["seg"],
        "dictionary": dictionaries or ["dict"],
        "using": "default",
    }


def _when(value: Any) -> str:
    """A time as ``shardid status`` prints it (RFC 3339, UTC, milliseconds), or a dash."""
    return "-" if value is None else f"{value:%Y-%m-%dT%H:%M:%S}.{value.microsecond // 1000:03d}Z"


def _unplaced(database: str, vendor: str) -> str | None:
    if vendor in ("postgresql", "mysql", "sqlite"):
        return None
    return f"the database {database!r} is {vendor}: shardid keeps these in PostgreSQL, MySQL, MariaDB or SQLite"


def _read(alias: str, **where: Any) -> Any:
    """The status API's report of the database ``alias``, over Django's own connection to it
    (its statements are the project's queries: the debug toolbar and ``assertNumQueries`` see
    them), with the project's layout."""
    from django.db import connections

    from shardid import status
    from shardid.django.conf import configured_layout

    return status.read(connections[alias], layout=configured_layout(), **where)


_COLUMNS = {
    "leases": ["Shard", "Layout", "State", "Holder", "Since", "Ceiling", "Ceiling time", "Expires"],
    "tags": ["Tag", "Next", "Segment", "Stride", "Last take", "Per second", "Years left", "Runs out"],
    "topics": ["Topic", "Strings", "Last ID", "Dropped"],
}


def _cells(kind: str, row: Any) -> list[str]:
    if kind == "leases":
        return [str(row.shard), row.layout, row.state, row.holder or "-", _when(row.since), str(row.ceiling),
                _when(row.ceiling_time), _when(row.expires)]  # fmt: skip
    if kind == "tags":
        # No run-out date: never (nothing taken), or one after the year 9999. Years left as the
        # core words them for `shardid status` (`> 1,000` past a thousand).
        runs_out = _when(row.runs_out) if row.runs_out else "never" if row.years_left is None else "after 9999"
        return [row.tag, str(row.next), str(row.segment), str(row.stride), _when(row.last_take),
                f"{row.per_second:.3f}", row.years_left_text, runs_out]  # fmt: skip
    return [row.topic, str(row.strings), "-" if row.last_id is None else str(row.last_id), "yes" if row.dropped else "no"]


def page(kind: str) -> dict[str, Any]:
    """What the page ``kind`` (``"leases"``, ``"tags"`` or ``"topics"``) shows: ``sections``,
    one table per place the project keeps those rows (:func:`places`), and ``layouts``, the
    lines on when the layouts in use run out and the warnings (within 5 years), from the first
    report read. Each place is read once, by :func:`shardid.status.read`: a fixed number of
    statements per place, whatever the number of rows."""
    from django.db import connections

    from shardid.django.conf import configured_layout

    where = places()
    targets: list[tuple[str, str, dict[str, str]]]
    if kind == "leases":
        alias = where["lease"]
        # The lease's own schema setting, so the page reads the table the lease writes.
        lease_schema: str | None = where["lease_schema"]
        lease_options = {} if lease_schema is None else {"lease_schema": lease_schema}
        targets = [] if alias is None else [(alias, f"database {alias!r}", lease_options)]
    else:
        key = "segments_schema" if kind == "tags" else "dictionary_schema"
        schemas = where["segments" if kind == "tags" else "dictionary"]
        alias = where["using"]
        targets = [(alias, f"database {alias!r}, schema {schema}", {key: schema}) for schema in schemas]
    if kind != "leases" and connections[alias].vendor == "sqlite":
        # One file: its tags and topics are in its own schema (main), whatever the migrations
        # name; the status reads the core's default there.
        targets = [(alias, f"database {alias!r}", {})]
    found: list[Section] = []
    if kind == "leases" and alias is None:
        found.append(Section("the lease", problem="SHARDID keeps no lease in a database (a fixed shard, or lock files)"))
    first = None
    for alias, label, options in targets:
        problem = _unplaced(alias, connections[alias].vendor)
        if problem is not None:
            found.append(Section(label, problem=problem))
            continue
        report = _read(alias, **options)
        first = first or report
        part = getattr(report, kind)
        if part.not_read is not None:
            found.append(Section(f"{label}: {part.table}", problem=f"not read: {part.not_read}"))
        elif not part.present:
            found.append(Section(label, problem=f"not installed: the database has no table {part.table}"))
        else:
            found.append(Section(f"{label}: {part.table}", _COLUMNS[kind], [_cells(kind, r) for r in part.rows]))
    if first is None:
        # No database to read: the layout's own run-out date, and the core's rule on this clock.
        from shardid import Layout

        layout = configured_layout()
        name = next((n.lower() for n in Layout.preset_names() if Layout.preset(n) == layout), "custom")
        layouts = {"lines": [f"Layout {name} runs out on {_when(layout.expires_at)}."], "warning": layout.runs_out_soon()}
    else:
        lines = [f"Layout {l.name} runs out on {_when(l.runs_out)}, in {l.years_left:.1f} years." for l in first.layouts]
        layouts = {"lines": [*lines, *first.warnings], "warning": bool(first.warnings)}
    return {"sections": found, "layouts": layouts}
