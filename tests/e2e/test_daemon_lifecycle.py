"""The real headless daemon: first run, remember/recall over a socket, clean stop, restart."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from signet_desktop.main import build_parser
from tests.e2e.launcher import REPO_ROOT, Launcher, args_for, clean_env, no_traceback

pytestmark = pytest.mark.slow

FACT = "The billing service stores invoices in PostgreSQL 16."


def test_first_run_remember_recall_stop_restart(launcher: Launcher) -> None:
    workspace = launcher.home / ".agents"
    assert not workspace.exists()
    first = launcher.start("--port", "0")  # default workspace: ~/.agents under HOME
    url = first.wait_listening()
    assert first.first_line == f"Signet Desktop listening on {url} (workspace {workspace})"
    pid_info = json.loads((workspace / ".daemon" / "pid").read_text())
    assert pid_info["pid"] == first.proc.pid
    assert url == f"http://127.0.0.1:{pid_info['port']}"
    with httpx.Client(base_url=url, timeout=10) as client:
        health = client.get("/health")
        assert health.status_code == 200 and health.json()["status"] == "healthy"
        stored = client.post("/api/memory/remember", json={"content": FACT})
        assert stored.status_code == 200, stored.text
        memory_id = stored.json()["id"]
        hits = client.post("/api/memory/recall", json={"query": "where are invoices stored"})
        assert [hit["id"] for hit in hits.json()["results"]] == [memory_id]
        status = client.get("/api/status").json()
        assert status["runtime"]["mode"] == "headless"
        assert status["runtime"]["workspace"] == str(workspace)
        # the default in-process embedder warms up after /health, in the background
        model = status["startup"]["embedding-model"]
        assert model["state"] in {"pending", "running", "done"}, model
        assert status["workers"]["embedding"]["state"] in {"pending", "running"}
    assert first.signal(signal.SIGTERM) == 0
    no_traceback(first.stderr())
    assert not (workspace / ".daemon" / "pid").exists()
    assert (workspace / "memory" / "memories.db").is_file()
    assert "listening on" in (workspace / ".daemon" / "logs" / "daemon.log").read_text()

    second = launcher.start(*args_for(workspace))
    with httpx.Client(base_url=second.wait_listening(), timeout=10) as client:
        again = client.get(f"/api/memory/{memory_id}")
        assert again.status_code == 200 and again.json()["content"] == FACT
        hits = client.post("/api/memory/recall", json={"query": "PostgreSQL invoices"})
        assert [hit["id"] for hit in hits.json()["results"]] == [memory_id]
    assert second.signal(signal.SIGINT) == 0  # Ctrl+C is just as clean
    no_traceback(second.stderr())


def test_second_instance_on_the_same_workspace_exits_1(launcher: Launcher) -> None:
    workspace = launcher.tmp_path / "ws"
    first = launcher.start(*args_for(workspace))
    url = first.wait_listening()
    port = int(url.rsplit(":", 1)[1])
    # found through SIGNET_WORKSPACE this time; the port asked for does not matter
    env = clean_env(launcher.home, SIGNET_WORKSPACE=str(workspace), SIGNET_PORT="0")
    second = launcher.run_to_exit(env=env)
    assert second.exit_code == 1
    assert f"already running on port {port} (pid {first.proc.pid})" in second.stderr()
    no_traceback(second.stderr())
    assert httpx.get(f"{url}/health", timeout=10).status_code == 200  # first one unharmed
    assert first.signal() == 0


def test_sigterm_during_startup_is_clean(launcher: Launcher) -> None:
    """A stop that races start-up still exits 0, without a traceback, and frees the lock."""
    workspace = launcher.tmp_path / "ws"
    quick = launcher.start(*args_for(workspace))
    pid_file = workspace / ".daemon" / "pid"
    deadline = time.monotonic() + 30
    while not pid_file.exists() and quick.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    code = quick.signal()  # port bound, database and app probably still being built
    assert code == 0, quick.stderr()
    no_traceback(quick.stderr())
    again = launcher.start(*args_for(workspace))
    again.wait_listening()
    assert again.signal() == 0


def test_repeated_signals_during_shutdown_stop_cleanly(launcher: Launcher) -> None:
    """Ctrl-C twice (then SIGTERM) while a client holds a request open: exit 0, no traceback."""
    workspace = launcher.tmp_path / "ws"
    daemon = launcher.start(*args_for(workspace))
    url = daemon.wait_listening()
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as stalled:
        # A body that never arrives keeps the graceful shutdown waiting for this connection.
        stalled.sendall(
            b"POST /api/memory/remember HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{"
        )
        time.sleep(0.3)
        daemon.proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
        daemon.proc.send_signal(signal.SIGINT)
        time.sleep(0.2)
        if daemon.proc.poll() is None:
            daemon.proc.send_signal(signal.SIGTERM)
        assert daemon.wait() == 0, daemon.stderr()
    no_traceback(daemon.stderr())
    assert "closing open connections without waiting" in daemon.stderr()


def test_headless_path_never_imports_qt(tmp_path: Path) -> None:
    """Open the whole headless runtime (config, database, FastAPI app) and look at sys.modules."""
    script = f"""
import sys
import time
from signet_desktop.main import build_parser, options_from
from signet_desktop.daemon.runtime import DaemonRuntime
args = build_parser().parse_args(["--headless", "--workspace", {str(tmp_path)!r}, "--port", "0"])
runtime = DaemonRuntime(options_from(args))
runtime.open()
runtime.close()
qt = sorted(m for m in sys.modules if m.split(".")[0] in ("PySide6", "shiboken6", "qasync"))
print("QT:", qt)
"""
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO_ROOT,
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "QT: []" in result.stdout


def test_help_names_flags_and_environment() -> None:
    text = build_parser().format_help()
    for needle in (
        "--headless",
        "--workspace",
        "--port",
        "--host",
        "--log-level",
        "SIGNET_WORKSPACE",
        "SIGNET_PORT",
        "SIGNET_DAEMON_URL",
        "examples:",
        "exit status:",
    ):
        assert needle in text
