# shellcheck shell=bash
# How every tests/*/run.sh but js's starts (sourced, after its `set` line): the repository's
# root as the working directory and in `root`, a scratch directory `work` removed at exit,
# and `venv`, the virtualenv SHARDID_PYTHON_VENV names (else one in `work`, made when needed).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
venv=${SHARDID_PYTHON_VENV:-$work/venv}

# pytest_suite DIR TITLE [ARG...]: pytest over DIR (with ARGs, e.g. pytest-xdist's) from `work`
# (so `import shardid` finds the installed wheel, not the source tree), then the suite's result
# line (TITLE) from its JUnit report; returns pytest's verdict.
pytest_suite() {
    local dir=$1 title=$2
    shift 2
    cd "$work"
    local status=0
    "$venv/bin/python" -m pytest -q -p no:cacheprovider --durations=10 --junitxml="$work/junit.xml" \
        "$@" "$dir" || status=1
    "$venv/bin/python" "$root/tests/python/junit_result.py" "$work/junit.xml" "$title"
    return $status
}
