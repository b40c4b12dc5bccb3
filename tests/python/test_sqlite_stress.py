"""Issue 44's stress test of SQLite: 8 processes of Python, Node and Rust, 4 threads each, on one
file, with tiny segments, while a random worker process is SIGKILLed every few hundred
milliseconds (mid-take as often as not) and a new one started in its place. Every worker takes
dense IDs, the dictionary's IDs of strings from one list all of them share (so the same new
strings race), and serials on a scripted clock that passes midnight halfway through, and
appends each item to its own file the moment it has it (tests/python/sqlite_stress.py,
sqlite_stress.mjs, core/examples/sqlite_stress.rs). Then: no dense ID twice, the dictionary's
IDs exactly 0..n-1 with every ID a worker was given naming the string it asked for, and no
serial twice, on both days.

The Node workers need the addon in bindings-node/ (scripts/node-addon.sh) and the Rust worker
the example's binary (SHARDID_SQLITE_STRESS_EXAMPLE, built once by scripts/test.sh's core
tests step). Outside CI a missing one is left out with a warning, its processes Python's
instead; in CI (``CI`` set) it is a failure."""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from shardid.dictionary import Dictionary
from shardid.segments import create_serial, create_tag

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
FORMAT = "S-{yyyy}{MM}{dd}-{seq:6}"
# Processes of each language at any time: 3 Python, 3 Node, 2 Rust (8 in all, 4 threads each).
MIX = {"python": 3, "node": 3, "rust": 2}
RUN_MS = 6_000  # how long the workers take; the scripted midnight comes halfway
MAX_STARTS = 80  # processes started in all, the first 8 included: bounded in count too
IN_CI = os.environ.get("CI", "").lower() not in ("", "0", "false")


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _commands() -> dict[str, list[str]]:
    """The command that starts a worker of each language, or a warning naming what is missing
    (a failure in CI)."""
    commands = {"python": [sys.executable, str(HERE / "sqlite_stress.py")]}
    missing = {}
    node = shutil.which("node")
    # The addon and better-sqlite3 both load (scripts/node-addon.sh puts them in place).
    probe = "require('better-sqlite3'); require('./segments.js')"
    loaded = node and subprocess.run([node, "-e", probe], cwd=ROOT / "bindings-node", capture_output=True, text=True, timeout=60)
    if loaded and loaded.returncode == 0:
        commands["node"] = [node, str(HERE / "sqlite_stress.mjs")]
    else:
        error = [line for line in loaded.stderr.splitlines() if "Error" in line][:2] if loaded else "no node on PATH"
        missing["node"] = f"the addon in bindings-node/ or better-sqlite3 does not load (scripts/node-addon.sh): {error}"
    example = os.environ.get("SHARDID_SQLITE_STRESS_EXAMPLE", "")
    if example and Path(example).is_file():
        commands["rust"] = [example]
    else:
        missing["rust"] = "SHARDID_SQLITE_STRESS_EXAMPLE does not name the built example (cargo build -p shardid --features sqlite,serial --example sqlite_stress)"
    for lang, reason in missing.items():
        if IN_CI:
            pytest.fail(f"{lang} workers: {reason}")
        warnings.warn(f"the SQLite stress test runs without {lang} workers: {reason}", stacklevel=2)
    return commands


@dataclass
class Worker:
    lang: str
    out: Path
    proc: subprocess.Popen[bytes]
    killed: bool = False


def test_eight_processes_of_three_languages_sigkilled_on_one_file(tmp_path: Path) -> None:
    db = tmp_path / "stress.db"
    url = f"sqlite:///{db}"
    create_tag(url, "stress")
    create_serial(url, "inv", FORMAT, zone="UTC")
    with Dictionary(url, "words") as words:
        words.create()
    conn = sqlite3.connect(db)
    with conn:  # the first take of each worker is one number, the later ones at most 5
        conn.execute("UPDATE shardid_tags SET step = 1")
    commands = _commands()
    langs = [lang if lang in commands else "python" for lang, n in MIX.items() for _ in range(n)]

    start = _now_ms()
    stop_at, midnight_at = start + RUN_MS, start + RUN_MS // 2
    workers: list[Worker] = []

    def spawn(lang: str) -> Worker:
        out = tmp_path / f"{lang}-{len(workers)}.out"
        args = [url, str(out), str(stop_at), str(midnight_at), str(start)]
        with open(tmp_path / f"{lang}-{len(workers)}.err", "wb") as err:
            proc = subprocess.Popen([*commands[lang], *args], stdout=subprocess.DEVNULL, stderr=err)
        workers.append(Worker(lang, out, proc))
        return workers[-1]

    live = [spawn(lang) for lang in langs]
    rng = random.Random(44)
    next_kill = start + 500
    try:
        while _now_ms() < stop_at - 300:
            time.sleep(0.02)
            # A worker that finished its items early (Rust's threads can) is replaced too.
            for i, w in enumerate(live):
                if w.proc.poll() is not None and len(workers) < MAX_STARTS:
                    live[i] = spawn(w.lang)
            if _now_ms() >= next_kill and len(workers) < MAX_STARTS:
                i = rng.randrange(len(live))
                victim = live[i]
                if victim.proc.poll() is None:
                    victim.proc.send_signal(signal.SIGKILL)
                    victim.killed = True
                victim.proc.wait(10)
                live[i] = spawn(victim.lang)
                next_kill = _now_ms() + rng.randrange(150, 400)
        for w in workers:
            w.proc.wait(timeout=max(5.0, (stop_at - _now_ms()) / 1000 + 15))
    finally:
        for w in workers:
            if w.proc.poll() is None:
                w.proc.kill()
                w.proc.wait()

    # Every worker not killed closed everything and exited 0.
    for w in workers:
        if not w.killed:
            err = w.out.with_suffix(".err").read_text()
            assert w.proc.returncode == 0, f"{w.lang} worker {w.out.name} exited {w.proc.returncode}: {err[-2000:]}"
    killed = [w for w in workers if w.killed]
    assert len(killed) >= 5, f"only {len(killed)} workers killed"

    dense: list[int] = []
    words: list[tuple[str, int]] = []
    serials: list[str] = []
    by_lang: Counter[str] = Counter()
    for w in workers:
        text = w.out.read_text() if w.out.exists() else ""
        # A process killed in the middle of a write leaves no partial line (one write per
        # line); a line without its newline would be one.
        assert text == "" or text.endswith("\n"), f"{w.out.name}: a partial line"
        for line in text.splitlines():
            kind, *rest = line.split(" ")
            by_lang[w.lang] += 1
            if kind == "d":
                dense.append(int(rest[0]))
            elif kind == "w":
                words.append((rest[0], int(rest[1])))
            else:
                assert kind == "s", line
                serials.append(rest[0])
    assert set(by_lang) == set(langs), by_lang
    killed_items = sum(len(w.out.read_text().splitlines()) for w in killed if w.out.exists())
    assert killed_items > 0, "the killed workers had handed out nothing"

    # Dense IDs: none twice, all below the next the file hands out.
    assert len(set(dense)) == len(dense), [i for i, c in Counter(dense).items() if c > 1][:5]
    (next_dense,) = conn.execute("SELECT next FROM shardid_tags WHERE tag = 'stress'").fetchone()
    assert 0 < min(dense) and max(dense) < next_dense

    # The dictionary: IDs exactly 0..n-1, one per string, and each worker was given the ID of
    # the string it asked for.
    table = dict(conn.execute("SELECT s.value, s.id FROM shardid_strings s JOIN shardid_topics t USING (topic_id) WHERE t.topic = 'words'"))
    assert sorted(table.values()) == list(range(len(table))), "the IDs are not exactly 0..n-1"
    (next_word,) = conn.execute("SELECT next FROM shardid_topics WHERE topic = 'words'").fetchone()
    assert next_word == len(table)
    wrong = [(word, id, table.get(word)) for word, id in words if table.get(word) != id]
    assert wrong == [], wrong[:5]
    assert len({word for word, _ in words}) > 200, "too few new strings raced"

    # Serials: none twice, on both sides of the scripted midnight, each day from 1.
    assert len(set(serials)) == len(serials), [s for s, c in Counter(serials).items() if c > 1][:5]
    days = Counter(s.split("-")[1] for s in serials)
    assert set(days) == {"20310501", "20310502"}, days
    for day in days:
        assert min(int(s.split("-")[2]) for s in serials if s.split("-")[1] == day) == 1

    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()
    print(f"{len(workers)} processes ({len(killed)} killed), {dict(by_lang)} lines; {len(dense)} dense IDs, {len(table)} strings, {len(serials)} serials")
