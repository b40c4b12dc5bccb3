"""Calls run on threads at once, for the tests that race clients: every suite's conftest puts
tests/python on the path, and the scripts the tests start from here have it beside them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any


def on_threads(calls: Iterable[Callable[[], Any]]) -> None:
    """Starts a thread for each of ``calls``, then waits for them all."""
    threads = [threading.Thread(target=call) for call in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
