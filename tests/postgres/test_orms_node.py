"""Knex and Drizzle ORM on PostgreSQL with shardid (tests/postgres/knex_node.mjs and
drizzle_node.mjs, the README's recipes): the application's IDs and the database's next_id() as
the column default in one table, read back as exact bigints."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

EXPECTED = {
    "knex_node.mjs": {
        "rows": 600,
        "distinct": 600,
        "bigints": True,
        "shards": ["app 33", "db 41"],
        "foundById": True,
    },
    "drizzle_node.mjs": {
        "rows": 601,
        "distinct": 601,
        "bigints": True,
        "returnedBigints": True,
        "shards": ["app 12", "db 8191", "given 12"],
        "foundById": True,
        "aboveSafeInteger": True,
    },
}


@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_orm_with_app_and_database_ids(cluster: Any, script: str) -> None:
    url = f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres"
    node = Path(__file__).with_name(script)
    done = subprocess.run(["node", str(node), url], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == EXPECTED[script]
