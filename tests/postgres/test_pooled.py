"""Dense IDs and the dictionary through PgBouncer in transaction mode (its pools of the database
``pooled``), from Python, Node and Rust: no error, no number twice, IDs dense. Each statement
of a client may run on another server session there, so none may rely on a server-side
prepared statement (PgBouncer 1.18 carries none): psycopg prepares a statement on its 5th
execution unless told not to, and the Rust ``postgres`` crate names each statement it
prepares for ``query``; both now send every statement unnamed, in one round trip."""

from __future__ import annotations

import functools
import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import psycopg

from shardid.dictionary import Dictionary
from shardid.segments import DenseIds
from shardid.sql import dictionary, segments
from together import on_threads
from examples import example


def setup(cluster: Any) -> psycopg.Connection[Any]:
    conn = psycopg.connect(cluster.dsn.replace("dbname=postgres", "dbname=pooled"), autocommit=True)
    with conn.transaction():
        conn.execute(segments("seg_rust").encode())
        conn.execute(segments("seg_pooled").encode())
        conn.execute(dictionary("dict_rust").encode())
        conn.execute(dictionary("dict_pooled").encode())
    conn.execute("SELECT seg_rust.create_tag('r_threads'), seg_pooled.create_tag('p')")
    conn.execute("SELECT dict_rust.create_topic('shared'), dict_pooled.create_topic('words')")
    return conn


def test_python_dense_ids_through_a_transaction_pooler(cluster: Any, pooler: Any) -> None:
    setup(cluster)
    got: list[list[int]] = []
    errors: list[BaseException] = []

    def make(ids: DenseIds) -> None:
        try:
            got.append([ids.next_id() for _ in range(20_000)])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    # Two allocators on the tag, 3 threads each: segments of 1,000, so ~120 takes, most of them
    # well past psycopg's 5th execution of the statement.
    allocators = [DenseIds(pooler.dsn("pooled_tx"), "p", schema="seg_pooled") for _ in range(2)]
    on_threads(functools.partial(make, a) for a in allocators for _ in range(3))
    for a in allocators:
        a.close()
    assert not errors, errors[0]
    every = [i for ids in got for i in ids]
    assert len(every) == 120_000 and len(set(every)) == 120_000


def test_python_dictionary_through_a_transaction_pooler(cluster: Any, pooler: Any) -> None:
    conn = setup(cluster)
    seen: dict[str, int] = {}
    conflicts: list[tuple[str, int, int]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def write(seed: int) -> None:
        try:
            words = Dictionary(pooler.dsn("pooled_tx"), "words", schema="dict_pooled", cache_size=0)
            for b in range(60):
                values = [f"w{(seed * 7 + b * 13 + i * 31) % 900}" for i in range(20)]
                for value, id_ in zip(values, words.ids(values)):
                    with lock:
                        if seen.setdefault(value, id_) != id_:
                            conflicts.append((value, seen[value], id_))
            words.close()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    on_threads(functools.partial(write, t) for t in range(4))
    assert not errors, errors[0]
    assert not conflicts
    # One ID per string, 0..n-1 with no hole.
    assert sorted(seen.values()) == list(range(len(seen)))
    count, top = conn.execute(
        "SELECT count(*), max(id) FROM dict_pooled.shardid_strings s JOIN dict_pooled.shardid_topics t USING (topic_id) WHERE t.topic = 'words'"
    ).fetchone()  # type: ignore[misc]
    assert (count, top) == (len(seen), len(seen) - 1)


def run(command: list[str]) -> Any:
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_rust_segments_and_dictionary_through_a_transaction_pooler(cluster: Any, pooler: Any) -> None:
    setup(cluster)
    # 8 threads x 20,000 IDs on segments of 100: 1,600 takes on the unnamed statement.
    assert run([example("segments"), pooler.dsn("pooled_tx"), "threads"]) == {"total": 160_000, "unique": 160_000}
    threads = run([example("dictionary"), pooler.dsn("pooled_tx"), "threads"])
    assert threads["conflicts"] == 0 and threads["disagree"] == 0
    assert threads["strings"] == threads["max"] + 1


def test_node_dictionary_through_a_transaction_pooler(cluster: Any, pooler: Any) -> None:
    conn = setup(cluster)
    with conn.transaction():
        conn.execute(dictionary("dict_load_mixed").encode())
    conn.execute("SELECT dict_load_mixed.create_topic('shared')")
    node = Path(__file__).with_name("dictionary_node.mjs")
    writers = [subprocess.Popen(["node", str(node), pooler.url("pooled_tx"), "writer", str(seed), "40"], stdout=subprocess.PIPE, text=True) for seed in range(3)]
    seen: dict[str, int] = {}
    for w in writers:
        out, _ = w.communicate(timeout=180)
        assert w.returncode == 0
        for value, id_ in json.loads(out.strip().splitlines()[-1]):
            assert seen.setdefault(value, id_) == id_
    assert sorted(set(seen.values())) == list(range(len(seen)))
