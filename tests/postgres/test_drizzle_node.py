"""Drizzle ORM on PostgreSQL with shardid (tests/postgres/drizzle_node.mjs): the application's
IDs for Drizzle's inserts and the database's next_id() as the column default, in one table, read
back as exact bigints."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

NODE = Path(__file__).with_name("drizzle_node.mjs")


def test_drizzle_with_app_and_database_ids(cluster: Any) -> None:
    url = f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres"
    done = subprocess.run(["node", str(NODE), url], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "rows": 601,
        "distinct": 601,
        "bigints": True,
        "returnedBigints": True,
        "shards": ["app 12", "db 8191", "given 12"],
        "foundById": True,
        "aboveSafeInteger": True,
    }
