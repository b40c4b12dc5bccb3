"""Rust's shardid::segment::mysql, shardid::dictionary::mysql and shardid::serial::mysql (the
`mysql` crate) on the same MariaDB: the examples core/examples/mysql_{segments,dictionary,serials}.rs
do the work (built by
tests/mysql/run.sh, or here when run alone), these check it, and mix Rust and Python
processes on one tag."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from conftest import install, one, rows
from dense_checks import with_python_never_share_an_id

from shardid.dictionary import Dictionary
from shardid.sql import dictionary, segments
from examples import example, run_example


def rust(name: str, url: str, mode: str, *args: str) -> dict[str, Any]:
    return run_example(name, url, mode, *args, timeout=180)  # type: ignore[no-any-return]


def test_rust_dense_ids(server: Any, conn: Any) -> None:
    install(conn, segments("seg_rust", dialect="mysql"))
    for tag in ("r_order", "r_threads"):
        one(conn, "SELECT seg_rust.create_tag(%s)", tag)
    url = server.url_for("seg_rust")
    assert rust("mysql_segments", url, "order") == {
        "count": 300,
        "dense": True,
        "next": 301,
        "skipped": 0,
        "closed": "CLOSED",
    }
    assert rust("mysql_segments", url, "errors") == {
        "codes": ["UNKNOWN_TAG", "INVALID_ARGUMENT", "INVALID_ARGUMENT", "INVALID_ARGUMENT", "DATABASE_UNREACHABLE"]
    }
    assert rust("mysql_segments", url, "threads") == {"total": 160_000, "unique": 160_000}


def test_rust_and_python_processes_on_one_tag_never_share_an_id(server: Any, conn: Any, tmp_path: Path) -> None:
    install(conn, segments("seg_mixed", dialect="mysql"))
    one(conn, "SELECT seg_mixed.create_tag('r')")
    url = server.url_for("seg_mixed")
    outs = [tmp_path / f"ids-{i}" for i in range(8)]
    rusts = [subprocess.Popen([example("mysql_segments"), url, "many", "r", str(outs[i]), "20000"], stdout=subprocess.DEVNULL) for i in range(4)]
    with_python_never_share_an_id(url, "r", outs, rusts)
    end = one(conn, "SELECT next FROM seg_mixed.shardid_tags WHERE tag = 'r'")
    # Holes: a clean close gives its rest back only if nobody took a segment since; at most a
    # process's current and prefetched segments each.
    assert 0 <= end - 1 - 160_000 <= 8 * 2 * 500


def test_rust_shares_the_dictionary(server: Any, conn: Any) -> None:
    install(conn, dictionary("dict_rust", dialect="mysql"))
    for topic in ("mixed", "threads", "big", "gone"):
        one(conn, "SELECT dict_rust.create_topic(%s)", topic)
    one(conn, "SELECT dict_rust.drop_topic('gone')")
    Dictionary(server.url_for("dict_rust"), "mixed", schema="dict_rust").ids(["from python"])
    url = server.url_for("dict_rust")
    got = rust("mysql_dictionary", url, "contract")
    assert got["ids"] == [1, 0, 1, 2, 3], "bytes: no collation folds 'From Rust' or 'from rust ' into 'from rust'"
    assert got["lookup"] == [1, None]
    assert got["values"] == ["from rust", "from python", None]
    assert got["again"] == [1, 2]
    assert rust("mysql_dictionary", url, "bad") == {
        "codes": [
            "INVALID_ARGUMENT",
            "INVALID_ARGUMENT",
            "INVALID_ARGUMENT",
            "INVALID_ARGUMENT",
            "UNKNOWN_TOPIC",
            "INVALID_ARGUMENT",
            "INVALID_ARGUMENT",
            "INVALID_ARGUMENT",
            "TOPIC_DROPPED",
        ]
    }
    threads = rust("mysql_dictionary", url, "threads")
    assert threads == {"strings": 600, "agree": True, "dense": True}
    big = rust("mysql_dictionary", url, "big")
    assert big == {"count": 45_000, "dense": True, "same": True}
    assert one(conn, "SELECT next FROM dict_rust.shardid_topics WHERE topic = 'big'") == 45_000


def test_rust_says_a_server_that_is_not_mysql_is_not(server: Any, postgres: Any) -> None:
    url = f"mysql://postgres@127.0.0.1:{postgres.port}/x"
    assert rust("mysql_segments", url, "kind") == {"code": "NOT_MYSQL", "fast": True}
    assert rust("mysql_dictionary", url, "kind") == {"code": "NOT_MYSQL", "fast": True}


def test_rust_serials_on_mariadb(server: Any, conn: Any) -> None:
    # The segments' DDL, then the registrations' (rendered by the core: MysqlSerials).
    install(conn, segments("ser_rust", dialect="mysql"))
    ddl = subprocess.run([example("mysql_serials"), "ddl", "ser_rust"], capture_output=True, text=True, check=True)
    install(conn, ddl.stdout)
    command = [example("mysql_serials"), "run", server.url_for("ser_rust"), "ser_rust"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    # 1000 serials from 4 threads in one period, 3 after the midnight: all distinct, the
    # period's numbers dense from 1, the next period from 1 again.
    assert got["count"] == 1003 and got["unique"] == 1003 and got["max"] == 1000
    assert got["after"] == ["MS-20251126-000001", "MS-20251126-000002", "MS-20251126-000003"]
    # close() gave the rest back: a restart continues at the next number.
    assert got["next_day"] == "MS-20251126-000004"
    assert got["codes"] == [
        "no error",  # registered again alike
        "SERIAL_MISMATCH",  # the same tag in another zone
        "SERIAL_MISMATCH",  # another tag printing the same format
        "CLOSED",
        "UNKNOWN_TAG",
        "SERIAL_MISMATCH",  # connecting with another zone
        "INVALID_ARGUMENT",  # a URL the MySQL client does not take
        "DATABASE_UNREACHABLE",
    ]
    # The periods' tags are the segments' rows, as on PostgreSQL.
    tags = {bytes(row[0]).decode() for row in rows(conn, "SELECT tag FROM ser_rust.shardid_tags")}  # VARBINARY
    assert {"ms@2025-11-25", "ms@2025-11-26"} <= tags
