"""The MySQL family's dictionary transaction interrupted (``KeyboardInterrupt``) anywhere between
its statements, the protocol's own calls included, is rolled back: the connection is not left
inside the transaction holding the topic row's lock."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import install, one

from shardid import _dictionary_generated
from shardid.sql import dictionary

_MysqlAssign = _dictionary_generated._MysqlAssign


class _Interrupting:
    """The core's transaction, interrupted right after its ``after``-th answer, as a signal
    arriving between a statement and the next interrupts the executor."""

    def __init__(self, after: int, *args: Any) -> None:
        self._inner = _MysqlAssign(*args)
        self._left = after

    def next(self) -> Any:
        return self._inner.next()

    def answer(self, rows: Any) -> None:
        self._inner.answer(rows)
        self._left -= 1
        if self._left == 0:
            raise KeyboardInterrupt

    def failed(self, code: Any = None) -> None:
        self._inner.failed(code)


# After the begin (1), the lock (2), the re-check (3), the insert (4), the advance (5).
@pytest.mark.parametrize("after", [1, 2, 3, 4, 5])
def test_an_interrupted_transaction_is_rolled_back(connect: Any, monkeypatch: Any, after: int) -> None:
    admin = connect()
    install(admin, dictionary("dict_interrupt", dialect="mysql"))
    topic = f"t{after}"
    one(admin, "SELECT dict_interrupt.create_topic(%s)", topic)
    conn = connect()
    steps = _dictionary_generated._Mysql("dict_interrupt", topic)
    assert steps.ids(conn, ["a"]) == [0]
    monkeypatch.setattr(_dictionary_generated, "_MysqlAssign", lambda *args: _Interrupting(after, *args))
    with pytest.raises(KeyboardInterrupt):
        steps.ids(conn, ["b"])
    monkeypatch.undo()
    assert one(conn, "SELECT @@in_transaction") == 0, f"left inside the transaction after step {after}"
    # Nothing numbered, and the topic's row free to the next writer at once.
    with admin.cursor() as cur:
        cur.execute("SET SESSION innodb_lock_wait_timeout = 1")
    assert steps.ids(admin, ["c", "b"]) == [1, 2]
