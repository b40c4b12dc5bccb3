"""Dense IDs from segments on a real PostgreSQL: the SQL contract (create_tag, take_segment,
next_dense_id, give_back), then the Python allocator under threads, processes, kill -9, a
server restart and a server that is down."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import shardid
from shardid.segments import DenseIds
from shardid.sql import segments
from dense_checks import burst_makes_one_fetch, down_then_resumes, forked_child_takes_segments_of_its_own, killed_while_its_fetch_is_in_flight, processes_a_kill_and_a_server_restart
from together import on_threads
from examples import run_example


def install(conn: Any, schema: str, **kw: int) -> None:
    with conn.transaction():
        conn.execute(segments(schema, **kw).encode())


def take(conn: Any, schema: str, tag: str, size: int) -> tuple[int, int, int]:
    row = conn.execute(f"SELECT first, count, stride FROM {schema}.take_segment(%s, %s)", (tag, size)).fetchone()
    assert row is not None
    return row


def test_the_sql_contract(conn: Any) -> None:
    install(conn, "seg_contract")
    install(conn, "seg_contract")  # idempotent
    conn.execute("SELECT seg_contract.create_tag('orders')")
    conn.execute("SELECT seg_contract.create_tag('orders', 500)")  # exists: left as it is
    assert take(conn, "seg_contract", "orders", 10) == (1, 10, 1)
    assert take(conn, "seg_contract", "orders", 5) == (11, 5, 1)
    # 0: the size the row remembers (the last one asked for).
    assert take(conn, "seg_contract", "orders", 0) == (16, 5, 1)
    conn.execute("SELECT seg_contract.create_tag('invoices', 1000)")
    assert take(conn, "seg_contract", "invoices", 0) == (1000, 1000, 1), "a new tag starts at 1,000 a segment"
    # The database's own rows draw from the same numbers.
    assert conn.execute("SELECT seg_contract.next_dense_id('orders')").fetchone() == (21,)
    assert take(conn, "seg_contract", "orders", 3) == (22, 3, 1)
    # Giving back works only for the last segment taken.
    give_back = "SELECT seg_contract.give_back(%s, %s, %s)"
    assert conn.execute(give_back, ("orders", 23, 25)).fetchone() == (True,)
    assert take(conn, "seg_contract", "orders", 2) == (23, 2, 1)
    assert conn.execute(give_back, ("orders", 22, 24)).fetchone() == (False,), "a segment was taken after"
    assert conn.execute(give_back, ("orders", 30, 25)).fetchone() == (False,)


def test_a_fresh_install_prints_no_notice_and_an_old_table_gains_the_new_columns(conn: Any) -> None:
    """Installing on a fresh database says nothing (no "column tli already exists, skipping",
    which reads like an upgrade gone wrong); a table of an older version, without the
    timeline's columns, gains them when the DDL runs again. The dictionary's DDL alike."""
    from shardid.sql import dictionary

    notices: list[str] = []
    conn.add_notice_handler(lambda d: notices.append(d.message_primary))
    install(conn, "seg_fresh")
    with conn.transaction():
        conn.execute(dictionary("dict_fresh").encode())
    assert notices == []
    conn.execute("ALTER TABLE seg_fresh.shardid_tags DROP COLUMN tli, DROP COLUMN grown_at")
    conn.execute("ALTER TABLE dict_fresh.shardid_topics DROP COLUMN tli")
    install(conn, "seg_fresh")
    with conn.transaction():
        conn.execute(dictionary("dict_fresh").encode())
    columns = conn.execute(
        "SELECT table_schema, column_name FROM information_schema.columns"
        " WHERE (table_schema, table_name) IN (('seg_fresh', 'shardid_tags'), ('dict_fresh', 'shardid_topics'))"
        " AND column_name IN ('tli', 'grown_at') ORDER BY 1, 2"
    ).fetchall()
    assert columns == [("dict_fresh", "tli"), ("seg_fresh", "grown_at"), ("seg_fresh", "tli")]
    conn.execute("SELECT seg_fresh.create_tag('orders')")
    assert take(conn, "seg_fresh", "orders", 10) == (1, 10, 1)


def test_bad_input_is_refused_clearly(conn: Any) -> None:
    install(conn, "seg_bad")
    conn.execute("SELECT seg_bad.create_tag('a')")
    with pytest.raises(psycopg.Error) as unknown:
        take(conn, "seg_bad", "typo", 10)
    assert unknown.value.sqlstate == "SI001" and "UNKNOWN_TAG" in str(unknown.value)
    for size in (-1, 2**41, None):
        with pytest.raises(psycopg.Error) as bad:
            take(conn, "seg_bad", "a", size)  # type: ignore[arg-type]
        assert bad.value.sqlstate == "22023", size
    for tag in ("", None, "x" * 201):
        with pytest.raises(psycopg.Error) as bad_tag:
            conn.execute("SELECT seg_bad.create_tag(%s)", (tag,))
        assert bad_tag.value.sqlstate == "22023"
    # A tag is data, never SQL: this one is a tag like any other.
    evil = "x'); DROP TABLE seg_bad.shardid_tags; --"
    conn.execute("SELECT seg_bad.create_tag(%s)", (evil,))
    assert take(conn, "seg_bad", evil, 2) == (1, 2, 1)
    with pytest.raises(psycopg.Error) as no_id:
        conn.execute("SELECT seg_bad.next_dense_id('typo')")
    assert no_id.value.sqlstate == "SI001"
    # A tag near the top of bigint runs out with its own SQLSTATE, never wraps.
    conn.execute("SELECT seg_bad.create_tag('top', 9223372036854775800)")
    with pytest.raises(psycopg.Error) as exhausted:
        take(conn, "seg_bad", "top", 100)
    assert exhausted.value.sqlstate == "SI002"
    # Names that could inject SQL never reach it.
    with pytest.raises(shardid.InvalidArgumentError):
        segments("seg; DROP TABLE x")
    with pytest.raises(ValueError):
        segments("seg", servers=2, index=2)
    with pytest.raises(shardid.InvalidArgumentError):
        DenseIds("postgresql://unused", "", schema="seg_bad")
    with pytest.raises(shardid.InvalidArgumentError):
        DenseIds("postgresql://unused", "a", schema="Seg")


def test_ticket_servers_hand_out_disjoint_numbers(conn: Any) -> None:
    install(conn, "seg_odd", servers=2, index=1)
    install(conn, "seg_even", servers=2, index=0)
    for schema in ("seg_odd", "seg_even"):
        conn.execute(f"SELECT {schema}.create_tag('t')")
    odd = take(conn, "seg_odd", "t", 4)
    even = take(conn, "seg_even", "t", 4)
    assert odd == (1, 4, 2) and even == (2, 4, 2)
    assert take(conn, "seg_odd", "t", 2) == (9, 2, 2)
    assert conn.execute("SELECT seg_odd.next_dense_id('t')").fetchone() == (13,)


def test_dense_ids_increase_and_a_clean_close_leaves_no_hole(cluster: Any, conn: Any) -> None:
    install(conn, "seg_clean")
    conn.execute("SELECT seg_clean.create_tag('orders')")
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    import shardid.prometheus

    registry = CollectorRegistry()
    registry.register(shardid.prometheus.ShardIdCollector())

    def exposed() -> dict[str, Any]:
        return {f.name: f for f in text_string_to_metric_families(generate_latest(registry).decode())}

    with DenseIds(cluster.dsn, "orders", schema="seg_clean", min_size=100, max_size=1000) as first:
        ids = [first.next_id() for _ in range(250)] + first.next_ids(50)
        # Reported while open; a prefetch may land meanwhile: read until the figures stand still.
        for _ in range(50):
            before, families, open_stats = first.stats(), exposed(), first.stats()
            if before == open_stats:
                break
    assert ids == list(range(1, 301))
    assert first.skipped == 0
    stats = first.stats()
    assert list(stats)[:2] == ["fetches", "failed_fetches"] and list(stats)[-1] == "remaining"
    assert stats["fetches"] == first.fetches >= 2
    assert stats["failed_fetches"] == 0 and stats["skipped"] == 0
    assert stats["fetch_latency_le_inf"] == stats["fetches"], "every fetch timed"
    assert stats["fetch_latency_max_ms"] >= stats["fetch_latency_last_ms"]
    # The fetch latency as a Prometheus histogram, counted as the allocator counted it.
    latency = families["shardid_segment_fetch_latency_seconds"]
    assert latency.type == "histogram"
    mine = {"schema": "seg_clean", "tag": "orders"}
    assert [s.value for s in latency.samples if s.name.endswith("_count") and s.labels == mine] == [open_stats["fetches"]]
    fetched = [s.value for s in families["shardid_segment_fetches"].samples if s.labels == mine]
    assert fetched == [open_stats["fetches"]] and open_stats["fetches"] >= 1
    # Closed: no longer reported, although the object lives on (as Node's).
    after = exposed().get("shardid_segment_fetches")
    assert after is None or all(s.labels != mine for s in after.samples)
    with pytest.raises(shardid.ClosedError):  # closed, not unavailable: a retry cannot help
        first.next_id()
    with DenseIds(cluster.dsn, "orders", schema="seg_clean") as again:
        assert again.next_id() == 301, "a restart after a clean close continues at the next number"
    typo = DenseIds(cluster.dsn, "typo", schema="seg_clean")
    with pytest.raises(shardid.UnknownTagError) as unknown:
        typo.next_id()
    assert unknown.value.tag == "typo"
    stats = typo.stats()
    assert (stats["fetches"], stats["failed_fetches"], stats["empty_waits"]) == (0, 1, 1)


def test_a_burst_on_an_empty_allocator_makes_one_fetch(cluster: Any, conn: Any) -> None:
    install(conn, "seg_burst")
    conn.execute("SELECT seg_burst.create_tag('b')")
    ids = DenseIds(cluster.dsn, "b", schema="seg_burst")
    burst_makes_one_fetch(ids)


def test_processes_threads_kill_and_a_server_restart_never_repeat_an_id(cluster: Any, conn: Any, tmp_path: Path) -> None:
    install(conn, "seg_load")
    for tag in ("a", "b"):
        conn.execute("SELECT seg_load.create_tag(%s)", (tag,))

    def next_of(tag: str) -> int:
        with psycopg.connect(cluster.dsn, autocommit=True) as after:  # the fixture's died with the server
            return after.execute("SELECT next FROM seg_load.shardid_tags WHERE tag = %s", (tag,)).fetchone()[0]  # type: ignore[index]

    # 4 threads: 200,000 IDs per process.
    processes_a_kill_and_a_server_restart(cluster.dsn, tmp_path / "ids", cluster.crash_and_restart, next_of, 50_000, 30_000)


def test_a_server_that_is_down_gives_a_typed_error_and_service_resumes(cluster: Any, conn: Any) -> None:
    install(conn, "seg_down")
    conn.execute("SELECT seg_down.create_tag('d')")
    ids = DenseIds(cluster.dsn, "d", schema="seg_down", min_size=10, max_size=10, wait_ms=500)
    down_then_resumes(ids, cluster.stop_server, cluster.start_server)


# Node's shardid/segments (pg), on the same server: tests/postgres/segments_node.mjs.
NODE = Path(__file__).with_name("segments_node.mjs")


def node(dsn: str, mode: str) -> dict[str, Any]:
    import json

    done = subprocess.run(["node", str(NODE), dsn, mode], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def url(cluster: Any) -> str:
    return f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres"


def test_node_dense_ids(cluster: Any, conn: Any) -> None:
    install(conn, "seg_node")
    for tag in ("n_order", "n_burst", "n_down", "n_export"):
        conn.execute("SELECT seg_node.create_tag(%s)", (tag,))
    # n_order remembers segments of 100, and starts at 1 again.
    assert take(conn, "seg_node", "n_order", 100) == (1, 100, 1)
    assert conn.execute("SELECT seg_node.give_back('n_order', 1, 101)").fetchone() == (True,)
    # Every segment taken from n_order, logged, to check Node's count of fetches.
    conn.execute(
        "CREATE TABLE seg_node.takes (tag text);"
        "CREATE FUNCTION seg_node.log_take() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "IF NEW.next > OLD.next THEN INSERT INTO seg_node.takes VALUES (NEW.tag); END IF; RETURN NEW; END $$;"
        "CREATE TRIGGER log_take AFTER UPDATE ON seg_node.shardid_tags FOR EACH ROW EXECUTE FUNCTION seg_node.log_take()"
    )
    order = node(url(cluster), "order")
    stats, fetches = order.pop("stats"), order.pop("fetches")
    assert order == {
        "count": 300,
        "dense": True,
        "next": "301",
        "skipped": "0",
        "closed": "CLOSED",
    }
    (takes,) = conn.execute("SELECT count(*) FROM seg_node.takes WHERE tag = 'n_order'").fetchone()
    conn.execute("DROP TRIGGER log_take ON seg_node.shardid_tags")
    # The server saw the first allocator's fetches, and the second one's.
    assert stats["fetches"] == fetches == takes - 1 >= 3
    assert stats["failedFetches"] == 0 and stats["fetchLatencyLeInf"] == stats["fetches"]
    assert stats["emptyWaits"] >= 1 and stats["skipped"] == 0
    assert node(url(cluster), "burst") == {"unique": 64, "fetches": 1, "counted": 1}
    (step,) = conn.execute("SELECT step FROM seg_node.shardid_tags WHERE tag = 'n_order'").fetchone()
    assert step == 100, "the allocator kept to its bounds"
    assert node(url(cluster), "unknown") == {"code": "UNKNOWN_TAG"}
    assert node(url(cluster), "bad") == {"codes": ["INVALID_ARGUMENT", "INVALID_ARGUMENT"]}
    # Reported to shardid/prometheus while open (its stats(), under schema and tag), not once
    # closed.
    assert take(conn, "seg_node", "n_export", 10) == (1, 10, 1)  # the row remembers 10
    assert conn.execute("SELECT seg_node.give_back('n_export', 1, 11)").fetchone() == (True,)
    exported = node(url(cluster), "exported")
    fetches = exported["fetches"]
    assert fetches >= 4, "45 IDs from segments of 10"
    assert exported == {
        "ids": 45,
        "fetches": fetches,
        "open": [f'shardid_segment_fetches_total{{schema="seg_node",tag="n_export"}} {fetches}'],
        "closed": [],
    }


def test_node_entry_points_create_tags_serials_and_topics(cluster: Any, conn: Any) -> None:
    from entry_points import ENTRY_POINTS

    from shardid.sql import dictionary

    install(conn, "seg_entry")
    with conn.transaction():
        conn.execute(dictionary("dict_entry").encode())
    assert node(url(cluster), "entry") == ENTRY_POINTS
    # Created where the DDL is, from 1 (the tag) and 0 (the topic), once.
    assert conn.execute("SELECT count(*) FROM seg_entry.shardid_tags WHERE tag = 'e_tag'").fetchone() == (1,)


def test_node_dense_ids_survive_a_server_that_is_down(cluster: Any, conn: Any) -> None:
    import json

    install(conn, "seg_node")
    conn.execute("SELECT seg_node.create_tag('n_down')")
    child = subprocess.Popen(["node", str(NODE), url(cluster), "down"], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    cluster.stop_server()
    try:
        assert child.stdout.readline().strip() == "SEGMENT_UNAVAILABLE"
    finally:
        cluster.start_server()
    result = json.loads(child.stdout.readline())
    assert child.wait(timeout=60) == 0
    assert result == {"down": "SEGMENT_UNAVAILABLE", "resumed": 30, "increasing": True}


def test_a_forked_child_takes_segments_of_its_own(cluster: Any, conn: Any) -> None:
    install(conn, "seg_fork")
    conn.execute("SELECT seg_fork.create_tag('f')")
    ids = DenseIds(cluster.dsn, "f", schema="seg_fork", min_size=100, max_size=100)
    forked_child_takes_segments_of_its_own(ids)


@pytest.fixture(scope="module")
def other(cluster: Any) -> Iterator[Any]:
    """A second ticket server: `seg_two` installed on both, as server 0 and server 1 of two."""
    from cluster import Cluster

    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        install(conn, "seg_two", servers=2, index=0)
    with Cluster() as second:
        with psycopg.connect(second.dsn, autocommit=True) as conn:
            install(conn, "seg_two", servers=2, index=1)
        yield second


def create_on_both(tag: str, *servers: Any) -> None:
    for server in servers:
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            conn.execute("SELECT seg_two.create_tag(%s)", (tag,))


def test_two_ticket_servers_one_stopped_mid_run(cluster: Any, other: Any) -> None:
    create_on_both("t", cluster, other)
    ids = DenseIds([cluster.dsn, other.dsn], "t", schema="seg_two", min_size=50, max_size=50, wait_ms=10_000)
    # The first segment has the tags' starting size (1,000); then 50 at a time, in turn.
    before = [ids.next_id() for _ in range(1_500)]
    other.stop_server()
    try:
        during = [ids.next_id() for _ in range(1_000)]
    finally:
        other.start_server()
    after = [ids.next_id() for _ in range(1_000)]
    ids.close()
    every = before + during + after
    assert len(set(every)) == len(every), "no ID twice"
    assert {i % 2 for i in before} == {0, 1}, "segments from both servers"
    # While server 1 is down, IDs keep coming from server 0; at most the segments server 1
    # had already handed over (the current and the prefetched, 50 each) are its numbers.
    assert sum(i % 2 for i in during) <= 100
    assert {i % 2 for i in after} == {0, 1}, "server 1 is used again once it is back"


def test_node_takes_segments_from_several_ticket_servers(cluster: Any, other: Any) -> None:
    import json

    create_on_both("n_two", cluster, other)
    # A third server that is down (a port nothing listens on) costs only its turn.
    down = f"postgresql://postgres@127.0.0.1:{other.port + 1 if other.port + 1 != cluster.port else other.port + 2}/postgres"
    servers = [url(cluster), f"postgresql://postgres@127.0.0.1:{other.port}/postgres", down]
    assert node(json.dumps(servers), "two") == {"unique": 3000, "residues": [0, 1], "fetches": True}


# Rust's shardid::segment::postgres (the `postgres` crate), on the same server: the example
# core/examples/segments.rs.
def rust(dsn: str, mode: str) -> dict[str, Any]:
    return run_example("segments", dsn, mode)  # type: ignore[no-any-return]


def test_rust_dense_ids(cluster: Any, conn: Any) -> None:
    install(conn, "seg_rust")
    for tag in ("r_order", "r_threads"):
        conn.execute("SELECT seg_rust.create_tag(%s)", (tag,))
    # r_order remembers segments of 100, and starts at 1 again.
    assert take(conn, "seg_rust", "r_order", 100) == (1, 100, 1)
    assert conn.execute("SELECT seg_rust.give_back('r_order', 1, 101)").fetchone() == (True,)
    dsn = f"host=127.0.0.1 port={cluster.port} user=postgres dbname=postgres"
    # Every segment taken from r_order, logged, to check the Rust client's count of fetches.
    conn.execute(
        "CREATE TABLE seg_rust.takes (tag text);"
        "CREATE FUNCTION seg_rust.log_take() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "IF NEW.next > OLD.next THEN INSERT INTO seg_rust.takes VALUES (NEW.tag); END IF; RETURN NEW; END $$;"
        "CREATE TRIGGER log_take AFTER UPDATE ON seg_rust.shardid_tags FOR EACH ROW EXECUTE FUNCTION seg_rust.log_take()"
    )
    order = rust(dsn, "order")
    stats = dict(zip([m[0] for m in shardid._shardid._stats_table()["segments"]["metrics"]], order.pop("stats")))
    assert order == {"count": 300, "dense": True, "next": 301, "skipped": 0, "closed": "CLOSED"}
    (takes,) = conn.execute("SELECT count(*) FROM seg_rust.takes WHERE tag = 'r_order'").fetchone()
    conn.execute("DROP TRIGGER log_take ON seg_rust.shardid_tags")
    # The server saw the first client's fetches, and the second client's one.
    assert stats["fetches"] == takes - 1 >= 3
    assert stats["failed_fetches"] == 0 and stats["fetch_latency_le_inf"] == stats["fetches"]
    assert stats["empty_waits"] >= 1, "the first call waited for the first fetch"
    assert rust(dsn, "unknown") == {"code": "UNKNOWN_TAG"}
    assert rust(dsn, "threads") == {"total": 160_000, "unique": 160_000}


@pytest.mark.parametrize("isolation", ["READ COMMITTED", "REPEATABLE READ"])
def test_take_segment_never_hands_out_a_number_twice_under_either_isolation(
    cluster: Any, conn: Any, isolation: str
) -> None:
    schema = "seg_" + isolation.split()[0].lower()
    install(conn, schema)
    conn.execute(f"SELECT {schema}.create_tag('iso')")
    taken: list[tuple[int, int]] = []
    retries = [0]
    lock = threading.Lock()

    def worker() -> None:
        with psycopg.connect(cluster.dsn) as c:
            for _ in range(200):
                while True:
                    try:
                        with c.transaction():
                            c.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation}")
                            first, count, _ = take(c, schema, "iso", 10)
                        break
                    except psycopg.errors.SerializationFailure:
                        with lock:
                            retries[0] += 1  # a concurrent update under REPEATABLE READ: retry
                with lock:
                    taken.append((first, count))

    on_threads([worker] * 8)
    numbers = [n for first, count in taken for n in range(first, first + count)]
    assert len(numbers) == len(set(numbers)) == 8 * 200 * 10
    assert sorted(numbers) == list(range(1, 16_001)), "dense: no number lost either"
    if isolation == "READ COMMITTED":
        assert retries[0] == 0, "the row lock orders them without a failure"


def test_a_client_killed_while_its_fetch_is_in_flight_never_causes_a_duplicate(
    cluster: Any, conn: Any, tmp_path: Path
) -> None:
    from proxy import DelayProxy

    install(conn, "seg_kill")
    conn.execute("SELECT seg_kill.create_tag('k')")
    assert take(conn, "seg_kill", "k", 20) == (1, 20, 1)  # the row remembers segments of 20
    assert conn.execute("SELECT seg_kill.give_back('k', 1, 21)").fetchone() == (True,)
    proxy = DelayProxy(cluster.port, 0.3)
    next_of_k = lambda: conn.execute("SELECT next FROM seg_kill.shardid_tags WHERE tag = 'k'").fetchone()[0]  # noqa: E731
    proxy_url = f"host=127.0.0.1 port={proxy.port} user=postgres dbname=postgres"
    killed_while_its_fetch_is_in_flight(proxy, proxy_url, cluster.dsn, tmp_path / "killed", next_of_k)


def test_node_prints_the_ddl_and_it_runs(cluster: Any, conn: Any) -> None:
    # The README's "from Node": ddl() of shardid/segments is Python's text, and it installs.
    out = node(url(cluster), "ddl")
    assert out["plain"] == segments("seg_from_node")
    assert out["ticket"] == segments("seg_ticket", servers=2, index=1)
    assert out["default"] == segments("seg")
    with conn.transaction():
        conn.execute(out["plain"].encode())
    conn.execute("SELECT seg_from_node.create_tag('t')")
    assert take(conn, "seg_from_node", "t", 5) == (1, 5, 1)
