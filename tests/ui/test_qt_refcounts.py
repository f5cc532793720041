"""The Qt binding must not leak or drop references on the paths the app runs thousands of times.

PySide6 6.12.0 dropped one reference to `True` on every `Signal.disconnect()`; qasync
disconnects on each `asyncio.to_thread` round trip, so the inspector aborted with
"bool_dealloc" after a few hundred facade calls. These tests fail on such a binding.
"""

from __future__ import annotations

import asyncio
import sys

import pytest
from PySide6.QtCore import QObject, Signal

from signet_desktop.ui.tasks import TaskRunner

pytestmark = pytest.mark.gui

ROUNDS = 200


class _Emitter(QObject):
    fired = Signal()


def test_connect_and_disconnect_keep_the_refcount_of_true(qapp: object) -> None:
    emitter = _Emitter()

    def slot() -> None:
        return None

    before = sys.getrefcount(True)
    for _ in range(ROUNDS):
        emitter.fired.connect(slot)
        emitter.fired.disconnect(slot)
    assert sys.getrefcount(True) - before > -ROUNDS // 2


def test_emitting_keeps_the_refcounts_of_true_and_none(qapp: object) -> None:
    """6.12.0 also lost a reference on every Python-side emit (none_dealloc in the bench)."""
    emitter = _Emitter()
    emitter.fired.connect(lambda: None)
    before = sys.getrefcount(True), sys.getrefcount(None)
    for _ in range(ROUNDS):
        emitter.fired.emit()
    after = sys.getrefcount(True), sys.getrefcount(None)
    assert all(a - b > -ROUNDS // 2 for a, b in zip(after, before, strict=True))


def test_background_calls_keep_the_refcount_of_true(qt_loop: asyncio.AbstractEventLoop) -> None:
    tasks = TaskRunner()
    results: list[int] = []
    before = sys.getrefcount(True)

    async def many() -> None:
        for i in range(ROUNDS):
            tasks.call(lambda i=i: i, done=results.append)
        await tasks.wait_idle()

    qt_loop.run_until_complete(many())
    assert len(results) == ROUNDS
    assert sys.getrefcount(True) - before > -ROUNDS // 2
