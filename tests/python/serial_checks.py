"""What the serial-number suites of every database check alike (tests/postgres, tests/mysql:
their conftests put tests/python on the path)."""

from __future__ import annotations

import json
import subprocess
import sys

# A parent takes serials, forks; the child takes its own while the parent goes on.
FORKED = """
import os, sys, json
from shardid.segments import Serials
s = Serials(sys.argv[1], "f", "F-{seq:6}", zone="UTC", schema="ser_fork", min_size=100, max_size=100)
parent = [s.next_serial() for _ in range(5)]
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    child = [s.next_serial() for _ in range(5)]  # the parent's segment and connection are the parent's
    os.write(w, json.dumps(child).encode())
    os._exit(0)
os.close(w)
child = json.loads(os.read(r, 65536))
os.waitpid(pid, 0)
parent += [s.next_serial() for _ in range(5)]
s.close()
print(json.dumps({"parent": parent, "child": child}))
"""


def forked_child_takes_its_own(url: str) -> None:
    """Serials of tag `f` (`F-{seq:6}`, zone UTC, schema `ser_fork`, registered) on the database
    `url` names, taken by a parent before and after a fork and by its child: never the same,
    and the parent's first five are 1 to 5."""
    done = subprocess.run([sys.executable, "-c", FORKED, url], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert len(got["child"]) == 5 and len(got["parent"]) == 10
    assert not set(got["child"]) & set(got["parent"]), got
    assert got["parent"][:5] == [f"F-{n:06}" for n in range(1, 6)]
