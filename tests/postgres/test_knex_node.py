"""Knex on PostgreSQL with shardid (tests/postgres/knex_node.mjs): the application's IDs and the
database's next_id() as the column default in one table, read back as exact bigints."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

NODE = Path(__file__).with_name("knex_node.mjs")


def test_knex_with_app_and_database_ids(cluster: Any) -> None:
    url = f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres"
    done = subprocess.run(["node", str(NODE), url], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "rows": 600,
        "distinct": 600,
        "bigints": True,
        "shards": ["app 33", "db 41"],
        "foundById": True,
    }
