"""Worker threads that never keep the hub alive: the spawn history's spool, writer and page
readers.

``concurrent.futures.ThreadPoolExecutor`` joins its threads when the interpreter exits,
whatever they are doing: a write or a read stuck on a stalled database (a SIGSTOPped
PostgreSQL, a network black hole) held a hub that had been told to stop for as long as the
stall lasted. These threads are daemon threads: the interpreter exits without them, and
whoever stops the history decides how long to wait (``shutdown(timeout)``). What a
stopped writer had not stored is still in the spool, so nothing durable is lost.

``DaemonThreads(name, workers)``: ``submit(fn, *args)`` gives a ``Future`` (as an
executor's); tasks run in the order submitted, on ``workers`` threads made at the first
``submit``; ``shutdown(timeout, cancel_futures)`` stops taking tasks and waits for the
threads at most ``timeout`` seconds.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["DaemonThreads"]

T = TypeVar("T")

_Task = tuple["Future[Any]", Callable[..., Any], tuple[Any, ...]]


class DaemonThreads:
    """A few daemon worker threads fed from one queue (see the module's docstring)."""

    def __init__(self, name: str, workers: int = 1) -> None:
        self._name = name
        self._workers = workers
        self._tasks: queue.SimpleQueue[_Task | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Run ``fn(*args)`` on a thread; its future. ``RuntimeError`` once shut down."""
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError(f"{self._name}: cannot take tasks after shutdown")
            if not self._threads:
                for number in range(self._workers):
                    thread = threading.Thread(
                        target=self._run, name=f"{self._name}_{number}", daemon=True
                    )
                    thread.start()
                    self._threads.append(thread)
            self._tasks.put((future, fn, args))
        return future

    def shutdown(self, timeout: float | None = None, cancel_futures: bool = False) -> bool:
        """Take no more tasks; with ``cancel_futures``, drop those not begun. Wait at most
        ``timeout`` seconds (None: until done) for the threads to finish what they hold;
        whether they did (a thread stuck on a database is left behind, and dies with the
        process)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                if cancel_futures:
                    self._cancel_waiting()
                for _ in self._threads:
                    self._tasks.put(None)
            threads = list(self._threads)
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in threads:
            if thread is threading.current_thread():
                continue
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in threads if t is not threading.current_thread())

    def _cancel_waiting(self) -> None:
        while True:
            try:
                task = self._tasks.get_nowait()
            except queue.Empty:
                return
            if task is not None:
                task[0].cancel()

    def _run(self) -> None:
        while True:
            task = self._tasks.get()
            if task is None:
                return
            future, fn, args = task
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args)
            except BaseException as exc:  # noqa: BLE001 - handed to whoever waits, as an executor does
                future.set_exception(exc)
            else:
                future.set_result(result)
