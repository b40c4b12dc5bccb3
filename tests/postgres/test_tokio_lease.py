"""The async shard lease over tokio-postgres (issue 56) on the session's cluster:
core/tests/tokio_lease.rs, whose tests are ignored without a server, run here with a database of
their own. Two holders never share a shard; an acquire dropped at its awaits leaves no connection
and nothing claimed past its time to live; a lease whose renewals a row lock holds up past its
time to live stops with LEASE_LOST; the synchronous try_next_id rarely finds its ceiling unwritten,
and finds one when called once every 1.2 s. About 9 s of tests, after the test's own build (the
core is run.sh's build, same features)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parents[2]
# The features tests/postgres/run.sh builds the Rust examples and this test with: one build.
FEATURES = os.environ.get("SHARDID_RUST_FEATURES", "serial,postgres,mysql,sqlite,tokio-postgres")


def test_rust_async_lease(cluster: Any) -> None:
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS tokio_lease_rs")
        conn.execute("CREATE DATABASE tokio_lease_rs")
    env = {**os.environ, "SHARDID_TEST_POSTGRES_URL": cluster.dsn.replace("dbname=postgres", "dbname=tokio_lease_rs")}
    run = subprocess.run(
        ["cargo", "test", "-q", "--locked", "-p", "shardid", "--features", FEATURES,
         "--test", "tokio_lease", "--", "--ignored", "--test-threads=1"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert "test result: ok. 5 passed" in run.stdout, run.stdout
