#!/usr/bin/env bash
# The MySQL family's tests on a throwaway MariaDB that the tests start once (tests/mysql/server.py:
# mariadb-install-db into a temp dir, mariadbd on 127.0.0.1 only, removed at the end): the wheel
# in a fresh virtualenv (as tests/python/run.sh installs it) with PyMySQL, the Node addon with
# mysql2, and the Rust clients (the `mysql` feature). Some tests start a PostgreSQL cluster too
# (tests/postgres/cluster.py), as a server that is not MySQL.
# Ends with a "test result:" line that scripts/test.sh counts.
#
# SHARDID_PYTHON_VENV=DIR reuses (or creates) the virtualenv in DIR.
set -euo pipefail
# shellcheck source=tests/prelude.sh
. "$(dirname "$0")/../prelude.sh"
SHARDID_PYTHON_VENV=$venv tests/python/run.sh --install-only
# Node's shardid/segments, shardid/dictionary and shardid/mysql with mysql2.
scripts/node-addon.sh
# Rust's segments, dictionary, serials and lease clients over the mysql crate (the `mysql`
# feature; `serial` for the serials).
# With the features every server suite shares when scripts/test.sh runs it: no build of its own.
cargo build -q --locked -p shardid --features "${SHARDID_RUST_FEATURES:-serial,mysql}" --example mysql_segments --example mysql_dictionary \
    --example mysql_lease --example mysql_serials --example restore_again
export SHARDID_MYSQL_EXAMPLES=$root/target/debug/examples
# The Rust taker of issue 54's restore checks (tests/python/restore_checks.py).
export SHARDID_RESTORE_EXAMPLE=$root/target/debug/examples/restore_again

# Two workers (pytest-xdist): each worker starts its own session server (conftest.py's `server`)
# and runs its tests one after another on it; the Galera cluster's own nodes wait beside the other
# worker's tests. --dist worksteal, as tests/postgres/run.sh: each worker starts with half the
# tests (conftest.py puts the long poles first) and an idle one takes half of what the other still
# has queued. (`--dist loadgroup` kept nothing together with pytest 9.2:
# pytest-dev/pytest-xdist#1386.)
pytest_suite "$root/tests/mysql" \
    "MySQL and MariaDB: segments, serials, the dictionary and next_id() on a real server, tests/mysql/run.sh" \
    -n 2 --dist worksteal
