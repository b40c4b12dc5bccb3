"""Node's pg with shardid's int8AsBigInt and the JSON helpers, and the DDL printed from Node, on
the tests' server (tests/postgres/json_node.mjs): int8 IDs arrive as exact bigints and survive
JSON; the DDL is Python's and makes IDs in the database."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import shardid
from shardid.sql import postgres

NODE = Path(__file__).with_name("json_node.mjs")


def test_pg_returns_ids_as_exact_bigints_and_they_survive_json(cluster: Any) -> None:
    url = f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres"
    done = subprocess.run(["node", str(NODE), url], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    # The DDL Node printed is Python's, byte for byte, and it worked on the server.
    assert out.pop("ddl") == postgres(shardid.Layout.TWITTER, shard=77, schema="from_node")
    assert out == {
        "without": "string",  # pg's default: a string (parseInt of it would round)
        "types": ["bigint", "bigint", "bigint"],
        "exact": True,
        "json": True,
        "body": True,
        "madeShards": [77, 77, 77],
        "madeDistinct": 3,
    }
