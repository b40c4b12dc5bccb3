import os
import uuid as _uuid
import pathlib
from datetime import datetime
from collections.abc import Iterable
from typing import Any, Callable, ClassVar, Literal, Union, final

from typing_extensions import Buffer, Self, disjoint_base

# An ID: an int, or a decimal string (as IDs travel in JSON).
_Id = Union[int, str]
# A time: Unix milliseconds, or an aware datetime.
_Time = Union[int, datetime]

__all__ = [
    "DEFAULT_BACKWARDS_TOLERANCE_MS",
    "Generator",
    "Layout",
    "LeasedGenerator",
    "Parts",
    "PublicIds",
    "__version__",
    "_BackendClaim",
    "_CeilingGenerator",
    "_Hold",
    "_LeaseProtocol",
    "_LeaseTally",
    "_check_lease",
    "_claim_backend",
    "_UNKNOWN_TAG_SQLSTATE",
    "_UNKNOWN_TOPIC_SQLSTATE",
    "_TOPIC_DROPPED_SQLSTATE",
    "DEFAULT_CACHE",
    "MAX_BATCH",
    "MAX_VALUE_LEN",
    "_DictCache",
    "_collect",
    "_stats_table",
    "_check_topic",
    "_cli_run",
    "_cli_wants_stdin",
    "_cli_status",
    "_StatusRun",
    "_dictionary_statements",
    "_error",
    "dictionary",
    "dictionary_uninstall",
    "server_for",
    "DenseIds",
    "_segment_statements",
    "ParsedSerial",
    "SerialFormat",
    "Serials",
    "TZDB_VERSION",
    "_PeriodFetch",
    "_SERIAL_MISMATCH_SQLSTATE",
    "_SERIAL_OVERFLOW_SQLSTATE",
    "_UNKNOWN_TIME_ZONE_SQLSTATE",
    "_check_serial_tag",
    "_mismatch_reason",
    "_serial_step",
    "_serial_statements",
    "create_serial_sql",
    "_public_id_pattern",
    "check_public_id",
    "from_uuid",
    "shard_from_ordinal",
    "lease",
    "now_ms",
    "postgres",
    "postgres_uninstall",
    "public_ids_sql",
    "public_ids_sql_uninstall",
    "segments",
    "mysql",
    "mysql_statements",
    "_mysql_segment_statements",
    "mysql_serials",
    "_mysql_serial_statements",
    "_mysql_registration_problem",
    "_mysql_url",
    "_database_of_url",
    "_url_shown",
    "_redacted",
    "_mysql_detected",
    "_MYSQL_DETECT_DIALECT",
    "_MysqlDictSql",
    "_MysqlAssign",
    "_SqliteSql",
    "_SqliteAssign",
    "_SqliteTake",
    "_SegmentProtocol",
    "_RedisSegments",
    "_RedisLeaseSteps",
    "_is_redis_url",
    "_redis_sentinel_url",
    "_sqlite_path",
    "_sqlite_period_tag",
    "_sqlite_period_fits",
    "_SQLITE_MAX_LIST",
    "_SQLITE_BUSY_TIMEOUT_MS",
    "segments_uninstall",
    "segments_uninstall",
]

__version__: str
DEFAULT_BACKWARDS_TOLERANCE_MS: int

# A public ID's encoding.
_Encoding = Literal["base32", "base32check", "base58", "base62"]

def now_ms() -> int:
    """The clock the generators read: Unix milliseconds from a monotonic clock anchored to the
    wall clock (it never moves back).
    """
def postgres(
    layout: Layout,
    shard: int,
    schema: str,
    *,
    backwards_tolerance_ms: int | None = None,
    max_borrow_units: int | None = None,
) -> str:
    """The DDL that makes `<schema>.next_id()` and the decoding functions for `layout` and
    `shard` inside PostgreSQL.
    """
def postgres_uninstall(schema: str) -> str:
    """The DDL that removes what `postgres()` installed in `schema`."""
def public_ids_sql(schema: str, layout: Layout | None = None) -> str:
    """The DDL of public IDs in PostgreSQL for IDs of `layout` (default: Instagram's, every ID of
    a signed 64-bit column): `<schema>.shardid_public_encode(id, keys, prefix, encoding)` and
    `<schema>.shardid_public_decode(text, keys, prefix, encoding)`.
    """
def public_ids_sql_uninstall(schema: str) -> str:
    """The DDL that removes what `public_ids_sql()` installed in `schema`."""
def _stats_table() -> dict[str, dict[str, Any]]: ...
def _collect() -> list[tuple[str, list[str], list[int]]]: ...
def lease(
    layout: Layout,
    directory: str | os.PathLike[str],
    shards: range,
    *,
    backwards_tolerance_ms: int | None = None,
    max_borrow_units: int | None = None,
) -> LeasedGenerator:
    """Leases the first free shard of `shards` (a `range`) from lock files in `directory`."""
def shard_from_ordinal(layout: Layout, shards: range, hostname: str | None = None) -> int:
    """The shard of this Kubernetes StatefulSet pod: the ordinal at the end of `hostname`
    (`app-3` -> 3; by default the `HOSTNAME` environment variable, then the host's name),
    checked against `layout`'s shards (`ShardOutOfRangeError`) and `shards`, the range this
    service was given (`InvalidArgumentError` naming `hostname`, as for a name with no ordinal).
    """
_UNKNOWN_TAG_SQLSTATE: str

def segments(schema: str, *, servers: int = 1, index: int = 0, dialect: str | None = None) -> str:
    """The DDL of dense IDs from segments in `schema`, for ticket server `index` of `servers`, in
    `dialect` (`"postgres"`, the default; `"mysql"`/`"mariadb"`: `schema` is a database;
    `"sqlite"`: `schema` is `main` or an attached database, and one file has no ticket servers).
    """
def segments_uninstall(schema: str) -> str:
    """The DDL that removes dense IDs and serial numbers from `schema`."""

_UNKNOWN_TOPIC_SQLSTATE: str
_TOPIC_DROPPED_SQLSTATE: str
DEFAULT_CACHE: int
MAX_BATCH: int
MAX_VALUE_LEN: int

def dictionary(schema: str, *, dialect: str | None = None) -> str:
    """The DDL of the dictionary in `schema`, in `dialect` (`"postgres"`, the default;
    `"mysql"`/`"mariadb"`: `schema` is a database; `"sqlite"`: `main` or an attached database).
    """
def dictionary_uninstall(schema: str) -> str:
    """The DDL that removes the dictionary from `schema` (functions, topics and strings)."""
def _dictionary_statements(schema: str, numbered: bool = False) -> tuple[str, str, str, str, str]: ...
def server_for(topic: str, servers: int) -> int:
    """Which of `servers` servers holds `topic` (FNV-1a 64, then jump consistent hash)."""
def _check_topic(topic: str) -> None: ...
def mysql(
    layout: Layout,
    shard: int,
    schema: str,
    *,
    backwards_tolerance_ms: int | None = None,
    max_borrow_units: int | None = None,
    dialect: str | None = None,
) -> str:
    """The DDL that makes `<database>.next_id()` and the decoding functions for `layout` and
    `shard` inside MySQL 8 or MariaDB (`schema` names the database).
    """
def mysql_statements(script: str) -> list[str]:
    """The statements of a MySQL script (the DDL `mysql()`, `segments(dialect="mysql")` and
    `dictionary(dialect="mysql")` render), for a driver to send one at a time.
    """
def _mysql_segment_statements(schema: str, dialect: str | None = None) -> tuple[str, str, str, str]: ...
def mysql_serials(schema: str) -> str:
    """The DDL of serial numbers' registrations in database `schema` on MySQL 8 or MariaDB: run it
    after the segments' DDL (`segments(schema, dialect="mysql")`), whose tags each period takes
    its numbers from. (PostgreSQL's and SQLite's segments DDL holds the registrations already.)
    """
def _mysql_serial_statements(schema: str) -> tuple[str, str, str, str]: ...
def _mysql_registration_problem(rows: list[tuple[str, str, str]], tag: str, canonical: str, zone: str) -> str | None: ...
def _mysql_url(url: str) -> tuple[str, str | None, str, int, str | None]: ...
def _database_of_url(url: str, argument: str) -> str: ...
def _url_shown(url: str) -> str: ...
def _redacted(text: str, url: str) -> str: ...
def _mysql_detected(code: int | None) -> str | None: ...

_MYSQL_DETECT_DIALECT: str
@final
class _MysqlDictSql:
    def __new__(cls, schema: str, dialect: str | None = None) -> Self: ...
    def find(self, n: int) -> str: ...
    def find_values(self, n: int) -> str: ...
    def lock(self) -> str: ...
    def recheck(self, n: int) -> str: ...
    def insert(self, n: int) -> str: ...
    def advance(self) -> str: ...
    def create_topic(self) -> str: ...
    def drop_topic(self) -> str: ...
    def state(self) -> str: ...
@final
class _MysqlAssign:
    def __new__(cls, dialect: str, schema: str, topic: str, missing: list[str], resend: bool) -> Self: ...
    def next(self) -> tuple[Any, ...]: ...
    def answer(self, rows: Iterable[Iterable[int | str | None]]) -> None: ...
    def failed(self, code: int | None = None) -> None: ...
@final
class _SqliteSql:
    def __new__(cls, schema: str) -> Self: ...
    @staticmethod
    def setup(busy_timeout_ms: int) -> str: ...
    def segments_ddl(self) -> str: ...
    def dictionary_ddl(self) -> str: ...
    def segments_uninstall(self) -> str: ...
    def dictionary_uninstall(self) -> str: ...
    def take(self) -> str: ...
    def read(self) -> str: ...
    def give_back(self) -> str: ...
    def create_tag(self) -> str: ...
    def serial_create(self, n: int) -> str: ...
    def serial_info(self) -> str: ...
    def find(self, n: int) -> str: ...
    def find_values(self, n: int) -> str: ...
    def create_topic(self) -> str: ...
    def drop_topic(self) -> str: ...
    def state(self) -> str: ...
@final
class _SqliteAssign:
    def __new__(cls, schema: str, topic: str, missing: list[str], savepoint: bool) -> Self: ...
    def next(self) -> tuple[Any, ...]: ...
    def answer(self, rows: Iterable[Iterable[int | str | None]]) -> None: ...
    def failed(self) -> None: ...
    def interrupted(self) -> None: ...
@final
class _SqliteTake:
    def __new__(cls, size: int) -> Self: ...
    @property
    def reading(self) -> bool: ...
    def answer(self, row: tuple[int, int, int] | None) -> tuple[tuple[int, int, int] | None, tuple[str, str] | None]: ...
@final
class _SegmentProtocol:
    def __new__(cls, dialect: str, schema: str, servers: int) -> Self: ...
    def take(self, tag: str, size: int) -> None: ...
    def take_period(self, tag: str, period: str, size: int) -> None: ...
    def give_back(self, tag: str, first: int, end: int) -> None: ...
    def next(self) -> tuple[Any, ...]: ...
    def connected(self, dialect: str) -> None: ...
    def answer(self, row: Iterable[Any] | None) -> None: ...
    def failed(self, code: str | None = None) -> None: ...

@final
class _RedisSegments:
    def __new__(cls, schema: str) -> Self: ...
    def take(self, tag: str, size: int) -> None: ...
    def give_back(self, tag: str, first: int, end: int) -> None: ...
    def create_tag(self, tag: str, first: int, explicit: bool) -> None: ...
    def next(self) -> tuple[Any, ...]: ...
    def connected(self, run_id: str) -> None: ...
    def lost(self) -> None: ...
    def answer(self, reply: Any) -> None: ...
    def failed(self, code: str | None = None) -> None: ...

@final
class _RedisLeaseSteps:
    def __new__(cls, schema: str, layout: Layout, first: int, end: int, ttl_ms: int, holder: str) -> Self: ...
    @property
    def key(self) -> str: ...
    def claim(self, run_id: str) -> tuple[str, list[str]]: ...
    def claimed(self, reply: Any) -> tuple[Any, ...]: ...
    def clock_ahead(self, reply: Any) -> int | None: ...
    def renew(self, run_id: str, shard: int) -> tuple[str, list[str]]: ...
    def record(self, run_id: str, shard: int, units: int) -> tuple[str, list[str]]: ...
    def release(self, run_id: str, shard: int) -> tuple[str, list[str]]: ...
    @staticmethod
    def held(reply: Any) -> bool: ...

def _is_redis_url(url: str) -> bool: ...
def _redis_sentinel_url(
    url: str, argument: str
) -> tuple[list[tuple[str, int]], str, int, str | None, str | None]: ...
def _sqlite_path(url: str, argument: str) -> str: ...
def _sqlite_period_tag(tag: str, period: str) -> str: ...
def _sqlite_period_fits(reset: str, period: str) -> bool: ...
_SQLITE_MAX_LIST: int
_SQLITE_BUSY_TIMEOUT_MS: int
def _cli_run(args: list[str], stdin: str | None = None) -> tuple[str, str, int]: ...
def _cli_wants_stdin(args: list[str]) -> bool: ...
def _cli_status(args: list[str]) -> _StatusRun | tuple[str, str, int]: ...
@final
class _StatusRun:
    """A run of ``shardid status``: the core's statements, rows and report (``shardid.status``)."""

    def __new__(
        cls,
        family: str | None,
        url: str,
        table: str,
        lease_schema: str | None,
        segments_schema: str | None,
        dictionary_schema: str | None,
        layout: Layout,
    ) -> _StatusRun: ...
    @property
    def url(self) -> str: ...
    @property
    def family(self) -> str: ...
    @property
    def sqlite_path(self) -> str | None: ...
    @property
    def marks_restored(self) -> bool: ...
    def next(self) -> str | None: ...
    def feed(self, rows: list[list[str | None]]) -> None: ...
    def output(self) -> tuple[str, str, int]: ...
    def failed(self, why: str) -> tuple[str, str, int]: ...
    def report_text(self) -> str: ...
    def report_json(self) -> str: ...

def _error(code: str, **fields: object) -> Exception: ...
@final
class _DictCache:
    def __new__(cls, capacity: int = ...) -> Self: ...
    @property
    def capacity(self) -> int: ...
    def stats(self) -> dict[str, int]: ...
    def _sent(self, retry: bool) -> None: ...
    def _register(self, schema: str, topic: str) -> None: ...
    def _unregister(self) -> None: ...
    def __len__(self) -> int: ...
    def clear(self) -> None: ...
    def id(self, value: str) -> int | None: ...
    def value(self, id: int) -> str | None: ...
    def plan_ids(self, values: Iterable[str], count: bool = True) -> tuple[list[str], list[int | None], list[str]]: ...
    def complete_ids(
        self,
        values: list[str],
        ids: list[int | None],
        misses: list[str],
        answers: list[int | None],
        remember: bool = True,
    ) -> list[int | None]: ...
    def remember_ids(self, misses: list[str], answers: list[int | None]) -> None: ...
    def plan_values(self, ids: Iterable[int], count: bool = True) -> tuple[list[int], list[str | None], list[int]]: ...
    def complete_values(
        self,
        ids: list[int],
        values: list[str | None],
        misses: list[int],
        answers: list[str | None],
        remember: bool = True,
    ) -> list[str | None]: ...
def _segment_statements(schema: str) -> tuple[str, str, str]: ...
@final
class DenseIds:
    """Dense IDs of one tag, taken in segments from PostgreSQL, MySQL, MariaDB or a SQLite file
    (see :mod:`shardid.segments`; `schema` defaults to `seg`, `main` on SQLite)."""

    tag: str
    schema: str
    servers: list[str]
    conninfo: str
    wait_ms: int
    skipped: int
    fetches: int
    def __new__(
        cls,
        conninfo: str | list[str] | tuple[str, ...],
        tag: str,
        *,
        schema: str | None = None,
        min_size: int | None = None,
        max_size: int | None = None,
        target_ms: int | None = None,
        wait_ms: int | None = None,
        _driver: Any = None,
    ) -> Self: ...
    def next_id(self) -> int:
        """The next ID of this allocator (increasing); waits at most ``wait_ms`` for a segment when
        both are used up (then ``SegmentUnavailableError``).
        """
    def next_ids(self, n: int) -> list[int]:
        """`n` IDs, increasing (waiting for segments as `next_id` does)."""
    def close(self) -> None:
        """Gives the unused rest of the last segment back and closes the connections."""
    def __enter__(self) -> Self: ...
    def __exit__(self, *exc: object) -> None: ...
    def stats(self) -> dict[str, int]:
        """What this allocator did, as a dict of counts named by the core's table (`fetches`,
        `failed_fetches`, `fetch_latency_max_ms`, `empty_waits`, `remaining`, ...).
        """
    def _settle(self, returned: bool) -> None: ...
    def _try_next_id(self) -> int | None: ...
    def _take_ids(self, n: int, retry: bool = ...) -> list[int]: ...
    def _prime(self) -> None: ...
    def _fill(self, first: int, count: int, stride: int) -> None: ...
    def _fetch_failed(self) -> None: ...
    def _shut(self) -> bool: ...
    def _forked(self) -> bool: ...
    def _adopt(self) -> None: ...
    def _unused(self) -> tuple[int, int, int, int] | None: ...
    def _fetching(self) -> bool: ...

TZDB_VERSION: str
_SERIAL_MISMATCH_SQLSTATE: str
_SERIAL_OVERFLOW_SQLSTATE: str
_UNKNOWN_TIME_ZONE_SQLSTATE: str

def _serial_statements(schema: str) -> tuple[str, str, str, str, str, str]: ...
def _check_serial_tag(tag: str) -> None: ...
def _mismatch_reason(message: str, tag: str) -> str: ...
def _serial_step(max_gap: int) -> int: ...
def create_serial_sql(tag: str, format: str, *, zone: str, schema: str = "seg", max_gap: int = 1) -> str:
    """The statement registering a serial tag, its values written out: for `psql`."""

@final
class ParsedSerial:
    """A serial parsed back: its number, period and the fields it shows."""

    @property
    def number(self) -> int:
        """The number."""
    @property
    def period(self) -> str:
        """The period it counts in."""
    @property
    def year(self) -> int | None:
        """The year shown (`{yy}` read as 2000-2099)."""
    @property
    def month(self) -> int | None:
        """The month shown."""
    @property
    def day(self) -> int | None:
        """The day shown."""
    @property
    def hour(self) -> int | None:
        """The hour shown."""
    @property
    def week(self) -> int | None:
        """The ISO week shown."""
    def period_tag(self, tag: str) -> str:
        """The tag holding the period's numbers: `tag@2026-11-25` (`tag` for a format that never
        resets).
        """
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class SerialFormat:
    """A serial format in an IANA time zone, parsed and checked once."""

    def __new__(cls, format: str, zone: str) -> SerialFormat: ...
    @property
    def format(self) -> str:
        """The format as given."""
    @property
    def canonical(self) -> str:
        """The format with its reset written out (`{seq:6:day}`)."""
    @property
    def zone(self) -> str:
        """The zone's canonical name."""
    @property
    def reset(self) -> Literal["never", "year", "month", "day"]:
        """How often the number starts again at 1: `"never"`, `"year"`, `"month"` or `"day"`."""
    @property
    def width(self) -> int:
        """The number's width in digits."""
    @property
    def max_number(self) -> int:
        """The largest number a serial holds."""
    @property
    def length(self) -> int:
        """Every serial's length in characters (a `CharField`'s `max_length`)."""
    def render(self, number: int, unix_ms: int) -> str:
        """The serial of `number` issued at `unix_ms`."""
    def parse(self, serial: str) -> ParsedSerial:
        """Parses a serial back."""
    def period_at(self, unix_ms: int) -> str:
        """The period `unix_ms` falls in (`"2026-11-25"`, ...)."""
    def _registration(self) -> tuple[str, str, list[str], int, str]: ...
    def _mismatch(self, canonical: str, zone: str) -> str | None: ...

@final
class _PeriodFetch:
    @property
    def period(self) -> str: ...
    @property
    def size(self) -> int: ...

@final
class Serials:
    """Business serial numbers of one tag from PostgreSQL, MySQL or MariaDB segments or a SQLite file (see
    :mod:`shardid.segments`; `schema` defaults to `seg` (a database on MySQL), `main` on SQLite)."""

    @property
    def tag(self) -> str:
        """The tag."""
    @property
    def format(self) -> str:
        """The format as given."""
    @property
    def canonical(self) -> str:
        """The format with its reset written out."""
    @property
    def zone(self) -> str:
        """The zone's canonical name."""
    @property
    def reset(self) -> Literal["never", "year", "month", "day"]:
        """How often the number starts again at 1."""
    @property
    def max_gap(self) -> int:
        """The largest random step between two numbers (1: dense numbers), as registered."""
    schema: str
    conninfo: str
    wait_ms: int
    skipped: int
    fetches: int
    def __new__(
        cls,
        conninfo: str,
        tag: str,
        format: str,
        *,
        zone: str,
        schema: str | None = None,
        min_size: int | None = None,
        max_size: int | None = None,
        target_ms: int | None = None,
        wait_ms: int | None = None,
    ) -> Self: ...
    def next_serial(self) -> str:
        """The next serial, issued now."""
    def next_serial_at(self, unix_ms: int) -> str:
        """The next serial, issued at `unix_ms` (a scripted clock, a replay); a time behind the
        current period is issued at its first instant.
        """
    def parse(self, serial: str) -> ParsedSerial:
        """Parses a serial of this format back."""
    def render(self, number: int, unix_ms: int) -> str:
        """The serial of `number` at `unix_ms`, by this format (nothing is taken)."""
    def close(self) -> None:
        """Gives every period's unused rest back and closes the connection."""
    def stats(self) -> dict[str, int]:
        """What this allocator did over every period, as a dict named by the core's table, as
        `DenseIds.stats()` (`fetches`, `failed_fetches`, `fetch_latency_max_ms`, `empty_waits`,
        `skipped`: the holes it made, `remaining`: what is left of the current period's segment).
        """
    def __enter__(self) -> Self: ...
    def __exit__(self, *exc: object) -> None: ...
    def _try_next_serial(self, unix_ms: int | None = None) -> str | None: ...
    def _fill(self, fetch: _PeriodFetch, first: int, count: int, stride: int) -> bool: ...
    def _fetch_failed(self, fetch: _PeriodFetch) -> None: ...
    def _settle(self, first: int, end: int, count: int, lost: int, returned: bool) -> None: ...
    def _fetch_tag(self, fetch: _PeriodFetch) -> str: ...
    def _shut(self) -> bool: ...
    def _forked(self) -> bool: ...
    def _adopt(self) -> None: ...
    def _close_periods(self) -> list[tuple[str, int, int, int, int]]: ...
    def _fetching(self) -> bool: ...

@final
class _LeaseProtocol:
    def __new__(
        cls,
        kind: str,
        ttl_ms: int,
        layout: Layout,
        table: str,
        first: int,
        end: int,
        holder: str,
        dialect: str | None = None,
        schema: str | None = None,
        numbered: bool = False,
    ) -> _LeaseProtocol: ...
    def next(self) -> tuple[object, ...]: ...
    def feed(self, row: Iterable[object] | None) -> None: ...
    def kept(self, row: Iterable[object] | None) -> bool: ...
    def clock_ahead(self, row: Iterable[object] | None) -> int | None: ...
    def fail(self, code: str | None) -> None: ...
    def resend_after(self, code: str | None, resent: int) -> int | None: ...
    @property
    def dialect(self) -> str: ...
    @property
    def kind(self) -> str: ...
    def renew(self, shard: int) -> tuple[str, tuple[object, ...]] | None: ...
    def record(self, shard: int, units: int) -> tuple[str, tuple[object, ...]]: ...
    def release(self, shard: int) -> tuple[str, tuple[object, ...]]: ...

@final
class _Hold:
    def __new__(cls, ttl_ms: int, sent_at: int) -> _Hold: ...
    @staticmethod
    def now() -> int: ...
    @staticmethod
    def wait_for_ceiling(layout: Layout, recorded: int | None) -> None: ...
    @property
    def holds(self) -> bool: ...
    def sending(self) -> int | None: ...
    def renewed(self, sent_at: int) -> None: ...
    def failed(self) -> None: ...
    def lose(self) -> None: ...
    def wait(self) -> float | None: ...

@final
class _LeaseTally:
    def __new__(cls, layout: Layout, table: str) -> _LeaseTally: ...
    def stats(self) -> dict[str, int]: ...

@final
class _BackendClaim:
    def release(self) -> None: ...

def _claim_backend(identity: str) -> _BackendClaim: ...
def _check_lease(kind: str, ttl_ms: int) -> tuple[str, str] | None: ...

@final
class _CeilingGenerator:
    def __new__(
        cls,
        layout: Layout,
        shard: int,
        recorded: int | None,
        store: Callable[[int, int], int | None],
        *,
        hold: _Hold | None = None,
        tally: _LeaseTally | None = None,
        on_fork: Callable[..., Any] | None = None,
        backwards_tolerance_ms: int | None = None,
        max_borrow_units: int | None = None,
    ) -> _CeilingGenerator: ...
    @property
    def shard(self) -> int: ...
    def next_id(self) -> int: ...
    def next_id_at(self, now: _Time) -> int: ...
    def next_ids(self, n: int) -> list[int]: ...
    def revoke(self) -> None: ...
    def revoke_clock_skew(self, ahead_ms: int) -> None: ...
    def close(self) -> None: ...
@final
class LeasedGenerator:
    """A generator on a shard leased from lock files: no two processes hold the same shard, a
    restart continues above its predecessor's IDs, and a forked child takes a shard of its own.
    """

    @property
    def layout(self) -> Layout:
        """The layout of the IDs it makes."""
    @property
    def shard(self) -> int:
        """The shard this process holds (another one in a forked child)."""
    @property
    def directory(self) -> pathlib.Path:
        """The directory of the lock files."""
    def next_id(self) -> int:
        """One ID now (waits for the next time unit when this one is used up, and after a
        restart for the clock to pass the last holder's ceiling).
        """
    def next_id_at(self, now: _Time) -> int:
        """One ID as if the clock read `now` (Unix ms or an aware datetime); never waits."""
    def next_ids(self, n: int) -> list[int]:
        """`n` IDs now, in increasing order."""
    def close(self) -> None:
        """Releases the shard at once, so another process can take it (and continue above this
        one's IDs); later calls raise `ClosedError`. Closing twice is fine.
        """
    def __enter__(self) -> LeasedGenerator: ...
    def __exit__(self, kind: object, value: object, traceback: object) -> None: ...
@final
class Layout:
    """A validated bit layout: epoch, time unit, field widths and order, and whether IDs must fit
    a signed 64-bit column (a `BIGINT`).
    """

    INSTAGRAM: ClassVar[Layout]
    TWITTER: ClassVar[Layout]
    DISCORD: ClassVar[Layout]
    SONYFLAKE: ClassVar[Layout]
    @staticmethod
    def preset(name: str) -> Layout:
        """The preset named `name`, in any case (`"instagram"`); `InvalidLayoutError` for another."""
    @staticmethod
    def preset_names() -> list[str]:
        """The presets' names, in the core's order: `("INSTAGRAM", "TWITTER", ...)`."""
    def __new__(
        cls,
        *,
        epoch_ms: int,
        time_bits: int,
        shard_bits: int,
        sequence_bits: int,
        unit_ms: int | None = None,
        order: Literal["time_shard_sequence", "time_sequence_shard"] | None = None,
        signed: bool = True,
    ) -> Layout: ...
    @property
    def epoch_ms(self) -> int:
        """The epoch, Unix milliseconds: time 0 of the layout."""
    @property
    def unit_ms(self) -> int:
        """The length of a time unit in milliseconds (10 for Sonyflake)."""
    @property
    def time_bits(self) -> int:
        """The width of the time field in bits."""
    @property
    def shard_bits(self) -> int:
        """The width of the shard field in bits."""
    @property
    def sequence_bits(self) -> int:
        """The width of the sequence field in bits."""
    @property
    def order(self) -> Literal["time_shard_sequence", "time_sequence_shard"]:
        """The order of the shard and sequence fields below the time."""
    @property
    def signed(self) -> bool:
        """Whether IDs fit a signed 64-bit column (the top bit is then never set)."""
    @property
    def max_shard(self) -> int:
        """The largest shard the layout holds."""
    @property
    def max_sequence(self) -> int:
        """The largest sequence number of a time unit."""
    @property
    def max_id(self) -> int:
        """The largest ID of the layout."""
    @property
    def expires_at_ms(self) -> int:
        """The last Unix millisecond the layout can represent."""
    @property
    def expires_at(self) -> datetime:
        """The last moment the layout can represent, as an aware UTC datetime."""
    def runs_out_soon(self, now: int | datetime | None = None) -> bool:
        """Whether the layout runs out within five years of `now` (Unix ms or an aware datetime;
        the system clock when `None`), or already has: the core's rule, which Django's system
        check `shardid.W002` reports."""
    def decode(self, id: _Id) -> Parts:
        """Splits an ID (an int or a decimal string) into its fields."""
    def to_uuid(self, id: _Id) -> _uuid.UUID:
        """The UUIDv7 of an ID (an int or a decimal string): its time is the ID's, and the rest of
        the ID and the layout's marker fill its random bits, so `from_uuid` gives the ID back
        and UUIDs sort as their IDs do.
        """
    def from_uuid(self, uuid: _uuid.UUID | str) -> int:
        """The ID a UUID (a `uuid.UUID` or its text) made by `to_uuid` of this layout holds;
        `InvalidArgumentError` for any other UUID.
        """
    def validate_id(self, id: _Id) -> int:
        """Checks that `id` is an ID of this layout and returns it as an int."""
    def compose(self, timestamp: _Time, shard: int, sequence: int) -> int:
        """The ID for a timestamp (Unix ms or an aware datetime; floored to its time unit), a
        shard and a sequence.
        """
    def min_id_at(self, timestamp: _Time) -> int:
        """The smallest ID any generator of this layout can make in the time unit holding
        `timestamp` (Unix ms or an aware datetime).
        """
    def max_id_at(self, timestamp: _Time) -> int:
        """The largest ID any generator of this layout can make in the time unit holding
        `timestamp`.
        """
    def shard_for_key(self, key: int, logical_shards: int) -> int:
        """Instagram's mapping of a key to one of `logical_shards` shards: `key % logical_shards`."""
    def scatter_decimal(self, id: _Id, digits: int | None = None) -> int:
        """TiDB's decimal scatter: the last `digits` decimal digits (1, 2 or 3: 10, 100 or 1,000
        key ranges; default 1) move to just after the first.
        """
    def gather_decimal(self, id: _Id, digits: int | None = None) -> int:
        """The inverse of `scatter_decimal` (with the same `digits`)."""
    def scatter_bits(self, id: _Id) -> int:
        """A bit-level scatter that stays in the layout's range; its own inverse."""
    def gather_bits(self, id: _Id) -> int:
        """The inverse of `scatter_bits`."""
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __getnewargs_ex__(self) -> tuple[tuple[()], dict[str, Any]]: ...

@final
class Parts:
    """The fields of an ID. Ordered like tuples `(timestamp_ms, shard, sequence)`.

    The fields are kept as Python ints, made once when the ID is decoded: PyO3 then serves
    `#[pyo3(get)]` on a `Py<...>` field as a plain member read, several times faster than a
    getter that converts a `u64` on every access.
    """

    def __new__(cls, timestamp_ms: int, shard: int, sequence: int) -> Parts: ...
    @property
    def timestamp_ms(self) -> int:
        """The start of the ID's time unit, Unix milliseconds."""
    @property
    def shard(self) -> int:
        """The shard that made it."""
    @property
    def sequence(self) -> int:
        """Its sequence number in the time unit."""
    @property
    def datetime(self) -> datetime:
        """`timestamp_ms` as an aware UTC datetime."""
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...
    def __lt__(self, value: Parts, /) -> bool: ...
    def __le__(self, value: Parts, /) -> bool: ...
    def __gt__(self, value: Parts, /) -> bool: ...
    def __ge__(self, value: Parts, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __getnewargs__(self) -> tuple[int, int, int]: ...

@final
class Generator:
    """Makes unique, strictly increasing IDs for one shard of a layout. Thread-safe and
    lock-free; every `Generator` for the same layout and shard in this process shares one state.
    """

    def __new__(
        cls,
        layout: Layout,
        shard: int,
        *,
        backwards_tolerance_ms: int | None = None,
        max_borrow_units: int | None = None,
    ) -> Generator: ...
    @property
    def layout(self) -> Layout:
        """The layout of the IDs it makes."""
    @property
    def shard(self) -> int:
        """The shard of the IDs it makes."""
    @property
    def backwards_tolerance_ms(self) -> int:
        """How far the clock may read behind the last ID before ``ClockMovedBackwardsError`` (ms)."""
    @property
    def max_borrow_units(self) -> int:
        """How many time units a burst may run ahead of the clock (0: wait instead)."""
    def stats(self) -> dict[str, int]:
        """What every generator for this layout and shard in the process did, as a dict of
        counts named by the core's table (`ids`, `waits`, `borrowed_units`, ...).
        """
    def next_id(self) -> int:
        """One ID now. Waits for the next time unit (at most 1 ms; 10 ms for Sonyflake) when
        this one is used up.
        """
    def next_id_at(self, now: _Time) -> int:
        """One ID as if the clock read `now` (Unix ms or an aware datetime). Deterministic and
        never waits: raises `SequenceExhaustedError` when the unit is used up.
        """
    def next_ids(self, n: int) -> list[int]:
        """`n` IDs now, in increasing order."""
    def next_ids_at(self, now: _Time, n: int) -> list[int]:
        """Up to `n` IDs as if the clock read `now`, in one step: what is left of the time unit
        (and of any units the generator may borrow). Deterministic and never waits.
        """
    def next_ids_into(self, buffer: Buffer) -> int:
        """Fills a writable buffer of unsigned 64-bit integers (`array('Q')`, a NumPy `uint64`
        array, ...) with new IDs and returns how many it wrote (all of it).
        """
    def __reduce__(self) -> Any: ...

@final
class PublicIds:
    """Encodes IDs as public IDs (`note_0923h26jsg2d8g`) and decodes them back, under a secret
    key of 16 bytes. The key is not kept (only what is derived from it) and never shown.
    """

    def __new__(
        cls,
        key: bytes | bytearray,
        prefix: str,
        encoding: _Encoding | None = None,
        *,
        key_version: int | None = None,
        old_keys: dict[int, bytes | bytearray] | None = None,
        layout: Layout | None = None,
    ) -> PublicIds: ...
    @staticmethod
    def from_keys(
        keys: str, prefix: str, encoding: _Encoding | None = None, *, layout: Layout | None = None
    ) -> PublicIds:
        """Public IDs from keys written as text, as an environment variable or a setting holds
        them: 32 hex digits (one key, version 0), or `VERSION:HEX` pairs separated by commas
        (`"2:<hex>,1:<hex>"`), the highest version current.
        """
    def encode(self, id: _Id) -> str:
        """The public ID of `id` (an int or a decimal string)."""
    def decode(self, text: str) -> int:
        """The ID a public ID stands for; a `ValueError` subclass (`PublicIdPrefixError`, ...,
        `PublicIdMismatchError`) for any text that is not one.
        """
    def check(self, text: str) -> int:
        """Checks the shape of `text` without decoding (prefix, length, alphabet, check symbol)
        and returns the key version it names.
        """
    @property
    def prefix(self) -> str:
        """The type prefix."""
    @property
    def encoding(self) -> _Encoding:
        """The encoding's name."""
    @property
    def key_version(self) -> int:
        """The current key's version, which every text this makes carries."""
    @property
    def key_versions(self) -> list[int]:
        """The versions of every key held, the current one first."""
    @property
    def layout(self) -> Layout:
        """The layout whose IDs this takes."""
    @property
    def text_len(self) -> int:
        """The length of every text this makes."""
    @property
    def pattern(self) -> str:
        """A regular expression matching every text of this prefix and encoding (no anchors), for
        URL routers.
        """

def from_uuid(uuid: _uuid.UUID | str, layout: Layout | None = None) -> int:
    """The ID a UUID made by `Layout.to_uuid` holds. Without `layout`, the UUID's marker names its
    preset; a custom layout's UUID needs its layout. `InvalidArgumentError` for a UUID the
    bridge did not make, of another version or variant, or of another layout.
    """
def check_public_id(text: str, prefix: str, encoding: _Encoding = "base32") -> int:
    """Checks the shape of a public ID without its key (what a program without the key can do):
    prefix, length, alphabet, check symbol; returns the key version it names.
    """
def _public_id_pattern(prefix: str, encoding: _Encoding = "base32") -> str: ...
