"""What the restore tests of every database check alike (tests/postgres, tests/mysql: their
conftests put tests/python on the path)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from shardid import Layout, NoFreeShardError, ShardIdError


def probe_lease(lease: Callable[..., Any], url: str, table: str, leased: Collection[int]) -> str:
    """The restored database's first holder of the old holder's shard (Sonyflake's shard 0 in
    `table`), with a clock behind: it asks for an ID of the old holder's last time unit
    (``next_id_at``), as a holder on a host whose clock is up to 2 s behind would draw one.
    (`lease`: the database's, `shardid.postgres.lease` or `shardid.mysql.lease`.) The
    restored row's ceiling is the dump's (or the restore point's): unless the claim saw
    that the table was restored (its timeline, system or origin) and raised the ceiling above
    the database's clock, that ID is one the old holder handed out (`leased`). Returns what
    happened."""
    last_ms = Layout.SONYFLAKE.decode(max(leased)).timestamp_ms
    deadline = time.monotonic() + 30
    while True:
        try:
            held = lease(Layout.SONYFLAKE, url, range(0, 1), table=table, ttl_ms=1_000)
            break
        except NoFreeShardError:  # the restored row's holder, until its TTL ends
            assert time.monotonic() < deadline
            time.sleep(0.1)
    with held:
        try:
            id_ = held.next_id_at(last_ms)
        except ShardIdError as e:  # behind the ceiling: refused, as it should be
            return f"refused ({e.code})"
    assert id_ not in set(leased), f"leased ID {id_} handed out again: the claim kept the restored ceiling"
    return f"ID {id_}, not one of the old holder's"


DAY_MS = 86_400_000
# The serial of issue 54: a day's numbers, six digits.
CREATED_FORMAT = "RST-{yyyy}{MM}{dd}-{seq:6}"

HERE = Path(__file__).resolve().parent


def _as_url(dsn: str) -> str:
    """A libpq ``key=value`` string as a ``postgresql://`` URL (Node's pg reads only URLs)."""
    if "://" in dsn:
        return dsn
    parts = dict(item.split("=", 1) for item in dsn.split())
    return f"postgresql://{parts.get('user', 'postgres')}@{parts['host']}:{parts['port']}/{parts['dbname']}"


def taken_by_node_and_rust(
    url: str, words_url: str, schema: str, dictionary_schema: str, day_ms: int, n: int
) -> dict[str, tuple[list[str], list[int], dict[str, int]]]:
    """After a restore, what Node (``restore_again.mjs``) and Rust (the ``restore_again``
    example, ``SHARDID_RESTORE_EXAMPLE``) take on the restored database, as the Python part of
    :func:`created_after_backup` does: ``n`` of day ``day_ms``'s serials of ``rst``, ``n`` IDs
    of tag ``fresh`` (made again first) and the IDs of ``n`` new strings (``node0``...,
    ``rust0``...) of topic ``fresh`` (made again first). Each language's clients run the
    core's statements; the fences they meet are the database's."""
    example = os.environ.get("SHARDID_RESTORE_EXAMPLE", "")
    node = shutil.which("node")
    assert node, "node is not on PATH"
    assert example and Path(example).exists(), (
        "SHARDID_RESTORE_EXAMPLE: build `cargo build -p shardid --features serial,<database> --example restore_again`"
    )
    commands = {
        "node": [node, str(HERE / "restore_again.mjs"), _as_url(url), _as_url(words_url)],
        "rust": [example, url, words_url],
    }
    taken = {}
    for language, command in commands.items():
        done = subprocess.run(
            [*command, schema, dictionary_schema, str(day_ms), CREATED_FORMAT, str(n), language],
            capture_output=True, text=True, timeout=120,
        )
        assert done.returncode == 0, f"{language}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
        got = json.loads(done.stdout.strip().splitlines()[-1])
        taken[language] = (got["serials"], [int(i) for i in got["dense"]], {k: int(v) for k, v in got["ids"].items()})
    return taken


def created_after_backup(
    url: str,
    backup: Callable[[], None],
    restore: Callable[[], tuple[str, str] | None],
    mark: Callable[[str], None] | None,
    *,
    schema: str | None = None,
    dictionary_schema: str | None = None,
    dictionary_url: str | None = None,
) -> str:
    """Issue 54: what did not exist in the backup is created again after the restore. Serials
    of a day, a dense tag's IDs and a topic's strings are handed out; the backup is taken
    (``backup``); then the next day's serials (a period the backup lacks), a new dense tag and
    a new topic hand out numbers; the backup is restored (``restore``, which returns the URLs of
    the restored segments and dictionary, or ``None`` for the same ones) and marked (``mark``,
    given the segments' URL; ``None``: a step back the database sees by itself); a take of a tag the backup had comes first, then the next day's
    serials, the new tag and the new topic are made and used again, from Python, then Node and
    Rust (:func:`taken_by_node_and_rust`). No serial or dense ID is handed out twice, no
    dictionary ID names a second string. The two days are the two before
    today (UTC), so that both periods began before the restore. Returns what happened."""
    from shardid.dictionary import Dictionary
    from shardid.segments import DenseIds, Serials, create_serial, create_tag

    words_url = dictionary_url or url
    seg = {"schema": schema} if schema else {}
    dic = {"schema": dictionary_schema} if dictionary_schema else {}
    today = time.time_ns() // 1_000_000 // DAY_MS * DAY_MS
    day1, day2 = today - 2 * DAY_MS + 3_600_000, today - DAY_MS + 3_600_000

    def serials(at: str, ms: int, n: int) -> list[str]:
        with Serials(at, "rst", CREATED_FORMAT, zone="UTC", min_size=10, max_size=10, **seg) as s:
            return [s.next_serial_at(ms) for _ in range(n)]

    def dense(at: str, tag: str, n: int) -> list[int]:
        with DenseIds(at, tag, min_size=10, max_size=10, **seg) as ids:
            return [ids.next_id() for _ in range(n)]

    def strings(at: str, topic: str, values: list[str]) -> dict[str, int]:
        d = Dictionary(at, topic, cache_size=0, **dic)
        try:
            d.create()
            return dict(zip(values, d.ids(values)))
        finally:
            d.close()

    create_serial(url, "rst", CREATED_FORMAT, zone="UTC", **seg)
    create_tag(url, "orders", **seg)
    dense(url, "orders", 200)
    serials(url, day1, 50)
    strings(words_url, "words", [f"w{i}" for i in range(50)])
    backup()
    lost_serials = serials(url, day2, 40)
    create_tag(url, "fresh", **seg)
    lost_dense = dense(url, "fresh", 40)
    lost_ids = strings(words_url, "fresh", [f"x{i}" for i in range(40)])
    assert lost_serials[0].endswith("-000001") and lost_dense[0] == 1 and min(lost_ids.values()) == 0

    url, words_url = restore() or (url, words_url)
    if mark is not None:
        mark(url)
    dense(url, "orders", 1)  # a tag the backup had, first: its take clears its own mark
    again_serials = serials(url, day2, 40)
    create_tag(url, "fresh", **seg)
    again_dense = dense(url, "fresh", 40)
    again_ids = strings(words_url, "fresh", [f"y{i}" for i in range(40)])
    # Node and Rust take from the same day, tag and topic on the restored database (after
    # Python: the tag and topic were made again above, and each makes them again itself).
    others = taken_by_node_and_rust(url, words_url, schema or "main", dictionary_schema or "main", day2, 40)
    for more_serials, more_dense, more_ids in others.values():
        again_serials += more_serials
        again_dense += more_dense
        again_ids.update(more_ids)

    assert len(set(again_serials)) == len(again_serials) == 120, again_serials
    assert len(set(again_dense)) == len(again_dense) == 120, again_dense
    twice = sorted(set(lost_serials) & set(again_serials))
    assert not twice, f"{len(twice)} serials handed out twice: {twice[:3]}"
    assert not set(lost_dense) & set(again_dense), (lost_dense[:3], again_dense[:3])
    names: dict[int, set[str]] = {}
    for value, id_ in [*lost_ids.items(), *again_ids.items()]:
        names.setdefault(id_, set()).add(value)
    two = {i: v for i, v in names.items() if len(v) > 1}
    assert not two, f"{len(two)} dictionary IDs name a second string: {sorted(two.items())[:3]}"
    return (
        f"created again after the restore (Python, Node, Rust): the next day's serials from {again_serials[0]} (lost up to"
        f" {lost_serials[-1]}), the new tag from {again_dense[0]:,} (lost up to {lost_dense[-1]}),"
        f" the new topic's IDs from {min(again_ids.values()):,} (lost up to {max(lost_ids.values())})"
    )


def after_given(
    url: str,
    backup: Callable[[], None],
    restore: Callable[[], tuple[str, str] | None],
    restored: Callable[[str, list[str]], None],
    *,
    schema: str | None = None,
    dictionary_schema: str | None = None,
    dictionary_url: str | None = None,
    margin: int = 5,
) -> str:
    """Issue 54's ``shardid restored --after``: the operator knows the last serial issued
    after the backup (of a day the backup lacks), the last ID of a tag and the last ID of a
    topic the backup lacks, and says so (``restored``, given the restored segments' URL and the
    options); the next of each is exactly the one given plus 1 plus ``margin``, where the bound
    would skip by the rates. Returns what happened."""
    from shardid.dictionary import Dictionary
    from shardid.segments import DenseIds, Serials, create_serial, create_tag

    words_url = dictionary_url or url
    seg = {"schema": schema} if schema else {}
    dic = {"schema": dictionary_schema} if dictionary_schema else {}
    today = time.time_ns() // 1_000_000 // DAY_MS * DAY_MS
    day1, day2 = today - 2 * DAY_MS + 3_600_000, today - DAY_MS + 3_600_000

    def serials(at: str, ms: int, n: int) -> list[str]:
        with Serials(at, "rst", CREATED_FORMAT, zone="UTC", min_size=10, max_size=10, **seg) as s:
            return [s.next_serial_at(ms) for _ in range(n)]

    def dense(at: str, n: int) -> list[int]:
        with DenseIds(at, "orders", min_size=10, max_size=10, **seg) as ids:
            return [ids.next_id() for _ in range(n)]

    def strings(at: str, values: list[str]) -> list[int]:
        d = Dictionary(at, "fresh", cache_size=0, **dic)
        try:
            d.create()
            return d.ids(values)
        finally:
            d.close()

    create_serial(url, "rst", CREATED_FORMAT, zone="UTC", **seg)
    create_tag(url, "orders", **seg)
    dense(url, 100)
    serials(url, day1, 20)
    d = Dictionary(words_url, "words", **dic)  # the dictionary was in use before the backup
    d.create()
    d.close()
    backup()
    last_serial = serials(url, day2, 40)[-1]
    last_id = dense(url, 200)[-1]
    last_word = max(strings(words_url, [f"x{i}" for i in range(40)]))
    url, words_url = restore() or (url, words_url)
    restored(
        url,
        ["--after", f"rst={last_serial}", "--after", f"orders={last_id}", "--after-topic", f"fresh={last_word}",
         "--margin", str(margin)],
    )  # fmt: skip
    first_serial = serials(url, day2, 1)[0]
    first_id = dense(url, 1)[0]
    first_word = strings(words_url, ["y0"])[0]
    number = int(last_serial.rsplit("-", 1)[1])
    assert first_serial == f"{last_serial.rsplit('-', 1)[0]}-{number + 1 + margin:06d}", (last_serial, first_serial)
    assert first_id == last_id + 1 + margin, (last_id, first_id)
    assert first_word == last_word + 1 + margin, (last_word, first_word)
    return (
        f"--after {last_serial}, {last_id}, {last_word} (margin {margin}): the next are {first_serial}, {first_id}, {first_word}"
    )


# The furthest ahead of the database's clock a lease's holder may date IDs: shardid's
# failover::SKEW_MS (2 s; a holder further ahead is refused, CLOCK_SKEW), less a margin for
# the time a statement takes.
LEASE_AHEAD_MS = 1_950


# What a new holder's generator may answer when asked for an ID of the lost holder's time unit
# after a restore: a refusal because that time is behind its row's ceiling (which starts past
# what the lost holder could have dated).
BEHIND_THE_CEILING = {"SEQUENCE_EXHAUSTED", "CLOCK_MOVED_BACKWARDS"}

# The shards of the lease check: the lost holders' (none in the backup), each taken again after
# the restore by one language (Python, Node, Rust), and the one the backup has (shard 1).
LEASE_AGAIN = {"python": 0, "node": 2, "rust": 3}


def lease_by_node_and_rust(url: str, table: str, at_ms: int, n: int) -> Callable[[], dict[str, list[int] | str]]:
    """After a restore, a new holder in Node (``restore_again.mjs lease``) and one in Rust (the
    ``restore_again`` example's ``lease`` mode, ``SHARDID_RESTORE_EXAMPLE``), each of its shard
    of ``LEASE_AGAIN``, asking for ``n`` IDs at ``at_ms``; started at once (a claim after a
    restore waits about 2 s, so they wait beside Python's) and collected by the function
    returned: each one's IDs, or the code of its refusal. Each runs the core's lease protocol in
    its own driver, on the database's fence."""
    example = os.environ.get("SHARDID_RESTORE_EXAMPLE", "")
    node = shutil.which("node")
    assert node, "node is not on PATH"
    assert example and Path(example).exists(), (
        "SHARDID_RESTORE_EXAMPLE: build `cargo build -p shardid --features serial,<database> --example restore_again`"
    )
    commands = {"node": [node, str(HERE / "restore_again.mjs"), "lease", _as_url(url)], "rust": [example, "lease", url]}
    running = {
        language: subprocess.Popen(
            [*command, table, str(LEASE_AGAIN[language]), str(at_ms), str(n)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        for language, command in commands.items()
    }

    def collect() -> dict[str, list[int] | str]:
        said: dict[str, list[int] | str] = {}
        for language, process in running.items():
            try:
                stdout, stderr = process.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                process.kill()
                stdout, stderr = process.communicate()
            assert process.returncode == 0, f"{language}: {stdout[-2000:]}{stderr[-2000:]}"
            got = json.loads(stdout.strip().splitlines()[-1])
            said[language] = [int(i) for i in got["ids"]] if "ids" in got else got["refused"]
        return said

    return collect


def lease_created_after_backup(
    lease: Callable[..., Any],
    url: str,
    table: str,
    backup: Callable[[], None],
    restore: Callable[[], str | None],
    mark: Callable[[str], None] | None,
    *,
    table_in_backup: bool,
) -> str:
    """Issue 54's lease row: the backup lacks the rows of shards 0, 2 and 3
    (``table_in_backup``: the table, with shard 1's row; else no table at all). Then a holder
    claims each and dates IDs as far ahead as the lease allows (its clock ``LEASE_AHEAD_MS``
    ahead of the database's), recording its ceiling past them; the backup is restored
    (``restore`` returns the restored URL, or ``None`` for the same) and marked (``mark``;
    ``None``: seen by the database). At once a new holder claims each shard, in Python (shard 0),
    Node (2) and Rust (3), and asks for IDs of the lost holder's time unit (a host whose clock is
    as far ahead, which the lease allows): none of the lost holders' IDs may be handed out again,
    whichever language's driver runs the core's lease protocol. Returns what happened."""
    if table_in_backup:
        with lease(Layout.SONYFLAKE, url, range(1, 2), table=table, ttl_ms=1_000) as other:
            other.next_id()
    backup()
    lost_ms = time.time_ns() // 1_000_000 + LEASE_AHEAD_MS
    leased: list[int] = []
    for shard in LEASE_AGAIN.values():
        with lease(Layout.SONYFLAKE, url, range(shard, shard + 1), table=table, ttl_ms=60_000) as lost:
            assert lost.shard == shard
            leased += [lost.next_id_at(lost_ms) for _ in range(20)]
    restored = restore() or url
    if mark is not None:
        mark(restored)
    answers: dict[str, list[int] | str] = {}
    others = lease_by_node_and_rust(restored, table, lost_ms, 20)
    with lease(Layout.SONYFLAKE, restored, range(0, 1), table=table, ttl_ms=1_000) as held:
        assert held.shard == 0
        # Still a time a clock within the lease's skew could read: the new holder is one.
        assert lost_ms - time.time_ns() // 1_000_000 < LEASE_AHEAD_MS, "the restore took too long to test"
        try:
            answers["python"] = [held.next_id_at(lost_ms) for _ in range(20)]
        except ShardIdError as e:  # behind the new row's ceiling: refused, as it should be
            answers["python"] = e.code
    answers.update(others())
    said = []
    for language, answer in answers.items():
        if isinstance(answer, str):
            assert answer in BEHIND_THE_CEILING, f"{language}: refused with {answer}, not for a time behind the ceiling"
            said.append(f"{language} refused ({answer})")
            continue
        repeated = set(answer) & set(leased)
        assert not repeated, (
            f"{language}: {len(repeated)} of the lost holders' IDs handed out again, {sorted(repeated)[:3]}..."
        )
        said.append(f"{language} IDs {answer[0]}.., none of the lost holders'")
    return "; ".join(said)


def first_claims_not_delayed(lease: Callable[..., Any], url: str, table: str) -> str:
    """Issue 54's other side: on a database never restored (no lease table yet, then a table
    whose fence no ``shardid restored`` marked), a first claim of shard 0 and then of shard 1
    (a row the table lacks) starts at the clock: its first ID is dated now and comes at once,
    where a claim after a restore starts past the clock plus the failover rule's skew (2.25 s).
    Returns the figures."""
    said = []
    for shard in (0, 1):
        with lease(Layout.SONYFLAKE, url, range(shard, shard + 1), table=table, ttl_ms=1_000) as held:
            assert held.shard == shard
            before = time.time_ns() // 1_000_000
            first = held.next_id()
            took = time.time_ns() // 1_000_000 - before
        ahead = Layout.SONYFLAKE.decode(first).timestamp_ms - before
        assert took < 1_000 and ahead < 1_000, f"shard {shard}'s first ID came after {took} ms, dated {ahead} ms ahead"
        said.append(f"shard {shard}: {took} ms, dated {ahead} ms ahead")
    return "; ".join(said)
