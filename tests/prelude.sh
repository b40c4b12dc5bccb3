# shellcheck shell=bash
# How every tests/*/run.sh but js's starts (sourced, after its `set` line): the repository's
# root as the working directory and in `root`, a scratch directory `work` removed at exit,
# and `venv`, the virtualenv SHARDID_PYTHON_VENV names (else one in `work`, made when needed).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
venv=${SHARDID_PYTHON_VENV:-$work/venv}
