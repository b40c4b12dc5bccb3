"""What differs between the asyncio drivers and their blocking twins, which
``bindings-python/tools/async_to_sync.py`` makes from them: each asyncio name here has its
blocking counterpart beside it, under the name the script's table gives (``aspawn`` and
``spawn``, ``ASignal`` and ``Signal``). Everything else a driver does is written once."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

# The call that creates a topic, as UNKNOWN_TOPIC names it to the user of each client.
ACREATE_TOPIC = "AsyncDictionary.create"
CREATE_TOPIC = "Dictionary.create"

# Tasks started by aspawn, held until done (the loop keeps only weak references).
_tasks: set[asyncio.Task[Any]] = set()


def aspawn(run: Callable[..., Coroutine[Any, Any, None]], *args: Any, name: str) -> None:
    """Runs ``run(*args)`` as a task on the running loop."""
    task = asyncio.get_running_loop().create_task(run(*args), name=name)
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)


async def asleep(seconds: float) -> None:
    """Waits ``seconds`` without blocking the loop."""
    await asyncio.sleep(seconds)


def sleep(seconds: float) -> None:
    """Waits ``seconds`` (the thread)."""
    time.sleep(seconds)


def spawn(run: Callable[..., None], *args: Any, name: str) -> None:
    """Runs ``run(*args)`` in a daemon thread of its own."""
    threading.Thread(target=run, args=args, name=name, daemon=True).start()


class ASignal:
    """Something arrived (a segment, a failure): wakes every task that waits."""

    def __init__(self) -> None:
        self._event: asyncio.Event | None = None

    def notify(self) -> None:
        event, self._event = self._event, None
        if event is not None:
            event.set()

    async def wait(self, timeout: float) -> None:
        """Until the next ``notify``, at most ``timeout`` seconds."""
        if self._event is None:
            self._event = asyncio.Event()
        try:
            await asyncio.wait_for(self._event.wait(), timeout)
        except asyncio.TimeoutError:
            pass


class Signal:
    """:class:`ASignal` for threads."""

    def __init__(self) -> None:
        self._arrived = threading.Condition()

    def notify(self) -> None:
        with self._arrived:
            self._arrived.notify_all()

    def wait(self, timeout: float) -> None:
        with self._arrived:
            self._arrived.wait(timeout)
