"""Issue 54 on SQLite: a serial period, a dense tag and a topic created after a copy of the
file, and created again after the copy is put back and marked with ``shardid restored``, start
past what the lost state could have handed out from them (restore_checks.created_after_backup).
Under a second."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from restore_checks import after_given, created_after_backup


def test_a_file_copied_back_and_marked_restored(tmp_path: Path) -> None:
    db, copy = tmp_path / "app.db", tmp_path / "copy.db"
    url = f"sqlite:///{db}"

    def backup() -> None:
        with sqlite3.connect(db) as live, sqlite3.connect(copy) as to:
            live.backup(to)

    def restore() -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        copy.rename(db)

    def mark(url: str) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "shardid", "restored", url], capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr
        assert "marked restored: 2 tags, 1 topic" in done.stdout, done.stdout  # orders and the first day; words

    print(f"\na SQLite file copied back, marked: {created_after_backup(url, backup, restore, mark)}")


def test_restored_after_starts_right_past_what_the_operator_gives(tmp_path: Path) -> None:
    db, copy = tmp_path / "app.db", tmp_path / "copy.db"

    def backup() -> None:
        with sqlite3.connect(db) as live, sqlite3.connect(copy) as to:
            live.backup(to)

    def restore() -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        copy.rename(db)

    def restored(url: str, options: list[str]) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "shardid", "restored", url, *options], capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr
        assert "(--after:" in done.stdout, done.stdout

    print(f"\na SQLite file copied back, restored --after: {after_given(f'sqlite:///{db}', backup, restore, restored)}")
