"""Shard leases on Redis from Node and from asyncio Python (issue 57): ``require('shardid/redis')
.lease(...)`` (bindings-node/redis.js over ioredis) and ``shardid.redis.lease_async`` (over
``redis.asyncio``), both executors of the core's lease steps, on throwaway ``redis-server``
instances (``tests/redis/server.py``). Each test runs a Node holder and an asyncio Python holder
side by side, in processes of their own:

- holders of one range claiming at once never share a shard (one more than the shards is
  refused); a SIGKILLed holder's shard stays taken (``NO_FREE_SHARD``) until its time to live
  has passed, then is claimed again above the ceiling the killed holder recorded;
- a SIGSTOPped holder whose shard was taken over past its time to live stops with
  ``LEASE_LOST`` once resumed, no ID of it the new holder's;
- a restart that lost the last writes (from a snapshot older than the holders' last ceilings)
  makes the ceiling jump: the next holders start above every ID the lost writes covered;
- an asyncio lease's script cancelled midway gives its connection up, so the next script is made
  for the server that answers then (a restart's new run_id);
- a holder whose clock is more than the hosts' skew (2 s) ahead of the server's is refused with
  ``CLOCK_SKEW``, as the SQL leases refuse it, and leaves its shard free at once; an idle holder
  whose clock moves that far ahead stops with ``CLOCK_SKEW`` at its next renewal (issue 57);
- a time to live out of range is ``InvalidArgumentError`` on ``ttl_ms``, as the SQL leases say;
- the book's Redis page's asyncio Python and Node lease blocks run as shown.

"Above the ceiling" is checked as a host whose clock is behind sees it: the next holders run
with their wall clock behind (libfaketime), so only the ceiling keeps their IDs above the last
holder's (on one host's clock, later IDs are above anyway). The Node
holders need the addon in bindings-node/ and ioredis (``scripts/node-addon.sh``): missing, they
fail in CI and are a warning elsewhere (test_redis.py's rule). Seconds of CI: time to live 1 s,
every wait bounded (a holder ends by itself after 20 s).
"""

from __future__ import annotations

import asyncio
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis.asyncio  # noqa: F401 - imported once before the timed checks

from shardid import Layout, NoFreeShardError
from shardid.redis import AsyncRedisLease, lease_async

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "redis"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from server import Server  # noqa: E402
from test_redis import _node  # noqa: E402

LAYOUT = Layout.INSTAGRAM
TTL_MS = 1_000
FAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
needs_faketime = pytest.mark.skipif(not FAKETIME.exists(), reason="libfaketime is not installed (scripts/setup.sh installs faketime)")

# A holder: claims a shard of FIRST..END (NO_FREE_SHARD and DATABASE_UNREACHABLE tried again
# every 20 ms for WAIT_MS), prints `shard S TOKEN`, then `id N` about once a millisecond until
# its stdin closes (then it closes the lease and prints `closed`) or 20 s have passed; an error
# ends it with `error CODE`.
_NODE_HOLDER = r"""
const { lease } = require('./redis.js')
const { Layout } = require('./index.js')
const [url, first, end, ttl, wait] = process.argv.slice(1)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
let open = true
process.stdin.on('end', () => { open = false })
process.stdin.resume()
;(async () => {
  const deadline = Date.now() + Number(wait)
  let held
  try {
    for (;;) {
      try {
        held = await lease({ layout: Layout.INSTAGRAM, url, shards: [Number(first), Number(end)], ttlMs: Number(ttl) })
        break
      } catch (err) {
        if (!['NO_FREE_SHARD', 'DATABASE_UNREACHABLE'].includes(err.code) || Date.now() > deadline) throw err
        await sleep(20)
      }
    }
    console.log(`shard ${held.shard} ${held.fencingToken}`)
    const stop = Date.now() + 20000
    while (open && Date.now() < stop) {
      console.log(`id ${await held.nextId()}`)
      await sleep(1)
    }
    await held.close()
    console.log('closed')
  } catch (err) {
    console.log(`error ${err.code}`)
  }
  process.exit(0)
})()
"""

_PYTHON_HOLDER = r"""
import asyncio, sys, threading, time
from shardid import DatabaseUnreachableError, Layout, NoFreeShardError, ShardIdError
from shardid.redis import lease_async

url, first, end, ttl, wait = sys.argv[1:]
stdin_open = threading.Event()
stdin_open.set()
threading.Thread(target=lambda: (sys.stdin.read(), stdin_open.clear()), daemon=True).start()

async def main():
    deadline = time.monotonic() + int(wait) / 1000
    while True:
        try:
            held = await lease_async(Layout.INSTAGRAM, url, range(int(first), int(end)), ttl_ms=int(ttl))
            break
        except (NoFreeShardError, DatabaseUnreachableError):
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.02)
    print("shard", held.shard, held.fencing_token, flush=True)
    stop = time.monotonic() + 20
    while stdin_open.is_set() and time.monotonic() < stop:
        print("id", await held.next_id(), flush=True)
        await asyncio.sleep(0.001)
    await held.close()
    print("closed", flush=True)

try:
    asyncio.run(main())
except ShardIdError as e:
    print("error", e.code, flush=True)
"""


class Holder:
    """A holder process; its stdout's lines arrive on a queue (read by a thread)."""

    def __init__(
        self,
        lang: str,
        node: list[str] | None,
        url: str,
        shards: tuple[int, int],
        *,
        wait_ms: int = 0,
        behind_s: float = 0,
        ttl_ms: int = TTL_MS,
    ) -> None:
        args = [url, str(shards[0]), str(shards[1]), str(ttl_ms), str(wait_ms)]
        env = dict(os.environ)
        if behind_s:
            # This host's clock behind the last holder's (libfaketime: the wall clock only).
            env.update(LD_PRELOAD=str(FAKETIME), FAKETIME=f"-{behind_s}", FAKETIME_DONT_FAKE_MONOTONIC="1")
        if lang == "node":
            assert node is not None
            command, cwd = [node[0], "-e", _NODE_HOLDER, *args], ROOT / "bindings-node"
        else:
            command, cwd = [sys.executable, "-c", _PYTHON_HOLDER, *args], None
        self.lang = lang
        self.process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.ids: list[int] = []
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.strip())
        self.lines.put(None)

    def line(self, timeout: float = 30) -> str | None:
        """The next line that is not an ID (IDs are collected), or None at the end."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                pytest.fail(f"the {self.lang} holder printed nothing else in {timeout} s: {self.seen[-5:]}")
            if line is None:
                return None
            self.seen.append(line)
            if line.startswith("id "):
                self.ids.append(int(line.split()[1]))
                continue
            return line

    def wait_ids(self, n: int, timeout: float = 30) -> None:
        """Until it printed at least ``n`` IDs."""
        deadline = time.monotonic() + timeout
        while len(self.ids) < n:
            try:
                line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                pytest.fail(f"the {self.lang} holder printed {len(self.ids)} IDs in {timeout} s: {self.seen[-5:]}")
            assert line is not None and line.startswith("id "), f"the {self.lang} holder: {line} ({self.seen[-5:]})"
            self.seen.append(line)
            self.ids.append(int(line.split()[1]))

    def claimed(self) -> int:
        line = self.line()
        assert line is not None and line.startswith("shard "), f"the {self.lang} holder: {line}"
        return int(line.split()[1])

    def signal(self, sig: signal.Signals) -> None:
        os.kill(self.process.pid, sig)

    def end(self, timeout: float = 30) -> list[str]:
        """Closes its stdin and waits for its end; its last lines."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        rest = []
        while (line := self.line(timeout)) is not None:
            rest.append(line)
        self.process.wait(timeout)
        return rest

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        # What it printed before it was killed.
        while (line := self.lines.get(timeout=10)) is not None:
            if line.startswith("id "):
                self.ids.append(int(line.split()[1]))


@contextmanager
def holders(*made: Holder) -> Iterator[None]:
    try:
        yield
    finally:
        for holder in made:
            if holder.process.poll() is None:
                holder.signal(signal.SIGCONT)  # a stopped one too
                holder.process.kill()
                holder.process.wait(10)


def _langs() -> tuple[list[str] | None, list[str]]:
    """The Node command (None when it cannot run: test_redis.py's warning) and the languages."""
    node = _node()
    return node, (["node", "python"] if node else ["python"])


async def _claim_within(url: str, shards: range, seconds: float) -> AsyncRedisLease:
    """An asyncio lease of ``shards`` in this process, claimed within ``seconds`` (NO_FREE_SHARD
    tried again every 20 ms)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return await lease_async(LAYOUT, url, shards, ttl_ms=TTL_MS)
        except NoFreeShardError:
            assert time.monotonic() < deadline, f"no shard of {shards} free {seconds} s after"
            await asyncio.sleep(0.02)


def _assert_unique(ids: list[int]) -> None:
    seen: set[int] = set()
    twice = [id for id in ids if id in seen or seen.add(id)]  # type: ignore[func-returns-value]
    assert not twice, f"{len(twice)} IDs handed out twice: {twice[:5]}..."


@needs_faketime
def test_a_sigkilled_holder_frees_its_shard_after_its_ttl() -> None:
    """Two Node and two asyncio Python holders claim a shard of 0..3 at once (time to live 2 s):
    three hold the three shards (at least one of each language), the fourth is refused
    (NO_FREE_SHARD). The three are SIGKILLed: their shards stay taken until the time to live has
    passed by the server's clock, then the next holders (one of each language, their clocks
    2.5 s behind) claim two of them, above the ceiling each killed holder recorded; no ID of
    the holders twice."""
    node, langs = _langs()
    with Server() as server:
        first = [Holder(lang, node, server.url, (0, 3), ttl_ms=2_000) for lang in langs * (4 // len(langs))]
        with holders(*first):
            lines = [h.line() for h in first]
            assert sorted(int(line.split()[1]) for line in lines if line and line.startswith("shard ")) == [0, 1, 2], lines
            assert lines.count("error NO_FREE_SHARD") == 1, lines
            by_shard = {int(line.split()[1]): h for h, line in zip(first, lines) if line and line.startswith("shard ")}
            for h in by_shard.values():
                h.wait_ids(50)
            for h in by_shard.values():
                h.signal(signal.SIGKILL)
            killed = time.monotonic()

            async def refused() -> None:
                with pytest.raises(NoFreeShardError):
                    await lease_async(LAYOUT, server.url, range(0, 3), ttl_ms=TTL_MS)

            asyncio.run(refused())
            for h in first:
                h.kill()
            # The next holders' clocks 2.5 s behind: without the killed holders' ceilings, their
            # IDs would be dated before the killed holders' last ones.
            nxt = [Holder(lang, node, server.url, (0, 3), wait_ms=5_000, behind_s=2.5) for lang in reversed([*langs, *langs][:2])]
            with holders(*nxt):
                for h in nxt:
                    shard = h.claimed()
                    assert time.monotonic() - killed >= 1, "claimed before the killed holder's time to live"
                    h.wait_ids(50)
                    assert min(h.ids) > max(by_shard[shard].ids), f"{h.lang} on shard {shard}: below the killed holder's ceiling"
                for h in nxt:
                    assert h.end()[-1:] == ["closed"]
            assert time.monotonic() - killed < 10
    _assert_unique([id for h in first + nxt for id in h.ids])


def test_a_sigstopped_holder_past_its_ttl_stops_with_lease_lost() -> None:
    """A Node and an asyncio Python holder of 0..2 are SIGSTOPped; once their time to live has
    passed, this process claims both shards; resumed, each holder ends with LEASE_LOST within
    5 s, and no ID of theirs is one the new holders made."""
    node, langs = _langs()
    with Server() as server:
        stopped = [Holder(lang, node, server.url, (0, len(langs))) for lang in langs]
        with holders(*stopped):
            for h in stopped:
                h.claimed()
                h.wait_ids(50)
            for h in stopped:
                h.signal(signal.SIGSTOP)

            async def take_over() -> list[int]:
                leases = [await _claim_within(server.url, range(0, len(langs)), 5) for _ in langs]
                try:
                    for h in stopped:
                        h.signal(signal.SIGCONT)
                    resumed = time.monotonic()
                    mine: list[int] = []
                    while time.monotonic() - resumed < 0.5:
                        for held in leases:
                            mine.append(await held.next_id())
                        await asyncio.sleep(0.001)
                    return mine
                finally:
                    for held in leases:
                        await held.close()

            mine = asyncio.run(take_over())
            resumed = time.monotonic()
            for h in stopped:
                last = h.line(timeout=5)
                assert last == "error LEASE_LOST", f"the {h.lang} holder, resumed: {h.seen[-5:]}"
            assert time.monotonic() - resumed < 6
    theirs = {id for h in stopped for id in h.ids}
    assert mine and not theirs.intersection(mine), "an ID of the stopped holders made again"


@needs_faketime
def test_a_restart_that_lost_writes_makes_the_ceiling_jump() -> None:
    """A Node and an asyncio Python holder of 0..2 make IDs; the server saves a snapshot, the
    holders go on for 600 ms (their ceilings recorded after it, every 100 ms, are lost), are
    SIGKILLed with the server, which restarts from the snapshot. The next holders (one of each
    language, their clocks 1.5 s behind, trying from before the restart) claim the shards once
    the snapshot's leases expired: the claim finds each shard last written by another life of
    the server and jumps its ceiling past the server's clock plus the hosts' skew, so their IDs
    are above every ID the lost writes covered (the snapshot's ceilings are below them)."""
    node, langs = _langs()
    with Server("--appendonly", "no") as server:
        first = [Holder(lang, node, server.url, (0, len(langs))) for lang in langs]
        with holders(*first):
            by_shard = {h.claimed(): h for h in first}
            for h in first:
                h.wait_ids(200)
            nxt = [Holder(lang, node, server.url, (0, len(langs)), wait_ms=8_000, behind_s=1.5) for lang in reversed(langs)]
            with holders(*nxt):
                assert server.cli("SAVE") == "OK"
                saved = [len(h.ids) for h in first]
                time.sleep(0.6)
                for h in first:
                    h.signal(signal.SIGKILL)
                server.kill()
                for h, n in zip(first, saved):
                    h.kill()
                    assert len(h.ids) > n + 100, f"the {h.lang} holder made {len(h.ids) - n} IDs after the snapshot"
                server.start()
                for h in nxt:
                    shard = h.claimed()
                    h.wait_ids(20)
                    assert min(h.ids) > max(by_shard[shard].ids), f"{h.lang} on shard {shard}: the ceiling did not jump"
                for h in nxt:
                    h.end()
    _assert_unique([id for h in first + nxt for id in h.ids])


# A holder whose clock is ahead (test_a_holder_whose_clock_is_ahead_is_refused_with_clock_skew):
# claims one shard of [FIRST, END) with a time to live of 10 s and prints `shard S`, or the
# error's class, code and fields.
_NODE_AHEAD = r"""
const { lease } = require('./redis.js')
const { Layout, ShardIdError } = require('./index.js')
const [url, first, end] = process.argv.slice(1)
lease({ layout: Layout.INSTAGRAM, url, shards: [Number(first), Number(end)], ttlMs: 10000 }).then(
  async (held) => { console.log(`shard ${held.shard}`); await held.close() },
  (err) => console.log(`node ${err instanceof ShardIdError} ${err.code} ${err.aheadMs} ${err.maxMs} ${err.message}`))
"""

_PYTHON_AHEAD = r"""
import asyncio, sys
from shardid import ClockSkewError, Layout
from shardid.redis import lease, lease_async

url, first = sys.argv[1], int(sys.argv[2])

async def asyncio_holder():
    held = await lease_async(Layout.INSTAGRAM, url, range(first, first + 1), ttl_ms=10_000)
    print("shard", held.shard, flush=True)
    await held.close()

for name, take in [("asyncio", lambda: asyncio.run(asyncio_holder())),
                   ("blocking", lambda: lease(Layout.INSTAGRAM, url, range(first + 1, first + 2), ttl_ms=10_000).close())]:
    try:
        take()
        print(name, "claimed", flush=True)
    except ClockSkewError as e:
        print(name, type(e).__name__, e.code, e.ahead_ms, e.max_ms, e, flush=True)
"""


@needs_faketime
def test_a_holder_whose_clock_is_ahead_is_refused_with_clock_skew() -> None:
    """Holders whose clock is 3 s ahead of the server's (libfaketime), a Node one on shard 0 and
    a Python one, asyncio on shard 1 then blocking on shard 2 (time to live 10 s each), are
    refused with CLOCK_SKEW, the SQL leases' error and words: after a restart that lost writes
    the claim raises a shard's ceiling to the server's clock plus 2 s, below the IDs such a
    holder would date, which the next holder would then hand out again. Each refused claim
    frees its shard before the error: right after, this process (its clock the server's)
    claims all three shards, where a claim left held would be NO_FREE_SHARD for 10 s."""
    node, _ = _langs()
    from shardid.redis import lease

    env = dict(os.environ, LD_PRELOAD=str(FAKETIME), FAKETIME="+3", FAKETIME_DONT_FAKE_MONOTONIC="1")
    with Server() as server:
        runs = [subprocess.Popen([sys.executable, "-c", _PYTHON_AHEAD, server.url, "1"], env=env, stdout=subprocess.PIPE, text=True)]
        if node:
            runs.append(
                subprocess.Popen([node[0], "-e", _NODE_AHEAD, server.url, "0", "1"], cwd=ROOT / "bindings-node", env=env, stdout=subprocess.PIPE, text=True)
            )
        lines = [line for run in runs for line in run.communicate(timeout=30)[0].splitlines()]
        assert [run.returncode for run in runs] == [0] * len(runs), lines
        # `holder class code ahead_ms max_ms message` (Node's class: whether a ShardIdError).
        refused = {line.split()[0]: line.split(maxsplit=5) for line in lines}
        expected = {"asyncio": "ClockSkewError", "blocking": "ClockSkewError", **({"node": "true"} if node else {})}
        assert sorted(refused) == sorted(expected), lines
        for name, cls in expected.items():
            _, is_class, code, ahead, most, message = refused[name]
            assert (is_class, code, most) == (cls, "CLOCK_SKEW", "2000"), refused[name]
            assert 2_000 < int(ahead) <= 3_100, refused[name]
            assert message.startswith(f"this host's clock is at least {ahead} ms ahead"), refused[name]
        leases = [lease(LAYOUT, server.url, range(0, 3), ttl_ms=TTL_MS) for _ in range(3)]
        try:
            assert sorted(held.shard for held in leases) == [0, 1, 2]
        finally:
            for held in leases:
                held.close()


# An idle holder (test_an_idle_holder_whose_clock_moves_ahead_stops_with_clock_skew): claims one
# shard of [FIRST, END) (time to live 1 s) and prints `shard S`; at a line on its stdin (its
# clock moved) it waits 2 s, renewals running, then asks for an ID: `id` or `error CODE`.
_NODE_IDLE = r"""
const { lease } = require('./redis.js')
const { Layout } = require('./index.js')
const [url, first, end] = process.argv.slice(1)
;(async () => {
  const held = await lease({ layout: Layout.INSTAGRAM, url, shards: [Number(first), Number(end)], ttlMs: 1000 })
  await held.nextId()
  console.log(`shard ${held.shard}`)
  process.stdin.once('data', async () => {
    await new Promise((resolve) => setTimeout(resolve, 2000))
    try { await held.nextId(); console.log('id') } catch (err) { console.log(`error ${err.code}`) }
    process.exit(0)
  })
})().catch((err) => { console.log(`error ${err.code}`); process.exit(0) })
"""

_PYTHON_IDLE = r"""
import asyncio, sys
from shardid import Layout, ShardIdError
from shardid.redis import lease_async

async def main():
    url, first, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    held = await lease_async(Layout.INSTAGRAM, url, range(first, end), ttl_ms=1_000)
    await held.next_id()
    print("shard", held.shard, flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    await asyncio.sleep(2)
    try:
        await held.next_id()
        print("id", flush=True)
    except ShardIdError as e:
        print("error", e.code, flush=True)

asyncio.run(main())
"""


@needs_faketime
def test_an_idle_holder_whose_clock_moves_ahead_stops_with_clock_skew(tmp_path: Path) -> None:
    """A Node and an asyncio Python holder of 0..2, their clocks the server's when they claim,
    then moved 3 s ahead (libfaketime's file, read at each call) while they are idle: a renewal
    (time to live 1 s: due about every 330 ms while no ceiling is written) finds the clock too
    far ahead and the lease stops with CLOCK_SKEW, as a SQL lease's renewal stops it, not
    LEASE_LOST: taking the lease again cannot help until the host's time is fixed."""
    node, _ = _langs()
    clock = tmp_path / "faketime"
    clock.write_text("+0\n")
    env = dict(
        os.environ, LD_PRELOAD=str(FAKETIME), FAKETIME_TIMESTAMP_FILE=str(clock), FAKETIME_NO_CACHE="1", FAKETIME_DONT_FAKE_MONOTONIC="1"
    )
    with Server() as server:
        # The shards as last written by this server (no claim of them yet): no ceiling jump, so
        # no 2 s wait before the holders' first IDs (seconds of CI).
        run_id = re.search(r"run_id:(\w+)", server.cli("INFO", "server"))
        assert run_id is not None
        key = lease_async(LAYOUT, server.url, range(0, 2)).key  # not awaited: no connection
        server.cli("HSET", key, "0:server", run_id.group(1), "1:server", run_id.group(1))
        runs = [subprocess.Popen([sys.executable, "-c", _PYTHON_IDLE, server.url, "0", "2"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)]
        if node:
            runs.append(
                subprocess.Popen(
                    [node[0], "-e", _NODE_IDLE, server.url, "0", "2"], cwd=ROOT / "bindings-node", env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
                )
            )
        try:
            for run in runs:
                assert run.stdout is not None
                line = run.stdout.readline()
                assert line.startswith("shard "), line
            clock.write_text("+3\n")
            for run in runs:  # both told at once, then both awaited
                assert run.stdin is not None
                run.stdin.write("moved\n")
                run.stdin.flush()
            lines = [run.communicate(timeout=30)[0].strip() for run in runs]
        finally:
            for run in runs:
                if run.poll() is None:
                    run.kill()
                    run.wait(10)
        assert lines == ["error CLOCK_SKEW"] * len(runs), lines


def test_the_books_lease_blocks_run() -> None:
    """The asyncio Python and Node blocks of the book's Redis page (docs/src/databases/redis.md,
    the blocks whose fence says this file runs them), at once on a throwaway server: each holds
    a shard of 0..1024, prints it, its fencing token and an ID, and exits."""
    node, _ = _langs()
    page = (ROOT / "docs" / "src" / "databases" / "redis.md").read_text()
    fence = r"^```(python|js) no-run: needs a Redis server \(tests/python/test_redis_lease\.py runs this block[^\n]*\n(.*?)^```$"
    blocks = dict(re.findall(fence, page, re.M | re.S))
    assert sorted(blocks) == ["js", "python"], "the page's lease blocks for asyncio Python and Node"
    with Server() as server, tempfile.TemporaryDirectory() as project:
        code = {lang: block.replace("redis://127.0.0.1:6379", server.url) for lang, block in blocks.items()}
        runs = [subprocess.Popen([sys.executable, "-c", code["python"]], stdout=subprocess.PIPE, text=True)]
        if node:
            # A reader's project: shardid in its node_modules (the package folder), the block a module.
            (Path(project) / "node_modules").mkdir()
            (Path(project) / "node_modules" / "shardid").symlink_to(ROOT / "bindings-node")
            (Path(project) / "lease.mjs").write_text(code["js"])
            runs.append(subprocess.Popen([node[0], "lease.mjs"], cwd=project, stdout=subprocess.PIPE, text=True))
        printed = [run.communicate(timeout=30)[0].split() for run in runs]
        assert [run.returncode for run in runs] == [0] * len(runs), printed
    # `shard fencing_token id` (Node's console.log writes a bigint as 1n); the two blocks may
    # have held one shard one after the other (the first closed it), the second at token 2.
    numbers = [[int(n.rstrip("n")) for n in p] for p in printed]
    assert all(len(p) == 3 and 0 <= p[0] < 1024 and p[1] >= 1 and p[2] > 0 for p in numbers), printed


def test_a_bad_time_to_live_names_ttl_ms_as_the_sql_leases_do() -> None:
    """A time to live out of range is ``InvalidArgumentError`` on ``ttl_ms``, the keyword the
    caller wrote, before any connection (port 1 has no server): the name the SQL leases' error
    gives it (tests/postgres/test_lease_pooled.py), for the blocking and the asyncio lease alike.
    The core's Redis steps named it ``ttl``, a name no Python or Rust caller writes."""
    from shardid import InvalidArgumentError
    from shardid.redis import lease

    makers: list[Callable[..., object]] = [lease, lease_async]
    for ttl_ms in [10, 86_400_001]:
        for make in makers:
            with pytest.raises(InvalidArgumentError) as raised:
                make(LAYOUT, "redis://127.0.0.1:1", range(2), ttl_ms=ttl_ms)
            assert raised.value.argument == "ttl_ms", f"{make.__name__}(ttl_ms={ttl_ms}): {raised.value}"
    # An accepted one is a connection's error, not the argument's.
    with pytest.raises(Exception) as unreachable:
        lease(LAYOUT, "redis://127.0.0.1:1", range(2), ttl_ms=1_000)
    assert not isinstance(unreachable.value, InvalidArgumentError), unreachable.value


def test_a_script_cancelled_midway_gives_its_connection_up() -> None:
    """An asyncio lease's script cancelled before the server answered (a timeout around the
    call) gives its connection up: redis-py drops the socket then and would open it again by
    itself at the next command, to whatever server answers by then, while the lease still held
    the run_id read on the old one: after a restart that lost writes, the next script would be
    made for the server before it, and the ceiling would not jump. Here, on the lease's session
    (``_Session.run``, which sends each of its scripts; no claim, so no wait for a new server's
    ceiling), the server sleeps (``DEBUG SLEEP``) through a script cancelled after 100 ms, then
    restarts empty (a new run_id): the next script must be made for the new server's run_id."""
    from server import _binary

    from shardid._redis_lease_async import _Session

    made_for: list[str] = []

    def script(run_id: str) -> tuple[str, list[str]]:
        made_for.append(run_id)
        return "return 1", ["0"]

    async def main(server: Server) -> None:
        session = _Session(LAYOUT, server.url, range(1), ttl_ms=10_000, schema="shardid")
        try:
            assert await session.run(script) == 1
            asleep = subprocess.Popen([_binary("redis-cli"), "-s", str(server.socket), "DEBUG", "SLEEP", "0.5"])
            await asyncio.sleep(0.1)
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(session.run(script), 0.1)
            asleep.wait(timeout=10)
            server.kill()
            server.start()
            assert await session.run(script) == 1
        finally:
            await session.close()

    with Server("--enable-debug-command", "local") as server:
        asyncio.run(main(server))
        restarted = re.search(r"run_id:(\w+)", server.cli("INFO", "server"))
    assert restarted is not None
    assert made_for[0] == made_for[1] != restarted.group(1)
    assert made_for[-1] == restarted.group(1), "the script after the restart was made for the server before it"
