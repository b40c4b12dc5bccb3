"""SQLite's dictionary writer interrupted (``KeyboardInterrupt``) anywhere between its
statements leaves the connection out of the transaction, and the write lock free: the core's
``SqliteAssign`` rolls back what may have begun (``interrupted()``), the executor only runs it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shardid import _sqlite

_SqliteAssign = _sqlite._SqliteAssign


class _Interrupting:
    """The core's writer, interrupted after its ``after``-th answer, as a signal arriving
    between a statement and the next would interrupt the executor."""

    def __init__(self, after: int, *args: Any) -> None:
        self._inner = _SqliteAssign(*args)
        self._left = after

    def next(self) -> Any:
        return self._inner.next()

    def answer(self, rows: Any) -> None:
        self._inner.answer(rows)
        self._left -= 1
        if self._left == 0:
            raise KeyboardInterrupt

    def failed(self) -> None:
        self._inner.failed()

    def interrupted(self) -> None:
        self._inner.interrupted()


# After BEGIN IMMEDIATE (1), the topic's row (2), the re-check (3), the insert (4), the advance (5).
@pytest.mark.parametrize("after", [1, 2, 3, 4, 5])
def test_an_interrupted_writer_leaves_no_transaction_and_no_number_taken(tmp_path: Path, monkeypatch: Any, after: int) -> None:
    url = f"sqlite:///{tmp_path / 'd.db'}"
    steps = _sqlite.Dictionary("main", "t")
    conn = _sqlite.connect(url, steps.ddl)
    other = _sqlite.connect(url, steps.ddl, busy_timeout_ms=100)
    try:
        steps.create(conn)
        assert steps.ids(conn, ["a"]) == [0]
        monkeypatch.setattr(_sqlite, "_SqliteAssign", lambda *args: _Interrupting(after, *args))
        with pytest.raises(KeyboardInterrupt):
            steps.ids(conn, ["b"])
        assert not conn.in_transaction, f"left inside the transaction after step {after}"
        monkeypatch.undo()
        # The write lock is free (100 ms busy timeout) and nothing was numbered.
        assert steps.ids(other, ["c", "b"]) == [1, 2]
        assert steps.ids(conn, ["b"]) == [2]
    finally:
        conn.close()
        other.close()
