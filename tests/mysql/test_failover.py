"""Failovers on the MySQL family, simulated on one MariaDB: a replica promoted after its source
died is another server (replication needs distinct server_ids) that may lack the source's last
writes. Each test takes those writes back by hand (what the replica lacks), then either keeps
the server's identity (the writes are handed out again: what a failover would do without the
jumps, so the test can fail) or changes it with SET GLOBAL server_id (the first write of each row
jumps past anything the lost writes could have handed out): segments, next_dense_id() and the
dictionary by rate (4 times what the row's highest rate hands out from its last write to now
plus 2 s of skew, plus 4 of its largest handouts: a few thousand numbers here, where the count
rule of before jumped 20,970,000), next_id() by time (the server's clock plus 2 s of skew). A
mysqldump restored into a fresh server: test_dump_restore.py. Python, Node and Rust clients alike.
The lease's jump: test_lease.py. A Galera cluster names itself as one server: test_galera.py.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import install, one, open_conn, rows

from shardid import Layout, _mysql, _segments_generated
from shardid.dictionary import Dictionary
from shardid.segments import DenseIds
from shardid.sql import dictionary, mysql, segments
from examples import run_example

NODE = Path(__file__).with_name("node_mysql.mjs")
# What the count rule of before jumped (10,485 takes of twice 1,000): the rate's jump of the
# 1,000 numbers a second at most handed out here is far below it.
COUNT_JUMP = 10_485 * 2 * 1_000


@pytest.fixture
def another_server(server: Any) -> Iterator[Any]:
    """Makes the server another one for the rows (as a promoted replica is), and back after."""

    def become(server_id: int) -> None:
        with open_conn(server) as c, c.cursor() as cur:
            cur.execute(f"SET GLOBAL server_id = {server_id}")

    yield become
    become(1)


def node(url: str, mode: str, *args: str) -> Any:
    done = subprocess.run(["node", str(NODE), url, mode, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def rust(name: str, url: str, mode: str, *args: str) -> Any:
    return run_example(name, url, mode, *args)


def handed_out_then_lost(conn: Any, url: str, schema: str, tag: str) -> list[int]:
    """A client takes segments of 100 and hands out 1,000 numbers; the last 500 numbers' takes
    are then lost (the row set back, as on a replica that lacked them)."""
    with DenseIds(url, tag, schema=schema, min_size=100, max_size=100) as ids:
        made = [ids.next_id() for _ in range(1_000)]
    with conn.cursor() as cur:
        cur.execute(f"UPDATE {schema}.shardid_tags SET next = 501 WHERE tag = %s", (tag,))
    return made


def test_segments_jump_past_the_lost_takes_on_another_server(server: Any, conn: Any, another_server: Any) -> None:
    install(conn, segments("seg_fo", dialect="mariadb"))
    tags = ("same", "py", "node", "rust", "sql")
    for tag in tags:
        one(conn, "SELECT seg_fo.create_tag(%s)", tag)
    url = server.url_for("seg_fo")
    # The same server: the lost numbers are handed out again.
    made = handed_out_then_lost(conn, url, "seg_fo", "same")
    with DenseIds(url, "same", schema="seg_fo", min_size=100, max_size=100) as again:
        assert again.next_id() in made, "without a new server identity the lost takes repeat"
    started = time.monotonic()
    handed = {tag: handed_out_then_lost(conn, url, "seg_fo", tag) for tag in tags[1:]}
    another_server(2)
    # Each client's first take on the new server jumps the tag past the lost takes.
    with DenseIds(url, "py", schema="seg_fo", min_size=100, max_size=100) as py:
        first_py = py.next_id()
    firsts = {
        "py": first_py,
        "node": int(node(url, "first", "seg_fo", "node")["first"]),
        "rust": rust("mysql_segments", url, "first", "seg_fo", "rust")["first"],
        "sql": one(conn, "SELECT seg_fo.next_dense_id('sql')"),
    }
    # Bounded by the rate: a tag handed out at most 1,100 numbers (1,000 and a segment), so
    # its rate is at most 1,100 a second; times 4 over the time since its last write plus the
    # 2 s of skew, plus 4 segments of twice 100.
    bound = 4 * 2 * 100 + 4 * 1_100 * (time.monotonic() - started + 2) + 1
    for tag, first in firsts.items():
        assert max(handed[tag]) < first <= 501 + bound < COUNT_JUMP, (tag, first, bound)
    assert rows(conn, "SELECT DISTINCT server FROM seg_fo.shardid_tags WHERE tag <> 'same'") == [(b"server 2",)]
    # Written by this server since: no more jumps.
    with DenseIds(url, "py", schema="seg_fo", min_size=100, max_size=100) as later:
        assert first_py < later.next_id() <= first_py + 1_000


def test_a_tail_given_back_never_rewinds_a_row_of_another_server(server: Any, conn: Any, another_server: Any) -> None:
    install(conn, segments("seg_back", dialect="mariadb"))
    one(conn, "SELECT seg_back.create_tag('t')")
    url = server.url_for("seg_back")
    statements = _segments_generated._Mysql("seg_back", "t")  # DenseIds' steps on MySQL
    client = _mysql.connect(url)
    first, count, _ = statements.take(client, 0, "t", 100)
    # The row still reads the end of this segment, but another server wrote it last (a replica
    # promoted meanwhile: the lost takes may have handed out more): no give-back.
    another_server(2)
    assert not statements.give_back(client, "t", first + 10, first + count)
    assert one(conn, "SELECT next FROM seg_back.shardid_tags WHERE tag = 't'") == first + count
    another_server(1)
    assert statements.give_back(client, "t", first + 10, first + count)
    client.close()


def test_segments_grow_at_most_twice_their_size_once_per_jump(server: Any, conn: Any) -> None:
    """The jump covers the lost takes only if none was larger than twice the size the row
    records: a segment may grow (to at most twice) once the tag moved on by a jump's worth since
    it last grew. A take asking more is refused; the client reads what the row allows, and
    takes that."""
    install(conn, segments("seg_grow", dialect="mysql"))
    one(conn, "SELECT seg_grow.create_tag('g')")
    url = server.url_for("seg_grow")
    statements = _segments_generated._Mysql("seg_grow", "g")  # DenseIds' steps on MySQL
    client = _mysql.connect(url)
    # A new tag may grow at once, to twice the default size: 2,000.
    assert statements.take(client, 0, "g", 5_000)[1] == 2_000
    # Grown: 4,000 is refused until the tag moved on by 10,485 * 2 * 2,000 numbers.
    assert statements.take(client, 0, "g", 4_000)[1] == 2_000
    assert statements.take(client, 0, "g", 1_000)[1] == 1_000  # smaller, always
    with conn.cursor() as cur:
        cur.execute("UPDATE seg_grow.shardid_tags SET next = next + %s WHERE tag = 'g'", (10_485 * 2 * 2_000,))
    first, count, _ = statements.take(client, 0, "g", 8_000)
    assert count == 2_000  # the row's last size was 1,000: twice the larger of it and 1,000
    assert statements.take(client, 0, "g", 2_000)[1] == 2_000
    # The segments handed out never overlap, refused takes or not.
    assert one(conn, "SELECT next FROM seg_grow.shardid_tags WHERE tag = 'g'") == first + count + 2_000
    client.close()
    # The allocator adapts to what it was given: IDs stay dense and increasing.
    with DenseIds(url, "g", schema="seg_grow", min_size=5_000, max_size=50_000) as ids:
        got = [ids.next_id() for _ in range(20_000)]
    assert got == sorted(got) and len(set(got)) == len(got)


def test_the_dictionary_jumps_past_the_lost_strings_on_another_server(server: Any, conn: Any, another_server: Any) -> None:
    install(conn, dictionary("dict_fo", dialect="mariadb"))
    topics = ("same", "py", "node", "rust", "sql")
    url = server.url_for("dict_fo")

    def lost(topic: str) -> dict[str, int]:
        words = Dictionary(url, topic, schema="dict_fo")
        words.create()
        given = dict(zip([f"w{i}" for i in range(100)], words.ids([f"w{i}" for i in range(100)])))
        words.close()
        # The replica lacks the last 10 strings.
        with conn.cursor() as cur:
            cur.execute(
                "DELETE FROM dict_fo.shardid_strings WHERE id >= 90 "
                "AND topic_id = (SELECT topic_id FROM dict_fo.shardid_topics WHERE topic = %s)",
                (topic,),
            )
            cur.execute("UPDATE dict_fo.shardid_topics SET next = 90 WHERE topic = %s", (topic,))
        return given

    given = lost("same")
    again = Dictionary(url, "same", schema="dict_fo", cache_size=0)
    assert again.id("new") == 90 == given["w90"], "without a new server identity a lost ID goes to another string"
    again.close()
    for topic in topics[1:]:
        lost(topic)
    another_server(2)
    ids = {
        "py": Dictionary(url, "py", schema="dict_fo", cache_size=0).id("new"),
        "node": int(node(url, "id", "dict_fo", "node", "new")["id"]),
        "rust": rust("mysql_dictionary", url, "id", "dict_fo", "rust", "new")["id"],
        "sql": one(conn, "SELECT dict_fo.dict_id('sql', 'new')"),
    }
    # Past the lost IDs (90..99) by at least 4 batches of 100 (the floor); bounded by the rate
    # (100 IDs in one batch), far below the 10,485 of the count rule.
    for topic, first in ids.items():
        assert 100 + 4 * 100 <= first < 90 + 10_485, (topic, first)
    # Written by this server since: the next new string follows.
    assert Dictionary(url, "py", schema="dict_fo", cache_size=0).id("newer") == ids["py"] + 1


def test_next_id_jumps_to_the_servers_clock_plus_the_skew_on_another_server(server: Any, conn: Any, another_server: Any) -> None:
    install(conn, mysql(Layout.INSTAGRAM, 9, "nid_fo", dialect="mariadb"))
    before = [one(conn, "SELECT nid_fo.next_id()") for _ in range(100)]
    another_server(2)
    started = time.monotonic()
    # The wall clock the server reads (SYSDATE, UTC_TIMESTAMP), truncated to ms as it is: not
    # shardid.now_ms(), a monotonic clock anchored to it that can read 1 ms ahead (stop 47's CI).
    called_at = time.time_ns() // 1_000_000
    first = one(conn, "SELECT nid_fo.next_id()")
    # It waited for the server's clock to pass the jump, and its ID is dated 2 s ahead of the
    # call: above anything a source whose clock ran up to 2 s ahead could have made.
    assert time.monotonic() - started >= 1.9
    assert Layout.INSTAGRAM.decode(first).timestamp_ms >= called_at + 2_000
    assert first > max(before)
    after = [one(conn, "SELECT nid_fo.next_id()") for _ in range(100)]
    assert after == sorted(after) and after[0] > first
    assert time.monotonic() - started < 5


def test_tables_of_an_older_version_gain_the_columns_and_their_rows_skip_by_count_once(server: Any, conn: Any, another_server: Any) -> None:
    """An install over tables of the version before rates (no origin, no rate): the columns are
    added, a row is taken from where it stood on the same server (its origin unknown: no skip,
    though the ALTER gave the table another creation time), and a row never written since skips
    by count on another server, once; after that, by rate."""
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE seg_old")
        cur.execute(
            "CREATE TABLE seg_old.shardid_tags (tag VARBINARY(200) NOT NULL PRIMARY KEY, next BIGINT NOT NULL, "
            "step BIGINT NOT NULL DEFAULT 0, stride BIGINT NOT NULL DEFAULT 1, "
            "updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), server VARBINARY(255) NULL, "
            "grown_at BIGINT NULL) ENGINE = InnoDB"
        )
        cur.execute("INSERT INTO seg_old.shardid_tags (tag, next, step, server) VALUES ('here', 1001, 100, 'server 1'), ('moved', 1001, 100, 'server 1')")
        cur.execute("CREATE DATABASE dict_old")
        cur.execute(
            "CREATE TABLE dict_old.shardid_topics (topic VARBINARY(200) NOT NULL PRIMARY KEY, "
            "topic_id INT NOT NULL AUTO_INCREMENT UNIQUE, next BIGINT NOT NULL DEFAULT 0, "
            "created_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), dropped_at TIMESTAMP(6) NULL DEFAULT NULL, "
            "server VARBINARY(255) NULL) ENGINE = InnoDB"
        )
        cur.execute("INSERT INTO dict_old.shardid_topics (topic, next, server) VALUES ('here', 50, 'server 1'), ('moved', 50, 'server 1')")
    time.sleep(1.1)  # the ALTER below then gives the tables another creation second
    install(conn, segments("seg_old", dialect="mariadb"))
    install(conn, dictionary("dict_old", dialect="mariadb"))
    install(conn, segments("seg_old", dialect="mariadb"))  # again: nothing more to add
    statements = _segments_generated._Mysql("seg_old", "here")  # DenseIds' steps on MySQL
    client = _mysql.connect(server.url_for("seg_old"))
    assert statements.take(client, 0, "here", 100)[0] == 1001
    assert one(conn, "SELECT dict_old.dict_id('here', 'a')") == 50
    another_server(2)
    assert statements.take(client, 0, "moved", 100)[0] == 1001 + COUNT_JUMP
    assert one(conn, "SELECT dict_old.dict_id('moved', 'a')") == 50 + 10_485
    # Written since: each records its origin and rate, and the next step back skips by rate.
    assert rows(conn, "SELECT origin IS NOT NULL, window_ms IS NOT NULL FROM seg_old.shardid_tags") == [(1, 1), (1, 1)]
    another_server(3)
    first = statements.take(client, 0, "moved", 100)[0]
    assert 1001 + COUNT_JUMP + 100 < first < 1001 + COUNT_JUMP + 100 + 1_000_000, first
    client.close()
