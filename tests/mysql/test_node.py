"""Node's shardid/segments, shardid/dictionary and shardid/mysql (mysql2) on the same MariaDB:
tests/mysql/node_mysql.mjs does the work, these check it, and mix Node and Python processes on
one tag and one topic."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import install, one
from test_dictionary import check_against_the_server
from test_dictionary import setup as setup_dictionary
from dense_checks import with_python_never_share_an_id

from shardid import Layout
from shardid.sql import dictionary, mysql, segments

NODE = Path(__file__).with_name("node_mysql.mjs")


def node(url: str, mode: str, *args: str) -> dict[str, Any]:
    done = subprocess.run(["node", str(NODE), url, mode, *args], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def start(url: str, mode: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(["node", str(NODE), url, mode, *args], stdout=subprocess.DEVNULL, text=True)


def test_node_dense_ids(server: Any, conn: Any) -> None:
    install(conn, segments("seg_node", dialect="mysql"))
    for tag in ("n_order", "n_burst"):
        one(conn, "SELECT seg_node.create_tag(%s)", tag)
    url = server.url_for("seg_node")
    assert node(url, "seg_order") == {
        "count": 300,
        "dense": True,
        "next": "301",
        "skipped": "0",
        "closed": "CLOSED",
    }
    assert one(conn, "SELECT step FROM seg_node.shardid_tags WHERE tag = 'n_order'") == 100
    assert node(url, "seg_burst") == {
        "unique": 64,
        "fetches": 1,
        "min": "1",
        # In shardid/prometheus while open (its stats().fetches), not once closed.
        "exported": {"open": ['shardid_segment_fetches_total{schema="seg_node",tag="n_burst"} 1'], "counted": "1", "closed": []},
    }
    errors = node(url, "seg_errors")
    assert errors["unknown"] == "UNKNOWN_TAG"
    assert errors["tag"] == errors["schema"] == errors["url"] == errors["mixed"] == "INVALID_ARGUMENT"
    assert errors["down"] == "DATABASE_UNREACHABLE"


def test_node_and_python_processes_on_one_tag_never_share_an_id(server: Any, conn: Any, tmp_path: Path) -> None:
    install(conn, segments("seg_mixed", dialect="mysql"))
    one(conn, "SELECT seg_mixed.create_tag('m')")
    url = server.url_for("seg_mixed")
    outs = [tmp_path / f"ids-{i}" for i in range(8)]
    with_python_never_share_an_id(url, "m", outs, [start(url, "seg_many", "m", str(outs[i]), "20000") for i in range(4)])
    end = one(conn, "SELECT next FROM seg_mixed.shardid_tags WHERE tag = 'm'")
    # Holes: a clean close gives its rest back only if nobody took a segment since; at most a
    # process's current and prefetched segments each.
    assert 0 <= end - 1 - 160_000 <= 8 * 2 * 500


def test_node_dictionary(server: Any, conn: Any) -> None:
    install(conn, dictionary("dict_node", dialect="mysql"))
    got = node(server.url_for("dict_node"), "dict_basic")
    # In shardid/prometheus while open (its stats().statements), not once closed.
    exported = got.pop("exported")
    assert int(exported["counted"]) >= 6, exported
    assert exported["open"] == [f'shardid_dictionary_statements_total{{schema="dict_node",topic="n_words"}} {exported["counted"]}']
    assert exported["closed"] == []
    assert got["ids"] == ["0", "1", "2", "3", "4", "5", "0"], "bytes: no collation folds two strings into one"
    assert got["lookup"] == ["1", None]
    assert got["same"] is True and got["missing"] is None
    assert got["unknown"] == "UNKNOWN_TOPIC" and got["bad"] == "INVALID_ARGUMENT"
    assert got["together"] == [["6", "7"], ["6"], ["7", "8"]]
    assert got["dropped"] == "TOPIC_DROPPED" and got["still"] == ["0"]


def test_node_and_python_writers_together_agree_without_holes(server: Any, conn: Any, tmp_path: Path) -> None:
    from test_dictionary import WRITER

    setup_dictionary(conn, "dict_mixed", "shared")
    url = server.url_for("dict_mixed")
    outs = [tmp_path / f"w{i}" for i in range(8)]
    procs = [start(url, "dict_writer", "shared", str(outs[i]), str(i), "120") for i in range(4)]
    procs += [
        subprocess.Popen([sys.executable, "-c", WRITER, url, "dict_mixed", "shared", str(outs[i]), str(i), "120", "0"])
        for i in range(4, 8)
    ]
    for p in procs:
        assert p.wait(timeout=300) == 0
    n = check_against_the_server(conn, "dict_mixed", ["shared"], outs)
    assert n > 2_500


def test_node_entry_points_create_tags_and_topics_as_on_postgres(server: Any, conn: Any) -> None:
    from entry_points import ENTRY_POINTS  # tests/postgres, on the path (conftest.py)

    from test_node_serials import serials_ddl

    install(conn, segments("seg_entry", dialect="mysql"))
    install(conn, serials_ddl("seg_entry"))  # the registrations, after the segments' DDL
    install(conn, dictionary("dict_entry", dialect="mysql"))
    got = node(server.url_for("seg_entry"), "entry")
    assert got == ENTRY_POINTS
    assert one(conn, "SELECT count(*) FROM seg_entry.shardid_tags WHERE tag = 'e_tag'") == 1


def test_node_renders_the_same_ddl_and_keeps_bigints_exact(server: Any) -> None:
    got = node(server.url_for("mysql"), "ddl")
    assert got["nextId"] == mysql(Layout.INSTAGRAM, 5, "insta5")
    assert got["segments"] == segments("seg", servers=2, index=1, dialect="mysql")
    assert got["dictionary"] == dictionary("dict", dialect="mysql")
    assert got["statements"] > 3
    assert got["bad"] == "INVALID_ARGUMENT"
    bigints = node(server.url_for("mysql"), "bigints")
    assert bigints == {"plain": "9007199254740992", "exact": "9007199254740993"}, "mysql2's default rounds"


def test_node_says_a_server_that_is_not_mysql_is_not(server: Any, postgres: Any) -> None:
    got = node(f"mysql://postgres@127.0.0.1:{postgres.port}/x", "not_mysql")
    assert got == {"segments": "NOT_MYSQL", "dictionary": "NOT_MYSQL", "fast": True}


def test_knex_mysql2_recipe(server: Any, conn: Any) -> None:
    # The README's recipe (tests/mysql/knex_node.mjs): Knex's mysql2 client with exactBigints,
    # next_id() as the id's default through a trigger, the application's IDs beside it.
    conn.cursor().execute("CREATE DATABASE IF NOT EXISTS knex_db")
    script = Path(__file__).with_name("knex_node.mjs")
    done = subprocess.run(["node", str(script), server.url_for("knex_db")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "rows": 600,
        "distinct": 600,
        "aboveSafeInteger": True,
        "shards": ["app 33", "db 41"],
        "foundById": True,
    }
