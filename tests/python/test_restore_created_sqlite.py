"""Issue 54 on SQLite: a serial period, a dense tag and a topic created after a copy of the
file, and created again after the copy is put back and marked with ``shardid restored``, start
past what the lost state could have handed out from them (restore_checks.created_after_backup).
Under a second."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from restore_checks import after_given, created_after_backup

NODE = Path(__file__).resolve().parents[2] / "bindings-node"


def _node_runs() -> bool:
    """Whether ``npx shardid`` can run here: the addon built and better-sqlite3 installed."""
    probe = "require('./index.js'); require.resolve('better-sqlite3', { paths: [process.cwd()] })"
    try:
        done = subprocess.run(["node", "-e", probe], cwd=NODE, capture_output=True, timeout=60, check=False)
    except OSError:
        return False
    return done.returncode == 0


def _restored(cli: str, url: str, *options: str) -> str:
    """``shardid restored`` from Python's command line or Node's (``npx shardid``)."""
    if cli == "node":
        if not _node_runs():
            if os.environ.get("CI"):
                pytest.fail("the Node addon or better-sqlite3 is missing in CI")
            pytest.skip("the Node addon or better-sqlite3 is not installed in bindings-node")
        args = ["node", str(NODE / "cli.js")]
    else:
        args = [sys.executable, "-m", "shardid"]
    done = subprocess.run([*args, "restored", url, *options], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("cli", ["python", "node"])
def test_a_file_copied_back_and_marked_restored(tmp_path: Path, cli: str) -> None:
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
        out = _restored(cli, url)
        assert "marked restored: 2 tags, 1 topic" in out, out  # orders and the first day; words

    print(f"\na SQLite file copied back, marked: {created_after_backup(url, backup, restore, mark)}")


@pytest.mark.parametrize("cli", ["python", "node"])
def test_restored_after_starts_right_past_what_the_operator_gives(tmp_path: Path, cli: str) -> None:
    db, copy = tmp_path / "app.db", tmp_path / "copy.db"

    def backup() -> None:
        with sqlite3.connect(db) as live, sqlite3.connect(copy) as to:
            live.backup(to)

    def restore() -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        copy.rename(db)

    def restored(url: str, options: list[str]) -> None:
        out = _restored(cli, url, *options)
        assert "(--after:" in out, out

    print(f"\na SQLite file copied back, restored --after: {after_given(f'sqlite:///{db}', backup, restore, restored)}")


@pytest.mark.parametrize("table_in_backup", [False, True], ids=["no_table", "no_row"])
def test_a_lease_row_the_copy_lacks_starts_past_the_lost_holders_ceiling(tmp_path: Path, table_in_backup: bool) -> None:
    """Issue 54's lease row: a copy without shard 0's row (or without the lease table), a
    holder of shard 0 dating IDs 1.95 s ahead, the copy put back and marked, and a new holder
    of shard 0 at once: none of the lost holder's IDs again."""
    from shardid.sqlite import lease

    from restore_checks import lease_created_after_backup

    db, copy = tmp_path / "app.db", tmp_path / "copy.db"
    url = f"sqlite:///{db}"
    sqlite3.connect(db).close()

    def backup() -> None:
        with sqlite3.connect(db) as live, sqlite3.connect(copy) as to:
            live.backup(to)

    def restore() -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        copy.rename(db)

    def _mark_leases(url: str) -> None:
        _restored("python", url)  # as the book says: it marks the lease table (made if missing)

    said = lease_created_after_backup(
        lease, url, "shardid_leases", backup, restore, _mark_leases,
        table_in_backup=table_in_backup,
    )  # fmt: skip
    print(f"\na SQLite file copied back, a lease row it lacks: {said}")


def test_a_first_claim_on_a_file_never_restored_is_not_delayed(tmp_path: Path) -> None:
    """The lease table's fence costs a file never restored nothing: a first claim (the table
    made) and a first claim of a shard the table lacks start at the clock."""
    from shardid.sqlite import lease

    from restore_checks import first_claims_not_delayed

    said = first_claims_not_delayed(lease, f"sqlite:///{tmp_path / 'fresh.db'}", "shardid_leases")
    print(f"\na fresh file's first claims: {said}")
