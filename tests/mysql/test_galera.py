"""A 3-node MariaDB Galera cluster (galera-4, tests/mysql/galera.py), started once for this module:
expiring leases taken by processes attached to different nodes, dense IDs taken in segments on
every node at once (concurrent writes of one row on two nodes fail certification with 1213, and
are taken again), a node SIGKILLed mid-run; 0 duplicates in the union. A session lease is
refused on a Galera node (GET_LOCK locks one node only)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest
from test_lease import NODE as LEASE_NODE
from test_node import NODE
from examples import example

from shardid import Layout, UnsupportedError
from shardid.mysql import lease

galera = pytest.importorskip("galera")
if not galera.available():
    pytest.skip("galera-4 is not installed (scripts/setup.sh installs it)", allow_module_level=True)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    with galera.Galera() as c:
        for node in c.nodes:
            node.sql("CREATE DATABASE IF NOT EXISTS app")
        yield c


def url(cluster: Any, i: int) -> str:
    return str(cluster.nodes[i].url_for("app"))


def test_a_session_lease_is_refused_on_a_galera_node(cluster: Any) -> None:
    with pytest.raises(UnsupportedError, match="GET_LOCK|Galera"):
        lease(Layout.INSTAGRAM, url(cluster, 0), range(0, 4), kind="session", table="galera_session")
    # Node's and Rust's the same.
    for command in (["node", str(LEASE_NODE)], [example("mysql_lease")]):
        done = subprocess.run([*command, url(cluster, 1), "session", "galera_session"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout.strip().splitlines()[-1])["code"] == "UNSUPPORTED", done.stdout


def test_the_nodes_agree_on_the_server_and_the_origin_so_takes_on_each_skip_nothing(cluster: Any) -> None:
    """A row written on one node and next on another stepped back past nothing (Galera certified
    every commit): the nodes name one server and one origin (the cluster's state UUID, not their
    tables' creation times, which a state transfer's copied files do not share), so segments
    taken in turn on each node follow each other (issue 42)."""
    from conftest import install

    from shardid import _mysql, _segments_generated
    from shardid.sql import segments

    first = pymysql.connect(host="127.0.0.1", port=cluster.nodes[0].port, user="root", autocommit=True)
    install(first, segments("gal_seg", dialect="mariadb"))
    with first.cursor() as cur:
        cur.execute("SELECT gal_seg.create_tag('turns')")
    statements = _segments_generated._Mysql("gal_seg", "turns")  # DenseIds' steps on MySQL
    taken = []
    for i in [0, 1, 2, 0, 2, 1]:
        cluster.wait_synced(i)
        client = _mysql.connect(url(cluster, i).replace("/app", "/gal_seg"))
        taken.append(statements.take(client, 0, "turns", 100))
        client.close()
    assert [first for first, _, _ in taken] == [1 + 100 * k for k in range(6)], taken
    with first.cursor() as cur:
        cur.execute("SELECT origin, restored FROM gal_seg.shardid_tags")
        origin, restored = cur.fetchone()
    assert origin.decode() == cluster.status(0, "wsrep_cluster_state_uuid") and restored == 0
    first.close()


# A worker process: an expiring lease through its node, IDs made for `seconds` (a thousand
# every 20 ms), written to `out` as 64-bit integers, whatever ended it (a lease lost with its
# node, the time up).
LEASE_WORKER = textwrap.dedent("""
    import sys, time
    from array import array
    from shardid import Layout
    from shardid.mysql import lease

    url, seconds, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    made = array("q")
    try:
        g = lease(Layout.INSTAGRAM, url, range(0, 16), table="galera_leases")
        made.append(g.next_id())
        open(out + ".ready", "w").close()
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            made.extend(g.next_id() for _ in range(1000))
            time.sleep(0.02)
    except Exception as e:
        print(type(e).__name__, e, file=sys.stderr)
    finally:
        with open(out, "wb") as f:
            made.tofile(f)
""")

# A worker process: 4 threads taking dense IDs of one tag through its node (segments of 100 to
# start with, so that there are many takes, on three nodes at once).
SEGMENT_WORKER = textwrap.dedent("""
    import sys, threading, time
    from array import array
    import shardid._segments_generated
    from shardid import SegmentUnavailableError
    from shardid.segments import DenseIds

    # Counts the takes the server rolled back (1213: another node's take of the same row
    # certified first) that the core's protocol sent again: the same statement next.
    conflicts = [0]
    Protocol = shardid._segments_generated._SegmentProtocol  # the blocking driver's (generated from _segments_async)

    class CountingProtocol:
        def __init__(self, *args):
            self.protocol = Protocol(*args)

        def failed(self, code=None):
            before = self.protocol.next()
            self.protocol.failed(code)
            conflicts[0] += code in ("1213", "1205") and self.protocol.next() == before

        def __getattr__(self, name):
            return getattr(self.protocol, name)

    shardid._segments_generated._SegmentProtocol = CountingProtocol

    url, seconds, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    made = array("q")
    lock = threading.Lock()
    ids = DenseIds(url, "galera_orders", schema="seg_mixed", wait_ms=3000)
    for attempt in range(10):
        try:
            made.append(ids.next_id())
            break
        except SegmentUnavailableError:
            # Twelve processes starting at once on a busy machine, the first takes in conflict.
            pass
    open(out + ".ready", "w").close()
    end = time.monotonic() + seconds

    unavailable = [0]
    late = [0]  # IDs handed out in the last 2 s, after the cluster evicted the killed node

    def run():
        mine = []
        while time.monotonic() < end:
            try:
                for _ in range(50):
                    mine.append(ids.next_id())
                if time.monotonic() > end - 2:
                    late[0] += 50
            except SegmentUnavailableError:
                # The cluster stalls its writes until it evicts a dead node (2 to 4 s here),
                # and a killed node answers nothing: retry later, as an application does.
                unavailable[0] += 1
            except Exception as e:
                print(type(e).__name__, e, file=sys.stderr)
                break
            time.sleep(0.005)
        with lock:
            made.extend(mine)

    threads = [threading.Thread(target=run) for _ in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    with open(out, "wb") as f:
        made.tofile(f)
    print(ids.fetches, unavailable[0], late[0], conflicts[0])
""")


def start(cluster: Any, script: str, node: int, seconds: float, out: Path) -> tuple[subprocess.Popen[str], Path]:
    p = subprocess.Popen([sys.executable, "-c", script, url(cluster, node), str(seconds), str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p, out


def finish(worker: tuple[subprocess.Popen[str], Path]) -> tuple[array[int], str, str]:
    p, path = worker
    out, err = p.communicate(timeout=120)
    made: array[int] = array("q")
    made.frombytes(path.read_bytes())
    return made, out, err


def test_leases_and_segments_on_every_node_with_one_killed(cluster: Any, tmp_path: Path) -> None:
    from shardid.sql import mysql_statements, segments

    conn = pymysql.connect(host="127.0.0.1", port=cluster.nodes[0].port, user="root", autocommit=True)
    with conn.cursor() as cur:
        # The schema the Node and Rust clients' test modes take from.
        for statement in mysql_statements(segments("seg_mixed", dialect="mariadb")):
            cur.execute(statement)
        cur.execute("SELECT seg_mixed.create_tag('galera_orders')")
    conn.close()
    # Rust's binaries first (a build, outside SHARDID_MYSQL_EXAMPLES): the kill below must land
    # within the Python processes' 10 s.
    rust_lease, rust_segments = example("mysql_lease"), example("mysql_segments")
    # 2 lease processes and 2 segment processes of 4 threads per node, for 10 s; node 2 is
    # SIGKILLed 2 s after they all started. The cluster's writes stall until the others declare it gone (2 to 4 s),
    # within the leases' time to live (10 s): the processes of nodes 0 and 1 go on.
    leases = [start(cluster, LEASE_WORKER, node, 10, tmp_path / f"lease-{node}-{k}") for node in range(3) for k in range(2)]
    dense = [start(cluster, SEGMENT_WORKER, node, 10, tmp_path / f"dense-{node}-{k}") for node in range(3) for k in range(2)]
    # Every process has made its first ID (Python starts slowly on a busy machine), then 2 s on.
    deadline = time.monotonic() + 60
    while not all(Path(f"{out}.ready").exists() for _, out in leases + dense):
        exited = [p.communicate()[1] for p, _ in leases + dense if p.poll() is not None]
        assert time.monotonic() < deadline and not exited, exited
        time.sleep(0.1)
    # Node's and Rust's leases through nodes 0 and 1 too: 30,000 IDs over 6 s each, through the
    # kill and the stall.
    probes = []
    for node in (0, 1):
        args = ["6", "30000", "0", "16"]
        out = tmp_path / f"node-lease-{node}"
        probes.append((subprocess.Popen(["node", str(LEASE_NODE), url(cluster, node), "probe", str(out), "galera_leases", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), Path(f"{out}.ids")))
        out = tmp_path / f"rust-lease-{node}.ids"
        probes.append((subprocess.Popen([rust_lease, url(cluster, node), "probe", "galera_leases", str(out), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), out))
    # Node's and Rust's clients take 5,000 dense IDs each of the same tag through nodes 0 and 1
    # meanwhile (segments of 20 to 500).
    others = []
    for node in (0, 1):
        for k, command in enumerate([["node", str(NODE)], [rust_segments]]):
            out = tmp_path / f"other-{node}-{k}"
            mode = "seg_many" if k == 0 else "many"
            others.append((subprocess.Popen([*command, url(cluster, node), mode, "galera_orders", str(out), "5000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), out))
    time.sleep(2)
    cluster.kill(2)
    lease_results = [finish(w) for w in leases]
    dense_results = [finish(w) for w in dense]

    # Leases: one shard per process, ten different ones (Python's, Node's and Rust's), 0
    # duplicates in the union; the
    # processes of the surviving nodes never lost theirs.
    assert all(err == "" for _, _, err in lease_results[:4]), [err for _, _, err in lease_results]
    probe_shards = []
    probe_ids: list[int] = []
    for p, out in probes:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        probe: array[int] = array("Q")
        probe.frombytes(out.read_bytes())
        probe_shards.append(probe.pop())
        assert len(probe) == 30000
        probe_ids += probe
    ids = [i for made, _, _ in lease_results for i in made] + probe_ids
    assert len(ids) == len(set(ids)), "duplicate IDs across the nodes' leases"
    shards = [{Layout.INSTAGRAM.decode(i).shard for i in made} for made, _, _ in lease_results]
    assert all(len(s) == 1 for s in shards), shards
    shards += [{shard} for shard in probe_shards]
    assert len({next(iter(s)) for s in shards}) == 10, shards

    # Segments: taken on every node (several takes each), 0 duplicates in the union; those of
    # the surviving nodes handed out IDs to the end.
    assert all(err == "" for _, _, err in dense_results[:4]), [err for _, _, err in dense_results]
    other_results = []
    for p, out in others:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        got: array[int] = array("q")
        got.frombytes(out.read_bytes())
        assert len(got) == 5000
        other_results.append(got)
    numbers = [n for made, _, _ in dense_results for n in made] + [n for got in other_results for n in got]
    assert len(numbers) == len(set(numbers)), "duplicate dense IDs across the nodes"
    fetches, unavailable, late, conflicts = zip(*[(int(w) for w in out.split()) for _, out, _ in dense_results])
    assert all(f >= 2 for f in fetches), fetches
    # Nodes took from the same row at the same moment, and the conflicts were taken again.
    assert sum(conflicts) > 0, conflicts
    assert all(n > 0 for n in late[:4]) and late[4:] == (0, 0), late
    assert all(len(made) > 0 for made, _, _ in dense_results + lease_results)
    print(f"lease IDs {len(ids)}, dense IDs {len(numbers)}, fetches {fetches}, unavailable {unavailable}, late {late}, conflicts {conflicts}")
