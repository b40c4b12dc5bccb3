"""The Rust clients inside tokio (issue 56) on the session's cluster: core/tests/tokio_postgres.rs,
whose tests are ignored without a server, run here with a database of their own. The blocking
PostgreSQL clients made and used inside a runtime (they panicked there), and the async client of
dense IDs over tokio-postgres: unique across tasks and runtimes, another task running during a
fetch on a current-thread runtime, futures dropped at every await; and the blocking clients that
connect and then refuse (an unknown tag) let their connection go without a panic. About 7 s."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parents[2]
# The features tests/postgres/run.sh builds the Rust examples and this test with: one build.
FEATURES = os.environ.get("SHARDID_RUST_FEATURES", "serial,postgres,mysql,sqlite,tokio-postgres")


def test_rust_clients_inside_tokio(cluster: Any) -> None:
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS tokio_rs")
        conn.execute("CREATE DATABASE tokio_rs")
    env = {**os.environ, "SHARDID_TEST_POSTGRES_URL": cluster.dsn.replace("dbname=postgres", "dbname=tokio_rs")}
    run = subprocess.run(
        ["cargo", "test", "-q", "--locked", "-p", "shardid", "--features", FEATURES,
         "--test", "tokio_postgres", "--", "--ignored", "--test-threads=1"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert "test result: ok. 8 passed" in run.stdout, run.stdout
