"""The ``shardid`` command line (also ``python -m shardid``): the core's, the same as ``npx shardid``.

::

    shardid decode 4036916263258161152         # time, shard and sequence
    shardid bounds 2026-11-24 2026-11-25       # the smallest and largest ID of a time range
    shardid layout twitter                     # IDs per second per shard, shards, run-out date
    shardid sql --schema insta5 --layout instagram --shard 5 | psql -1 -f -
    shardid status postgresql://app@db/app     # leases, tags, topics, run-out dates (--json, --check)
    shardid restored postgresql://app@db/app   # after a restore: every tag and topic skips once

``shardid --help`` lists every command and option.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from shardid._shardid import _cli_run, _cli_wants_stdin


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line on ``argv`` (default ``sys.argv[1:]``) and returns its exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["status"], ["restored"]):
        # The commands that read a database: shardid.status runs the core's statements.
        from shardid.status import main as status

        stdout, stderr, code = status(args)
        sys.stdout.write(stdout)
        sys.stderr.write(stderr)
        return code
    stdin = sys.stdin.read() if _cli_wants_stdin(args) else None
    stdout, stderr, code = _cli_run(args, stdin)
    sys.stdout.write(stdout)
    sys.stderr.write(stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
