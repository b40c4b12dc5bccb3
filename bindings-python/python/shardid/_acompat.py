"""What differs between the asyncio drivers and their blocking twins, which
``bindings-python/tools/async_to_sync.py`` makes from them: each asyncio name here has its
blocking counterpart beside it, under the name the script's table gives (``aspawn`` and
``spawn``, ``ASignal`` and ``Signal``). Everything else a driver does is written once; where
the two differ by more than a name, the asyncio source says so with :func:`is_async` (psycopg's
way), and the script keeps only the blocking branch."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, Literal, TypeAlias


def is_async() -> Literal[True]:
    """True in an asyncio source: ``if is_async(): ... else: ...`` keeps the asyncio code in
    the source, and only the ``else`` branch (``if not is_async():``, its body) in the blocking
    module the script makes from it. Typed ``Literal[True]`` so that a type checker reads only
    the branch each module runs (the blocking one is checked in the generated module)."""
    return True


def ALock() -> asyncio.Lock:  # noqa: N802 (named as the class it makes)
    """A lock the tasks of one object take turns on."""
    return asyncio.Lock()


def Lock() -> threading.Lock:  # noqa: N802
    """:func:`ALock` for threads."""
    return threading.Lock()


# A heartbeat: the task (the thread) that renews a lease.
AHeartbeat: TypeAlias = asyncio.Task  # type: ignore[type-arg]
Heartbeat: TypeAlias = threading.Thread

# The call that creates a topic, as UNKNOWN_TOPIC names it to the user of each client.
ACREATE_TOPIC = "AsyncDictionary.create"
CREATE_TOPIC = "Dictionary.create"

# Tasks started by aspawn, held until done (the loop keeps only weak references).
_tasks: set[asyncio.Task[Any]] = set()


def aspawn(run: Callable[..., Coroutine[Any, Any, None]], *args: Any, name: str) -> AHeartbeat:
    """Runs ``run(*args)`` as a task on the running loop; the task."""
    task = asyncio.get_running_loop().create_task(run(*args), name=name)
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return task


async def ajoin(task: AHeartbeat | None, timeout: float) -> None:
    """Waits at most ``timeout`` seconds for ``task`` to end (cancelled past it), unless it is
    the task that waits."""
    if task is not None and task is not asyncio.current_task():
        try:
            await asyncio.wait_for(task, timeout)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            pass


async def ato_thread(run: Callable[..., Any], *args: Any) -> Any:
    """``run(*args)`` on a worker thread, the loop running meanwhile."""
    return await asyncio.to_thread(run, *args)


async def asleep(seconds: float) -> None:
    """Waits ``seconds`` without blocking the loop."""
    await asyncio.sleep(seconds)


def sleep(seconds: float) -> None:
    """Waits ``seconds`` (the thread)."""
    time.sleep(seconds)


def spawn(run: Callable[..., None], *args: Any, name: str) -> Heartbeat:
    """Runs ``run(*args)`` in a daemon thread of its own; the thread."""
    thread = threading.Thread(target=run, args=args, name=name, daemon=True)
    thread.start()
    return thread


def join(thread: Heartbeat | None, timeout: float) -> None:
    """Waits at most ``timeout`` seconds for ``thread`` to end, unless it is the thread that
    waits."""
    if thread is not None and thread is not threading.current_thread():
        thread.join(timeout=timeout)


def to_thread(run: Callable[..., Any], *args: Any) -> Any:
    """``run(*args)`` in the calling thread (:func:`ato_thread`'s twin: a thread may block)."""
    return run(*args)


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


class AFlag:
    """Set once, for good (a heartbeat told to stop): wakes the task waiting on it."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    async def wait(self, timeout: float) -> None:
        """Until it is set, at most ``timeout`` seconds."""
        try:
            await asyncio.wait_for(self._event.wait(), timeout)
        except asyncio.TimeoutError:
            pass


class Flag(threading.Event):
    """:class:`AFlag` for threads (its ``wait`` also says whether it was set)."""
