"""One Python worker process of the SQLite stress test (test_sqlite_stress.py), beside Node and
Rust workers on the same file: ``python sqlite_stress.py URL OUT STOP_AT_MS MIDNIGHT_AT_MS
START_MS``. Four threads share one ``DenseIds``, one ``Serials`` and one ``Dictionary`` (tiny
segments) and append each item to OUT the moment they have it (one ``write`` per line, so a
SIGKILLed process's last items count): ``d ID``, ``w STRING ID``, ``s SERIAL``. Serials are
taken on a scripted clock that passes midnight (UTC) at MIDNIGHT_AT_MS; the strings are a
window over one list every worker shares (``w{k}``, k from the time since START_MS), so the
same new strings race. Exits 0 at STOP_AT_MS, after closing everything."""

from __future__ import annotations

import os
import random
import sys
import time

from shardid.dictionary import Dictionary
from shardid.segments import DenseIds, Serials
from together import on_threads

MIDNIGHT_MS = 1_935_446_400_000  # 2031-05-02T00:00:00Z, as every worker of the test has it
MAX_ITEMS = 400  # per thread: bounded in count as well as in time
FORMAT = "S-{yyyy}{MM}{dd}-{seq:6}"


def main() -> None:
    url, out = sys.argv[1], sys.argv[2]
    stop_at, midnight_at, start = (int(a) for a in sys.argv[3:6])
    ids = DenseIds(url, "stress", min_size=1, max_size=5, target_ms=1)
    serials = Serials(url, "inv", FORMAT, zone="UTC", min_size=1, max_size=3, target_ms=1)
    words = Dictionary(url, "words", cache_size=64)
    fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    errors: list[BaseException] = []

    def say(line: str) -> None:
        os.write(fd, (line + "\n").encode())  # O_APPEND: one write, one whole line

    def work() -> None:
        try:
            for _ in range(MAX_ITEMS):
                now = time.time_ns() // 1_000_000
                if now >= stop_at:
                    break
                say(f"d {ids.next_id()}")
                word = f"w{(now - start) // 5 + random.randrange(20)}"
                say(f"w {word} {words.id(word)}")
                say(f"s {serials.next_serial_at(MIDNIGHT_MS + now - midnight_at)}")
        except BaseException as e:  # noqa: BLE001 - reported by the exit status
            errors.append(e)

    on_threads([work] * 4)
    ids.close()
    serials.close()
    words.close()
    if errors:
        raise errors[0]


if __name__ == "__main__":
    main()
