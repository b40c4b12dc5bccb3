#!/usr/bin/env bash
# The PostgreSQL benchmark (bench/postgres/bench.py): shardid's emitted next_id() against
# Instagram's published function and plain nextval(), on a throwaway server it starts and
# stops. Arguments go to bench.py (--rounds, --ids, --seconds).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export SHARDID_PYTHON_VENV=$PWD/target/python-venv
tests/python/run.sh --install-only
cd /tmp && "$SHARDID_PYTHON_VENV/bin/python" "$OLDPWD/bench/postgres/bench.py" "$@"
