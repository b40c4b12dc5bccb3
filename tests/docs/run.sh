#!/usr/bin/env bash
# The docs: the book (docs/) built by mdBook with warnings as errors and every link checked by
# mdbook-linkcheck; every fenced block of the book and of README.md run in its language
# (tests/docs/snippets.py: Python, Node, TypeScript, shell, SQL on a throwaway PostgreSQL, C;
# Rust through the core's doctests); and the API references checked for missing entries
# (tests/docs/references.py: the .pyi stubs' docstrings, the .d.ts files' TSDoc, the C
# header's comments). Ends with a "test result:" line that scripts/test.sh counts.
#
# SHARDID_PYTHON_VENV=DIR reuses (or creates) the virtualenv in DIR. Arguments select pages
# (`tests/docs/run.sh start/python.md`): then only those pages' snippets run.
set -uo pipefail
# shellcheck source=tests/prelude.sh
. "$(dirname "$0")/../prelude.sh"
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"

check_suite=docs
check_tail=60
# shellcheck source=tests/check.sh
. "$root/tests/check.sh"

# mdBook logs warnings and goes on: a warning fails here. The linkcheck backend (book.toml)
# fails the build on a broken link or anchor between pages.
book() {
    mdbook build docs -d "$work/book" 2>&1 | tee "$work/mdbook.log" || return 1
    ! grep -E '\[(WARN|ERROR)\]' "$work/mdbook.log"
}
check "the book builds with no warning and no broken link (mdbook, mdbook-linkcheck)" book
check "every anchor a page links to exists" python3 tests/docs/snippets.py --anchors "$work/book/html"
check "the README's links name files that exist" python3 tests/docs/snippets.py --readme-links

# What the snippets run on: the wheel in a virtualenv, the Node addon and its npm packages,
# the WebAssembly build, libshardid.
SHARDID_PYTHON_VENV=$venv tests/python/run.sh --install-only || exit 1
scripts/node-addon.sh || { echo "the Node addon did not build"; exit 1; }
[ -f bindings-wasm/pkg/npm/package.json ] || bindings-wasm/build.sh >"$work/wasm.log" 2>&1 \
    || { cat "$work/wasm.log"; exit 1; }
cargo build --locked -q -p shardid-c || exit 1
export SHARDID_DOCS_LIBDIR=${CARGO_TARGET_DIR:-$root/target}/debug

# Each block that runs counts as a test.
if "$venv/bin/python" tests/docs/snippets.py "$@" >"$work/snippets.log" 2>&1; then
    echo "test docs::every snippet of the book and the README runs ... ok"
else
    echo "test docs::every snippet of the book and the README runs ... FAILED"
fi
sed 's/^/    /' "$work/snippets.log" | tail -150
counts=$(sed -n 's/^docs snippets: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$work/snippets.log")
if [ -n "$counts" ]; then
    passed=$((passed + ${counts% *}))
    failed=$((failed + ${counts#* }))
else
    failed=$((failed + 1))  # the runner itself broke
fi

check "the API references are complete (.pyi docstrings, .d.ts TSDoc, shardid.h comments)" \
    "$venv/bin/python" tests/docs/references.py

finish "0 ignored (docs: tests/docs/run.sh)"
