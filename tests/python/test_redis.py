"""Dense IDs on Redis from Python and Node (issue 57): the executors of the core's Redis steps
(``shardid._redis`` over redis-py, ``bindings-node/redis.js`` over ioredis), on throwaway
``redis-server`` instances on 127.0.0.1 (``tests/redis/server.py``; ``scripts/setup.sh``
installs Debian's server).

- the entry points and their errors (``create_tag``'s refusal of a server without shardid's
  data, ``create_tag_from``, unknown tag, closed, unreachable, bad URLs), sync and asyncio;
- Python, Node and Rust processes taking from one tag at once: no ID twice;
- a Sentinel group (``redis+sentinel://``) whose primary is SIGKILLed and replaced by its
  replica while Python and Node processes take through the sentinel: every client serves again within 10 s
  from the promoted replica (a new ``run_id``: the takes skip), no ID twice;
- a server restarted from a snapshot older than its last acknowledged takes while Python and
  Node processes keep taking (the loss of ``appendfsync everysec`` or ``no`` after a host crash,
  or a lost AOF tail: a SIGKILL alone loses nothing the kernel already has, so the loss is made
  by restarting from the older snapshot, as ``core/tests/redis.rs`` does): the clients reconnect
  by themselves, and no ID is handed out twice.

The Node workers need the addon in bindings-node/ and ioredis (``scripts/node-addon.sh``), the
Rust worker ``core/tests/redis.rs``'s ``child_takes``, built by cargo with
``SHARDID_RUST_FEATURES`` (scripts/test.sh's, built by then in the core tests step) or
``redis``. A missing one fails in CI and is a warning elsewhere. Seconds of CI: each test
runs its workers in phases of at most 1.2 s and waits at most 30 s for anything.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from shardid import ClosedError, DatabaseUnreachableError, InvalidArgumentError, UnknownTagError
from shardid.segments import AsyncDenseIds, DenseIds, create_tag, create_tag_from

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "tests" / "redis"))
from server import Sentinel, Server  # noqa: E402

IN_CI = os.environ.get("CI", "").lower() not in ("", "0", "false")


def _missing(lang: str, reason: str) -> None:
    if IN_CI:
        pytest.fail(f"{lang} workers: {reason}")
    warnings.warn(f"the Redis test runs without {lang} workers: {reason}", stacklevel=2)


def _node() -> list[str] | None:
    node = shutil.which("node")
    probe = "require('ioredis'); require('./segments.js').createTagFrom.call"
    loaded = node and subprocess.run([node, "-e", probe], cwd=ROOT / "bindings-node", capture_output=True, text=True, timeout=60)
    if loaded and loaded.returncode == 0:
        return [node, str(HERE / "redis_worker.mjs")]
    error = [line for line in loaded.stderr.splitlines() if "Error" in line][:2] if loaded else "no node on PATH"
    _missing("node", f"the addon in bindings-node/ or ioredis does not load (scripts/node-addon.sh): {error}")
    return None


def _rust() -> str | None:
    """The test binary of core/tests/redis.rs (its ``child_takes`` is the Rust worker)."""
    cargo = shutil.which("cargo")
    if cargo is None:
        _missing("rust", "no cargo on PATH")
        return None
    features = os.environ.get("SHARDID_RUST_FEATURES", "redis")
    done = subprocess.run(
        [cargo, "test", "--locked", "-q", "-p", "shardid", "--features", features, "--test", "redis", "--no-run", "--message-format=json"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    for line in done.stdout.splitlines():
        message = json.loads(line) if line.startswith("{") else {}
        if message.get("reason") == "compiler-artifact" and message.get("target", {}).get("name") == "redis" and message.get("executable"):
            return str(message["executable"])
    _missing("rust", f"core/tests/redis.rs did not build: {done.stderr[-500:]}")
    return None


def _ids(path: Path) -> list[tuple[int, int]]:
    """A worker's ``<ms> <id>`` lines."""
    return [(int(ms), int(id)) for ms, id in (line.split() for line in path.read_text().splitlines())]


def _assert_unique(ids: list[int]) -> None:
    seen: set[int] = set()
    twice = [id for id in ids if id in seen or seen.add(id)]  # type: ignore[func-returns-value]
    assert not twice, f"{len(twice)} IDs handed out twice: {twice[:5]}..."


def test_entry_points_and_errors() -> None:
    with Server() as server:
        # A new server holds no shardid data: from 1 only when asked explicitly.
        with pytest.raises(InvalidArgumentError, match="create_tag_from"):
            create_tag(server.url, "orders")
        assert create_tag_from(server.url, "orders", 1) == 1
        assert create_tag_from(server.url, "orders", 500) == 1  # there already: left as it is
        create_tag(server.url, "invoices")  # later tags on that server: from 1
        ids = DenseIds(server.url, "orders", min_size=10, max_size=10)
        assert [ids.next_id() for _ in range(15)] == list(range(1, 16))
        ids.close()  # gives 16..20 back
        with pytest.raises(ClosedError):
            ids.next_id()
        # Over the unix socket too, the rest given back taken again.
        again = DenseIds(server.unix_url, "orders", min_size=10, max_size=10)
        assert again.next_id() == 16
        again.close()

        async def on_a_loop() -> list[int]:
            ids = AsyncDenseIds(server.url, "invoices", min_size=10, max_size=10, schema="shardid")
            try:
                return [await ids.next_id() for _ in range(3)]
            finally:
                await ids.close()

        assert asyncio.run(on_a_loop()) == [1, 2, 3]
        # Each closed (`with`): an unclosed one's fetch thread keeps it, and its figures, alive
        # for the rest of the process (test_stats.py reads the process's figures).
        with DenseIds(server.url, "nope", wait_ms=2_000) as ids, pytest.raises(UnknownTagError, match="create_tag"):
            ids.next_id()
        # Another prefix is another set of tags.
        with DenseIds(server.url, "orders", schema="other", wait_ms=2_000) as ids, pytest.raises(UnknownTagError):
            ids.next_id()
        port = server.port
    with DenseIds(f"redis://127.0.0.1:{port}", "orders", wait_ms=3_000) as ids, pytest.raises(DatabaseUnreachableError):
        ids.next_id()
    with pytest.raises(DatabaseUnreachableError):
        create_tag_from(f"redis://127.0.0.1:{port}", "orders", 1)
    for url, argument in [
        ("redis+sentinel://127.0.0.1:26379", "conninfo"),  # no master named
        ("redis://127.0.0.1:notaport", "conninfo"),
    ]:
        with pytest.raises(InvalidArgumentError) as raised:
            DenseIds(url, "orders")
        assert raised.value.argument == argument
    with pytest.raises(InvalidArgumentError):
        DenseIds("redis://127.0.0.1:1", "orders", schema="a:b")  # not a plain prefix
    with pytest.raises(InvalidArgumentError):
        create_tag_from("postgresql://h/db", "orders", 1)  # Redis's only
    with pytest.raises(InvalidArgumentError):
        create_tag_from("redis://127.0.0.1:1", "orders", 0)


def _spawn(command: list[str], url: str, out: Path, size: int) -> subprocess.Popen[str]:
    """A worker taking from tag ``orders`` in the phases written to its stdin (``_phase``)."""
    err = open(f"{out}.err", "wb")  # noqa: SIM115 - closed with the test's directory
    args = [*command, url, "orders", str(out), str(size)]
    return subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True)


def _phase(procs: list[subprocess.Popen[str]], ms: int, timeout: float = 30) -> None:
    """Every worker takes for ``ms`` milliseconds, all at once once started (a worker's first
    phase also waits for its start: a second or so here, more under load)."""
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(f"{ms}\n")
        proc.stdin.flush()
    deadline = time.monotonic() + timeout
    for proc in procs:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()  # its end, when it failed (reported by _end)
        assert line == "done" or proc.poll() is not None, line
        assert time.monotonic() < deadline, "the workers did not take in time"


def _end(procs: list[subprocess.Popen[str]], outs: list[Path], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    for proc, out in zip(procs, outs):
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail(f"a worker did not end in time: {out}")
        assert proc.returncode == 0, Path(f"{out}.err").read_text()[-2000:]


def test_python_node_and_rust_processes_take_from_one_tag_at_once(tmp_path: Path) -> None:
    node, rust = _node(), _rust()
    with Server() as server:
        create_tag_from(server.url, "orders", 1)
        commands = [[sys.executable, str(HERE / "redis_worker.py")]] * 2 + ([node] * 2 if node else [])
        outs = [tmp_path / f"w{i}.out" for i in range(len(commands))]
        procs = [_spawn(c, server.url, out, 13) for c, out in zip(commands, outs)]
        children = []
        if rust:
            # child_takes: 2,000 IDs of tag orders (prefix shardid) in segments of 13.
            children = [
                subprocess.Popen(
                    [rust, "--exact", "child_takes", "--nocapture", "--test-threads", "1"],
                    env={**os.environ, "SHARDID_REDIS_CHILD_URL": server.url}, stdout=subprocess.PIPE,
                )
                for _ in range(2)
            ]
        _phase(procs, 500)
        _end(procs, outs)
        ids = [id for out in outs for _, id in _ids(out)]
        by_lang = {"python": len(_ids(outs[0])) + len(_ids(outs[1])), "node": sum(len(_ids(o)) for o in outs[2:])}
        for child in children:
            stdout, _ = child.communicate(timeout=60)
            assert child.returncode == 0
            took = [int(line.split("shardid-id=")[1]) for line in stdout.decode().splitlines() if "shardid-id=" in line]
            assert len(took) == 2_000
            ids.extend(took)
    assert by_lang["python"] > 0 and (by_lang["node"] > 0 or not node)
    _assert_unique(ids)


def test_a_restart_that_lost_writes_hands_nothing_out_twice(tmp_path: Path) -> None:
    """Python and Node processes take at about one ID a millisecond each; the server saves a
    snapshot, acknowledges 600 ms more of takes, is SIGKILLed and restarted from the snapshot
    (those takes lost); the same processes reconnect by themselves and go on taking."""
    node = _node()
    with Server("--appendonly", "no") as server:
        create_tag_from(server.url, "orders", 1)
        commands = [[sys.executable, str(HERE / "redis_worker.py")]] * 2 + ([node] * 2 if node else [])
        outs = [tmp_path / f"w{i}.out" for i in range(len(commands))]
        procs = [_spawn(c, server.url, out, 20) for c, out in zip(commands, outs)]
        # The failover rule's premise: the lost traffic is at most MARGIN times the highest rate
        # the tag showed over windows of a second. Every worker takes before the snapshot for
        # longer than a window, all at once (the first phase waits for their starts).
        _phase(procs, 500)
        _phase(procs, 1_200)
        assert server.cli("SAVE") == "OK"
        _phase(procs, 600)  # acknowledged, handed out, then lost
        server.kill()
        server.start()
        restarted = time.time_ns() // 1_000_000
        # The workers idle meanwhile, as a quiet service does: Node's client sees its
        # connection end and opens another at its next take, by itself.
        time.sleep(0.3)
        _phase(procs, 500)
        _end(procs, outs)
    taken = [_ids(out) for out in outs]
    for out, ids in zip(outs, taken):
        # Each worker took IDs after the restart, on the server that lost the takes.
        assert any(ms > restarted for ms, _ in ids), f"{out}: no ID after the restart: {Path(f'{out}.err').read_text()}"
    _assert_unique([id for ids in taken for _, id in ids])


def test_a_sentinel_failover_and_every_client_serves_again(tmp_path: Path) -> None:
    """Python and Node processes take through a sentinel (``redis+sentinel://``); the primary is
    SIGKILLed and the sentinel promotes the replica; each client reconnects by itself to the
    primary the sentinel names, reads its run_id (another: the take skips) and serves again
    within 10 s; no ID twice."""
    node = _node()
    with Server() as primary, Server("--replicaof", "127.0.0.1", str(primary.port)) as replica:
        with Sentinel(primary.port) as sentinel:
            create_tag_from(sentinel.url, "orders", 1)
            commands = [[sys.executable, str(HERE / "redis_worker.py")]] * 2 + ([node] * 2 if node else [])
            outs = [tmp_path / f"w{i}.out" for i in range(len(commands))]
            procs = [_spawn(c, sentinel.url, out, 20) for c, out in zip(commands, outs)]
            _phase(procs, 500)
            _phase(procs, 600)
            assert primary.cli("WAIT", "1", "5000") == "1"
            primary.kill()  # the clients' connections end; the sentinel sees it down after 1 s
            sentinel.promoted(replica.port)
            promoted = time.time_ns() // 1_000_000
            _phase(procs, 1_000)
            _end(procs, outs)
    taken = [_ids(out) for out in outs]
    for out, ids in zip(outs, taken):
        # The last phase lasts 1 s: more IDs than the two segments a worker holds (40) were
        # taken from the promoted replica within it, so each served again in under 10 s.
        after = [ms for ms, _ in ids if ms > promoted]
        assert len(after) >= 100, f"{out}: {len(after)} IDs after the failover: {Path(f'{out}.err').read_text()}"
    _assert_unique([id for ids in taken for _, id in ids])


_HOLDER = """
import sys, time
from shardid import Layout
from shardid.redis import lease
held = lease(Layout.INSTAGRAM, sys.argv[1], range(0, 1), ttl_ms=1_000)
print("shard", held.shard, flush=True)
end = time.monotonic() + 20
while time.monotonic() < end:
    print(held.next_id(), flush=True)
    time.sleep(0.001)
"""


def test_a_lease_and_a_sigkilled_holder_frees_its_shard_after_its_ttl() -> None:
    """shardid.redis.lease: a holder of shard 0 (of 0..1, a time to live of 1 s) in another
    process is SIGKILLed; its shard stays taken (NO_FREE_SHARD) until the time to live has
    passed by the server's clock, then is claimed again, its IDs above every ID the killed
    holder made (the ceiling rule); the errors."""
    from shardid import Layout, NoFreeShardError
    from shardid.redis import lease

    with Server() as server:
        holder = subprocess.Popen([sys.executable, "-c", _HOLDER, server.url], stdout=subprocess.PIPE, text=True)
        assert holder.stdout is not None
        assert holder.stdout.readline().split() == ["shard", "0"]
        made = [int(holder.stdout.readline()) for _ in range(50)]
        holder.kill()
        holder.wait(10)
        killed = time.monotonic()
        with pytest.raises(NoFreeShardError):
            lease(Layout.INSTAGRAM, server.url, range(0, 1), ttl_ms=1_000)
        deadline = killed + 5
        while True:
            try:
                again = lease(Layout.INSTAGRAM, server.url, range(0, 1), ttl_ms=1_000)
                break
            except NoFreeShardError:
                assert time.monotonic() < deadline, "the killed holder's shard was not freed 5 s after"
                time.sleep(0.05)
        assert time.monotonic() - killed >= 0.5  # not before its time to live (1 s, less the time it took to kill)
        with again:
            assert again.shard == 0 and again.held
            ids = again.next_ids(100)
            assert min(ids) > max(made)
            # A second process's claim of the same range while this one holds it.
            with pytest.raises(NoFreeShardError):
                lease(Layout.INSTAGRAM, server.url, range(0, 1), ttl_ms=1_000)
            other = lease(Layout.INSTAGRAM, server.url, range(0, 2), ttl_ms=1_000)
            assert other.shard == 1
            assert other.fencing_token == 1
            other.close()
        with pytest.raises(ClosedError):
            again.next_id()
        # Released at close: taken again at once, a larger fencing token.
        with lease(Layout.INSTAGRAM, server.url, range(0, 1), ttl_ms=1_000) as third:
            assert third.fencing_token == 3
        port = server.port
    with pytest.raises(DatabaseUnreachableError):
        lease(Layout.INSTAGRAM, f"redis://127.0.0.1:{port}", range(0, 1))
    with pytest.raises(InvalidArgumentError):
        lease(Layout.INSTAGRAM, "redis://127.0.0.1:1", range(0, 1), ttl_ms=10)
    with pytest.raises(InvalidArgumentError):
        lease(Layout.INSTAGRAM, "postgresql://h/db", range(0, 1))
