"""Once the start-up tasks are done, the runtime hands start-up's freed heap back to the OS,
then checks every `HEAP_CHECK_SECONDS` for heap a burst of work left behind."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from signet_desktop.daemon import runtime as runtime_module
from signet_desktop.daemon.runtime import DaemonRuntime, RuntimeOptions


def test_heap_is_trimmed_once_the_warm_ups_are_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trimmed = threading.Event()
    release = threading.Event()
    warm_done_first: list[bool] = []

    def trim() -> None:
        warm_done_first.append(release.is_set())
        trimmed.set()

    monkeypatch.setattr(runtime_module, "release_free_heap", trim)
    monkeypatch.setattr(runtime_module, "SETTLE_TRIM_SECONDS", 0.05)
    monkeypatch.setattr(runtime_module, "BACKGROUND_DELAY_SECONDS", 0.0)
    runtime = _runtime(tmp_path)
    runtime.add_background_task("slow-warm-up", lambda: release.wait(10))
    runtime.open()

    async def scenario() -> None:
        await asyncio.sleep(0.5)  # ten settle periods while the warm-up still runs
        assert not trimmed.is_set()
        release.set()
        await asyncio.to_thread(trimmed.wait, 10)

    assert _serve_during(runtime, scenario) == 0
    assert warm_done_first == [True]


def test_after_the_settle_the_heap_is_checked_again_and_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checks = threading.Semaphore(0)

    class CountingKeeper:
        def check(self) -> bool:
            checks.release()
            return False

    monkeypatch.setattr(runtime_module, "release_free_heap", lambda: None)
    monkeypatch.setattr(runtime_module, "HeapKeeper", CountingKeeper)
    monkeypatch.setattr(runtime_module, "SETTLE_TRIM_SECONDS", 0.05)
    monkeypatch.setattr(runtime_module, "HEAP_CHECK_SECONDS", 0.05)
    monkeypatch.setattr(runtime_module, "BACKGROUND_DELAY_SECONDS", 0.0)
    runtime = _runtime(tmp_path)
    runtime.open()

    async def scenario() -> None:
        for _ in range(3):
            assert await asyncio.to_thread(checks.acquire, True, 10)

    assert _serve_during(runtime, scenario) == 0


def _runtime(tmp_path: Path) -> DaemonRuntime:
    """A runtime over a fresh workspace serving an app that does nothing."""
    return DaemonRuntime(
        RuntimeOptions(
            app_factory=lambda context: _null_app,
            workspace=str(tmp_path / "ws"),
            port=0,
            env={},
            log_to_stderr=False,
        )
    )


def _serve_during(runtime: DaemonRuntime, scenario: Callable[[], Awaitable[None]]) -> int:
    """Serve while `scenario` runs, then stop; the exit code. The runtime is closed after."""

    async def serving() -> int:
        served = asyncio.create_task(runtime.serve())
        await scenario()
        runtime.request_stop()
        return await asyncio.wait_for(served, 15)

    try:
        return asyncio.run(serving())
    finally:
        runtime.close()


async def _null_app(scope: dict[str, object], receive: object, send: object) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] == "lifespan.startup":  # type: ignore[operator]
            await send({"type": "lifespan.startup.complete"})  # type: ignore[operator]
        await send({"type": "lifespan.shutdown.complete"})  # type: ignore[operator]
