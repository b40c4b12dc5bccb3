"""Rust's example programs (core/examples) that the database suites run.

tests/postgres/run.sh and tests/mysql/run.sh build them once and name them in the environment:
`SHARDID_<NAME>_EXAMPLE` for each of PostgreSQL's, `SHARDID_MYSQL_EXAMPLES` for the folder of the
MySQL family's (`mysql_*`). A test run alone builds the one it needs with cargo, with the features
of tests/postgres/run.sh.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FEATURES = "serial,postgres,mysql,sqlite"


def example(name: str) -> str:
    """The path of core/examples' program `name`, built now when the environment names none."""
    if name.startswith("mysql_"):
        folder = os.environ.get("SHARDID_MYSQL_EXAMPLES")
        if folder:
            return str(Path(folder) / name)
    else:
        binary = os.environ.get(f"SHARDID_{name.upper()}_EXAMPLE")
        if binary:
            return binary
    subprocess.run(["cargo", "build", "-q", "-p", "shardid", "--features", FEATURES, "--example", name], cwd=ROOT, check=True)
    return str(ROOT / "target" / "debug" / "examples" / name)


def run_example(name: str, *args: str, timeout: float = 120) -> Any:
    """Runs program `name` with `args` and asserts it exits 0; the JSON of its last line."""
    done = subprocess.run([example(name), *args], capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])
