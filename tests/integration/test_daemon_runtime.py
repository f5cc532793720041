"""DaemonRuntime in-process: real workspace, database, socket and uvicorn; a stand-in ASGI app."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.views import status_json

from signet_desktop.daemon.address import ListenAddress, bind
from signet_desktop.daemon.pidfile import read_pid_file
from signet_desktop.daemon.runtime import (
    DaemonRuntime,
    RuntimeOptions,
    ServeContext,
    StartupError,
)

Scope = dict[str, Any]


def status_app(context: ServeContext) -> Callable[..., Any]:
    """A tiny ASGI app that answers every request with the service's status."""

    async def app(scope: Scope, receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = json.dumps(await asyncio.to_thread(status_json, context.service)).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


def options(workspace: Path, **overrides: Any) -> RuntimeOptions:
    values: dict[str, Any] = {
        "app_factory": status_app,
        "workspace": str(workspace),
        "port": 0,
        "env": {},
        "log_to_stderr": False,
    }
    values.update(overrides)
    return RuntimeOptions(**values)


def open_fails(workspace: Path, **overrides: Any) -> StartupError:
    runtime = DaemonRuntime(options(workspace, **overrides))
    with pytest.raises(StartupError) as caught:
        runtime.open()
    runtime.close()
    return caught.value


def test_serves_then_stops_cleanly_and_leaves_no_pid_file(tmp_path: Path) -> None:
    runtime = DaemonRuntime(options(tmp_path / "ws"))
    warmed = threading.Event()
    runtime.add_background_task("warm", warmed.set)
    runtime.open()
    paths = runtime.paths
    assert paths is not None
    info = read_pid_file(paths.pid_file)
    assert info is not None and info.port == runtime.port > 0

    async def scenario() -> tuple[int, dict[str, Any]]:
        ready = asyncio.Event()
        runtime.on_ready(ready.set)
        serving = asyncio.create_task(runtime.serve())
        await asyncio.wait_for(ready.wait(), 10)
        await asyncio.to_thread(warmed.wait, 10)
        async with httpx.AsyncClient(base_url=runtime.url) as client:
            await asyncio.sleep(0.05)  # let the task thread publish "done"
            status = (await client.get("/api/status")).json()
        runtime.request_stop()
        return await asyncio.wait_for(serving, 15), status

    try:
        code, status = asyncio.run(scenario())
    finally:
        runtime.close()
    assert code == 0
    assert status["runtime"]["port"] == runtime.port
    assert status["runtime"]["mode"] == "headless"
    assert status["runtime"]["workspace"] == str(tmp_path / "ws")
    assert status["config"]["path"] is None
    assert status["startup"]["warm"]["state"] == "done"
    assert not paths.pid_file.exists()
    assert paths.db_path.exists()
    log_text = (paths.logs_dir / "daemon.log").read_text()
    assert "listening on" in log_text
    # the next start on the same workspace is allowed
    again = DaemonRuntime(options(tmp_path / "ws"))
    again.open()
    again.close()


def test_second_runtime_on_the_workspace_names_the_first_ones_port(tmp_path: Path) -> None:
    first = DaemonRuntime(options(tmp_path))
    first.open()
    try:
        error = open_fails(tmp_path)
        assert error.exit_code == 1
        assert error.message == (
            f"Signet Desktop is already running on port {first.port} (pid {read_pid(first)})"
        )
    finally:
        first.close()


def read_pid(runtime: DaemonRuntime) -> int:
    assert runtime.paths is not None
    info = read_pid_file(runtime.paths.pid_file)
    assert info is not None
    return info.pid


def test_config_error_stops_before_lock_and_database(tmp_path: Path) -> None:
    tmp_path.joinpath("agent.yaml").write_text("search:\n  top_k: [1\n")
    error = open_fails(tmp_path)
    assert error.exit_code == 2
    assert "agent.yaml:" in error.message and "invalid YAML" in error.message
    assert not (tmp_path / "memory" / "memories.db").exists()
    assert not (tmp_path / ".daemon" / "pid").exists()


def test_an_unreachable_postgresql_server_fails_in_one_line_and_creates_no_file(
    tmp_path: Path,
) -> None:
    url = "postgresql://127.0.0.1:1/signet"  # nothing listens on port 1
    tmp_path.joinpath("agent.yaml").write_text(f"storage:\n  url: {url}\n")
    error = open_fails(tmp_path)
    assert error.exit_code == 2
    assert "\n" not in error.message
    assert error.message.startswith(f"database error: cannot open {url}: ")
    assert not (tmp_path / "memory" / "memories.db").exists()
    assert not (tmp_path / ".daemon" / "pid").exists()


def test_not_sqlite_database_is_refused_and_untouched(tmp_path: Path) -> None:
    db_file = tmp_path / "memory" / "memories.db"
    db_file.parent.mkdir(parents=True)
    original = b"these are my notes, not a database\n" * 50
    db_file.write_bytes(original)
    error = open_fails(tmp_path)
    assert error.exit_code == 2
    assert "not a SQLite database" in error.message
    assert db_file.read_bytes() == original
    assert sorted(p.name for p in db_file.parent.iterdir()) == ["memories.db"]
    assert not (tmp_path / ".daemon" / "pid").exists()
    # the lock was released: a corrected workspace starts
    db_file.unlink()
    runtime = DaemonRuntime(options(tmp_path))
    runtime.open()
    runtime.close()


def test_non_loopback_bind_needs_a_token(tmp_path: Path) -> None:
    error = open_fails(tmp_path, host="0.0.0.0")
    assert error.exit_code == 2
    assert "auth.token" in error.message


def test_busy_port_is_exit_1_and_bad_env_port_exit_2(tmp_path: Path) -> None:
    holder = bind(ListenAddress("127.0.0.1", 0))
    try:
        error = open_fails(tmp_path, port=holder.getsockname()[1])
    finally:
        holder.close()
    assert error.exit_code == 1
    assert "already in use" in error.message
    error = open_fails(tmp_path, port=None, env={"SIGNET_PORT": "http"})
    assert error.exit_code == 2 and "SIGNET_PORT" in error.message


def test_app_factory_error_unwinds_everything(tmp_path: Path) -> None:
    def refuse(context: ServeContext) -> Any:
        raise StartupError("no app today", 2)

    error = open_fails(tmp_path, app_factory=refuse)
    assert error.message == "no app today"
    assert not (tmp_path / ".daemon" / "pid").exists()
    runtime = DaemonRuntime(options(tmp_path))
    runtime.open()  # lock released, database closed
    runtime.close()


def test_logging_handlers_are_removed_on_close(tmp_path: Path) -> None:
    logger = logging.getLogger("signet_desktop")
    before = list(logger.handlers)
    runtime = DaemonRuntime(options(tmp_path))
    runtime.open()
    assert len(logger.handlers) > len(before)
    runtime.close()
    assert logger.handlers == before


def test_stop_requested_before_serve_returns_at_once(tmp_path: Path) -> None:
    runtime = DaemonRuntime(options(tmp_path))
    runtime.open()
    runtime.request_stop()
    try:
        assert asyncio.run(asyncio.wait_for(runtime.serve(), 10)) == 0
    finally:
        runtime.close()


def test_signets_own_daemon_on_the_workspace_is_refused(tmp_path: Path) -> None:
    """Signet's Bun daemon leaves a plain-number pid file and takes no lock of ours."""
    (tmp_path / ".daemon").mkdir()
    pid_file = tmp_path / ".daemon" / "pid"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        pid_file.write_text(f"{sleeper.pid}\n")
        error = open_fails(tmp_path)
        assert error.exit_code == 1
        assert f"another Signet daemon (pid {sleeper.pid}" in error.message
        assert pid_file.read_text() == f"{sleeper.pid}\n"  # left alone
        assert not (tmp_path / "memory" / "memories.db").exists()
    finally:
        sleeper.kill()
        sleeper.wait(30)
    runtime = DaemonRuntime(options(tmp_path))  # stale once that process is gone
    runtime.open()
    runtime.close()
