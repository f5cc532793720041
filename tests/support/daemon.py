"""The real FastAPI app served by uvicorn on a free loopback port, and the CLI pointed at it.

Not the daemon runtime (tests/e2e and test_daemon_runtime cover that): the app from
`create_app` over a `build_service` service, in a thread, stopped when the block ends.
"""

from __future__ import annotations

import dataclasses
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.cli.main import main
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.daemon.server import server_config
from signet_desktop.embedding.provider import EmbeddingProvider
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from support.db import database_of

LOOPBACK = "127.0.0.1"
START_TIMEOUT_S = 10.0

Capture = pytest.CaptureFixture[str]


def closed_loopback_url() -> str:
    """A loopback URL on which nothing listens (connection refused)."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        port = sock.getsockname()[1]
    return f"http://{LOOPBACK}:{port}"


@contextmanager
def serve_app(
    service: SignetService,
    settings: HttpSettings | None = None,
    *,
    server_options: Mapping[str, Any] | None = None,
) -> Iterator[str]:
    """Serve `create_app(service, settings)` on a free loopback port; yield its base URL.

    The settings' host and port become the bound socket's. With `server_options`, uvicorn
    runs with the daemon's own `server_config(..., **server_options)` (its read deadline and
    connection limit) instead of plain defaults. The server stops (and the socket closes)
    when the block ends; the service stays open, it is the caller's.
    """
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted connections only when the
    # listening socket names its protocol; without it each kept-alive request stalled ~44 ms.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as sock:
        sock.bind((LOOPBACK, 0))
        port = sock.getsockname()[1]
        bound = dataclasses.replace(settings or HttpSettings(), host=LOOPBACK, port=port)
        app = create_app(service, bound)
        if server_options is None:
            config = uvicorn.Config(app, log_config=None, log_level="error", lifespan="off")
        else:
            config = server_config(app, LOOPBACK, port, **server_options)
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while not server.started:
                assert thread.is_alive(), "uvicorn exited before it started"
                assert time.monotonic() < deadline, "uvicorn did not start"
                time.sleep(0.01)
            yield f"http://{LOOPBACK}:{port}"
        finally:
            server.should_exit = True
            thread.join(START_TIMEOUT_S)


@dataclass(frozen=True, slots=True)
class CliDaemon:
    """A served app over a real workspace, and `signet` run against it in-process."""

    url: str
    workspace: Path
    service: SignetService

    def cli(self, capsys: Capture, *argv: str) -> tuple[int, str, str]:
        """Run `signet ARGV` against this daemon; return (exit code, stdout, stderr)."""
        capsys.readouterr()
        code = main(list(argv), env={"SIGNET_DAEMON_URL": self.url})
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    def remember(self, capsys: Capture, text: str) -> str:
        """`signet remember TEXT`, asserting it saved; return the new memory id."""
        code, out, err = self.cli(capsys, "remember", text)
        assert code == 0, err
        assert out.startswith("Saved "), out
        return out.split()[1]

    def scalar(self, sql: str, **params: object) -> int:
        """The first column of the first row of `sql` (named :params), read directly."""
        return int(database_of(self.service).reader().execute(sql, params).fetchone()[0])

    def count_rows(self) -> int:
        """Rows in `memories`, deleted or not."""
        return self.scalar("SELECT COUNT(*) FROM memories")


@contextmanager
def run_daemon(
    root: Path,
    embedder: EmbeddingProvider,
    *,
    with_vec: bool = True,
    config: dict[str, Any] | None = None,
    server_options: Mapping[str, Any] | None = None,
) -> Iterator[CliDaemon]:
    """build_service over a workspace at `root`, served by `serve_app`; closed afterwards.

    `server_options` (e.g. `{}`) serves with the daemon's own uvicorn settings, lifespan on —
    what `/mcp` needs to run.
    """
    paths = WorkspacePaths.for_root(root)
    paths.ensure()
    options = BuildOptions(with_vec=with_vec, embedder=embedder, inline_vectors=True)
    service = build_service(paths, SignetConfig.model_validate(config or {}), options)
    try:
        settings = HttpSettings(agents_dir=str(paths.root))
        with serve_app(service, settings, server_options=server_options) as url:
            yield CliDaemon(url, paths.root, service)
    finally:
        service.close()
