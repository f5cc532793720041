"""Daemons in this process for the team tests (tests/integration/team/): each its own
workspace (own lock, pid file and log), all on the database their agent.yaml names, serving
HTTP on one event loop.

`DaemonRuntime`s, not processes: the embedder is a HashEmbedder (no model to load), and a
test reads each daemon's log and threads directly. Worker polls are short (`pollMs: 200`)
so queue jobs start within moments.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TypeVar

from signet_desktop.daemon.runtime import DaemonRuntime, RuntimeOptions
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.main import http_app
from signet_desktop.service.container import BuildOptions
from signet_desktop.storage.postgres.connect import connect_postgres

START_TIMEOUT_S = 60.0  # bounds against a hang under load 10-20, not speed checks
STOP_TIMEOUT_S = 60.0
RELAY_THREADS = ("pg-notify-send", "pg-notify-listen")

T = TypeVar("T")


def agent_yaml(storage_url: str, hints_llm: str | None = None) -> str:
    """agent.yaml on `storage_url`; with `hints_llm` (an OpenAI-compatible base URL, a
    tests/support/fake_llm.py server) prospective hints on, their LLM there."""
    text = f"storage:\n  url: '{storage_url}'\n"
    text += "memory:\n  pipelineV2:\n    worker:\n      pollMs: 200\n"
    if hints_llm is not None:
        text += "    hints:\n      enabled: true\n"
        text += (
            "inference:\n  targets:\n    fake:\n      executor: openai-compatible\n"
            f"      endpoint: {hints_llm}\n      models: {{m: {{}}}}\n"
            "  workloads:\n    memoryExtraction: {target: fake, model: m}\n"
        )
    return text


def new_runtime(
    root: Path, name: str, storage_url: str, hints_llm: str | None = None
) -> DaemonRuntime:
    """A daemon over workspace `root/name` (not opened yet)."""
    workspace = root / name
    workspace.mkdir()
    workspace.joinpath("agent.yaml").write_text(agent_yaml(storage_url, hints_llm))
    return DaemonRuntime(
        RuntimeOptions(
            app_factory=http_app,
            workspace=str(workspace),
            port=0,
            env={},
            log_to_stderr=False,
            build=BuildOptions(embedder=HashEmbedder(64)),
        )
    )


def open_together(runtimes: list[DaemonRuntime]) -> None:
    """`open()` every runtime at the same moment, one thread each (migrations included)."""
    barrier = threading.Barrier(len(runtimes))
    failures: list[BaseException] = []

    def open_one(runtime: DaemonRuntime) -> None:
        barrier.wait()
        try:
            runtime.open()
        except BaseException as exc:  # re-raised on the test's thread below
            failures.append(exc)

    threads = [threading.Thread(target=open_one, args=(r,)) for r in runtimes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(START_TIMEOUT_S)
    assert not any(t.is_alive() for t in threads), "a daemon did not open in time"
    if failures:
        raise failures[0]


@asynccontextmanager
async def serving(runtimes: list[DaemonRuntime]) -> AsyncIterator[None]:
    """Serve every opened runtime on the running loop; stop them all when the block ends and
    check each exited 0."""
    tasks = []
    for runtime in runtimes:
        ready = asyncio.Event()
        runtime.on_ready(ready.set)
        tasks.append(asyncio.create_task(runtime.serve()))
        await asyncio.wait_for(ready.wait(), START_TIMEOUT_S)
    try:
        yield
    finally:
        for runtime in runtimes:
            runtime.request_stop()
        codes = await asyncio.wait_for(asyncio.gather(*tasks), STOP_TIMEOUT_S)
    assert codes == [0] * len(runtimes)


async def poll(
    read: Callable[[], Awaitable[T]], done: Callable[[T], bool], timeout: float, step: float = 0.05
) -> tuple[T, float]:
    """Call `read()` until `done(value)`; returns the value and the seconds it took. Fails
    with the last value at `timeout`."""
    started = time.monotonic()
    while True:
        value = await read()
        elapsed = time.monotonic() - started
        if done(value):
            return value, elapsed
        assert elapsed < timeout, f"not done after {timeout} s: {value!r}"
        await asyncio.sleep(step)


def relay_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name in RELAY_THREADS]


def daemon_log(runtime: DaemonRuntime) -> str:
    assert runtime.paths is not None
    return (runtime.paths.logs_dir / "daemon.log").read_text()


def error_lines(runtime: DaemonRuntime) -> list[str]:
    """The daemon log's ERROR lines (there must be none)."""
    return errors_in(daemon_log(runtime))


def errors_in(log_text: str) -> list[str]:
    """A daemon log's ERROR lines (there must be none)."""
    return [line for line in log_text.splitlines() if " ERROR " in line]


@contextmanager
def closing(runtimes: list[DaemonRuntime]) -> Iterator[list[DaemonRuntime]]:
    """Close every runtime when the block ends, whatever happened."""
    try:
        yield runtimes
    finally:
        for runtime in runtimes:
            runtime.close()


def until(read: Callable[[], Any], done: Callable[[Any], bool], timeout: float) -> Any:
    """`read()` again every 50 ms until `done` says its value will do; that value. Failing
    after `timeout` seconds (a bound against a hang, not a speed check)."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value):
            return value
        assert time.monotonic() < deadline, f"not done after {timeout} s: {value!r}"
        time.sleep(0.05)


def query_rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    """The rows of one statement on a connection of its own to the database at `url`."""
    conn = connect_postgres(url)
    try:
        return [tuple(row) for row in conn.execute(sql).fetchall()]
    finally:
        conn.close()
