"""The string <-> ID dictionary on a real PostgreSQL: the SQL contract (create_topic, drop_topic,
dict_id(s), dict_lookup, dict_value(s)), then the Python client under concurrent writers of the
same new strings, rollbacks, cancels, kill -9, a server crash, topics dropped mid-run, a server
that is down (the cache still answers) and topics spread over several servers."""

from __future__ import annotations

import functools
import json
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

import shardid
from shardid.dictionary import MAX_BATCH, MAX_VALUE_LEN, Dictionary, server_for
from shardid.sql import dictionary
from dense_checks import assert_dense_topic
from together import on_threads
from examples import example, run_example

VECTORS = Path(__file__).resolve().parents[1] / "vectors" / "dictionary.json"


def install(conn: Any, schema: str) -> None:
    with conn.transaction():
        conn.execute(dictionary(schema).encode())


def one(conn: Any, sql: str, *params: Any) -> Any:
    row = conn.execute(sql, params).fetchone()
    assert row is not None
    return row[0]


def assert_dense(conn: Any, schema: str, topic: str) -> int:
    """`dense_checks.assert_dense_topic` over this suite's connection."""
    return assert_dense_topic(lambda sql, *params: conn.execute(sql, params).fetchone(), schema, topic)


def test_the_sql_contract(conn: Any) -> None:
    install(conn, "dict_contract")
    install(conn, "dict_contract")  # idempotent
    s = "dict_contract"
    conn.execute(f"SELECT {s}.create_topic('urls')")
    conn.execute(f"SELECT {s}.create_topic('urls')")  # exists: left as it is
    assert one(conn, f"SELECT {s}.dict_id('urls', 'a')") == 0
    assert one(conn, f"SELECT {s}.dict_id('urls', 'a')") == 0, "the same forever"
    # New strings numbered in the order they first appear; a repeat gets one ID.
    assert one(conn, f"SELECT {s}.dict_ids('urls', ARRAY['c', 'a', 'b', 'c'])") == [1, 0, 2, 1]
    assert one(conn, f"SELECT {s}.dict_ids('urls', ARRAY[]::text[])") == []
    # Read only: NULL for the unknown, nothing assigned.
    assert one(conn, f"SELECT {s}.dict_lookup('urls', ARRAY['b', 'zz', 'a'])") == [2, None, 0]
    assert one(conn, f"SELECT {s}.dict_lookup('urls', ARRAY['zz'])") == [None]
    assert one(conn, f"SELECT {s}.dict_value('urls', 1)") == "c"
    assert one(conn, f"SELECT {s}.dict_value('urls', 99)") is None
    assert one(conn, f"SELECT {s}.dict_values('urls', ARRAY[2, 99, 0]::bigint[])") == ["b", None, "a"]
    # Topics are separate number spaces.
    conn.execute(f"SELECT {s}.create_topic('tags')")
    assert one(conn, f"SELECT {s}.dict_ids('tags', ARRAY['a', 'x'])") == [0, 1]
    assert one(conn, f"SELECT {s}.dict_value('tags', 1)") == "x"
    # Case, spaces and Unicode normal forms are distinct strings, compared byte for byte.
    assert one(conn, f"SELECT {s}.dict_ids('tags', %s)", ["A", "a ", "\u00e9", "e\u0301", "a"]) == [2, 3, 4, 5, 0]
    # A rolled-back batch gives its numbers back.
    with pytest.raises(psycopg.errors.RaiseException):
        with conn.transaction():
            assert one(conn, f"SELECT {s}.dict_ids('urls', ARRAY['r1', 'r2'])") == [3, 4]
            conn.execute("DO $$ BEGIN RAISE EXCEPTION 'roll back'; END $$")
    assert one(conn, f"SELECT {s}.dict_ids('urls', ARRAY['r2'])") == [3]
    # A dropped topic answers reads, refuses new strings, and its name is never reused.
    conn.execute(f"SELECT {s}.drop_topic('urls')")
    conn.execute(f"SELECT {s}.drop_topic('urls')")  # again: still dropped
    assert one(conn, f"SELECT {s}.dict_ids('urls', ARRAY['a', 'r2'])") == [0, 3]
    assert one(conn, f"SELECT {s}.dict_value('urls', 2)") == "b"
    with pytest.raises(psycopg.Error) as dropped:
        conn.execute(f"SELECT {s}.dict_id('urls', 'new')")
    assert dropped.value.sqlstate == "SI004"
    with pytest.raises(psycopg.Error) as recreated:
        conn.execute(f"SELECT {s}.create_topic('urls')")
    assert recreated.value.sqlstate == "SI004"
    assert_dense(conn, s, "urls")
    assert_dense(conn, s, "tags")


def test_bad_input_is_refused_clearly_in_sql(conn: Any) -> None:
    install(conn, "dict_bad")
    s = "dict_bad"
    conn.execute(f"SELECT {s}.create_topic('t')")
    cases = {
        f"SELECT {s}.dict_id('nope', 'a')": ("SI003", "no topic 'nope'"),
        f"SELECT {s}.dict_lookup('nope', ARRAY['a'])": ("SI003", "no topic"),
        f"SELECT {s}.drop_topic('nope')": ("SI003", "no topic"),
        f"SELECT {s}.dict_id('t', NULL)": ("22023", "value 0 is NULL"),
        f"SELECT {s}.dict_id('t', '')": ("22023", "value 0 is empty"),
        f"SELECT {s}.dict_ids('t', ARRAY['ok', NULL])": ("22023", "value 1 is NULL"),
        f"SELECT {s}.dict_ids('t', NULL)": ("22023", "not NULL"),
        f"SELECT {s}.dict_ids('t', ARRAY[repeat('x', {MAX_VALUE_LEN + 1})])": ("22023", f"{MAX_VALUE_LEN + 1} bytes long"),
        f"SELECT {s}.dict_values('t', ARRAY[-1]::bigint[])": ("22023", "an ID is 0 or more"),
        f"SELECT {s}.dict_values('t', ARRAY[NULL]::bigint[])": ("22023", "an ID is 0 or more"),
        f"SELECT {s}.create_topic('')": ("22023", "a topic is 1 to 200 bytes"),
        f"SELECT {s}.create_topic(repeat('t', 201))": ("22023", "a topic is 1 to 200 bytes"),
        f"SELECT {s}.create_topic(NULL)": ("22023", "a topic is"),
    }
    for sql, (state, words) in cases.items():
        with pytest.raises(psycopg.Error) as refused:
            conn.execute(sql)
        assert refused.value.sqlstate == state, sql
        assert words in str(refused.value), (sql, str(refused.value))
    # The longest string is accepted (and indexed).
    longest = "é" * (MAX_VALUE_LEN // 2)
    assert one(conn, f"SELECT {s}.dict_id('t', %s)", longest) == 0
    assert_dense(conn, s, "t")


def test_bad_input_is_refused_clearly_in_python(cluster: Any, conn: Any) -> None:
    install(conn, "dict_pybad")
    conn.execute("SELECT dict_pybad.create_topic('t')")
    words = Dictionary(cluster.dsn, "t", schema="dict_pybad")
    with pytest.raises(shardid.UnknownTopicError) as unknown:
        Dictionary(cluster.dsn, "nope", schema="dict_pybad").id("a")
    assert unknown.value.topic == "nope" and unknown.value.code == "UNKNOWN_TOPIC"
    assert unknown.value.create == "Dictionary.create"
    assert str(unknown.value) == "no topic nope: create it first (Dictionary.create)"
    bad: list[tuple[Any, str, str]] = [
        (lambda: words.id(""), "value", "must be 1 to 2048 bytes"),
        (lambda: words.id("a\0b"), "value", "without NUL"),
        (lambda: words.id("x" * (MAX_VALUE_LEN + 1)), "value", "2048 bytes"),
        (lambda: words.ids(["ok", "\ud800"]), "values[1]", "lone surrogate"),
        (lambda: words.ids("abc"), "values", "not one str"),
        (lambda: words.ids(["a"] * (MAX_BATCH + 1)), "values", "at most 100000"),
        (lambda: words.lookup([""]), "values[0]", "1 to 2048"),
        (lambda: words.value(-1), "id", "negative"),
        (lambda: words.values([1, 2**63]), "ids[1]", "0..=9223372036854775807"),
        (lambda: Dictionary(cluster.dsn, ""), "topic", "1 to 200 bytes"),
        (lambda: Dictionary(cluster.dsn, "t" * 201), "topic", "1 to 200 bytes"),
        (lambda: Dictionary(cluster.dsn, "t", schema="dict; DROP TABLE x"), "", "schema"),
        (lambda: Dictionary([], "t"), "conninfo", "non-empty list"),
    ]
    for call, argument, reason in bad:
        with pytest.raises((shardid.InvalidArgumentError, ValueError)) as refused:
            call()
        assert isinstance(refused.value, ValueError)
        if argument:
            assert refused.value.argument == argument, (argument, refused.value)  # type: ignore[attr-defined]
        assert reason in str(refused.value), (reason, str(refused.value))
    # A value of the wrong type is a TypeError naming it, as everywhere in shardid.
    for call, words_ in [
        (lambda: words.ids(["ok", None]), "values[1] must be a str, not NoneType"),
        (lambda: words.id(b"bytes"), "value must be a str, not bytes"),
        (lambda: words.values([1, "2"]), "ids[1] must be an int, not str"),
    ]:
        with pytest.raises(TypeError, match=words_.replace("[", r"\[").replace("]", r"\]")):
            call()
    # Nothing was sent: the topic is still empty.
    assert assert_dense(conn, "dict_pybad", "t") == 0


def test_the_client_caches_both_ways_and_sends_each_miss_once(cluster: Any, conn: Any) -> None:
    install(conn, "dict_cache")
    conn.execute("SELECT dict_cache.create_topic('t')")
    words = Dictionary(cluster.dsn, "t", schema="dict_cache")
    assert words.ids(["b", "a", "b"]) == [0, 1, 0]
    assert words.id("c") == 2
    assert words.lookup(["a", "never"]) == [1, None]
    assert words.values([2, 0, 77]) == ["c", "b", None]
    assert len(words.cache) == 3
    # Counted per string asked for: ids() missed 3 (b twice), id("c") 1 (its miss counted by the
    # batch it asks), lookup() hit a and missed "never"; values() hit 2 and 0 (cached both
    # ways), missed 77. One statement each.
    stats = words.stats()
    assert list(stats) == ["id_hits", "id_misses", "value_hits", "value_misses", "statements", "retries"]
    assert stats == {"id_hits": 1, "id_misses": 5, "value_hits": 2, "value_misses": 1, "statements": 4, "retries": 0}
    # The same figures in the exporters while the dictionary is open; none once it is closed.
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    import shardid.prometheus

    registry = CollectorRegistry()
    registry.register(shardid.prometheus.ShardIdCollector())

    def statements_exposed(d: Dictionary) -> list[float]:
        text = generate_latest(registry).decode()
        family = {f.name: f for f in text_string_to_metric_families(text)}.get("shardid_dictionary_statements")
        mine = {"schema": "dict_cache", "topic": "t"}
        return [s.value for s in (family.samples if family else []) if s.labels == mine]

    counted = Dictionary(cluster.dsn, "t", schema="dict_cache")
    counted.ids(["a", "b"])
    assert statements_exposed(counted) == [words.stats()["statements"] + counted.stats()["statements"]]
    counted.close()
    assert statements_exposed(counted) == [words.stats()["statements"]], "a closed dictionary is no longer reported"
    # Another client's strings are found by lookup and by value.
    other = Dictionary(cluster.dsn, "t", schema="dict_cache", cache_size=0)
    assert other.ids(["a", "d"]) == [1, 3]
    assert words.lookup(["d"]) == [3] and words.value(3) == "d"
    # Cached answers never touch the database: they hold with the server down.
    cluster.stop_server()
    try:
        assert words.ids(["a", "b", "c", "d"]) == [1, 0, 2, 3]
        assert words.value(2) == "c" and words.values([0, 1]) == ["b", "a"]
        assert words.id("d") == 3
        # A miss needs the server: DATABASE_UNREACHABLE, psycopg's error as its cause.
        with pytest.raises(shardid.DatabaseUnreachableError) as down:
            words.id("not cached")
        assert isinstance(down.value.__cause__, psycopg.OperationalError) and isinstance(down.value, ConnectionError)
    finally:
        cluster.start_server()
    # Service resumes without a new client.
    assert words.id("e") == 4
    words.close()
    # Closed is closed: cached or not, every call refuses (a new client goes on).
    for call in (lambda: words.id("f"), lambda: words.id("a")):
        with pytest.raises(shardid.ClosedError):
            call()
    assert Dictionary(cluster.dsn, "t", schema="dict_cache").id("f") == 5
    after = psycopg.connect(cluster.dsn, autocommit=True)
    assert assert_dense(after, "dict_cache", "t") == 6
    after.close()


WRITER = """
import json, random, sys
from shardid.dictionary import Dictionary
dsn, schema, topic, out, seed, batches, retry = sys.argv[1:8]
rng = random.Random(int(seed))
words = Dictionary(dsn, topic, schema=schema, cache_size=int(seed) % 2 * 1000)
with open(out, "a") as f:
    for _ in range(int(batches)):
        values = ["s%d" % rng.randrange(3000) for _ in range(rng.randrange(1, 60))]
        while True:
            try:
                ids = words.ids(values)
                break
            except Exception as e:  # the server restarting: try again
                if retry != "1":
                    raise
                import time; time.sleep(0.05)
        assert len(ids) == len(values)
        f.write(json.dumps([values, ids]) + "\\n")
        f.flush()
"""


def writer(cluster: Any, schema: str, topic: str, out: Path, seed: int, batches: int = 150, retry: bool = False) -> Any:
    """A Python process that writes `batches` batches of strings to `topic` (WRITER), and what it
    was given to `out`; with `retry`, it tries a batch again while the server restarts."""
    args = [cluster.dsn, schema, topic, str(out), str(seed), str(batches), "1" if retry else "0"]
    return subprocess.Popen([sys.executable, "-c", WRITER, *args])


def read_pairs(path: Path) -> dict[str, int]:
    """The (string, ID) pairs a writer was given; asserts it was never given two IDs for one."""
    pairs: dict[str, int] = {}
    if not path.exists():
        return pairs
    for line in path.read_text().splitlines():
        try:
            values, ids = json.loads(line)
        except json.JSONDecodeError:  # the last line of a killed writer
            continue
        for value, id in zip(values, ids):
            assert pairs.setdefault(value, id) == id, f"{value} given {pairs[value]} and {id}"
    return pairs


def check_against_the_server(conn: Any, schema: str, topic: str, outs: list[Path]) -> int:
    mapping = dict(
        conn.execute(
            f"SELECT d.value, d.id FROM {schema}.shardid_strings d JOIN {schema}.shardid_topics t"
            " USING (topic_id) WHERE t.topic = %s",
            (topic,),
        ).fetchall()
    )
    for out in outs:
        for value, id in read_pairs(out).items():
            assert mapping.get(value) == id, f"{out.name}: {value} was given {id}, the server holds {mapping.get(value)}"
    return assert_dense(conn, schema, topic)


def test_eight_writers_of_the_same_new_strings_agree_without_holes(cluster: Any, conn: Any, tmp_path: Path) -> None:
    install(conn, "dict_load")
    conn.execute("SELECT dict_load.create_topic('shared')")
    outs = [tmp_path / f"w{i}" for i in range(8)]
    procs = [writer(cluster, "dict_load", "shared", out, i) for i, out in enumerate(outs)]
    for p in procs:
        assert p.wait(timeout=300) == 0
    n = check_against_the_server(conn, "dict_load", "shared", outs)
    assert n > 2_500, f"only {n} distinct strings: the writers did not overlap enough to test anything"


def test_kill_and_a_server_crash_mid_load_lose_nothing_and_make_no_hole(cluster: Any, conn: Any, tmp_path: Path) -> None:
    install(conn, "dict_crash")
    conn.execute("SELECT dict_crash.create_topic('c')")
    outs = [tmp_path / f"w{i}" for i in range(6)]
    start = lambda i: writer(cluster, "dict_crash", "c", outs[i], 100 + i, batches=400, retry=True)  # noqa: E731
    procs = {i: start(i) for i in range(5)}
    deadline = time.monotonic() + 60
    while not (outs[2].exists() and outs[2].stat().st_size > 2_000) and time.monotonic() < deadline:
        time.sleep(0.01)
    procs[2].send_signal(signal.SIGKILL)  # mid-batch, perhaps holding the topic's lock
    procs[2].wait()
    cluster.crash_and_restart()  # pg_ctl stop -m immediate under everyone
    assert any(p.poll() is None for i, p in procs.items() if i != 2), "the crash came after the load"
    procs[5] = start(5)
    for i, p in procs.items():
        if i != 2:
            assert p.wait(timeout=300) == 0, i
    after = psycopg.connect(cluster.dsn, autocommit=True)  # the fixture's died with the server
    check_against_the_server(after, "dict_crash", "c", outs)
    after.close()


def test_a_cancelled_batch_and_a_rolled_back_one_give_their_numbers_back(cluster: Any, connect: Any) -> None:
    first, second = connect(), connect()
    install(first, "dict_cancel")
    first.execute("SELECT dict_cancel.create_topic('t')")
    # One transaction holds the topic's lock with new strings, uncommitted...
    first.autocommit = False
    assert one(first, "SELECT dict_cancel.dict_ids('t', ARRAY['a', 'b'])") == [0, 1]
    # ...so another writer of new strings waits, and is cancelled.
    second.execute("SET statement_timeout = '300ms'")
    with pytest.raises(psycopg.errors.QueryCanceled):
        second.execute("SELECT dict_cancel.dict_ids('t', ARRAY['b', 'c'])")
    # Reads do not wait for it.
    assert one(second, "SELECT dict_cancel.dict_lookup('t', ARRAY['a'])") == [None]
    first.rollback()
    first.autocommit = True
    second.execute("SET statement_timeout = 0")
    assert one(second, "SELECT dict_cancel.dict_ids('t', ARRAY['c', 'b'])") == [0, 1]
    assert assert_dense(first, "dict_cancel", "t") == 2


def test_topics_created_and_dropped_while_others_write(cluster: Any, conn: Any) -> None:
    install(conn, "dict_topics")
    conn.execute("SELECT dict_topics.create_topic('busy')")
    conn.execute("SELECT dict_topics.create_topic('doomed')")
    stop = threading.Event()
    errors: list[BaseException] = []
    dropped_seen: list[BaseException] = []

    def write(topic: str) -> None:
        words = Dictionary(cluster.dsn, topic, schema="dict_topics", cache_size=0)
        i = 0
        while not stop.is_set():
            try:
                words.ids([f"{topic}-{i}", f"{topic}-{i + 1}"])
            except shardid.TopicDroppedError as e:
                dropped_seen.append(e)
                return
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)
                return
            i += 1

    threads = [threading.Thread(target=write, args=(t,)) for t in ("busy", "busy", "doomed")]
    for t in threads:
        t.start()
    admin = Dictionary(cluster.dsn, "doomed", schema="dict_topics")
    for k in range(30):
        Dictionary(cluster.dsn, f"t{k}", schema="dict_topics").create()
        if k % 3 == 0:
            Dictionary(cluster.dsn, f"t{k}", schema="dict_topics").drop()
    time.sleep(0.3)
    admin.drop()
    time.sleep(0.3)
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors
    assert dropped_seen and dropped_seen[0].topic == "doomed"  # type: ignore[attr-defined]
    # The dropped topic still answers reads, and refuses new strings with a clear error.
    assert admin.lookup(["doomed-0"]) == [0]
    assert admin.value(0) == "doomed-0"
    with pytest.raises(shardid.TopicDroppedError, match="topic doomed was dropped"):
        admin.id("brand new")
    with pytest.raises(shardid.TopicDroppedError):
        Dictionary(cluster.dsn, "t0", schema="dict_topics").create()
    for topic in ("busy", "doomed"):
        assert assert_dense(conn, "dict_topics", topic) > 0


def test_topics_spread_over_servers_by_the_documented_hash(cluster: Any, conn: Any) -> None:
    # Two databases of the cluster stand for two servers: a topic's rows are on one only.
    for db in ("dict_s0", "dict_s1"):
        conn.execute(f"DROP DATABASE IF EXISTS {db}")
        conn.execute(f"CREATE DATABASE {db}")
    dsns = [cluster.dsn.replace("dbname=postgres", f"dbname={db}") for db in ("dict_s0", "dict_s1")]
    assert dsns[0] != cluster.dsn, "the DSN names its database"
    servers = [psycopg.connect(d, autocommit=True) for d in dsns]
    for s in servers:
        install(s, "dict")
    topics = [f"topic-{i}" for i in range(20)]
    placed = {t: server_for(t, 2) for t in topics}
    assert set(placed.values()) == {0, 1}, "20 topics all on one server"
    for topic in topics:
        words = Dictionary(dsns, topic)
        assert words.server == placed[topic]
        words.create()
        assert words.ids([topic, "common"]) == [0, 1]
    for i, s in enumerate(servers):
        held = {r[0] for r in s.execute("SELECT topic FROM dict.shardid_topics").fetchall()}
        assert held == {t for t in topics if placed[t] == i}
        s.close()


def test_server_choice_matches_the_shared_vectors() -> None:
    vectors = json.loads(VECTORS.read_text())
    assert len(vectors["server_for"]) >= 20
    for case in vectors["server_for"]:
        assert server_for(case["topic"], case["servers"]) == case["server"], case


def test_the_python_cache_is_bounded(cluster: Any, conn: Any) -> None:
    install(conn, "dict_bound")
    conn.execute("SELECT dict_bound.create_topic('t')")
    words = Dictionary(cluster.dsn, "t", schema="dict_bound", cache_size=500)
    values = [f"v{i}" for i in range(5_000)]
    for start in range(0, len(values), 1_000):
        words.ids(values[start : start + 1_000])
    assert len(words.cache) <= 500
    rng = random.Random(7)
    sample = rng.sample(range(5_000), 200)
    assert words.values(sample) == [f"v{i}" for i in sample], "evicted entries come back from the server"


# Node's shardid/dictionary (pg), on the same server: tests/postgres/dictionary_node.mjs.
NODE = Path(__file__).with_name("dictionary_node.mjs")


def url(cluster: Any, db: str = "postgres") -> str:
    return f"postgresql://postgres@127.0.0.1:{cluster.port}/{db}"


def node(*args: str) -> Any:
    done = subprocess.run(["node", str(NODE), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_node_and_python_share_one_dictionary(cluster: Any, conn: Any) -> None:
    install(conn, "dict_node")
    conn.execute("SELECT dict_node.create_topic('mixed'), dict_node.create_topic('gone')")
    python = Dictionary(cluster.dsn, "mixed", schema="dict_node")
    assert python.id("from python") == 0
    assert node(url(cluster), "contract") == {
        "ids": [1, 0, 1],
        "id": 0,
        "lookup": [1, None],
        "value": "from python",
        "values": ["from node", "from python", None],
        "cached": 2,
        "iterable": [1],
    }
    # The calls of test_the_client_caches_both_ways_and_sends_each_miss_once, counted alike.
    conn.execute("SELECT dict_node.create_topic('counted')")
    assert node(url(cluster), "stats") == {
        "bigints": True,
        "stats": {"idHits": 1, "idMisses": 5, "valueHits": 2, "valueMisses": 1, "statements": 4, "retries": 0},
    }
    assert python.lookup(["from node"]) == [1]
    Dictionary(cluster.dsn, "gone", schema="dict_node").ids(["old"])
    conn.execute("SELECT dict_node.drop_topic('gone')")
    bad = node(url(cluster), "bad")
    assert bad == {
        "empty": "RangeError INVALID_ARGUMENT",
        "nul": "RangeError INVALID_ARGUMENT",
        "long": "RangeError INVALID_ARGUMENT",
        "surrogate": "RangeError INVALID_ARGUMENT",
        "notString": "TypeError INVALID_ARGUMENT",
        "oneString": "TypeError INVALID_ARGUMENT",
        "tooMany": "RangeError INVALID_ARGUMENT",
        "negative": "RangeError INVALID_ARGUMENT",
        "tooLarge": "RangeError INVALID_ARGUMENT",
        "unknown": "RangeError UNKNOWN_TOPIC",
        "topic": "RangeError INVALID_ARGUMENT",
        "schema": "RangeError INVALID_ARGUMENT",
        "noServer": "TypeError INVALID_ARGUMENT",
        "dropped": "Error TOPIC_DROPPED",
        "droppedRead": [0],
    }
    assert_dense(conn, "dict_node", "mixed")


def test_node_caches_answer_with_the_server_down(cluster: Any, conn: Any) -> None:
    install(conn, "dict_node")
    conn.execute("SELECT dict_node.create_topic('mixed')")
    Dictionary(cluster.dsn, "mixed", schema="dict_node").ids(["from python", "from node"])
    proc = subprocess.Popen(["node", str(NODE), url(cluster), "cached"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdin is not None
    assert proc.stdout.readline().strip() == '"warm"'
    cluster.stop_server()
    try:
        out, _ = proc.communicate("down\n", timeout=60)
    finally:
        cluster.start_server()
    assert proc.returncode == 0
    result = json.loads(out.strip().splitlines()[-1])
    assert result["ids"] == [0, 1] and result["values"] == ["from node", "from python"]
    # A miss needs the server: DATABASE_UNREACHABLE, pg's ECONNREFUSED as its cause.
    assert result["miss"] == "Error DATABASE_UNREACHABLE", result
    assert result["missCause"] == "ECONNREFUSED", result
    assert result["closed"] == ["Error CLOSED", "Error CLOSED"], result


def test_node_and_python_writers_together_agree_without_holes(cluster: Any, conn: Any, tmp_path: Path) -> None:
    install(conn, "dict_load_mixed")
    conn.execute("SELECT dict_load_mixed.create_topic('shared')")
    outs = [tmp_path / f"py{i}" for i in range(3)]
    python = [writer(cluster, "dict_load_mixed", "shared", out, i) for i, out in enumerate(outs)]
    nodes = [subprocess.Popen(["node", str(NODE), url(cluster), "writer", str(i), "150"], stdout=subprocess.PIPE, text=True) for i in range(3)]
    for i, p in enumerate(nodes):
        out, _ = p.communicate(timeout=300)
        assert p.returncode == 0
        (tmp_path / f"node{i}").write_text(json.dumps([[v for v, _ in json.loads(out)], [n for _, n in json.loads(out)]]) + "\n")
        outs.append(tmp_path / f"node{i}")
    for p in python:
        assert p.wait(timeout=300) == 0
    assert check_against_the_server(conn, "dict_load_mixed", "shared", outs) > 2_500


def test_node_spreads_topics_as_python_does(cluster: Any, conn: Any) -> None:
    for db in ("dict_n0", "dict_n1"):
        conn.execute(f"DROP DATABASE IF EXISTS {db}")
        conn.execute(f"CREATE DATABASE {db}")
        with psycopg.connect(cluster.dsn.replace("dbname=postgres", f"dbname={db}"), autocommit=True) as s:
            install(s, "dict")
    result = node(json.dumps([url(cluster, "dict_n0"), url(cluster, "dict_n1")]), "servers")
    assert result["ddl"] is True
    for topic, server in result["placed"].items():
        assert server == server_for(topic, 2)
    for i, db in enumerate(("dict_n0", "dict_n1")):
        with psycopg.connect(cluster.dsn.replace("dbname=postgres", f"dbname={db}"), autocommit=True) as s:
            held = {r[0] for r in s.execute("SELECT topic FROM dict.shardid_topics").fetchall()}
        assert held == {t for t, server in result["placed"].items() if server == i}
    assert set(result["placed"].values()) == {0, 1}


def rust(dsn: str, mode: str) -> Any:
    """Rust's shardid::dictionary::postgres on the same server (core/examples/dictionary.rs)."""
    return run_example("dictionary", dsn, mode)


def test_rust_shares_the_dictionary(cluster: Any, conn: Any) -> None:
    install(conn, "dict_rust")
    conn.execute("SELECT dict_rust.create_topic('mixed'), dict_rust.create_topic('shared'), dict_rust.create_topic('gone')")
    conn.execute("SELECT dict_rust.dict_ids('gone', ARRAY['old']), dict_rust.drop_topic('gone')")
    assert Dictionary(cluster.dsn, "mixed", schema="dict_rust").id("from python") == 0
    assert rust(cluster.dsn, "contract") == {
        "ids": [1, 0, 1],
        "id": 0,
        "lookup": [1, None],
        "value": "from python",
        "values": ["from rust", "from python", None],
        "cached": 2,
    }
    # The calls of test_the_client_caches_both_ways_and_sends_each_miss_once, counted alike.
    conn.execute("SELECT dict_rust.create_topic('counted')")
    assert rust(cluster.dsn, "stats") == [1, 5, 2, 1, 4, 0]
    assert rust(cluster.dsn, "bad") == {
        "codes": ["INVALID_ARGUMENT"] * 5 + ["UNKNOWN_TOPIC", "INVALID_ARGUMENT", "INVALID_ARGUMENT", "INVALID_ARGUMENT", "TOPIC_DROPPED"]
    }
    threads = rust(cluster.dsn, "threads")
    assert threads["conflicts"] == 0 and threads["disagree"] == 0
    assert threads["strings"] == threads["max"] + 1 == assert_dense(conn, "dict_rust", "shared")
    assert_dense(conn, "dict_rust", "mixed")


def test_concurrent_dict_id_of_the_same_new_strings_agree(cluster: Any, connect: Any) -> None:
    # The single-string function has a path of its own (no arrays): 8 sessions calling it on a
    # small pool of strings at once, under READ COMMITTED and REPEATABLE READ (which may refuse
    # with 40001, to retry, but never gives a second ID).
    admin = connect()
    install(admin, "dict_single")
    admin.execute("SELECT dict_single.create_topic('t')")
    given: list[tuple[str, int]] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def session(seed: int, isolation: str) -> None:
        conn = connect()
        rng = random.Random(seed)
        try:
            for _ in range(300):
                value = f"v{rng.randrange(400)}"
                while True:
                    try:
                        with conn.transaction():
                            conn.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation}")
                            id = one(conn, "SELECT dict_single.dict_id('t', %s)", value)
                        break
                    except psycopg.errors.SerializationFailure:
                        continue
                with lock:
                    given.append((value, id))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    on_threads(functools.partial(session, i, ("READ COMMITTED", "REPEATABLE READ")[i % 2]) for i in range(8))
    assert not errors, errors
    mapping: dict[str, int] = {}
    for value, id in given:
        assert mapping.setdefault(value, id) == id, f"{value} given {mapping[value]} and {id}"
    assert assert_dense(admin, "dict_single", "t") == len(mapping) > 300


def test_the_command_line_prints_the_ddl_and_its_uninstall_removes_it(conn: Any) -> None:
    from shardid.sql import dictionary_uninstall

    printed = subprocess.run(
        [sys.executable, "-m", "shardid.sql", "--dictionary", "--schema", "dict_cli"], capture_output=True, text=True, check=True
    ).stdout
    assert printed == dictionary("dict_cli")
    rust = subprocess.run([example("dictionary"), "ddl", "dict_cli"], capture_output=True, text=True, check=True).stdout
    assert rust == printed, "the Rust example prints the same DDL"
    with conn.transaction():
        conn.execute(printed.encode())
    conn.execute("SELECT dict_cli.create_topic('t'), dict_cli.dict_id('t', 'x')")
    with conn.transaction():
        conn.execute(dictionary_uninstall("dict_cli").encode())
    left = one(conn, "SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'dict_cli'")
    assert left == 0, "the uninstall drops every function the install creates"
    assert one(conn, "SELECT to_regclass('dict_cli.shardid_strings')") is None
    refused = subprocess.run(
        [sys.executable, "-m", "shardid.sql", "--dictionary", "--schema", "Bad;"], capture_output=True, text=True
    )
    assert refused.returncode == 1 and "schema" in refused.stderr
