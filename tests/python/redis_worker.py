"""A worker of test_redis.py: takes dense IDs of a tag on a Redis server with the Python client.
Each line on stdin is a number of milliseconds to take for, about one ID a millisecond (the pace
the failover rule's premise asks of lost traffic), after which it prints ``done``; an error (the
server down or restarting) is counted and the next call tried 20 ms later. At the end of stdin
it closes and writes ``<unix ms> <id>`` lines to OUT.

    python redis_worker.py URL TAG OUT SIZE
"""

import sys
import time

from shardid.segments import DenseIds

url, tag, out, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
ids = DenseIds(url, tag, min_size=size, max_size=size, wait_ms=2_000)
lines: list[str] = []
errors = 0
for phase in sys.stdin:
    end = time.monotonic() + int(phase) / 1000
    while time.monotonic() < end:
        try:
            lines.append(f"{time.time_ns() // 1_000_000} {ids.next_id()}")
        except Exception:  # noqa: BLE001 - the server is down or restarting: counted, tried again
            errors += 1
            time.sleep(0.02)
        time.sleep(0.001)
    print("done", flush=True)
try:
    ids.close()
except Exception:  # noqa: BLE001 - what is not given back is a hole
    pass
with open(out, "w") as f:
    f.write("".join(line + "\n" for line in lines))
print(f"python worker: {len(lines)} IDs, {errors} errors", file=sys.stderr)
