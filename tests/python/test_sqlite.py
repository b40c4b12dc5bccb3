"""SQLite as the third database of the Python clients (issue 44): dense IDs, serials and the
dictionary on one file shared by threads and processes, with no server.

The tests try to break it: processes and threads racing on one file with segments of a few
IDs, a process SIGKILLed mid-run, a period change raced by processes, asyncio tasks cancelled
mid-batch; a read-only file, and bad input. The errors every database shares (a file that cannot
be used, a URL no driver takes, a write lock held past the busy timeout) are cells of the one
behaviour contract, tests/postgres/test_contract.py."""

from __future__ import annotations

import functools
import asyncio
import multiprocessing
import os
import signal
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import shardid
from shardid import _sqlite
from shardid.dictionary import AsyncDictionary, Dictionary
from shardid.segments import AsyncDenseIds, AsyncSerials, DenseIds, Serials, create_serial, create_tag
from shardid.sql import dictionary as dictionary_ddl
from shardid.sql import mysql as mysql_ddl
from shardid.sql import segments as segments_ddl
from django_project import IN_CHILDREN, migration
from together import on_threads, race, results_of

# fork: the children start at once, with this module's functions (Linux, where CI runs).
FORK = multiprocessing.get_context("fork")
PROCESSES, THREADS = 4, 4
DAY_MS = 86_400_000
DAY1 = 1_795_000_000_000  # 2026-11-18 (UTC)
FMT = "INV-{yyyy}{MM}{dd}-{seq:6}"


def url_of(path: Path) -> str:
    """``sqlite:////abs/path.db`` for an absolute path (``sqlite:///`` and the path's ``/``)."""
    return f"sqlite:///{path}"


def tiny_tag(url: str, tag: str, step: int = 2) -> None:
    """A tag whose first take hands out ``step`` numbers (the row remembers the last size)."""
    create_tag(url, tag)
    conn = sqlite3.connect(_sqlite.path_of(url))
    with conn:
        conn.execute("UPDATE shardid_tags SET step = ? WHERE tag = ?", (step, tag))
    conn.close()


def run_threads(work: Any, n: int = THREADS) -> list[str]:
    """Runs ``work(k)`` on ``n`` threads; the errors they raised (a thread's exception would
    otherwise only be printed)."""
    errors: list[str] = []

    def guarded(k: int) -> None:
        try:
            work(k)
        except BaseException as e:  # noqa: BLE001 - reported to the test
            errors.append(repr(e))

    on_threads(functools.partial(guarded, k) for k in range(n))
    return errors


@pytest.fixture
def url(tmp_path: Path) -> str:
    return url_of(tmp_path / "shardid.db")


# -- the DDL and the URLs ---------------------------------------------------------------------


def test_ddl_for_projects_that_manage_migrations(tmp_path: Path) -> None:
    ddl = segments_ddl("main", dialect="sqlite") + dictionary_ddl("main", dialect="sqlite")
    assert "CREATE TABLE IF NOT EXISTS main.shardid_tags" in ddl
    assert "CREATE TABLE IF NOT EXISTS main.shardid_serials" in ddl
    assert "CREATE TABLE IF NOT EXISTS main.shardid_topics" in ddl
    # The DDL is what the clients create on first use: run it by hand, then use the file.
    conn = sqlite3.connect(tmp_path / "migrated.db")
    conn.executescript(ddl)
    conn.close()
    url = url_of(tmp_path / "migrated.db")
    create_tag(url, "orders")
    with DenseIds(url, "orders") as ids:
        assert ids.next_id() == 1
    with pytest.raises(shardid.InvalidArgumentError, match="ticket servers"):
        segments_ddl("main", servers=2, index=1, dialect="sqlite")
    with pytest.raises(shardid.InvalidArgumentError):
        segments_ddl("main; DROP", dialect="sqlite")
    with pytest.raises(shardid.InvalidArgumentError, match="sqlite"):
        mysql_ddl(shardid.Layout.preset("twitter"), 1, "db", dialect="sqlite")


# A URL no driver takes (no path, in-memory, a host, a query): tests/postgres/test_contract.py, in
# every client.


def test_one_file_is_no_ticket_servers(tmp_path: Path) -> None:
    # Two files would each hand out 1, 2, 3, ...: refused, as a mix of databases is.
    with pytest.raises(shardid.InvalidArgumentError, match="one sqlite"):
        DenseIds([url_of(tmp_path / "a.db"), url_of(tmp_path / "b.db")], "orders")
    with pytest.raises(shardid.InvalidArgumentError, match="all"):
        DenseIds([url_of(tmp_path / "a.db"), "postgresql://app@db/app"], "orders")


def test_relative_url_is_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    create_tag("sqlite:///rel.db", "orders")
    assert (tmp_path / "rel.db").exists()
    with DenseIds("sqlite:///rel.db", "orders") as ids:
        assert ids.schema == "main"
        assert ids.next_ids(3) == [1, 2, 3]


# -- dense IDs ----------------------------------------------------------------------------------


def test_dense_ids_restart_where_the_last_stopped(url: str) -> None:
    create_tag(url, "orders")
    create_tag(url, "orders")  # again: left as it is
    with DenseIds(url, "orders") as ids:
        assert ids.next_ids(5) == [1, 2, 3, 4, 5]
        assert ids.fetches == 1
        assert ids.stats()["fetches"] == 1
    with DenseIds(url, "orders") as ids:  # the rest was given back
        assert ids.next_id() == 6
        assert ids.skipped == 0


def test_one_close_gives_the_rest_back_however_many_threads_close(url: str) -> None:
    """Which close gives a segment's unused rest back is the allocator's to say (one atomic
    swap, the first in the process it serves): of 8 threads closing at once one gives it back,
    so none is refused and counted skipped, and the next client goes on from the rest."""
    create_tag(url, "closing")
    for _ in range(10):
        ids = DenseIds(url, "closing")
        first = ids.next_id()
        results, errors = race(ids.close, 8)
        assert (errors, results, ids.skipped) == ([], [None] * 8, 0)
        with DenseIds(url, "closing") as after:
            assert after.next_id() == first + 1
    ids = DenseIds(url, "closing")
    assert [ids._shut(), ids._shut()] == [True, False]  # the rule itself


def test_an_exhausted_tag_is_segment_unavailable_naming_tag_exhausted(url: str) -> None:
    """The core's steps of a take read the row: a tag whose numbers would pass 2^63 - 1 is
    ``TAG_EXHAUSTED`` in the core's words (Node's message says the same), never an ID past it."""
    create_tag(url, "end")
    conn = sqlite3.connect(_sqlite.path_of(url))
    conn.execute("UPDATE shardid_tags SET next = ? WHERE tag = 'end'", (2**63 - 8,))
    conn.commit()
    conn.close()
    with DenseIds(url, "end", wait_ms=300) as ids:
        with pytest.raises(shardid.SegmentUnavailableError) as raised:
            ids.next_id()
    assert "no segment of tag 'end': TAG_EXHAUSTED: the numbers of the tag would pass 2^63 - 1" in str(raised.value)
    assert raised.value.__cause__.sqlstate == "SI002"  # type: ignore[union-attr]


def test_an_exhausted_tag_retried_at_the_deadline_still_names_tag_exhausted(url: str) -> None:
    """The last fetch's failure is the reason even when its retry is under way as the wait
    ends (as Rust's driver says): on a loaded machine the retry of the exhausted tag was in
    flight at the deadline, and the error said only "no segment arrived within 300 ms". Here
    the retry is held until the wait is over, so it always is."""
    from shardid.segments import _Driver

    create_tag(url, "end")
    conn = sqlite3.connect(_sqlite.path_of(url))
    conn.execute("UPDATE shardid_tags SET next = ? WHERE tag = 'end'", (2**63 - 8,))
    conn.commit()
    conn.close()
    failed, retrying, release = threading.Event(), threading.Event(), threading.Event()

    class HeldRetries:
        """The dialect, whose statements after the first take's two (the take, then the read
        that says the tag is exhausted) wait for ``release``."""

        def __init__(self, dialect: Any) -> None:
            self._dialect = dialect
            self._sent = 0

        def __getattr__(self, name: str) -> Any:
            return getattr(self._dialect, name)

        def row(self, *args: Any) -> Any:
            if failed.is_set():
                retrying.set()
                release.wait(30)
            try:
                return self._dialect.row(*args)
            finally:
                self._sent += 1
                if self._sent == 2:
                    failed.set()

    class Driver(_Driver):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._dialect = HeldRetries(self._dialect)

    ids = DenseIds(url, "end", wait_ms=1_000, _driver=Driver)  # type: ignore[call-arg]
    try:
        with pytest.raises(shardid.SegmentUnavailableError):
            ids.next_id()  # the first fetch: TAG_EXHAUSTED
        assert failed.wait(30)
        with pytest.raises(shardid.SegmentUnavailableError) as raised:
            ids.next_id()  # its retry, after the backoff (100 ms), held past the wait
        assert retrying.is_set(), "the retry was under way at the deadline"
    finally:
        release.set()
        ids.close()
    assert "the last fetch failed: no segment of tag 'end': TAG_EXHAUSTED: the numbers of the tag would pass 2^63 - 1" in str(raised.value)
    assert raised.value.__cause__.sqlstate == "SI002"  # type: ignore[union-attr]


def test_unknown_tag(url: str) -> None:
    create_tag(url, "orders")
    with DenseIds(url, "nosuch", wait_ms=2_000) as ids, pytest.raises(shardid.UnknownTagError):
        ids.next_id()


def _take_dense(url: str, tag: str, n: int, out: Any) -> None:
    ids = DenseIds(url, tag, min_size=1, max_size=4, target_ms=1)
    got: list[int] = []

    def worker(k: int) -> None:
        mine = [ids.next_id() for _ in range(n)]
        got.extend(mine)

    errors = run_threads(worker)
    ids.close()
    out.put((got, ids.skipped, errors))


def test_processes_and_threads_share_one_file(url: str) -> None:
    tiny_tag(url, "orders")
    out = FORK.Queue()
    procs = [FORK.Process(target=_take_dense, args=(url, "orders", 60, out)) for _ in range(PROCESSES)]
    results = results_of(procs, out)
    assert [e for _, _, errors in results for e in errors] == []
    ids = [i for got, _, _ in results for i in got]
    assert len(ids) == PROCESSES * THREADS * 60
    assert len(set(ids)) == len(ids), "an ID was handed out twice"
    # Every number below the row's next is handed out or counted as skipped.
    conn = sqlite3.connect(_sqlite.path_of(url))
    (next_id,) = conn.execute("SELECT next FROM shardid_tags WHERE tag = 'orders'").fetchone()
    conn.close()
    skipped = sum(s for _, s, _ in results)
    assert max(ids) < next_id
    assert next_id - 1 == len(ids) + skipped


def _take_forever(url: str, tag: str, record: str) -> None:
    ids = DenseIds(url, tag, min_size=1, max_size=4, target_ms=1)
    fd = os.open(record, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    while True:  # until SIGKILLed
        batch = ids.next_ids(3)
        os.write(fd, "".join(f"{i}\n" for i in batch).encode())


def test_sigkill_mid_run_loses_nothing_and_repeats_nothing(url: str, tmp_path: Path) -> None:
    tiny_tag(url, "orders")
    records = [tmp_path / f"ids-{i}" for i in range(PROCESSES)]
    out = FORK.Queue()
    victim = FORK.Process(target=_take_forever, args=(url, "orders", str(records[0])))
    victim.start()
    others = [FORK.Process(target=_take_dense, args=(url, "orders", 40, out)) for _ in range(PROCESSES - 1)]
    for p in others:
        p.start()
    deadline = time.monotonic() + 30
    while (not records[0].exists() or records[0].stat().st_size < 200) and time.monotonic() < deadline:
        time.sleep(0.005)  # until the victim is well under way
    assert victim.is_alive(), "the victim stopped before it was killed"
    os.kill(victim.pid, signal.SIGKILL)
    victim.join(10)
    assert victim.exitcode == -signal.SIGKILL
    results = [out.get(timeout=60) for _ in others]
    for p in others:
        p.join(30)
        assert p.exitcode == 0
    assert [e for _, _, errors in results for e in errors] == []
    killed = [int(line) for line in records[0].read_text().split()]
    assert killed, "the victim took no ID before it was killed"
    clean = [i for got, _, _ in results for i in got]
    # After the kill the file is whole and the tag goes on above everything handed out.
    with DenseIds(url, "orders") as ids:
        after = ids.next_ids(10)
    every = killed + clean + after
    assert len(set(every)) == len(every), "an ID was handed out twice"
    assert min(after) > max(killed + clean)
    # What is missing below is at most the victim's two segments (of at most 4) and the
    # rests the clean processes could not give back (counted as skipped).
    missing = set(range(1, max(every) + 1)) - set(every)
    assert len(missing) <= 2 * 4 + 4 + sum(s for _, s, _ in results)
    conn = sqlite3.connect(_sqlite.path_of(url))
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()


def _use_inherited(ids: DenseIds, words: Dictionary, out: Any) -> None:
    got = (ids.next_ids(3), words.ids(["a", "child"]))
    ids.close()
    words.close()
    out.put(got)


def test_objects_used_before_fork(url: str) -> None:
    # The parent's connections are never used (nor closed) in a forked child: it opens its own,
    # takes a segment of its own, and the parent goes on with its own.
    create_tag(url, "orders")
    ids, words = DenseIds(url, "orders"), Dictionary(url, "words")
    words.create()
    assert (ids.next_id(), words.id("a")) == (1, 0)
    out = FORK.Queue()
    child = FORK.Process(target=_use_inherited, args=(ids, words, out))
    child.start()
    child_ids, child_words = out.get(timeout=30)
    child.join(30)
    assert child.exitcode == 0
    assert child_ids[0] > 1 and child_words == [0, 1]
    assert ids.next_id() == 2 and words.id("parent") == 2
    ids.close()
    words.close()


def test_async_dense_ids(url: str) -> None:
    tiny_tag(url, "orders")

    async def main() -> list[int]:
        async with AsyncDenseIds(url, "orders", min_size=1, max_size=4, target_ms=1) as ids:
            assert ids.schema == "main"

            async def worker() -> list[int]:
                return [await ids.next_id() for _ in range(50)] + await ids.next_ids(7)

            got = await asyncio.gather(*(worker() for _ in range(8)))
            return [i for g in got for i in g]

    ids = asyncio.run(main())
    assert len(ids) == 8 * 57 and len(set(ids)) == len(ids)
    with DenseIds(url, "orders") as again:
        assert again.next_id() > max(ids)


# -- serials -------------------------------------------------------------------------------------


def test_serials_register_take_and_mismatch(url: str) -> None:
    create_serial(url, "inv", FMT, zone="UTC")
    create_serial(url, "inv", FMT, zone="UTC")  # again alike: nothing
    with pytest.raises(shardid.SerialMismatchError, match="registered with"):
        create_serial(url, "inv", FMT, zone="Asia/Shanghai")
    with pytest.raises(shardid.SerialMismatchError, match="another tag"):
        create_serial(url, "inv2", FMT, zone="UTC")
    with pytest.raises(shardid.SerialMismatchError):
        Serials(url, "inv", "INV-{yyyy}{MM}-{seq:6}", zone="UTC")
    with pytest.raises(shardid.UnknownTagError):
        Serials(url, "nosuch", FMT, zone="UTC")
    with pytest.raises(shardid.InvalidArgumentError):
        create_serial(url, "a@b", FMT, zone="UTC")
    s = Serials(url, "inv", FMT, zone="UTC")
    assert [s.next_serial_at(DAY1) for _ in range(2)] == ["INV-20261118-000001", "INV-20261118-000002"]
    assert s.next_serial_at(DAY1 + DAY_MS) == "INV-20261119-000001"
    s.close()
    s = Serials(url, "inv", FMT, zone="UTC")  # the rest was given back
    assert s.next_serial_at(DAY1) == "INV-20261118-000003"
    s.close()


def _take_serials(url: str, n: int, out: Any) -> None:
    s = Serials(url, "inv", FMT, zone="UTC", min_size=1, max_size=3, target_ms=1)
    got: list[str] = []

    def worker(k: int) -> None:
        # A scripted clock: midnight comes halfway, at a different moment in each thread.
        mine = [s.next_serial_at(DAY1 + (DAY_MS if i >= n // 2 else 0) + i) for i in range(n)]
        got.extend(mine)

    errors = run_threads(worker)
    s.close()
    out.put((got, errors))


def test_serials_never_twice_across_midnight(url: str) -> None:
    create_serial(url, "inv", FMT, zone="UTC")
    out = FORK.Queue()
    procs = [FORK.Process(target=_take_serials, args=(url, 40, out)) for _ in range(PROCESSES)]
    results = results_of(procs, out)
    assert [e for _, errors in results for e in errors] == []
    serials = [x for got, _ in results for x in got]
    assert len(serials) == PROCESSES * THREADS * 40
    assert len(set(serials)) == len(serials), [s for s, c in Counter(serials).items() if c > 1][:5]
    # Periods only move on: a thread still at 23:59 after another passed midnight takes the
    # new day's numbers. Each day's numbers are its own, from 1.
    days = Counter(s[4:12] for s in serials)
    assert set(days) == {"20261118", "20261119"}
    for day in days:
        numbers = sorted(int(s[-6:]) for s in serials if s[4:12] == day)
        assert numbers[0] == 1 and len(set(numbers)) == len(numbers)


def test_async_serials_from_many_tasks_and_a_second_client(url: str) -> None:
    # AsyncSerials is Serials' allocator with its waits on a worker thread: 200 tasks and a
    # blocking client on the same tag (segments of 3, so fetches are many) share the numbers,
    # none twice, the day's numbers dense (each client gives its rest back on close).
    create_serial(url, "tasks", FMT, zone="UTC")
    at = 1_795_000_000_000

    async def run() -> list[str]:
        async with AsyncSerials(url, "tasks", FMT, zone="UTC", min_size=3, max_size=3) as s:
            got = await asyncio.gather(*[s.next_serial_at(at) for _ in range(200)])
            assert s.stats()["fetches"] >= 200 // 3
            assert s.parse(got[0]).number >= 1
        with pytest.raises(shardid.ClosedError, match="^Serials of tag tasks was closed: make a new one$"):
            await s.next_serial()
        return got

    with Serials(url, "tasks", FMT, zone="UTC", min_size=3, max_size=3) as other:
        theirs = [other.next_serial_at(at) for _ in range(30)]
        ours = asyncio.run(run())
        theirs += [other.next_serial_at(at) for _ in range(30)]
    every = ours + theirs
    assert len(set(every)) == len(every) == 260
    numbers = sorted(int(s[-6:]) for s in every)
    assert numbers[-1] - numbers[0] + 1 <= 260 + 2 * 3, numbers[-1]  # at most a segment's rest each
    with pytest.raises(shardid.InvalidArgumentError):
        AsyncSerials("postgresql+nosuch://x/y", "tasks", FMT, zone="UTC")
    with pytest.raises(shardid.UnknownTimeZoneError):
        AsyncSerials(url, "tasks", FMT, zone="Mars/Olympus")


# -- the dictionary ------------------------------------------------------------------------------


def test_dictionary(url: str) -> None:
    d = Dictionary(url, "urls")
    assert d.schema == "main"
    with pytest.raises(shardid.UnknownTopicError):
        d.id("/a")
    d.create()
    d.create()
    assert d.ids(["/a", "/b", "/a", "/c"]) == [0, 1, 0, 2]
    assert d.lookup(["/b", "/z"]) == [1, None]
    assert d.values([2, 0, 9]) == ["/c", "/a", None]
    many = [f"/{i}" for i in range(12_000)]  # more than one statement's list
    assert d.ids(many)[-1] == 3 + 11_999
    stats = d.stats()
    assert stats["id_misses"] > 0 and stats["statements"] > 0
    d.drop()
    with pytest.raises(shardid.TopicDroppedError):
        d.id("/new")
    assert d.id("/a") == 0  # a dropped topic's strings stay readable
    with pytest.raises(shardid.TopicDroppedError):
        Dictionary(url, "urls").create()
    d.close()
    with pytest.raises(shardid.ClosedError):
        d.id("/a")


def _assign_strings(url: str, seed: int, out: Any) -> None:
    d = Dictionary(url, "words", cache_size=16)
    got: dict[str, int] = {}

    def worker(k: int) -> None:
        words = [f"w{(seed * 7 + k * 13 + i * 31) % 1200}" for i in range(300)]
        for i in range(0, len(words), 10):
            got.update(zip(words[i : i + 10], d.ids(words[i : i + 10])))

    errors = run_threads(worker)
    d.close()
    out.put((got, errors))


def _assign_forever(url: str) -> None:
    d = Dictionary(url, "words", cache_size=16)
    i = 0
    while True:  # until SIGKILLed, mid-batch as often as not
        d.ids([f"k{i}-{j}" for j in range(50)])
        i += 1


def test_dictionary_ids_dense_across_processes_and_a_kill(url: str) -> None:
    Dictionary(url, "words").create()
    out = FORK.Queue()
    victim = FORK.Process(target=_assign_forever, args=(url,))
    victim.start()
    procs = [FORK.Process(target=_assign_strings, args=(url, seed, out)) for seed in range(PROCESSES)]
    for p in procs:
        p.start()
    conn = sqlite3.connect(_sqlite.path_of(url))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        (n,) = conn.execute("SELECT count(*) FROM shardid_strings WHERE value LIKE 'k%'").fetchone()
        if n >= 200:
            break
        time.sleep(0.005)
    assert victim.is_alive(), "the victim stopped before it was killed"
    os.kill(victim.pid, signal.SIGKILL)
    victim.join(10)
    answers = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    assert [e for _, errors in answers for e in errors] == []
    # One ID per string whichever process asked.
    merged: dict[str, int] = {}
    for got, _ in answers:
        for word, id in got.items():
            assert merged.setdefault(word, id) == id
    ids = sorted(i for (i,) in conn.execute("SELECT id FROM shardid_strings"))
    assert ids == list(range(len(ids))), "the IDs are not exactly 0..n-1"
    (next_id,) = conn.execute("SELECT next FROM shardid_topics WHERE topic = 'words'").fetchone()
    assert next_id == len(ids)
    conn.close()
    # A new batch after the kill goes on from n.
    with Dictionary(url, "words") as d:
        assert d.id("after-the-kill") == len(ids)


def test_every_dictionary_is_reported_to_exporters_until_closed_blocking_and_asyncio(url: str) -> None:
    """The exporters read every dictionary of the process, an AsyncDictionary's too (its cache
    was never reported before: FastAPI's dictionaries were missing from /metrics), each under its
    schema and topic, with the statements it sent; a closed one is gone."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    import shardid.prometheus

    registry = CollectorRegistry()
    registry.register(shardid.prometheus.ShardIdCollector())

    def statements() -> dict[str, float]:
        families = {f.name: f for f in text_string_to_metric_families(generate_latest(registry).decode())}
        family = families.get("shardid_dictionary_statements")
        return {} if family is None else {s.labels["topic"]: s.value for s in family.samples if s.name.endswith("_total")}

    async def run() -> None:
        blocking, asynchronous = Dictionary(url, "exported_blocking"), AsyncDictionary(url, "exported_async")
        blocking.create()
        await asynchronous.create()
        assert blocking.ids(["a", "b"]) == [0, 1] and await asynchronous.ids(["a"]) == [0]
        seen = statements()
        assert seen["exported_blocking"] == blocking.stats()["statements"] > 0, seen
        assert seen["exported_async"] == asynchronous.stats()["statements"] > 0, seen
        await asynchronous.close()
        blocking.close()
        seen = statements()
        assert "exported_blocking" not in seen and "exported_async" not in seen, seen
        assert repr(asynchronous).startswith("AsyncDictionary(topic='exported_async', schema='main'"), repr(asynchronous)

    asyncio.run(run())


def test_serials_are_reported_to_exporters_as_segments_of_their_tag_until_closed(url: str) -> None:
    """A Serials allocator is in the exporters as a dense-ID allocator is (it was missing):
    its segments' figures under its schema and serial tag, equal to its stats(); closed, gone.
    Node's test is tests/js/exporters.test.mjs."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    import shardid.prometheus

    registry = CollectorRegistry()
    registry.register(shardid.prometheus.ShardIdCollector())

    def fetches() -> list[tuple[dict[str, str], float]]:
        families = {f.name: f for f in text_string_to_metric_families(generate_latest(registry).decode())}
        family = families.get("shardid_segment_fetches")
        samples = [] if family is None else family.samples
        return [(s.labels, s.value) for s in samples if s.labels.get("tag") == "exported_ser" and s.name.endswith("_total")]

    create_serial(url, "exported_ser", "E-{yyyy}-{seq:6}", zone="UTC")
    orders = Serials(url, "exported_ser", "E-{yyyy}-{seq:6}", zone="UTC", min_size=2, max_size=2)
    for _ in range(7):
        orders.next_serial()  # segments of 2: several fetches
    stats = orders.stats()
    assert stats["fetches"] >= 3, stats
    assert fetches() == [({"schema": "main", "tag": "exported_ser"}, float(stats["fetches"]))]
    orders.close()
    assert fetches() == []


def test_a_serials_holes_are_counted_once_by_the_core_and_exported_as_stats_says(url: str) -> None:
    """A period's rest that cannot go back (another allocator took after it) is a hole: the
    core's allocator counts it (``SerialAllocator::settle``), so ``skipped``, ``stats()`` and
    the exporters say the same number (the driver kept a count of its own before, and the
    exporters said 0)."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    import shardid.prometheus

    registry = CollectorRegistry()
    registry.register(shardid.prometheus.ShardIdCollector())
    fmt, day = "H-{yyyy}{MM}{dd}-{seq:6}", 1_764_028_800_000  # 2025-11-25 00:00 UTC
    create_serial(url, "holes", fmt, zone="UTC")
    a = Serials(url, "holes", fmt, zone="UTC", min_size=2, max_size=2)
    b = Serials(url, "holes", fmt, zone="UTC", min_size=2, max_size=2)
    assert a.next_serial_at(day) == "H-20251125-000001"
    b.next_serial_at(day)  # takes after a: a's rest can no longer go back
    a.next_serial_at(day + 86_400_000)  # a's day ends: its rest is a hole
    assert a.skipped > 0 and a.stats()["skipped"] == a.skipped, (a.skipped, a.stats())
    text = generate_latest(registry).decode()
    family = {f.name: f for f in text_string_to_metric_families(text)}["shardid_segment_skipped"]
    exported = [s.value for s in family.samples if s.labels.get("tag") == "holes" and s.name.endswith("_total")]
    assert exported == [float(a.skipped + b.skipped)], (exported, a.skipped, b.skipped)
    a.close()
    b.close()


def test_async_serials_closed_while_its_allocator_is_made_closes_that_allocator_too(url: str) -> None:
    """``close()`` while the first call is still making the allocator (on a worker thread):
    the call raises ``CLOSED`` and the allocator it made is closed, not left open with its
    connection and in the exporters (review finding)."""
    import threading

    from prometheus_client import CollectorRegistry, generate_latest

    import shardid.prometheus

    registry = CollectorRegistry()
    registry.register(shardid.prometheus.ShardIdCollector())
    fmt = "R-{yyyy}-{seq:6}"
    create_serial(url, "racing", fmt, zone="UTC")

    async def run() -> None:
        orders = AsyncSerials(url, "racing", fmt, zone="UTC")
        make, gate = orders._make, threading.Event()

        def held() -> Serials:
            gate.wait(10)
            return make()

        orders._make = held  # type: ignore[method-assign]
        first = asyncio.create_task(orders.next_serial())
        await asyncio.sleep(0.05)
        await orders.close()  # while the allocator is being made
        gate.set()
        with pytest.raises(shardid.ClosedError):
            await first
        assert 'tag="racing"' not in generate_latest(registry).decode()

    asyncio.run(run())


def test_async_dictionary_and_a_cancelled_batch(url: str) -> None:
    async def main() -> None:
        async with AsyncDictionary(url, "urls") as d:
            assert d.schema == "main"
            await d.create()
            assert await d.ids(["/a", "/b"]) == [0, 1]
            # A batch cancelled while its thread writes: the step finishes under the
            # connection's lock, and the next one sees a dense topic.
            task = asyncio.ensure_future(d.ids([f"/c{i}" for i in range(5_000)]))
            await asyncio.sleep(0)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            got = await asyncio.gather(*(d.ids([f"/x{k}", f"/y{k}", "/a"]) for k in range(20)))
            assert all(g[2] == 0 for g in got)
            assert await d.values([0, 1]) == ["/a", "/b"]

    asyncio.run(main())
    conn = sqlite3.connect(_sqlite.path_of(url))
    ids = sorted(i for (i,) in conn.execute("SELECT id FROM shardid_strings"))
    conn.close()
    assert ids == list(range(len(ids)))


# -- errors: one contract ------------------------------------------------------------------------


# A file that cannot be used (a missing directory, a directory, not a SQLite database) is
# DATABASE_UNREACHABLE with SQLite's message and the path, sqlite3's error its cause, in every
# client and system: tests/postgres/test_contract.py (the "down" cells of database sqlite).


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only files: nothing to refuse")
def test_a_read_only_file(url: str) -> None:
    create_tag(url, "orders")
    Dictionary(url, "urls").create()
    path = Path(_sqlite.path_of(url))
    os.chmod(path, 0o444)
    try:
        with DenseIds(url, "orders", wait_ms=300) as ids, pytest.raises(shardid.DatabaseUnreachableError):
            ids.next_id()
        with pytest.raises(shardid.DatabaseUnreachableError, match="readonly"):
            Dictionary(url, "urls").id("/new")
    finally:
        os.chmod(path, 0o644)


# A write lock held past the busy timeout: the driver's own busy error, in Python sync and asyncio,
# tests/postgres/test_contract.py.


def test_bad_input_is_invalid_argument(url: str) -> None:
    for make in (
        lambda: DenseIds(url, ""),
        lambda: DenseIds(url, "x" * 201),
        lambda: create_tag(url, ""),
        lambda: Dictionary(url, ""),
        lambda: Dictionary(url, "urls", schema="Not A Schema"),
        lambda: DenseIds(url, "orders", schema="main; DROP TABLE x"),
        # The schema is the file itself: no other is attached (as in Node).
        lambda: DenseIds(url, "orders", schema="seg"),
        lambda: Dictionary(url, "urls", schema="dict"),
        lambda: Serials(url, "inv", FMT, zone="UTC", schema="seg"),
        lambda: create_serial(url, "inv", FMT, zone="UTC", schema="seg"),
        lambda: create_tag(url, "orders", schema="seg"),
    ):
        with pytest.raises(shardid.InvalidArgumentError):
            make()
    with Dictionary(url, "urls") as d:
        d.create()
        with pytest.raises(shardid.InvalidArgumentError):
            d.id("")
    # The DDL's named CHECKs behind the clients' own checks: INVALID_ARGUMENT too.
    steps = _sqlite.Segments("main")
    conn = _sqlite.connect(url, steps.ddl)
    try:
        with pytest.raises(shardid.InvalidArgumentError) as e:
            _sqlite.run(steps.create_tag, conn, "")
        assert e.value.argument == "tag"
        with pytest.raises(shardid.InvalidArgumentError) as e:
            _sqlite.run(steps.create_tag, conn, "t", -1)
        assert e.value.argument == "first"
    finally:
        _sqlite.close(conn)


# -- Django on SQLite ----------------------------------------------------------------------------

DJANGO_MODELS = """
from django.db import models
from shardid.django import DenseIdField, SerialField

class Order(models.Model):
    number = DenseIdField(tag="orders", unique=True)
    invoice = SerialField(tag="inv", format="INV-{yyyy}{MM}{dd}-{seq:6}", zone="UTC", unique=True)
"""

DJANGO_INSTALL = migration(
    'InstallSegments(schema="seg", tags=["orders"])',
    'CreateSerial("inv", "INV-{yyyy}{MM}{dd}-{seq:6}", zone="UTC")',
    'InstallDictionary(schema="dict", topics=["tags"])',
)

DJANGO_WORK = IN_CHILDREN + """
import django, os
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
django.setup()
from django.db import connections, transaction
from shardid.django import dictionary
from notes.models import Order

def work(worker):
    tags = dictionary("tags")
    for i in range(50):
        Order.objects.create()
        tags.ids([f"t{(worker * 17 + i * 3 + k) % 90}" for k in range(3)])
    with transaction.atomic():  # inside the caller's transaction: a savepoint of it
        assert tags.id(f"atomic-{worker}") >= 0
    try:
        with transaction.atomic():
            tags.id(f"rolled-back-{worker}")
            raise RuntimeError("roll back")
    except RuntimeError:
        pass

assert in_children(4, work)
numbers = list(Order.objects.values_list("number", flat=True))
invoices = list(Order.objects.values_list("invoice", flat=True))
assert len(numbers) == 200 == len(set(numbers)) and len(set(invoices)) == 200, (len(numbers), len(set(invoices)))
cursor = connections["default"].cursor()
ids = sorted(i for (i,) in cursor.execute("SELECT id FROM shardid_strings"))
assert ids == list(range(len(ids))), ids[-5:]
names = {v for (v,) in cursor.execute("SELECT value FROM shardid_strings")}
assert not any(n.startswith("rolled-back") for n in names) and len(names) == 94, len(names)
print("ok", len(numbers), len(ids))
"""


def test_django_on_sqlite(tmp_path: Path) -> None:
    pytest.importorskip("django")
    import subprocess
    import sys

    from conftest import django_project

    app = django_project(tmp_path, DJANGO_MODELS, apps=("shardid.django",)) / "notes"
    # atomic() begins BEGIN IMMEDIATE: a deferred transaction that read before another process
    # committed fails at its first write (`database is locked`, SQLITE_BUSY_SNAPSHOT, which the
    # busy timeout does not wait out); the docs advise this setting for dictionary() in atomic().
    settings = tmp_path / "settings.py"
    text = settings.read_text()
    assert "'OPTIONS': {'timeout': 30}" in text
    settings.write_text(text.replace("'OPTIONS': {'timeout': 30}", "'OPTIONS': {'timeout': 30, 'transaction_mode': 'IMMEDIATE'}"))
    (app / "migrations").mkdir()
    (app / "migrations" / "__init__.py").write_text("")
    (app / "migrations" / "0001_shardid.py").write_text(DJANGO_INSTALL)

    def manage(*args: str) -> str:
        done = subprocess.run([sys.executable, *args], cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    manage("manage.py", "makemigrations", "notes")
    manage("manage.py", "migrate")
    assert "ok 200" in manage("-c", DJANGO_WORK)
    # Reversible: the tables go with the migration.
    manage("manage.py", "migrate", "notes", "zero")
    conn = sqlite3.connect(tmp_path / "db.sqlite3")
    tables = {t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    assert not tables & {"shardid_tags", "shardid_serials", "shardid_topics", "shardid_strings"}


def test_the_database_leases_refuse_a_sqlite_url(tmp_path: Path) -> None:
    # A server's lease does not take the file for a server: SQLite's leases are shardid.sqlite's
    # (tests/python/test_sqlite_lease.py).
    from shardid.mysql import lease as mysql_lease
    from shardid.postgres import lease as postgres_lease

    for lease in (mysql_lease, postgres_lease):
        with pytest.raises(shardid.InvalidArgumentError, match="sqlite"):
            lease(shardid.Layout.INSTAGRAM, url_of(tmp_path / "x.db"), range(0, 4))
