"""Failover, as issue 29 measured it: a primary and a streaming standby (two throwaway
PostgreSQL clusters on loopback ports), 10 client processes of every database-backed feature
riding through the standby's promotion after the primary was killed, and a checker that counts
what the lost tail of WAL made them hand out twice.

The pair (:class:`Pair`, about 1 s to start): the primary is a :class:`~cluster.Cluster` (a
copy of one ``initdb`` per process, in ``/dev/shm``); the standby is made with ``pg_basebackup
-R -X stream`` and retries its WAL source every 100 ms (so a promotion does not wait 5 s);
optionally synchronous (``synchronous_standby_names = '*'``), optionally with
the standby's server under libfaketime, its clock behind. The walsender can be paused
(``SIGSTOP``, found in ``pg_stat_replication``) to hold WAL back; the primary "crashes" as a
host would (every one of its processes ``SIGKILL``\\ed at once); the standby is promoted with
``pg_ctl promote -w``.

The workload (:data:`WORKLOAD`, the issue's): 3 ``DenseIds`` of one tag with segments of 50,
2 ``Dictionary`` writers of new strings (each also asks for strings the other one wrote
lately, which it has not cached: that is how a lost assignment meets a second one), 3
connections calling ``insta5.next_id()``, 2 generators leased through ``shardid.postgres.lease``
(shards 0 and 1, a time to live of 1 s). All connect with ``host=127.0.0.1,127.0.0.1
port=P,S target_session_attrs=read-write``, retry whatever fails, and log every ID and every
string → ID answer they were given, stamped with the monotonic clock (the same for every
process: libfaketime is told to leave it alone).

The columns (:func:`check`):

- *commits lost*: the commit records in the old primary's WAL past what the standby had
  received when it was promoted (``pg_waldump`` on the dead primary's ``pg_wal``);
  *acknowledged lost*: what clients were told before the promotion and the new primary does
  not have — dense-ID segments (IDs handed out at or above the tag's counter as the standby
  had it, counted in segments of 50) and dictionary answers (string → ID pairs the new
  primary maps otherwise or not at all, asked with ``dict_lookup`` at the end);
- *dense IDs twice*, *next_id() twice*, *leased IDs twice*: IDs handed out more than once
  (all handed out, less the distinct ones), across every process of the kind and the run;
- *dictionary*: strings that clients were told two IDs for, and IDs they were told two strings
  for.

The promises of issue 29 (:data:`PROMISED`): no dense ID, ``next_id()`` or leased ID handed out
twice, no dictionary ID given to two strings. Lost commits, and strings given a second ID, are
what asynchronous replication allows: they are reported.

A run (:func:`run_once`) makes a pair, lets the workload run 1.5 s, pauses the walsender for
the scenario's hold, kills the primary, promotes the standby once it has replayed what it
received, lets the workload run 3 s more (longer, up to 15 s, until every kind of client has
handed something out again), and checks: about 8 s on 2 busy cores.

From a shell, with the package installed (``SHARDID_PYTHON_VENV=/tmp/venv tests/python/run.sh
--install-only``)::

    nice /tmp/venv/bin/python tests/postgres/failover.py --scenario lag1s --runs 3
    nice /tmp/venv/bin/python tests/postgres/failover.py --scenario all --runs 1

prints a row of the issue's table per run, then each scenario's ranges. Run it as root (the
clusters run as the ``postgres`` user) or as a user who may run ``initdb``.
"""

from __future__ import annotations

import argparse
import atexit
import glob
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster import Cluster, _free_port, bindir  # noqa: E402

# Debian's libfaketime (the `faketime` package), for this machine's architecture.
FAKETIME_LIB = next(iter(sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))), "/usr/lib/faketime/libfaketime.so.1")

# The workload: (kind, processes).
WORKLOAD = (("dense", 3), ("dict", 2), ("nextid", 3), ("lease", 2))
SEGMENT = 50  # DenseIds segments: min_size = max_size = 50
LEASE_TTL_MS = 1_000
LEASE_SHARDS = range(0, 2)
NEXT_ID_SHARD = 5  # the DDL of shardid.sql.postgres(Layout.INSTAGRAM, 5, "insta5")
DICT_WINDOW = 400  # a dictionary writer asks for the other's strings of its last 400 batches
WARM_S = 1.5  # the workload runs this long before the WAL is held back
AFTER_S = 3.0  # and this long after the promotion,
AFTER_MAX_S = 15.0  # or longer, up to this, until every kind has handed something out again

# Dynamic shared memory in files under the data directory (pg_dynshmem), not /dev/shm: a
# primary killed with SIGKILL leaves its segments behind, and they go with its directory.
DSM = "mmap"

# The columns issue 29 promises to keep at 0.
PROMISED = ("dense_twice", "dict_ids_2strings", "nextid_twice", "leased_twice")


def faketime_env(behind_s: float) -> dict[str, str]:
    """libfaketime's variables for a process whose wall clock is ``behind_s`` seconds behind.

    The monotonic clock is left alone, so every process and the harness agree on when things
    happened (the logs are stamped with it). libfaketime 0.9.10 (Debian 12) then needs its
    "monotonic fix" of ``pthread_cond_timedwait`` off: with it, every timed wait on a condition
    variable with the monotonic clock (CPython's GIL hand-over, ``Thread.start``) took tens of
    milliseconds, and with the monotonic clock faked as well, timed waits on Python locks hung.
    One call still fails, ``clock_nanosleep`` with ``TIMER_ABSTIME`` on the monotonic clock
    (``EINVAL``), which is ``time.sleep``'s: the clients pause with ``Event.wait`` instead.
    """
    if not Path(FAKETIME_LIB).exists():
        raise RuntimeError(f"{FAKETIME_LIB} not found: run scripts/setup.sh, which installs Debian's faketime")
    return {
        "LD_PRELOAD": FAKETIME_LIB,
        "FAKETIME": f"-{behind_s:g}",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        "FAKETIME_FORCE_MONOTONIC_FIX": "0",
    }


def lsn(text: str) -> int:
    """A ``pg_lsn`` (``16/B374D848``) as a byte position."""
    high, low = text.split("/")
    return (int(high, 16) << 32) | int(low, 16)


def _connect(dsn: str) -> Any:
    import psycopg

    return psycopg.connect(dsn, autocommit=True, connect_timeout=5)


def _one(dsn: str, sql: str, *params: Any) -> Any:
    with _connect(dsn) as conn:
        row = conn.execute(sql, params or None).fetchone()
        return row[0] if row else None


# -- the pair -----------------------------------------------------------------------------

_template: Path | None = None


def _fast_dir() -> str | None:
    """``/dev/shm`` when it is there: the pair's data directories in memory (copying a fresh
    data directory or a base backup took 3 s on the shared machine's disk, under 1 s there)."""
    return "/dev/shm" if os.access("/dev/shm", os.W_OK) else None


def _template_data() -> Path:
    """A data directory fresh from ``initdb``, made once per process (removed at exit): each
    primary starts from a copy of it, a tenth of the time ``initdb`` takes on a busy machine."""
    global _template
    if _template is None:
        made = Cluster.__new__(Cluster)
        made.bin = bindir()
        made.root = Path(tempfile.mkdtemp(prefix="shardid-pg-template-", dir=_fast_dir()))
        made.data = made.root / "data"
        made._as_postgres = os.geteuid() == 0
        atexit.register(shutil.rmtree, made.root, True)
        if made._as_postgres:
            subprocess.run(["chown", "postgres:", str(made.root)], check=True)
        made._initdb()
        _template = made.data
    return _template


class Primary(Cluster):
    """A :class:`~cluster.Cluster` whose data directory is a copy of :func:`_template_data`."""

    parent = _fast_dir()

    def _initdb(self) -> None:
        # `cp -a` as root keeps the postgres user's ownership.
        subprocess.run(["cp", "-a", str(_template_data()), str(self.data)], check=True)


class Standby(Cluster):
    """A streaming standby of ``primary``: ``pg_basebackup -R -X stream``, started on a port of
    its own, under libfaketime with its clock ``behind_s`` seconds behind when that is not 0."""

    def __init__(self, primary: Cluster, behind_s: float = 0.0) -> None:  # noqa: D107 (Cluster's init is not called: no initdb)
        self._base_backup(primary, "shardid-pg-standby-", "-R", dir=_fast_dir())
        if behind_s:
            self.env = faketime_env(behind_s)
        self._start(
            "the standby",
            dynamic_shared_memory_type=DSM,
            # The default 5 s: after the primary died, the startup process waits that long
            # before it looks at pg_wal again, and a promotion with it.
            wal_retrieve_retry_interval="100ms",
        )

    def promote(self) -> None:
        """``pg_ctl promote -w``: returns once the standby accepts writes."""
        self._run("pg_ctl", "-D", str(self.data), "-w", "-t", "30", "promote")


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


class Pair:
    """A primary and its streaming standby; ``conninfo`` reaches whichever accepts writes.

    ``synchronous``: the primary waits for the standby's flush at every commit
    (``synchronous_standby_names = '*'``, set once the standby streams, so the standby's copy
    of the configuration does not wait for a standby of its own once promoted).
    ``standby_behind_s``: the standby's server runs under libfaketime, its clock behind.
    """

    def __init__(self, *, synchronous: bool = False, standby_behind_s: float = 0.0) -> None:
        self.primary: Cluster = Primary(dynamic_shared_memory_type=DSM)
        self.standby: Standby | None = None
        self._paused: int | None = None
        self.crashed = False
        try:
            self.standby = Standby(self.primary, standby_behind_s)
            if synchronous:
                with _connect(self.primary.dsn) as conn:
                    conn.execute("ALTER SYSTEM SET synchronous_standby_names = '*'")
                    conn.execute("SELECT pg_reload_conf()")
            self._wait_streaming("sync" if synchronous else "async")
        except BaseException:
            self.stop()
            raise
        self.conninfo = (
            f"host=127.0.0.1,127.0.0.1 port={self.primary.port},{self.standby.port} "
            "user=postgres dbname=postgres target_session_attrs=read-write connect_timeout=2"
        )

    def _wait_streaming(self, sync_state: str) -> None:
        deadline = time.monotonic() + 30
        while True:
            with _connect(self.primary.dsn) as conn:
                rows = conn.execute("SELECT state, sync_state FROM pg_stat_replication").fetchall()
            if rows == [("streaming", sync_state)]:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the standby does not stream ({sync_state}): {rows}")
            time.sleep(0.02)

    def clock_offset_s(self) -> float:
        """How far the standby's clock is ahead of this process's (negative: behind)."""
        before = time.time()
        now = float(_one(self.standby_dsn, "SELECT extract(epoch FROM clock_timestamp())"))
        return now - (before + time.time()) / 2

    @property
    def standby_dsn(self) -> str:
        assert self.standby is not None
        return self.standby.dsn

    def pause_walsender(self) -> int:
        """Stops the primary's walsender (``SIGSTOP``): WAL stops reaching the standby (and,
        with synchronous replication, commits wait). Returns its process ID."""
        pid = int(_one(self.primary.dsn, "SELECT pid FROM pg_stat_replication"))
        os.kill(pid, signal.SIGSTOP)
        self._paused = pid
        return pid

    def resume_walsender(self) -> None:
        if self._paused is not None:
            try:
                os.kill(self._paused, signal.SIGCONT)
            except ProcessLookupError:
                pass
            self._paused = None

    def wal_behind(self) -> int:
        """Bytes of WAL the primary has written and the standby has not received."""
        written = lsn(_one(self.primary.dsn, "SELECT pg_current_wal_lsn()::text"))
        return max(0, written - self.standby_received())

    def standby_received(self) -> int:
        return lsn(_one(self.standby_dsn, "SELECT pg_last_wal_receive_lsn()::text"))

    def crash_primary(self) -> None:
        """Kills every process of the primary at once, as a host that dies: the postmaster is
        stopped first (so it starts nothing new), then it and all its children get
        ``SIGKILL``. The walsender, paused or not, dies with them."""
        pid = int((self.primary.data / "postmaster.pid").read_text().split()[0])
        os.kill(pid, signal.SIGSTOP)
        for child in _children(pid):
            os.kill(child, signal.SIGKILL)
        os.kill(pid, signal.SIGKILL)
        self._paused = None
        self.crashed = True
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.primary.port), timeout=0.1):
                    pass
            except OSError:
                return
            time.sleep(0.005)
        raise RuntimeError("the killed primary still accepts connections")

    def settle_standby(self) -> int:
        """Waits until the standby has replayed everything it received (the primary is dead:
        nothing more comes); returns the end of the WAL it received."""
        deadline = time.monotonic() + 10
        while True:
            with _connect(self.standby_dsn) as conn:
                row = conn.execute("SELECT pg_last_wal_receive_lsn()::text, pg_last_wal_replay_lsn()::text").fetchone()
            received, replayed = lsn(row[0]), lsn(row[1])
            if replayed >= received or time.monotonic() > deadline:
                return received

    def lost_wal(self, received: int) -> tuple[int, int]:
        """What the dead primary wrote past ``received``: (bytes of WAL, commit records), from
        ``pg_waldump`` on its ``pg_wal``. (0, 0) when the standby had it all."""
        start = f"{received >> 32:X}/{received & 0xFFFFFFFF:X}"
        done = subprocess.run(
            [str(self.primary.bin / "pg_waldump"), "-p", str(self.primary.data / "pg_wal"), "-s", start],
            capture_output=True, text=True,
        )  # fmt: skip
        commits = sum(1 for line in done.stdout.splitlines() if "rmgr: Transaction" in line and "desc: COMMIT" in line)
        # The dump ends at the first record that is not there: "invalid record length at X/Y".
        end = re.search(r"(?:invalid record length|invalid magic number \S+ in log segment \S+, offset \d+|record with incorrect prev-link \S+) at ([0-9A-F]+/[0-9A-F]+)", done.stderr)
        if end is None:
            ends = re.findall(r"lsn: ([0-9A-F]+/[0-9A-F]+)", done.stdout)
            return (lsn(ends[-1]) - received if ends else 0), commits
        return max(0, lsn(end.group(1)) - received), commits

    def promote(self) -> None:
        assert self.standby is not None
        self.standby.promote()

    def stop(self) -> None:
        self.resume_walsender()
        if self.standby is not None:
            self.standby.stop()
        if self.crashed:
            self._remove_sysv_segment()
        self.primary.stop()

    def _remove_sysv_segment(self) -> None:
        """Removes the killed primary's System V segment (PostgreSQL's 56-byte interlock, which
        a crashed server leaves for its next start to find): its ID is on the 7th line of
        ``postmaster.pid``; removed once no process is attached."""
        try:
            shmid = (self.primary.data / "postmaster.pid").read_text().splitlines()[6].split()[1]
        except (OSError, IndexError):
            return
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            info = subprocess.run(["ipcs", "-m", "-i", shmid], capture_output=True, text=True).stdout
            if "nattch=0" in info:
                subprocess.run(["ipcrm", "-m", shmid], capture_output=True)
                return
            if "nattch=" not in info:
                return
            time.sleep(0.02)

    def __enter__(self) -> Pair:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# -- the clients ----------------------------------------------------------------------------
#
# Each runs in a process of its own (forked by `failover.py --launch ...`) until SIGTERM,
# retrying whatever fails, and appends what it was given to its log as it goes (one write per
# batch, so a process killed mid-run leaves every batch it logged whole). Binary logs are int64
# records [monotonic ns, n, value 1, ..., value n]; the dictionary's log is text lines
# "monotonic ns <tab> string <tab> id".
#
# They pause with Event.wait, never time.sleep, which fails under libfaketime (faketime_env).
# Relative sleeps (nanosleep, Rust's thread::sleep), select, epoll and timed waits on locks
# work there, which is all the shardid package, psycopg and the PostgreSQL server use.


def _record(fd: int, values: array[int] | list[int]) -> None:
    if values:
        os.write(fd, array("q", [time.monotonic_ns(), len(values), *values]).tobytes())


def _dense(conninfo: str, fd: int, index: int, stop: threading.Event, errors: Counter[str]) -> None:
    from shardid.segments import DenseIds

    ids = DenseIds(conninfo, "orders", schema="seg", min_size=SEGMENT, max_size=SEGMENT, wait_ms=500)
    batch: list[int] = []
    while not stop.is_set():
        try:
            batch.append(ids.next_id())
        except Exception as e:  # noqa: BLE001 (counted; the next call tries again)
            errors[type(e).__name__] += 1
            stop.wait(0.01)
            continue
        if len(batch) == SEGMENT:
            _record(fd, batch)
            batch = []
    _record(fd, batch)


def _dict(conninfo: str, fd: int, index: int, stop: threading.Event, errors: Counter[str]) -> None:
    from shardid.dictionary import Dictionary

    words = Dictionary(conninfo, "words", schema="dict")
    rng = random.Random(index)
    other = 1 - index
    n = 0
    while not stop.is_set():
        # 5 new strings of its own, and 5 of the other writer's lately written ones (asked of
        # the database: this writer has not cached them).
        lo = max(0, n - DICT_WINDOW)
        batch = [f"w{index}-{n}-{k}" for k in range(5)]
        batch += [f"w{other}-{rng.randint(lo, n)}-{rng.randrange(5)}" for _ in range(5)]
        try:
            got = words.ids(batch)
        except Exception as e:  # noqa: BLE001 (counted; the same strings are asked again)
            errors[type(e).__name__] += 1
            stop.wait(0.01)
            continue
        t = time.monotonic_ns()
        os.write(fd, "".join(f"{t}\t{s}\t{i}\n" for s, i in zip(batch, got)).encode())
        n += 1


def _nextid(conninfo: str, fd: int, index: int, stop: threading.Event, errors: Counter[str]) -> None:
    import psycopg

    conn: Any = None
    batch: list[int] = []
    while not stop.is_set():
        try:
            if conn is None:
                conn = psycopg.connect(conninfo, autocommit=True, connect_timeout=2)
            batch.append(conn.execute("SELECT insta5.next_id()").fetchone()[0])
        except psycopg.Error as e:
            errors[type(e).__name__] += 1
            if conn is not None and (conn.broken or conn.closed):
                conn.close()
                conn = None
            stop.wait(0.01)
            continue
        if len(batch) == 20:
            _record(fd, batch)
            batch = []
    _record(fd, batch)


def _lease(conninfo: str, fd: int, index: int, stop: threading.Event, errors: Counter[str]) -> None:
    from shardid import Layout
    from shardid.postgres import lease

    held: Any = None
    while not stop.is_set():
        try:
            if held is None:
                held = lease(Layout.INSTAGRAM, conninfo, LEASE_SHARDS, ttl_ms=LEASE_TTL_MS, retake=True)
            _record(fd, held.next_ids(16))
        except Exception as e:  # noqa: BLE001 (counted; the next call tries again, retaking a lost lease)
            errors[type(e).__name__] += 1
            stop.wait(0.01)
            continue
        stop.wait(0.001)


CLIENTS: dict[str, Callable[[str, int, int, threading.Event, Counter[str]], None]] = {
    "dense": _dense,
    "dict": _dict,
    "nextid": _nextid,
    "lease": _lease,
}


def client_main(kind: str, out: str, index: int, conninfo: str) -> None:
    """A client process: runs ``kind`` until SIGTERM, then writes the errors it met to
    ``out.errors`` and exits without cleaning up (a lease is not released, a segment's rest
    not given back: nothing of it may matter to the checker)."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    errors: Counter[str] = Counter()
    try:
        CLIENTS[kind](conninfo, fd, index, stop, errors)
    finally:
        Path(out + ".errors").write_text(json.dumps(errors))


def launcher_main(work: str, suffix: str, go: str) -> None:
    """Starts the workload's processes: imports what they need once, says so
    (``launcher<suffix>.ready``), waits for the file ``go`` and forks one process per client
    of :data:`WORKLOAD`, with the connection string ``go`` holds; waits for them.

    One import for ten processes: on 2 busy cores, ten Python interpreters importing psycopg
    and shardid at once took 10 s. SIGTERM to the process group stops the clients (each logs
    what it has and exits); the launcher then ends with them."""
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    import psycopg  # noqa: F401 (imported once, before the fork)

    import shardid.dictionary  # noqa: F401
    import shardid.postgres  # noqa: F401
    import shardid.segments  # noqa: F401

    # The wall clock against the monotonic one, which every process shares: how far this
    # one's clock is off (libfaketime) is the difference with the harness's.
    ready = Path(work, f"launcher{suffix}.ready")
    Path(f"{ready}.tmp").write_text(str(time.time() - time.monotonic()))
    os.replace(f"{ready}.tmp", ready)
    while not os.path.exists(go):
        if stopping.is_set():
            os._exit(0)
        stopping.wait(0.005)
    conninfo = Path(go).read_text()
    children = []
    for kind, count in WORKLOAD:
        for i in range(count):
            pid = os.fork()
            if pid == 0:
                status = 0
                try:
                    client_main(kind, f"{work}/{kind}{i}{suffix}.log", i, conninfo)
                except BaseException:  # noqa: BLE001 (reported on stderr; the checker sees the log stop)
                    import traceback

                    traceback.print_exc()
                    status = 1
                finally:
                    sys.stderr.flush()
                    os._exit(status)
            children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
    os._exit(0)


# -- a run ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """One row of issue 29's table."""

    name: str
    title: str
    hold_s: float = 0.0  # how long the walsender is paused before the primary dies
    standby_behind_s: float = 0.0  # the standby's clock, behind
    restart_behind_s: float | None = None  # clients restarted at the crash, their clocks behind
    synchronous: bool = False


SCENARIOS = {
    s.name: s
    for s in (
        Scenario("nolag", "no lag injected"),
        Scenario("lag1s", "1 s of WAL held back", hold_s=1.0),
        Scenario("skew0.3", "the same, standby's clock 0.3 s behind", hold_s=1.0, standby_behind_s=0.3),
        Scenario("skew2", "the same, 2 s behind", hold_s=1.0, standby_behind_s=2.0),
        Scenario("restart2", "clients restarted; new lease holders' clock 2 s behind", hold_s=1.0, restart_behind_s=2.0),
        Scenario("sync", "synchronous replication, 1 s held back, 2 s skew", hold_s=1.0, standby_behind_s=2.0, synchronous=True),
    )
}


def _install(dsn: str) -> None:
    from shardid import Layout
    from shardid.sql import dictionary, postgres, segments

    with _connect(dsn) as conn, conn.transaction():
        conn.execute(segments("seg").encode())
        conn.execute("SELECT seg.create_tag('orders')")
        conn.execute(dictionary("dict").encode())
        conn.execute("SELECT dict.create_topic('words')")
        conn.execute(postgres(Layout.INSTAGRAM, NEXT_ID_SHARD, "insta5").encode())


class _Clients:
    """The workload's processes of one run, in a process group of their own: a launcher
    (:func:`launcher_main`) started at once, which forks them when :meth:`go` gives it the
    connection string. :meth:`stop` ends them (SIGTERM, then SIGKILL), :meth:`kill` at once."""

    def __init__(self, work: Path, suffix: str = "", env: dict[str, str] | None = None) -> None:
        self.work = work
        self.suffix = suffix
        self.go_file = work / f"go{suffix}"
        self.logs = [work / f"{kind}{i}{suffix}.log" for kind, count in WORKLOAD for i in range(count)]
        command = [sys.executable, str(Path(__file__).resolve()), "--launch", str(work), suffix, str(self.go_file)]
        with open(work / f"clients{suffix}.stderr", "wb") as err:
            self.launcher = subprocess.Popen(
                command, stdout=subprocess.DEVNULL, stderr=err, env={**os.environ, **(env or {})}, start_new_session=True
            )

    def go(self, conninfo: str) -> None:
        Path(f"{self.go_file}.tmp").write_text(conninfo)
        os.replace(f"{self.go_file}.tmp", self.go_file)

    def _wait(self, done: Callable[[], bool], what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if self.launcher.poll() is not None or time.monotonic() > deadline:
                err = (self.work / f"clients{self.suffix}.stderr").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"the clients{self.suffix} are not {what}: {err}")
            time.sleep(0.02)

    def ready(self) -> float:
        """Waits until the launcher has imported everything; returns how far the clients'
        wall clock is ahead of this process's (negative: behind)."""
        ready = self.work / f"launcher{self.suffix}.ready"
        self._wait(lambda: ready.exists() and ready.stat().st_size > 0, "ready")
        return float(ready.read_text()) - (time.time() - time.monotonic())

    def running(self) -> None:
        """Waits until every client has logged something."""
        self._wait(lambda: all(log.exists() and log.stat().st_size > 0 for log in self.logs), "running")

    def _signal(self, sig: int) -> None:
        try:
            os.killpg(self.launcher.pid, sig)
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        self._signal(signal.SIGKILL)
        self.launcher.wait()
        # libfaketime's shared memory, made by the process it was loaded into first (the
        # launcher) and removed at its exit, which a killed launcher or one that ends with
        # os._exit() never reaches.
        for name in (f"faketime_shm_{self.launcher.pid}", f"sem.faketime_sem_{self.launcher.pid}"):
            try:
                os.unlink(f"/dev/shm/{name}")
            except FileNotFoundError:
                pass

    def stop(self) -> None:
        self._signal(signal.SIGTERM)
        try:
            self.launcher.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


def _log_sizes(clients: list[_Clients]) -> dict[Path, int]:
    return {log: log.stat().st_size if log.exists() else 0 for c in clients for log in c.logs}


def _run_on(clients: list[_Clients], at_least: float, at_most: float) -> float:
    """Lets the workload run ``at_least`` seconds, and on until every kind of client has
    logged something more (a fix may make clients wait after a promotion: the run should see
    them hand out IDs again, not stop before), at most ``at_most``. Returns how long."""
    start = time.monotonic()
    sizes = _log_sizes(clients)
    time.sleep(at_least)
    while time.monotonic() - start < at_most:
        now = _log_sizes(clients)
        if all(any(now[log] > sizes[log] for log in now if log.name.startswith(kind)) for kind, _ in WORKLOAD):
            break
        time.sleep(0.1)
    return round(time.monotonic() - start, 1)


def run_once(scenario: Scenario, work: Path, say: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """One failover of ``scenario`` with the workload, on a pair of its own; the checker's row
    (see :func:`check`)."""
    work.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    marks: dict[str, Any] = {}
    # The clients start while the pair is made, and wait for it.
    clients = [_Clients(work)]
    restarted = scenario.restart_behind_s is not None
    if restarted:
        # The replacements, started now too, are given the go when the first clients die
        # with the primary: on hosts whose clocks are behind.
        clients.append(_Clients(work, ".after", faketime_env(scenario.restart_behind_s or 0)))
    pair: Pair | None = None
    try:
        pair = Pair(synchronous=scenario.synchronous, standby_behind_s=scenario.standby_behind_s)
        marks["pair_s"] = round(time.monotonic() - started, 2)
        marks["standby_clock_s"] = round(pair.clock_offset_s(), 2)
        _install(pair.primary.dsn)
        clients[0].go(pair.conninfo)
        clients[0].running()
        if restarted:
            marks["restart_clock_s"] = round(clients[1].ready(), 2)
        marks["clients_s"] = round(time.monotonic() - started - marks["pair_s"], 2)
        time.sleep(WARM_S)
        if scenario.hold_s:
            pair.pause_walsender()
            time.sleep(scenario.hold_s)
        marks["wal_behind"] = pair.wal_behind()
        pair.crash_primary()
        marks["crash"] = time.monotonic_ns()
        if restarted:
            clients[0].kill()
            clients[1].go(pair.conninfo)
        received = pair.settle_standby()
        try:
            marks["dense_next"] = int(_one(pair.standby_dsn, "SELECT next FROM seg.shardid_tags WHERE tag = 'orders'"))
        except Exception:  # noqa: BLE001 (a schema of another shape: the column is not counted)
            marks["dense_next"] = None
        marks["promote"] = time.monotonic_ns()
        pair.promote()
        marks["promoted"] = time.monotonic_ns()
        say(f"{scenario.name}: promoted {(marks['promoted'] - marks['crash']) / 1e9:.2f} s after the crash")
        marks["after_s"] = _run_on(clients, AFTER_S, AFTER_MAX_S)
        for c in clients:
            c.stop()
        marks["wal_lost"], marks["commits_lost"] = pair.lost_wal(received)
        row = check(work, marks, pair.standby_dsn)
    finally:
        for c in clients:
            c.kill()
        if pair is not None:
            pair.stop()
    row.update(scenario=scenario.name, seconds=round(time.monotonic() - started, 1))
    return row


# -- the checker ------------------------------------------------------------------------------


def read_log(path: Path) -> Iterator[tuple[int, array[int]]]:
    """The records of a binary client log: (monotonic ns, values)."""
    if not path.exists():
        return
    data = path.read_bytes()
    words = array("q")
    words.frombytes(data[: len(data) - len(data) % 8])
    i = 0
    while i + 2 <= len(words):
        t, n = words[i], words[i + 1]
        if i + 2 + n > len(words):
            break
        yield t, words[i + 2 : i + 2 + n]
        i += 2 + n


def read_dict_log(path: Path) -> Iterator[tuple[int, str, int]]:
    if not path.exists():
        return
    for line in path.read_text().splitlines():
        parts = line.split("\t")
        if len(parts) == 3:
            yield int(parts[0]), parts[1], int(parts[2])


def _twice(values: array[int]) -> int:
    """How many hand-outs repeated an earlier one."""
    return len(values) - len(set(values))


def check(work: Path, marks: dict[str, Any], new_primary_dsn: str) -> dict[str, Any]:
    """The run's row: every column of issue 29's table, from the clients' logs in ``work``, the
    standby's state at the promotion (in ``marks``) and the new primary's answers now."""
    promote, crash, promoted = marks["promote"], marks["crash"], marks["promoted"]
    row: dict[str, Any] = {k: marks.get(k) for k in ("wal_behind", "wal_lost", "commits_lost", "standby_clock_s", "restart_clock_s", "pair_s", "clients_s", "after_s")}
    row["promoted_s"] = round((promoted - crash) / 1e9, 2)
    handed: dict[str, dict[str, int]] = {}
    values: dict[str, array[int]] = {}
    for kind in ("dense", "nextid", "lease"):
        all_values: array[int] = array("q")
        before = after = 0
        lost_segments: set[int] = set()
        for log in sorted(work.glob(f"{kind}*.log")):
            for t, batch in read_log(log):
                all_values.extend(batch)
                before += len(batch) if t < crash else 0
                after += len(batch) if t > promoted else 0
                if kind == "dense" and t < promote and marks["dense_next"] is not None:
                    lost_segments.update((v - marks["dense_next"]) // SEGMENT for v in batch if v >= marks["dense_next"])
        values[kind] = all_values
        handed[kind] = {"before": before, "after": after}
        if kind == "dense":
            row["acked_lost_dense_segments"] = len(lost_segments) if marks["dense_next"] is not None else None
    row["dense_twice"] = _twice(values["dense"])
    row["nextid_twice"] = _twice(values["nextid"])
    row["leased_twice"] = _twice(values["lease"])

    ids_of: dict[str, set[int]] = defaultdict(set)
    strings_of: dict[int, set[str]] = defaultdict(set)
    told_before: dict[str, set[int]] = defaultdict(set)
    before = after = 0
    for log in sorted(work.glob("dict*.log")):
        for t, s, i in read_dict_log(log):
            ids_of[s].add(i)
            strings_of[i].add(s)
            if t < promote:
                told_before[s].add(i)
            before += t < crash
            after += t > promoted
    handed["dict"] = {"before": before, "after": after}
    row["dict_strings_2ids"] = sum(1 for ids in ids_of.values() if len(ids) > 1)
    row["dict_ids_2strings"] = sum(1 for strings in strings_of.values() if len(strings) > 1)
    # Told before the promotion, and not what the new primary says now.
    strings = sorted(told_before)
    lost = 0
    with _connect(new_primary_dsn) as conn:
        for start in range(0, len(strings), 50_000):
            chunk = strings[start : start + 50_000]
            now = conn.execute("SELECT dict.dict_lookup('words', %s)", (chunk,)).fetchone()[0]
            lost += sum(1 for s, i in zip(chunk, now) for told in told_before[s] if told != i)
    row["acked_lost_dict_strings"] = lost
    row["handed"] = handed
    errors: Counter[str] = Counter()
    for path in work.glob("*.errors"):
        errors.update(json.loads(path.read_text()))
    row["client_errors"] = dict(errors)
    return row


# -- reports -----------------------------------------------------------------------------------

COLUMNS = (
    ("commits lost", lambda r: f"{r['commits_lost']:,}"),
    ("acknowledged lost (dense segments / dictionary strings)", lambda r: f"{_n(r['acked_lost_dense_segments'])} / {r['acked_lost_dict_strings']:,}"),
    ("dense IDs twice", lambda r: f"{r['dense_twice']:,}"),
    ("dictionary: strings with 2 IDs / IDs with 2 strings", lambda r: f"{r['dict_strings_2ids']:,} / {r['dict_ids_2strings']:,}"),
    ("next_id() twice", lambda r: f"{r['nextid_twice']:,}"),
    ("leased IDs twice", lambda r: f"{r['leased_twice']:,}"),
    ("WAL lost (behind at the kill)", lambda r: f"{r['wal_lost'] / 1e6:.2f} MB ({r['wal_behind'] / 1e6:.2f} MB)"),
)


def _n(v: int | None) -> str:
    return "?" if v is None else f"{v:,}"


def format_row(row: dict[str, Any]) -> str:
    cells = [row["scenario"], *(f(row) for _, f in COLUMNS), f"{row['seconds']} s"]
    return "| " + " | ".join(cells) + " |"


def header() -> str:
    names = ["scenario", *(name for name, _ in COLUMNS), "run took"]
    return "| " + " | ".join(names) + " |\n|" + "---|" * len(names)


def summary(name: str, rows: list[dict[str, Any]]) -> str:
    """The scenario's ranges over its runs, as in the issue's table."""

    def span(key: str) -> str:
        got = [r[key] for r in rows if r[key] is not None]
        if not got:
            return "?"
        lo, hi = min(got), max(got)
        return f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"

    cells = [
        SCENARIOS[name].title,
        span("commits_lost"),
        f"{span('acked_lost_dense_segments')} / {span('acked_lost_dict_strings')}",
        span("dense_twice"),
        f"{span('dict_strings_2ids')} / {span('dict_ids_2strings')}",
        span("nextid_twice"),
        span("leased_twice"),
        f"{min(r['wal_lost'] for r in rows) / 1e6:.2f}–{max(r['wal_lost'] for r in rows) / 1e6:.2f} MB",
        f"{sum(r['seconds'] for r in rows):.0f} s for {len(rows)}",
    ]
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if args[:1] == ["--launch"]:
        launcher_main(*args[1:4])
        return 0
    parser = argparse.ArgumentParser(prog="failover.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", default="all", choices=["all", *SCENARIOS], help="a row of issue 29's table, or all")
    parser.add_argument("--runs", type=int, default=1, help="runs per scenario (each on a fresh pair)")
    parser.add_argument("--json", metavar="FILE", help="also append every run's row to FILE (JSON lines)")
    parser.add_argument("--keep", action="store_true", help="keep the clients' logs (their directory is printed)")
    opts = parser.parse_args(args)
    names = list(SCENARIOS) if opts.scenario == "all" else [opts.scenario]
    work = Path(tempfile.mkdtemp(prefix="shardid-failover-"))
    rows: dict[str, list[dict[str, Any]]] = {}
    print(header(), flush=True)
    try:
        for name in names:
            for run in range(opts.runs):
                row = run_once(SCENARIOS[name], work / f"{name}-{run}")
                row["run"] = run
                rows.setdefault(name, []).append(row)
                print(format_row(row), flush=True)
                if opts.json:
                    with open(opts.json, "a") as f:
                        f.write(json.dumps(row) + "\n")
        print("\nper scenario (ranges over the runs):")
        print(header())
        for name, got in rows.items():
            print(summary(name, got))
    finally:
        if opts.keep:
            print(f"logs: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
