"""The string <-> ID dictionary on a real MariaDB: the SQL contract (the clients' statements,
and create_topic, dict_id, dict_value, drop_topic for SQL users), then the Python client under
eight writers of overlapping batches with rollbacks, under REPEATABLE READ and READ COMMITTED,
kill -9 and a server crash, and bad input: unknown and dropped topics, names and strings that
could inject SQL, strings MySQL's collations would fold together."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pymysql
import pytest
from conftest import install, one, open_conn, rows

import shardid
from shardid.dictionary import Dictionary
from shardid.sql import dictionary
from dense_checks import assert_dense_topic
from examples import example


def setup(conn: Any, schema: str, *topics: str) -> None:
    install(conn, dictionary(schema, dialect="mysql"))
    for topic in topics:
        one(conn, f"SELECT {schema}.create_topic(%s)", topic)


def assert_dense(conn: Any, schema: str, topic: str) -> int:
    """`dense_checks.assert_dense_topic` over this suite's connection."""
    return assert_dense_topic(lambda sql, *params: rows(conn, sql, *params)[0], schema, topic)


def test_the_sql_contract(server: Any, conn: Any) -> None:
    setup(conn, "dict_contract")
    setup(conn, "dict_contract")  # idempotent
    server.sql(dictionary("dict_contract", dialect="mysql"))  # and by the command line client
    assert one(conn, "SELECT dict_contract.create_topic('urls')") == 1
    assert one(conn, "SELECT dict_contract.create_topic('urls')") == 0
    assert [one(conn, "SELECT dict_contract.dict_id('urls', %s)", v) for v in ("/a", "/b", "/a")] == [0, 1, 0]
    assert one(conn, "SELECT dict_contract.dict_value('urls', 1)") == b"/b"
    assert rows(conn, "SELECT dict_contract.dict_value('urls', 9)") == [(None,)]
    # The client and the functions share the numbers.
    urls = Dictionary(server.url_for("dict_contract"), "urls", schema="dict_contract")
    assert urls.ids(["/b", "/c", "/d", "/c"]) == [1, 2, 3, 2]
    assert one(conn, "SELECT dict_contract.dict_id('urls', '/e')") == 4
    assert urls.lookup(["/e", "/nope"]) == [4, None]
    assert urls.values([4, 0, 99]) == ["/e", "/a", None]
    # Dropped: readable, assigns nothing, its name never used again.
    assert one(conn, "SELECT dict_contract.drop_topic('urls')") == 1
    assert urls.ids(["/a"]) == [0]
    for call in ("SELECT dict_contract.dict_id('urls', '/new')", "SELECT dict_contract.create_topic('urls')"):
        with pytest.raises(pymysql.err.MySQLError) as dropped:
            one(conn, call)
        assert dropped.value.args[0] == 1644 and "TOPIC_DROPPED" in str(dropped.value)
    fresh = Dictionary(server.url_for("dict_contract"), "urls", schema="dict_contract", cache_size=0)
    with pytest.raises(shardid.TopicDroppedError):
        fresh.ids(["/new"])
    with pytest.raises(shardid.TopicDroppedError):
        fresh.create()
    assert fresh.ids(["/a", "/e"]) == [0, 4], "known strings still answer"
    assert_dense(conn, "dict_contract", "urls")


def test_bad_input_is_refused_clearly(server: Any, conn: Any, postgres: Any) -> None:
    setup(conn, "dict_bad", "t")
    url = server.url_for("dict_bad")
    with pytest.raises(shardid.UnknownTopicError) as unknown:
        Dictionary(url, "typo", schema="dict_bad").ids(["a"])
    assert unknown.value.topic == "typo"
    with pytest.raises(shardid.UnknownTopicError):
        Dictionary(url, "typo", schema="dict_bad").lookup(["a"])
    with pytest.raises(shardid.UnknownTopicError):
        Dictionary(url, "typo", schema="dict_bad").values([0])
    with pytest.raises(shardid.UnknownTopicError):
        Dictionary(url, "typo", schema="dict_bad").drop()
    with pytest.raises(pymysql.err.MySQLError) as unknown_sql:
        one(conn, "SELECT dict_bad.dict_id('typo', 'a')")
    assert "UNKNOWN_TOPIC" in str(unknown_sql.value)
    t = Dictionary(url, "t", schema="dict_bad")
    for bad in ("", "x" * 2049, "nul\x00", "\ud800"):
        with pytest.raises(shardid.InvalidArgumentError):
            t.ids(["fine", bad])
    with pytest.raises(shardid.InvalidArgumentError):
        Dictionary(url, "", schema="dict_bad")
    with pytest.raises(shardid.InvalidArgumentError):
        Dictionary(url, "t", schema="dict; DROP DATABASE mysql")
    with pytest.raises(shardid.InvalidArgumentError):
        dictionary("Dict", dialect="mysql")
    # Topics and strings are data, never SQL; and bytes: no collation folds two into one.
    evil = "x'); DROP TABLE dict_bad.shardid_strings; --"
    e = Dictionary(url, evil, schema="dict_bad")
    e.create()
    folded = ["a", "A", "a ", "á", "a\t", evil, "%s", "\\", "'", "😀" * 512]
    ids = e.ids(folded)
    assert ids == list(range(len(folded))), "each its own ID"
    assert Dictionary(url, evil, schema="dict_bad", cache_size=0).values(ids) == folded
    assert len(max(folded, key=lambda v: len(v.encode())).encode()) == 2048
    assert_dense(conn, "dict_bad", evil)
    # The server that is down or is not MySQL: DATABASE_UNREACHABLE (PyMySQL's error as its
    # cause), or NOT_MYSQL.
    with pytest.raises(shardid.NotMysqlError):
        Dictionary(f"mysql://postgres@127.0.0.1:{postgres.port}/dict_bad", "t", schema="dict_bad").ids(["a"])
    with pytest.raises(shardid.DatabaseUnreachableError) as down:
        Dictionary("mysql://root@127.0.0.1:1/dict_bad", "t", schema="dict_bad").ids(["a"])
    assert isinstance(down.value.__cause__, pymysql.err.OperationalError)


def test_a_rolled_back_batch_gives_its_numbers_back_and_a_waiter_sees_the_commit(server: Any, connect: Any) -> None:
    first = connect(autocommit=False)
    setup(first, "dict_rollback", "t")
    first.commit()
    first.begin()
    # A writer in the SQL functions holds the topic's lock with a new string, uncommitted...
    assert one(first, "SELECT dict_rollback.dict_id('t', 'a')") == 0
    # ...so the client's writer of new strings waits for it, and reads do not.
    urls = Dictionary(server.url_for("dict_rollback"), "t", schema="dict_rollback", cache_size=0)
    assert urls.lookup(["a"]) == [None]
    import threading

    got: list[list[int]] = []
    waiter = threading.Thread(target=lambda: got.append(urls.ids(["b", "a"])))
    waiter.start()
    time.sleep(0.3)
    assert got == [], "it waits for the topic's lock"
    first.rollback()
    waiter.join(10)
    assert got == [[0, 1]], "the rolled-back number is given again"
    # And committed meanwhile: the waiter's locking re-check finds it (under REPEATABLE READ,
    # MySQL's default, a plain re-read would miss it and insert it twice).
    first.begin()
    assert one(first, "SELECT dict_rollback.dict_id('t', 'c')") == 2
    waiter = threading.Thread(target=lambda: got.append(urls.ids(["c", "d"])))
    waiter.start()
    time.sleep(0.3)
    first.commit()
    waiter.join(10)
    assert got[1] == [2, 3]
    assert assert_dense(first, "dict_rollback", "t") == 4


WRITER = """
import json, random, sys, pymysql
from shardid.dictionary import Dictionary
url, schema, topics, out, seed, batches, retry = sys.argv[1:8]
topics = topics.split(",")
rng = random.Random(int(seed))
words = {t: Dictionary(url, t, schema=schema, cache_size=int(seed) % 2 * 1000) for t in topics}
raw = pymysql.connect(host="127.0.0.1", port=int(url.split(":")[2].split("/")[0]), user="root", autocommit=False)
with open(out, "a") as f:
    for n in range(int(batches)):
        topic = rng.choice(topics)
        values = ["s%d" % rng.randrange(3000) for _ in range(rng.randrange(1, 60))]
        if n % 5 == 0:
            # A writer in SQL that takes the topic's lock, numbers new strings and rolls back.
            try:
                with raw.cursor() as cur:
                    for v in values[:3]:
                        cur.execute(f"SELECT {schema}.dict_id(%s, %s)", (topic, v + "-rolled-back"))
                raw.rollback()
            except pymysql.err.OperationalError as e:
                # Under REPEATABLE READ, writers of two topics can deadlock on the gap locks of
                # their locking re-reads: the server rolled this one back (the client retries
                # its own transactions; a SQL caller retries as for any InnoDB deadlock).
                if e.args[0] != 1213 and retry != "1":
                    raise
            except pymysql.err.InterfaceError:
                if retry != "1":
                    raise
            if retry == "1" and not raw.open:
                try:  # the server restarting
                    raw = pymysql.connect(host="127.0.0.1", port=raw.port, user="root", autocommit=False)
                except pymysql.err.OperationalError:
                    pass
        while True:
            try:
                ids = words[topic].ids(values)
                break
            except Exception as e:  # the server restarting: try again
                if retry != "1":
                    raise
                import time; time.sleep(0.05)
        assert len(ids) == len(values)
        f.write(json.dumps([topic, values, ids]) + "\\n")
        f.flush()
"""


def read_pairs(path: Path) -> dict[tuple[str, str], int]:
    """The (topic, string) -> ID pairs a writer was given; asserts it was never given two IDs
    for one."""
    pairs: dict[tuple[str, str], int] = {}
    if not path.exists():
        return pairs
    for line in path.read_text().splitlines():
        try:
            topic, values, ids = json.loads(line)
        except json.JSONDecodeError:  # the last line of a killed writer
            continue
        for value, id in zip(values, map(int, ids)):  # Node's writer writes decimal strings
            assert pairs.setdefault((topic, value), id) == id, f"{value} given {pairs[(topic, value)]} and {id}"
    return pairs


def check_against_the_server(conn: Any, schema: str, topics: list[str], outs: list[Path]) -> int:
    mapping = {
        (t.decode(), v.decode()): id
        for t, v, id in rows(
            conn,
            f"SELECT t.topic, d.value, d.id FROM {schema}.shardid_strings d JOIN {schema}.shardid_topics t USING (topic_id)",
        )
    }
    assert not any(v.endswith("-rolled-back") for _, v in mapping), "a rolled-back string stayed"
    for out in outs:
        for key, id in read_pairs(out).items():
            assert mapping.get(key) == id, f"{out.name}: {key} was given {id}, the server holds {mapping.get(key)}"
    return sum(assert_dense(conn, schema, t) for t in topics)


@pytest.mark.parametrize("isolation", ["REPEATABLE-READ", "READ-COMMITTED"])
def test_eight_writers_of_overlapping_batches_with_rollbacks_agree_without_holes(
    server: Any, conn: Any, tmp_path: Path, isolation: str
) -> None:
    schema = "dict_load_" + isolation.split("-")[0].lower()
    topics = ["shared", "other"]
    setup(conn, schema, *topics)
    with conn.cursor() as cur:
        level = isolation.replace("-", " ")
        cur.execute(f"SET GLOBAL TRANSACTION ISOLATION LEVEL {level}")  # every new session's
    try:
        outs = [tmp_path / f"w{i}" for i in range(8)]
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WRITER, server.url_for(schema), schema, ",".join(topics), str(out), str(i), "120", "0"]
            )
            for i, out in enumerate(outs)
        ]
        for p in procs:
            assert p.wait(timeout=300) == 0
    finally:
        with conn.cursor() as cur:
            cur.execute("SET GLOBAL TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    n = check_against_the_server(conn, schema, topics, outs)
    assert n > 3_000, f"only {n} distinct strings: the writers did not overlap enough to test anything"


def test_kill_and_a_server_crash_mid_load_lose_nothing_and_make_no_hole(server: Any, conn: Any, tmp_path: Path) -> None:
    setup(conn, "dict_crash", "c")
    outs = [tmp_path / f"w{i}" for i in range(6)]
    start = lambda i: subprocess.Popen(  # noqa: E731
        [sys.executable, "-c", WRITER, server.url_for("dict_crash"), "dict_crash", "c", str(outs[i]), str(100 + i), "600", "1"]
    )
    procs = {i: start(i) for i in range(5)}
    deadline = time.monotonic() + 60
    # Every writer past its start (its output file is opened after its connections: a writer
    # still starting when the server crashes fails at its first connect, which tests nothing of
    # the dictionary's), and writer 2 well into its load.
    while not (all(o.exists() for o in outs[:5]) and outs[2].stat().st_size > 2_000) and time.monotonic() < deadline:
        time.sleep(0.01)
    procs[2].send_signal(signal.SIGKILL)  # mid-batch, perhaps holding the topic's lock
    procs[2].wait()
    running = [i for i, p in procs.items() if p.poll() is None]
    server.crash_and_restart()  # SIGKILL under everyone
    assert running, "the crash came after the load"
    procs[5] = start(5)
    for i, p in procs.items():
        if i != 2:
            assert p.wait(timeout=300) == 0, i
    after = open_conn(server)  # the fixture's died with the server
    check_against_the_server(after, "dict_crash", ["c"], outs)
    after.close()


def test_the_recheck_is_a_locking_read_that_sees_past_the_transactions_snapshot(server: Any, connect: Any) -> None:
    """Under REPEATABLE READ a transaction reads the snapshot of its first read: a writer whose
    transaction read before it took the topic's lock (a caller's own transaction, say) must
    re-check with a locking read, which reads the latest committed rows. The core's re-check
    is one; a plain SELECT in its place misses the string and inserts it twice."""
    from shardid._shardid import _MysqlDictSql

    sql = _MysqlDictSql("dict_snapshot")
    a, b = connect(autocommit=False), connect()
    setup(b, "dict_snapshot", "t")
    topic_id = one(b, "SELECT topic_id FROM dict_snapshot.shardid_topics WHERE topic = 't'")
    with a.cursor() as cur:
        cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        cur.execute(sql.find(1), ("x", "t"))
        assert cur.fetchall() == ((topic_id, None, None),), "x is new in a's snapshot"
    assert one(b, "SELECT dict_snapshot.dict_id('t', 'x')") == 0  # b adds x and commits
    with a.cursor() as cur:
        cur.execute(sql.lock(), ("t",))
        assert cur.fetchone() == (topic_id, 1, 0, 0), "the locking read of the topic sees b's commit"
        cur.execute(sql.recheck(1).replace(" FOR UPDATE", ""), (topic_id, "x"))
        assert cur.fetchall() == (), "a plain re-read still reads the old snapshot: x missing"
        cur.execute(sql.recheck(1), (topic_id, "x"))
        assert cur.fetchall() == ((b"x", 0),), "the locking re-check finds it"
    a.rollback()


def test_the_lookups_probe_the_index_for_each_value(server: Any, conn: Any) -> None:
    """With few rows in the statistics, MariaDB planned the lookups as a read of every string of
    the topic (`ref` on `topic_id`): a batch's latency grew with the topic, and the locking
    re-check locked all its strings. The core's statements name their index."""
    from shardid._shardid import _MysqlDictSql

    setup(conn, "dict_plan", "t")
    Dictionary(server.url_for("dict_plan"), "t", schema="dict_plan").ids([f"v{i}" for i in range(5)])
    sql = _MysqlDictSql("dict_plan")
    topic_id = one(conn, "SELECT topic_id FROM dict_plan.shardid_topics WHERE topic = 't'")
    for statement, params in (
        (sql.find(2), ("v1", "v3", "t")),
        (sql.recheck(2), (topic_id, "v1", "v3")),
        (sql.find_values(2), (1, 3, "t")),
    ):
        plan = {row[2]: row for row in rows(conn, "EXPLAIN " + statement.replace(" FOR UPDATE", ""), *params)}
        strings = plan["s" if "AS s" in statement else "shardid_strings"]
        assert strings[3] == "range", f"{statement}: {strings}"


NODE = Path(__file__).with_name("node_mysql.mjs")
# How many times in all a client runs the transaction that numbers new strings when the server
# rolls it back whole (shardid::sql::mysql::ASSIGN_ATTEMPTS).
ASSIGN_ATTEMPTS = 5


def test_a_transaction_rolled_back_whole_runs_again_in_every_client(server: Any, conn: Any) -> None:
    # A trigger refuses the first <n> inserts of new strings with a deadlock's error (the
    # server's transaction is then the client's to roll back; a MEMORY table's count survives
    # it): every client runs its transaction again, by the core's one rule, until it goes
    # through or has run ASSIGN_ATTEMPTS times.
    schema = "dict_rolled_back"
    setup(conn, schema, "t")
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {schema}.refusals (n INT NOT NULL) ENGINE = MEMORY")
        cur.execute(f"INSERT INTO {schema}.refusals VALUES (0)")
        cur.execute(f"""CREATE TRIGGER {schema}.refuse BEFORE INSERT ON {schema}.shardid_strings FOR EACH ROW
            BEGIN
              IF (SELECT n FROM {schema}.refusals) > 0 THEN
                UPDATE {schema}.refusals SET n = n - 1;
                SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, MESSAGE_TEXT = 'Deadlock found when trying to get lock; try restarting transaction';
              END IF;
            END""")  # fmt: skip

    def refuse(n: int) -> None:
        with conn.cursor() as cur:
            cur.execute(f"UPDATE {schema}.refusals SET n = %s", (n,))

    def left() -> int:
        return int(one(conn, f"SELECT n FROM {schema}.refusals"))

    url = server.url_for(schema)

    async def asynchronously(value: str) -> int:
        from shardid.dictionary import AsyncDictionary

        async with AsyncDictionary(url, "t", schema=schema, cache_size=0) as words:
            return await words.id(value)

    import asyncio

    clients = {
        "python": lambda value: Dictionary(url, "t", schema=schema, cache_size=0).id(value),
        "asyncio": lambda value: asyncio.run(asynchronously(value)),
        "node": lambda value: json.loads(subprocess.run(["node", str(NODE), url, "id", schema, "t", value], capture_output=True, text=True, check=True, timeout=60).stdout.strip().splitlines()[-1])["id"],
        "rust": lambda value: json.loads(subprocess.run([example("mysql_dictionary"), url, "id", schema, "t", value], capture_output=True, text=True, check=True, timeout=60).stdout.strip().splitlines()[-1])["id"],
    }  # fmt: skip
    for k, (name, client) in enumerate(clients.items()):
        refuse(ASSIGN_ATTEMPTS - 1)
        assert int(client(name)) == k, name  # Node's IDs are decimal strings
        assert left() == 0, name
    # Refused every time: ASSIGN_ATTEMPTS runs, then the server's error as it is.
    refuse(ASSIGN_ATTEMPTS + 1)
    with pytest.raises(pymysql.err.OperationalError) as refused:
        Dictionary(url, "t", schema=schema, cache_size=0).id("never")
    assert refused.value.args[0] == 1213 and left() == 1
    for command in (["node", str(NODE)], [example("mysql_dictionary")]):
        refuse(ASSIGN_ATTEMPTS + 1)
        done = subprocess.run([*command, url, "id", schema, "t", "never"], capture_output=True, text=True, timeout=60)
        assert done.returncode != 0 and "Deadlock found" in done.stderr, done.stderr
        assert left() == 1, command
    refuse(0)
    assert_dense(conn, schema, "t")
