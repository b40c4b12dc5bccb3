#!/usr/bin/env bash
# The Python binding's tests, against the built wheel installed into a fresh virtualenv (not
# the source tree): builds the wheel with maturin, installs it, runs pytest from outside the
# repository, and checks the hand-written stubs with mypy.stubtest.
# Ends with a "test result:" line in cargo's format so scripts/test.sh counts these too.
#
# SHARDID_PYTHON_VENV=DIR keeps the virtualenv in DIR (created if missing) instead of a
# temporary one; the demo and the benchmarks use that. SHARDID_PYTHON_WHEEL=FILE installs that
# wheel instead of building one (tests/packaging/run.sh: a release wheel, with no Rust on PATH).
set -euo pipefail
# shellcheck source=tests/prelude.sh
. "$(dirname "$0")/../prelude.sh"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# The pinned requirements with uv, from its cache alone (scripts/setup.sh installs uv and fills
# its cache with them): 2.5 s where pip took 25 s into a fresh virtualenv, 0.1 s where pip took
# 6 to 14 s to find them installed (each later suite). --offline: asked online, uv fetched every
# wheel again (this machine's mirror answers its revalidations as modified: 202 s). pip as before
# where uv or one of the requirements is missing.
python3 -m uv pip install --quiet --offline --python "$venv/bin/python" -r tests/python/requirements.txt 2>/dev/null \
    || "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt
if [ -n "${SHARDID_PYTHON_WHEEL:-}" ]; then
    wheel=$SHARDID_PYTHON_WHEEL
else
    "$venv/bin/maturin" build --quiet --release --locked -m bindings-python/Cargo.toml -o "$work/dist" >/dev/null
    wheel=$(echo "$work"/dist/shardid-*.whl)
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
[ "${1:-}" = "--install-only" ] && exit 0

# test_sqlite_stress.py runs Node and Rust workers beside Python's on one SQLite file: the Node
# addon in bindings-node/ (in CI the release addon, SHARDID_NODE_ADDON, put in place without a
# build; the JS step's scripts/node-addon.sh then finds it there), and the Rust example
# (SHARDID_SQLITE_STRESS_EXAMPLE, and SHARDID_RESTORE_EXAMPLE for the restore check's Rust part:
# scripts/test.sh builds them in the core tests step; built here
# only when this script builds the wheel from source too, Rust being on PATH).
if [ -n "${SHARDID_NODE_ADDON:-}" ] || [ -n "${CI:-}" ]; then
    scripts/node-addon.sh
fi
if [ -z "${SHARDID_SQLITE_STRESS_EXAMPLE:-}" ] && [ -z "${SHARDID_PYTHON_WHEEL:-}" ]; then
    cargo build --locked -q -p shardid --features sqlite,serial --example sqlite_stress --example restore_again
    export SHARDID_SQLITE_STRESS_EXAMPLE=${CARGO_TARGET_DIR:-$root/target}/debug/examples/sqlite_stress
    export SHARDID_RESTORE_EXAMPLE=${CARGO_TARGET_DIR:-$root/target}/debug/examples/restore_again
fi

# The Django admin test drives Debian's Chromium with playwright-core, a dev dependency of the
# WebAssembly build's tools (as tests/browser does).
if [ "$(uname)" = Linux ] && [ ! -d bindings-wasm/node_modules/playwright-core ]; then
    (cd bindings-wasm && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi

cd "$work"   # so `import shardid` can only find the installed wheel
# The stubs are checked while pytest runs (mypy's 20 s or so of one core, beside tests that
# mostly wait on their processes and files); its output is shown after pytest's.
"$venv/bin/python" -m mypy.stubtest shardid --mypy-config-file "$root/tests/python/mypy.ini" \
    --allowlist "$root/tests/python/stubtest-allowlist.txt" >"$work/stubtest.log" 2>&1 &
stubtest=$!
status=0
"$venv/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$work/junit.xml" \
    "$root/tests/python" || status=1
echo "==> mypy.stubtest shardid"
stubtest_ok=1
wait "$stubtest" || { stubtest_ok=0; status=1; }
cat "$work/stubtest.log"

"$venv/bin/python" "$root/tests/python/junit_result.py" "$work/junit.xml" \
    "Python: pytest + stubtest, tests/python/run.sh" "$stubtest_ok" "$((1 - stubtest_ok))"
exit $status
