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


def race(call: Callable[[], Any], n: int) -> tuple[list[Any], list[BaseException]]:
    """``call`` on ``n`` threads released at once by a barrier: what the calls returned, and
    what they raised."""
    barrier = threading.Barrier(n)
    results: list[Any] = []
    errors: list[BaseException] = []

    def one() -> None:
        try:
            barrier.wait()
            results.append(call())
        except BaseException as e:  # noqa: BLE001 - the caller's to report
            errors.append(e)

    on_threads([one] * n)
    return results, errors


def on_processes(processes: Iterable[Any]) -> None:
    """Starts each of ``processes`` (``multiprocessing`` processes), waits for them all, and
    fails unless each exited with 0."""
    started = list(processes)
    for p in started:
        p.start()
    for p in started:
        p.join()
        assert p.exitcode == 0, p


def results_of(processes: list[Any], queue: Any) -> list[Any]:
    """Starts each of ``processes``, takes one result per process from ``queue`` (at most 60 s
    each), waits for them (30 s each) and fails unless each exited with 0: the results."""
    for p in processes:
        p.start()
    results = [queue.get(timeout=60) for _ in processes]
    for p in processes:
        p.join(30)
        assert p.exitcode == 0, p
    return results
