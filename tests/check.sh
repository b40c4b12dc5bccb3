# shellcheck shell=bash
# The cargo-like lines every tests/*/run.sh prints, sourced by each (scripts/test.sh counts the
# "test result:" line): `check NAME COMMAND...` runs one check, counts it in `passed` or
# `failed` and prints `test <suite>::NAME ... ok` (with `check_detail=1`, the command's last
# line after it) or `... FAILED` and the last `check_tail` lines of its output, indented.
# `finish WHAT` prints the result line and returns its status. Set `check_suite` and `work` (a
# temporary directory) before sourcing.
passed=0
failed=0
check_tail=${check_tail:-40}
check_detail=${check_detail:-0}

check() {
    local name=$1
    shift
    if "$@" >"$work/check.log" 2>&1; then
        passed=$((passed + 1))
        if [ "$check_detail" = 1 ]; then
            echo "test $check_suite::$name ... ok ($(tail -n 1 "$work/check.log"))"
        else
            echo "test $check_suite::$name ... ok"
        fi
    else
        failed=$((failed + 1))
        echo "test $check_suite::$name ... FAILED"
        sed 's/^/    /' "$work/check.log" | tail -"$check_tail"
    fi
}

finish() {
    local status=ok
    [ "$failed" -eq 0 ] || status=FAILED
    echo
    echo "test result: $status. $passed passed; $failed failed; $1"
    [ "$failed" -eq 0 ]
}
