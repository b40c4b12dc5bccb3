"""What a database holds of shardid, for operators and programs: the leases, the segments'
tags (burn rate, years left before 2^63), the dictionary's topics, and when the layouts in use
run out — ``shardid status URL`` on the command line, :func:`read` in a program::

    from shardid import status

    report = status.read("postgresql://app@db/app")
    for tag in report.tags.rows:
        print(tag.tag, tag.per_second, tag.years_left)
    if report.warnings:
        ...

The statements, the figures and both renderings are the core's (``shardid::sql::status``), so
``shardid status`` prints the same bytes from Python and from Node; this module runs the
statements on psycopg (or psycopg2), PyMySQL or the standard library's ``sqlite3`` (a
``sqlite:///file.db`` URL: the file opened read-only, so a status creates and writes nothing)
and reads the core's JSON into dataclasses.

- A table that does not exist (the feature is not installed) is a :class:`Section` with
  ``present`` false, not an error.
- The **burn rate** is an estimate from one reading (a tag's row records one): its last segment
  size times its stride, per the clients' target lifetime of a segment (60 s), or per the time
  since its last take when that is longer; 0 before the first take. **Years left** is
  ``(2^63 - 1 - next) / rate`` in years of 365.2425 days (``None``: never).
- The **layouts** are ``layout`` (default Instagram's, as every command) and each layout the
  lease rows record; one that runs out within 5 years of the database's clock is a **warning**,
  as is a tag with less than 5 years left.
- All times are the database server's clock, as UTC ``datetime`` objects.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Generic, TypeVar

from shardid import _db
from shardid import _mysql
from shardid._errors import ShardIdError
from shardid._shardid import Layout, _cli_status, _error, _StatusRun

__all__ = ["Lease", "LayoutStatus", "Report", "Section", "Tag", "Topic", "read"]

_T = TypeVar("_T")


@dataclass(frozen=True)
class Lease:
    """A row of the lease table."""

    layout: str
    """The layout's name: a preset's (``instagram``), ``custom``, or ``unknown``."""
    signature: str
    """The layout's numbers as the row records them (``epoch_ms=... unit_ms=... bits=41/13/10 ...``)."""
    shard: int
    holder: str | None
    """Who holds the shard (host and process), or held it last."""
    since: datetime | None
    """When it was taken."""
    ceiling: int
    """The ceiling, in the layout's time units: no holder issued an ID above it."""
    ceiling_time: datetime | None
    """The ceiling as a time (``None`` for an unknown layout)."""
    expires: datetime | None
    """When the lease expires (``None``: released, or a session lease)."""
    session: bool
    """A session lease: held while its holder's session holds a lock."""
    state: str
    """``held``, ``expired``, ``free`` (released) or ``session``."""


@dataclass(frozen=True)
class Tag:
    """A tag of dense IDs from segments."""

    tag: str
    next: int
    """The next number it hands out."""
    segment: int
    """The size of its last segment (0: none taken yet)."""
    stride: int
    """Ticket servers' stride (1 on PostgreSQL, whose rows do not record it)."""
    last_take: datetime
    per_second: float
    """Numbers a second, estimated (see the module's docs)."""
    years_left: float | None
    """Years before 2^63 at that rate (``None``: never)."""
    runs_out: datetime | None
    """When (``None``: never, or after the year 9999)."""
    years_left_text: str = ""
    """Years left as a person reads them (the text report's and the Django admin's column):
    ``never``, one decimal, or ``> 1,000`` above a thousand years."""


@dataclass(frozen=True)
class Topic:
    """A topic of the string <-> ID dictionary."""

    topic: str
    strings: int
    """How many strings it holds."""
    last_id: int | None
    """The last ID it assigned (``None``: none yet)."""
    dropped: bool


@dataclass(frozen=True)
class LayoutStatus:
    """A layout and when it runs out."""

    name: str
    """A preset's name or ``custom``."""
    signature: str
    source: str
    """``option`` (the ``layout`` argument, or the default) or ``leases`` (a lease row's)."""
    runs_out: datetime
    years_left: float
    """Years from the database's clock to the run-out date (negative once past)."""
    warning: bool
    """It runs out within 5 years (or ran out)."""


@dataclass(frozen=True)
class Section(Generic[_T]):
    """The rows of one table, or ``present`` false when the table does not exist (or was not
    read: ``not_read`` says why)."""

    table: str
    """The table, ``schema.table`` once its schema is known."""
    present: bool
    rows: tuple[_T, ...]
    not_read: str | None = None
    """Why a table that exists was not read: on PostgreSQL, a lease table found through
    ``search_path`` that none of the current user's roles owns (a lease refuses it too)."""


@dataclass(frozen=True)
class Report:
    """What :func:`read` found: the fields of ``shardid status --json`` (schema version 1)."""

    database: str
    """``postgres``, ``mysql`` (MySQL and MariaDB) or ``sqlite``."""
    now: datetime
    """The database server's clock when the status was read."""
    leases: Section[Lease]
    tags: Section[Tag]
    topics: Section[Topic]
    layouts: tuple[LayoutStatus, ...]
    warnings: tuple[str, ...]
    """One sentence per warning; empty when there is none."""
    text: str
    """The report as ``shardid status`` prints it."""
    json: str
    """The report as ``shardid status --json`` prints it."""


def _time(value: str | None) -> datetime | None:
    if value is None:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(timezone.utc)


def _report(run: _StatusRun) -> Report:
    text = run.report_json()
    doc = json.loads(text)

    def section(name: str, make: Any) -> Section[Any]:
        part = doc[name]
        rows = tuple(make(r) for r in part["rows"])
        return Section(table=part["table"], present=part["present"], rows=rows, not_read=part.get("not_read"))

    return Report(
        database=doc["database"],
        now=_time(doc["now"]),  # type: ignore[arg-type]
        leases=section(
            "leases",
            lambda r: Lease(
                layout=r["layout"],
                signature=r["signature"],
                shard=r["shard"],
                holder=r["holder"],
                since=_time(r["since"]),
                ceiling=r["ceiling"],
                ceiling_time=_time(r["ceiling_time"]),
                expires=_time(r["expires"]),
                session=r["session"],
                state=r["state"],
            ),
        ),
        tags=section(
            "tags",
            lambda r: Tag(
                tag=r["tag"],
                next=int(r["next"]),
                segment=r["segment"],
                stride=r["stride"],
                last_take=_time(r["last_take"]),  # type: ignore[arg-type]
                per_second=float(r["per_second"]),
                years_left=None if r["years_left"] is None else float(r["years_left"]),
                runs_out=_time(r["runs_out"]),
                years_left_text=r["years_left_text"],
            ),
        ),
        topics=section(
            "topics",
            lambda r: Topic(
                topic=r["topic"],
                strings=r["strings"],
                last_id=None if r["last_id"] is None else int(r["last_id"]),
                dropped=r["dropped"],
            ),
        ),
        layouts=tuple(
            LayoutStatus(
                name=r["name"],
                signature=r["signature"],
                source=r["source"],
                runs_out=_time(r["runs_out"]),  # type: ignore[arg-type]
                years_left=float(r["years_left"]),
                warning=r["warning"],
            )
            for r in doc["layouts"]
        ),
        warnings=tuple(doc["warnings"]),
        text=run.report_text(),
        json=text,
    )


def _cell(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def _run(run: _StatusRun, conn: Any) -> None:
    """Runs the core's statements on ``conn`` (a DB-API connection) and feeds the rows back: none
    for a statement that returns no result (``shardid restored`` making a missing lease table,
    where psycopg's ``fetchall`` would raise)."""
    while (sql := run.next()) is not None:
        cur = conn.cursor()
        try:
            cur.execute(sql)
            rows = cur.fetchall() if cur.description is not None else []
        finally:
            cur.close()
        run.feed([[_cell(c) for c in row] for row in rows])


def _connect_sqlite(path: str, *, write: bool = False) -> sqlite3.Connection:
    """The SQLite file ``path`` opened read-only (``mode=ro``: a missing file is not created,
    nothing is written, the journal mode is left as it is), or for writing without creating it
    (``mode=rw``: ``shardid restored`` marks rows), in autocommit, waiting up to 5 s for a
    writer's lock. ``DATABASE_UNREACHABLE`` when there is no such file."""
    if not os.path.isfile(path):
        raise _error("DATABASE_UNREACHABLE", reason=f"no SQLite file {path!r}")
    uri = Path(path).absolute().as_uri() + ("?mode=rw" if write else "?mode=ro")
    try:
        return sqlite3.connect(uri, uri=True, timeout=5.0, isolation_level=None)
    except sqlite3.Error as e:
        raise _db.unreachable_error(e) from e


def _connect(run: _StatusRun) -> Any:
    family = run.family
    if family == "mysql":
        return _mysql.connect(run.url)
    if family == "sqlite":
        path = run.sqlite_path
        assert path is not None  # the core's rule: a sqlite URL that names no file is refused
        return _connect_sqlite(path, write=run.marks_restored)
    if family == "postgres":
        return _db.connect_postgres(run.url, connect_timeout=5)
    raise AssertionError(f"a family no status driver runs: {family}")


def _family_of(conn: Any) -> str:
    vendor = getattr(conn, "vendor", None)  # a Django connection
    if isinstance(vendor, str):
        return {"mysql": "mysql", "sqlite": "sqlite"}.get(vendor, "postgres")
    if isinstance(conn, sqlite3.Connection):
        return "sqlite"
    module = type(conn).__module__
    return "mysql" if module.startswith(("pymysql", "MySQLdb", "aiomysql")) else "postgres"


def read(
    database: Any,
    *,
    schema: str | None = None,
    segments_schema: str | None = None,
    dictionary_schema: str | None = None,
    table: str = "shardid_leases",
    lease_schema: str | None = None,
    layout: Layout | None = None,
) -> Report:
    """Reads the status of ``database``: a URL (``postgresql://...``, libpq's ``host=...``
    string, ``mysql://...``, ``sqlite:///relative.db`` or ``sqlite:////absolute.db``), or an
    open connection (psycopg 3, psycopg2, PyMySQL, ``sqlite3``, or Django's
    ``connections["default"]``), which is left open.

    ``schema`` sets both ``segments_schema`` (where the tags are: ``seg``, on SQLite ``main``)
    and ``dictionary_schema`` (the topics: ``dict``, on SQLite ``main``); on SQLite a schema is
    an attached database, and one that is not attached reads as not installed. ``table`` is the
    lease table and ``lease_schema`` its schema, the lease's ``schema`` option: the table is
    found as the lease finds it (``None``: on PostgreSQL where ``search_path`` finds it, and
    then not read when none of the current user's roles owns it, as a lease refuses it; on
    MySQL the connection's database; on SQLite ``main``) and read as ``schema.table``;
    ``layout`` the layout to report besides those the lease rows record (default
    Instagram's).

    Raises :class:`~shardid.InvalidArgumentError` for a name that is not a plain lower-case
    identifier or a URL of another scheme (or a ``sqlite:`` URL that names no file: an
    in-memory database, a host), :class:`~shardid.DatabaseUnreachableError` when the server
    cannot be reached or refuses the log-in (or the SQLite file does not exist), and the
    driver's error for any other failure of a statement (a missing privilege, a file that is
    not a SQLite database).
    """
    if schema is not None:
        segments_schema = dictionary_schema = schema
    layout = layout if layout is not None else Layout.INSTAGRAM
    if isinstance(database, str):
        run = _StatusRun(None, database, table, lease_schema, segments_schema, dictionary_schema, layout)
        conn = _connect(run)
        try:
            _run(run, conn)
        finally:
            conn.close()
    else:
        family = _family_of(database)
        run = _StatusRun(family, "", table, lease_schema, segments_schema, dictionary_schema, layout)
        _run(run, database)
    return _report(run)


def _describe(e: BaseException) -> str:
    if isinstance(e, ShardIdError):
        return str(e)
    return _db.describe(e)


def main(args: list[str]) -> tuple[str, str, int]:
    """``shardid status ...`` (``args`` with ``status`` first): (stdout, stderr, exit status)."""
    run = _cli_status(args)
    if isinstance(run, tuple):
        return run
    try:
        conn = _connect(run)
    except Exception as e:
        return run.failed(_describe(e))
    try:
        _run(run, conn)
    except Exception as e:
        return run.failed(_describe(e))
    finally:
        try:
            conn.close()
        except Exception:
            pass
    return run.output()
