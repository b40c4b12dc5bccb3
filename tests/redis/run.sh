#!/usr/bin/env bash
# The Redis backend's tests (issue 57) on throwaway servers that each test starts and stops
# itself (Debian's redis-server on 127.0.0.1 and a free port; scripts/setup.sh installs it):
# the core's scripts and steps and the Rust client over the `redis` crate (feature `redis`),
# core/tests/redis.rs. Seconds of tests after the build: uniqueness under threads and
# processes, the errors, an empty restart, lost writes after a crash and after a promotion,
# the lease (claims, a SIGKILLed holder freed after its time to live, a SIGSTOPped one lost),
# and the module's doc examples (compiled).
# Ends with cargo's "test result:" lines, which scripts/test.sh counts.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v redis-server >/dev/null 2>&1 || {
    echo "tests/redis: redis-server not found: run scripts/setup.sh" >&2
    exit 1
}
# The features of the library the server suites share (scripts/test.sh sets them: one build for
# Redis, PostgreSQL and MySQL), else `redis` alone.
features=${SHARDID_RUST_FEATURES:-redis}
cargo test --locked -p shardid --features "$features" --test redis
cargo test --locked -p shardid --features "$features" --lib -- redis::
# The doc examples with the same features: their library is the one the integration tests above
# built. With `redis` alone (as before) every dependency whose features differ built again: 13.6 s
# of CI's core tests step (81 s on this machine under load), for the same four examples.
cargo test --locked -p shardid --features "$features" --doc -- redis book::Redis
