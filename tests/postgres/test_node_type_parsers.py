"""Node's clients read what pg answers by one rule, whatever its int8 parsers are set to (issue 59,
item 1): with ``int8AsBigInt(pg.types)`` (which node.md recommends) the dictionary failed with
napi's ``StringExpected`` after the string was assigned. tests/postgres/type_parsers_node.mjs runs
the dictionary (its own connection and a pg.Pool of the caller's), dense IDs, serials and a lease
under pg's default, bigint and number parsers, one process each, on the same schemas: each run
goes on where the one before left off."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from shardid.sql import dictionary, segments

NODE = Path(__file__).with_name("type_parsers_node.mjs")
SETTINGS = ["bigint", "number", "default", "number", "bigint", "default"]


def url(dsn: str) -> str:
    parts = dict(p.split("=", 1) for p in dsn.split())
    return f"postgresql://{parts['user']}@{parts['host']}:{parts['port']}/{parts['dbname']}"


def node(dsn: str, setting: str, run: int) -> Any:
    done = subprocess.run(["node", str(NODE), url(dsn), setting, str(run)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_int8_setting_of_pg_reads_alike(cluster: Any, conn: Any) -> None:
    with conn.transaction():
        conn.execute(dictionary("dict_tp").encode())
        conn.execute(segments("seg_tp").encode())
    conn.execute("SELECT dict_tp.create_topic('words'), seg_tp.create_tag('tp', 1)")
    conn.execute("SELECT dict_tp.dict_ids('words', ARRAY['shared'])")  # 'shared' is 0
    for run, setting in enumerate(SETTINGS):
        got = node(cluster.dsn, setting, run)
        new = run + 1  # each run's new string is the topic's next ID
        assert got["dictionary"] == {"ids": [f"{new}n", "0n", f"{new}n"], "lookup": ["0n", None], "values": ["shared", None]}, (setting, got)
        assert got["pool"] == {"ids": ["0n"], "lookup": [f"{new}n"]}, (setting, got)
        # A segment of 10 each run, the rest given back at close(): three more each time.
        assert got["dense"] == [f"{3 * run + k}n" for k in (1, 2, 3)], (setting, got)
        assert got["serials"] == [f"{2 * run + k:06}" for k in (1, 2)], (setting, got)  # a day change mid-test starts again from 1: none here
        assert got["lease"] == {"shard": 0, "bigint": True}, (setting, got)
        assert got["numbers"] == ["7n", "8n"], (setting, got)
        assert got["rounded"] == "Error DATABASE"  # a ShardIdError (the class is the kind's, Error), (setting, got)
