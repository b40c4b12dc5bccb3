#!/usr/bin/env bash
# The PostgreSQL tests: the wheel in a fresh virtualenv (as tests/python/run.sh installs it)
# and the Node addon with pg, then pytest against a throwaway cluster that the tests start (tests/postgres/cluster.py:
# initdb into a temp dir as the postgres user, 127.0.0.1 only, removed at the end).
# Ends with a "test result:" line that scripts/test.sh counts.
#
# SHARDID_PYTHON_VENV=DIR reuses (or creates) the virtualenv in DIR.
set -euo pipefail
# shellcheck source=tests/prelude.sh
. "$(dirname "$0")/../prelude.sh"
SHARDID_PYTHON_VENV=$venv tests/python/run.sh --install-only
# test_django_auto_field.py logs into the admin in Debian's Chromium with playwright-core, a dev
# dependency of the WebAssembly build's tools (as tests/python/run.sh installs it).
if [ "$(uname)" = Linux ] && [ ! -d bindings-wasm/node_modules/playwright-core ]; then
    (cd bindings-wasm && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi
# Node's shardid/postgres leases are tested here too: the addon and the pg package.
scripts/node-addon.sh

# Rust's segments, dictionary and lease clients (the `postgres` feature), run by
# test_segments.py, test_dictionary.py and test_lease_pooled.py, its serials client
# (features serial and postgres), run by test_serials.py, and the behaviour contract on every
# database (test_contract.py: PostgreSQL, MariaDB, SQLite), and the clients inside tokio
# (test_tokio.py runs core/tests/tokio_postgres.rs, feature tokio-postgres, and
# test_tokio_lease.py core/tests/tokio_lease.rs, the async lease): one build, so the
# core builds once.
# scripts/test.sh sets the features every server suite shares (with `redis`): the same build.
export SHARDID_RUST_FEATURES=${SHARDID_RUST_FEATURES:-serial,postgres,mysql,sqlite,tokio-postgres}
cargo build -q --locked -p shardid --features "$SHARDID_RUST_FEATURES" \
    --example segments --example dictionary --example lease --example serials --example contract \
    --example restore_again --test tokio_postgres --test tokio_lease
export SHARDID_SEGMENTS_EXAMPLE=$root/target/debug/examples/segments
export SHARDID_DICTIONARY_EXAMPLE=$root/target/debug/examples/dictionary
export SHARDID_LEASE_EXAMPLE=$root/target/debug/examples/lease
export SHARDID_SERIALS_EXAMPLE=$root/target/debug/examples/serials
export SHARDID_CONTRACT_EXAMPLE=$root/target/debug/examples/contract
# The Rust taker of issue 54's restore checks (tests/python/restore_checks.py).
export SHARDID_RESTORE_EXAMPLE=$root/target/debug/examples/restore_again

# Two workers (pytest-xdist): each worker starts its own session cluster (conftest.py's
# `cluster`), runs its tests one after another on it, and the failovers' and point-in-time
# recovery's own servers wait beside the other worker's tests. No test relies on another's
# leftovers. --dist worksteal: each worker starts with half the tests (conftest.py puts the long
# poles first) and an idle one takes half of what the other still has queued. With --dist load a
# worker ran out while the other still had its Django tests queued: on this machine under load,
# one worker ended at 433 s, the other at 870 s. (`--dist loadgroup`, tried before, kept nothing
# together: pytest 9.2 ignores the group xdist 3.8 writes into the node ID,
# pytest-dev/pytest-xdist#1386.)
pytest_suite "$root/tests/postgres" \
    "PostgreSQL: the emitted SQL on a real server, tests/postgres/run.sh" -n 2 --dist worksteal
