#!/usr/bin/env bash
# The Python benchmarks (bench/python/bench.py; `scripts/bench-python.sh public_ids` runs
# bench/python/public_ids.py): builds the wheel, installs it with the peer libraries into
# target/python-venv, and runs them in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export SHARDID_PYTHON_VENV=$PWD/target/python-venv
tests/python/run.sh --install-only
cd /tmp && "$SHARDID_PYTHON_VENV/bin/python" "$OLDPWD/bench/python/${1:-bench}.py"
