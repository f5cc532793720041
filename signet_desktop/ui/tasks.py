"""Run facade calls off the GUI thread and deliver results back on it.

`TaskRunner.call(fn, *args, done=..., failed=...)` runs `fn` in a worker thread (the qasync
loop's executor) and calls `done(result)` or `failed(exc)` on the GUI thread. Pending tasks
are tracked so a closing window cancels them; a pane never blocks.

A task's first step may be delivered while the loop is not running: qasync's
`run_until_complete` ends with one more `processEvents` after its loop stopped (the app's
last run at quit, the tests' settling between two checks). So the call is bound to the loop
it was made on, never looked up as "the running loop" then (`asyncio.to_thread` does, and
failed there with "no running event loop").
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


class TaskRunner:
    """Tracks the coroutines a window spawned; cancels what is left on `cancel_all`."""

    def __init__(self) -> None:
        self._pending: set[asyncio.Future[Any]] = set()

    @property
    def pending(self) -> int:
        return len(self._pending)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
        """Schedule `coro` on the running (qasync) loop."""
        task = asyncio.ensure_future(coro)
        self._pending.add(task)
        task.add_done_callback(self._finished)
        return task

    def call(
        self,
        fn: Callable[..., T],
        *args: Any,
        done: Callable[[T], None] | None = None,
        failed: Callable[[BaseException], None] | None = None,
    ) -> asyncio.Future[Any]:
        """Run `fn(*args)` in a thread; `done`/`failed` run on the loop's (GUI) thread."""
        loop = asyncio.get_event_loop()  # the one `spawn` schedules on, running or not yet
        context = contextvars.copy_context()  # as `asyncio.to_thread` passes it

        async def run() -> None:
            try:
                result = await loop.run_in_executor(None, functools.partial(context.run, fn, *args))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if failed is None:
                    log.error("background call %s failed", _name(fn), exc_info=exc)
                else:
                    failed(exc)
                return
            if done is not None:
                done(result)

        return self.spawn(run())

    async def wait_idle(self) -> None:
        """Await every pending task (tests: let the GUI settle)."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    def cancel_all(self) -> None:
        for task in list(self._pending):
            task.cancel()

    def _finished(self, task: asyncio.Future[Any]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("window task failed", exc_info=task.exception())


def _name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", repr(fn))


class SingleFlight:
    """One read at a time: `ask()` starts `start()` unless a read runs, in which case that
    read runs once more when it ends. The read's `done`/`failed` callbacks call `done()`."""

    def __init__(self, start: Callable[[], None]) -> None:
        self._start = start
        self.busy = False
        self._again = False

    def ask(self) -> None:
        if self.busy:
            self._again = True
            return
        self.busy = True
        self._start()

    def done(self) -> None:
        """The read ended (either way): run the one that was asked for meanwhile."""
        self.busy = False
        if self._again:
            self._again = False
            self.ask()
