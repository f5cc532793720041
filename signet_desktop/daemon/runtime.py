"""The composition root of the daemon: workspace, config, lock, socket, database, HTTP server.

`DaemonRuntime.open()` does every fallible step synchronously and raises `StartupError` (with
the exit code) before anything is served; `serve()` runs uvicorn on the *running* loop (plain
asyncio headless, qasync under Qt); `close()` undoes it all. `run_headless()` wires the three
together with SIGINT/SIGTERM handling. Exit codes: 0 clean stop, 1 conflict or runtime failure
(already running, port busy), 2 unusable input (config, database file, flag values).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from importlib import metadata
from typing import TYPE_CHECKING, Any, Literal

from signet_desktop.config import (
    ConfigError,
    LoadedConfig,
    WorkspacePaths,
    describe_config,
    load_config,
    resolve_workspace,
)
from signet_desktop.config.storage import POSTGRES_PREVIEW
from signet_desktop.daemon import address as addresses
from signet_desktop.daemon import daemonlog
from signet_desktop.daemon.pidfile import (
    AlreadyRunning,
    PidInfo,
    WorkspaceLock,
    foreign_daemon_pid,
    remove_pid_file,
    write_pid_file,
)
from signet_desktop.daemon.signals import (
    ignore_stop_signals,
    interrupt_on_term,
    serve_with_signals,
)
from signet_desktop.daemon.startup import StartupTasks
from signet_desktop.daemon.workers import HostFactory, WorkerThreads
from signet_desktop.dreaming.tool_sessions import DREAM_MCP_PATH
from signet_desktop.embedding.heap import HeapKeeper, release_free_heap
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.workers import WorkerHost
from signet_desktop.storage.connect import DatabaseFileError
from signet_desktop.storage.errors import DATABASE_ERRORS
from signet_desktop.storage.migrate import MigrationError

if TYPE_CHECKING:
    from signet_desktop.daemon.server import QuietServer
    from signet_desktop.storage.postgres.notify import EventRelay

log = logging.getLogger(__name__)

DISABLE_VEC_ENV = "SIGNET_DISABLE_SQLITE_VEC"
EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
# The quit budget (<= 2 s in all): workers are told to stop with the first stop request, so
# they wind down while the server drains (GRACEFUL_SHUTDOWN_SECONDS); then they get this
# much more, the start-up tasks a little, and the database closes. A worker or task still
# running after that is abandoned: its lease is released and its late database calls end in
# one log line (the next start resumes its job).
BACKGROUND_JOIN_SECONDS = 0.2
WORKER_STOP_SECONDS = 0.8
BACKGROUND_DELAY_SECONDS = 0.5
SETTLE_TRIM_SECONDS = 10.0  # after the warm-ups: start-up's freed heap goes back to the OS
HEAP_CHECK_SECONDS = 20.0  # then: a burst's freed heap goes back too (`HeapKeeper`)
RELAY_STOP_SECONDS = 1.0  # per relay thread; the listener notices a stop within 0.5 s
RELAY_STATUS_KEY = "eventRelay"

Mode = Literal["headless", "desktop"]


@dataclass(frozen=True, slots=True)
class ServeContext:
    """What the HTTP app factory gets once the port is bound."""

    service: SignetService
    loaded: LoadedConfig
    paths: WorkspacePaths
    host: str
    port: int
    version: str
    started_at: str
    started_epoch: float
    on_stop: Callable[[Callable[[], None]], None]


AppFactory = Callable[[ServeContext], Any]  # returns an ASGI application


@dataclass(frozen=True, slots=True)
class RuntimeOptions:
    """Everything `main` parsed; the runtime reads the environment only through `env`."""

    app_factory: AppFactory
    workspace: str | None = None
    host: str | None = None
    port: int | None = None
    log_level: str = "info"
    mode: Mode = "headless"
    env: Mapping[str, str] | None = None
    build: BuildOptions | None = None
    log_to_stderr: bool = True
    worker_host: HostFactory | None = None  # None: threads; the Qt app passes its QThread host
    # The desktop builds the HTTP app (FastAPI, MCP: ~1 s of imports) in `serve()`, after its
    # window is on screen; headless builds it in `open()` so a bad setting fails before serving.
    defer_app: bool = False


class StartupError(Exception):
    """The daemon must not start; `message` is for the user, `exit_code` for the shell."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


def package_version() -> str:
    """The installed distribution's version (a source checkout without metadata says so)."""
    try:
        return metadata.version("signet-desktop")
    except metadata.PackageNotFoundError:
        return "0.0.0+unknown"


def _iso(epoch: float) -> str:
    moment = datetime.fromtimestamp(epoch, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class DaemonRuntime:
    """One daemon's lifetime: `open()`, then `await serve()`, then `close()` (always)."""

    def __init__(self, options: RuntimeOptions) -> None:
        self.options = options
        self.version = package_version()
        self.started_epoch = time.time()
        self.started_at = _iso(self.started_epoch)
        self.paths: WorkspacePaths | None = None
        self.loaded: LoadedConfig | None = None
        self.service: SignetService | None = None
        self.host = ""
        self.port = 0
        self._lock: WorkspaceLock | None = None
        self._socket: socket.socket | None = None
        self._logs: daemonlog.LogHandle | None = None
        self._app: Any = None
        self._server: QuietServer | None = None
        self._stop_requested = False
        self._tasks: StartupTasks | None = None
        self._workers: WorkerHost | None = None
        self._relay: EventRelay | None = None
        self._disconnect_relay: Callable[[], None] = lambda: None
        self._background_start: asyncio.TimerHandle | None = None
        self._settle: asyncio.TimerHandle | None = None
        self._heap: HeapKeeper | None = None  # set once start-up's heap is trimmed
        self._early_tasks: list[tuple[str, Callable[[], object]]] = []
        self._on_ready: list[Callable[[], None]] = []
        self._on_stop: list[Callable[[], None]] = []
        self._closed = False

    @property
    def url(self) -> str:
        return addresses.http_url(self.host, self.port)

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    # -- start-up -------------------------------------------------------------------------

    def open(self) -> None:
        """Resolve, validate, lock, bind and build. Raises StartupError; cleans up after itself."""
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    def _open(self) -> None:
        env = os.environ if self.options.env is None else self.options.env
        paths, address = self._prepare(env)
        self._take_workspace(paths)
        self._logs = daemonlog.install(
            paths.logs_dir, self.options.log_level, stderr=self.options.log_to_stderr
        )
        assert self.loaded is not None
        for warning in self.loaded.warnings:
            log.warning("agent.yaml: %s", warning)
        self._bind(address)
        self.service = self._build_service(paths, env)
        self._start_relay(self.service)
        self._tasks = StartupTasks(self.service.status_board)
        for name, fn in self._early_tasks:
            self._tasks.add(name, fn)
        self._early_tasks.clear()
        # Canonical transcripts a crash left behind: adopt or cut, complete open sessions.
        self._tasks.add("transcripts", self.service.transcripts.recover)
        # Import runs a stop interrupted say so (their next run resumes).
        self._tasks.add("imports", self.service.imports.recover)
        # Dreaming passes a kill left running: failed "interrupted", their operations kept.
        self._tasks.add("dreaming", self.service.dreaming.recover)
        self._host_workers(self.service)
        # A harness Dreaming pass reaches its tools here (the loopback form of our address).
        self.service.dreaming.serve_tools_at(
            addresses.http_url(addresses.connect_host(self.host), self.port) + DREAM_MCP_PATH
        )
        self._publish_runtime()
        if not self.options.defer_app:
            self._app = self._build_app()

    def _build_app(self) -> Any:
        assert self.service is not None and self.loaded is not None and self.paths is not None
        return self.options.app_factory(
            ServeContext(
                service=self.service,
                loaded=self.loaded,
                paths=self.paths,
                host=self.host,
                port=self.port,
                version=self.version,
                started_at=self.started_at,
                started_epoch=self.started_epoch,
                on_stop=self._on_stop.append,
            )
        )

    def _prepare(self, env: Mapping[str, str]) -> tuple[WorkspacePaths, addresses.ListenAddress]:
        """Everything checkable before touching the workspace's lock, port or database."""
        paths = WorkspacePaths.for_root(resolve_workspace(self.options.workspace, env))
        try:
            address = addresses.resolve_address(self.options.host, self.options.port, env)
        except addresses.AddressError as exc:
            raise StartupError(str(exc), EXIT_USAGE) from None
        try:
            paths.ensure()
        except OSError as exc:
            raise StartupError(f"cannot create workspace {paths.root}: {exc}", EXIT_USAGE) from None
        self.paths = paths
        try:
            self.loaded = load_config(paths)
        except ConfigError as exc:
            raise StartupError(f"configuration error: {exc}", EXIT_USAGE) from None
        self._check_exposure(address)
        return paths, address

    def _take_workspace(self, paths: WorkspacePaths) -> None:
        """The workspace lock, refusing when this or Signet's own daemon already runs here."""
        self._lock = WorkspaceLock(paths.daemon_dir, paths.pid_file)
        try:
            self._lock.acquire()
        except AlreadyRunning as exc:
            raise StartupError(exc.describe(), EXIT_FAILURE) from None
        foreign = foreign_daemon_pid(paths.pid_file)
        if foreign is not None:
            raise StartupError(
                f"another Signet daemon (pid {foreign}, from {paths.pid_file}) is using this "
                "workspace; stop it first (`signet daemon stop`). If that process is not a "
                "Signet daemon, delete the pid file.",
                EXIT_FAILURE,
            )

    def _check_exposure(self, address: addresses.ListenAddress) -> None:
        assert self.loaded is not None
        if addresses.is_loopback(address.host) or self.loaded.config.auth.token is not None:
            return
        raise StartupError(
            f"refusing to listen on {address.host}: a non-loopback address exposes your "
            "memories to the network. Set auth.token in agent.yaml (and auth.mode: team or "
            "hybrid), or listen on 127.0.0.1.",
            EXIT_USAGE,
        )

    def _bind(self, address: addresses.ListenAddress) -> None:
        assert self.paths is not None
        try:
            self._socket = addresses.bind(address)
        except addresses.AddressError as exc:
            raise StartupError(str(exc), EXIT_USAGE if exc.usage else EXIT_FAILURE) from None
        self.host = address.host
        self.port = int(self._socket.getsockname()[1])
        info = PidInfo(os.getpid(), self.port, self.host, self.started_at)
        write_pid_file(self.paths.pid_file, info)

    def _build_service(self, paths: WorkspacePaths, env: Mapping[str, str]) -> SignetService:
        assert self.loaded is not None
        build = self.options.build or BuildOptions()
        if env.get(DISABLE_VEC_ENV) == "1":  # try the fallback path exactly as users would see it
            build = replace(build, with_vec=False)
            log.warning(
                "%s=1: sqlite-vec not loaded; semantic recall scans recent vectors", DISABLE_VEC_ENV
            )
        storage = self.loaded.config.storage
        where = paths.db_path if storage.backend == "sqlite" else storage.url  # no password in it
        if storage.backend == "postgresql":
            log.warning(POSTGRES_PREVIEW)
        try:
            return build_service(paths, self.loaded.config, build)
        except DatabaseFileError as exc:
            raise StartupError(f"database error: {exc}", EXIT_USAGE) from None
        except MigrationError as exc:
            raise StartupError(f"database error: {where}: {exc}", EXIT_USAGE) from None
        except DATABASE_ERRORS as exc:
            detail = " ".join(str(exc).split())  # libpq's messages span lines
            raise StartupError(
                f"database error: cannot open {where}: {detail}", EXIT_USAGE
            ) from None
        except ValueError as exc:  # a setting the models accept but the wiring cannot use
            log.debug("build_service refused the configuration", exc_info=True)
            raise StartupError(f"configuration error: {exc}", EXIT_USAGE) from None

    def _start_relay(self, service: SignetService) -> None:
        """On PostgreSQL, relay this daemon's events to the others sharing the database and
        theirs to this daemon's subscribers (SSE): storage/postgres/notify.py."""
        assert self.loaded is not None
        storage = self.loaded.config.storage
        if storage.backend != "postgresql":
            return
        # Imported here: the SQLite path never loads the PostgreSQL driver.
        from signet_desktop.storage.postgres.notify import EventRelay

        name = f"{socket.gethostname()}:{os.getpid()}:{os.urandom(4).hex()}"
        relay = EventRelay(storage.url, service.events, daemon_id=name)
        self._relay = relay
        self._disconnect_relay = service.events.connect(relay.publish)
        relay.start()
        service.status_board.provide(RELAY_STATUS_KEY, relay.facts)
        log.info("relaying events through PostgreSQL as daemon %s", name)

    def _stop_relay(self) -> None:
        """After the workers (their last events still go out), before the database closes."""
        relay, self._relay = self._relay, None
        if relay is None:
            return
        self._disconnect_relay()
        if not relay.stop(RELAY_STOP_SECONDS):
            log.warning("the event relay did not stop within %.1f s", RELAY_STOP_SECONDS)

    def _host_workers(self, service: SignetService) -> None:
        """Host the declared workers (started once the server is up) and queue their warm-ups."""
        declared = service.pipeline.workers
        factory = self.options.worker_host or WorkerThreads
        self._workers = factory(declared, service.events)
        service.pipeline.attach(self._workers)
        for declaration in declared:
            if declaration.warm_up is not None:
                self.add_background_task(declaration.warm_up.name, declaration.warm_up.run)

    def _publish_runtime(self) -> None:
        assert self.service is not None and self.paths is not None and self.loaded is not None
        board = self.service.status_board
        board.set(
            "runtime",
            {
                "startedAt": self.started_at,
                "pid": os.getpid(),
                "port": self.port,
                "host": self.host,
                "url": self.url,
                "workspace": str(self.paths.root),
                "mode": self.options.mode,
                "version": self.version,
            },
        )
        board.set("config", describe_config(self.loaded))

    # -- running --------------------------------------------------------------------------

    def add_background_task(self, name: str, fn: Callable[[], object]) -> None:
        """Run `fn` in a thread once the server is listening; its state shows in /api/status."""
        if self._tasks is None:
            self._early_tasks.append((name, fn))
        else:
            self._tasks.add(name, fn)

    def on_ready(self, callback: Callable[[], None]) -> None:
        """Call `callback` on the loop once the server accepts connections."""
        self._on_ready.append(callback)

    async def serve(self) -> int:
        """Serve HTTP on the running loop until `request_stop()`. Returns the exit code."""
        if self.service is None or self._socket is None:
            raise RuntimeError("DaemonRuntime.open() must succeed before serve()")
        if self._app is None:  # `defer_app`: built now, on the loop
            try:
                self._app = self._build_app()
            except StartupError as exc:
                report_startup_error(exc)
                return exc.exit_code
        # uvicorn (and click, its CLI's) load here: under Qt, after the window is on screen.
        from signet_desktop.daemon.server import QuietServer, server_config

        server = QuietServer(server_config(self._app, self.host, self.port), self._started)
        self._server = server
        server.should_exit = self._stop_requested
        sock, self._socket = self._socket, None
        try:
            await server.serve(sockets=[sock])
        except SystemExit:  # uvicorn exits when the app's lifespan start-up fails
            log.error("the HTTP application failed to start; see the log above")
            return EXIT_FAILURE
        finally:
            sock.close()
            for timer in (self._background_start, self._settle):
                if timer is not None:
                    timer.cancel()
        if not server.started and not self._stop_requested:
            return EXIT_FAILURE
        log.info("stopped")
        return EXIT_OK

    def _started(self) -> None:
        line = f"Signet Desktop listening on {self.url} (workspace {self.paths_root()})"
        if sys.stdout is not None:  # None under pythonw; a closed pipe must not stop the daemon
            with contextlib.suppress(OSError, ValueError):
                print(line, flush=True)
        log.info("listening on %s (pid %d, mode %s)", self.url, os.getpid(), self.options.mode)
        # Warm-ups and workers compete with the first requests for the GIL: give the clients
        # that poll /health right after start (hooks, the CLI, tests) a head start.
        self._background_start = asyncio.get_running_loop().call_later(
            BACKGROUND_DELAY_SECONDS, self._start_background
        )
        for callback in self._on_ready:
            callback()

    def _start_background(self) -> None:
        if self._stop_requested or self._closed:
            return
        if self._tasks is not None:
            self._tasks.start()
        if self._workers is not None:
            self._workers.start()
        self._settle_later()

    def _settle_later(self) -> None:
        self._settle = asyncio.get_running_loop().call_later(SETTLE_TRIM_SECONDS, self._settle_heap)

    def _settle_heap(self) -> None:
        """Once the start-up tasks (the model's warm-up) are done, trim the heap (off the loop)."""
        if self._stop_requested or self._closed:
            return
        tasks = self._tasks.snapshot() if self._tasks is not None else {}
        if any(task.state in ("pending", "running") for task in tasks.values()):
            self._settle_later()
            return
        # Collected here, on the loop's thread: under Qt a cycle holding a widget must not be
        # freed on another thread. Only the trim (a walk of the heap) runs off it.
        gc.collect()
        threading.Thread(target=self._first_trim, name="heap-trim", daemon=True).start()
        self._settle = asyncio.get_running_loop().call_later(HEAP_CHECK_SECONDS, self._keep_heap)

    def _first_trim(self) -> None:
        release_free_heap()
        self._heap = HeapKeeper()  # its baseline: the settled process

    def _keep_heap(self) -> None:
        """Every `HEAP_CHECK_SECONDS`: the heap a burst of work freed goes back (off the loop)."""
        if self._stop_requested or self._closed:
            return
        keeper = self._heap
        if keeper is not None:
            threading.Thread(target=keeper.check, name="heap-keep", daemon=True).start()
        self._settle = asyncio.get_running_loop().call_later(HEAP_CHECK_SECONDS, self._keep_heap)

    def paths_root(self) -> str:
        return "" if self.paths is None else str(self.paths.root)

    def request_stop(self) -> None:
        """Ask the server to stop (a second request stops without waiting for connections)."""
        server = self._server
        if server is not None and server.should_exit and not server.force_exit:
            log.info("stop requested again: closing open connections without waiting")
            if self._logs is not None:
                self._logs.forced_stop.active = True
            server.force_exit = True
        first = not self._stop_requested
        self._stop_requested = True
        if server is not None:
            server.should_exit = True
        if first:
            log.info("stop requested")
            if self._workers is not None:
                self._workers.request_stop()  # they wind down while the server drains
            for callback in self._on_stop:
                callback()

    # -- shutdown -------------------------------------------------------------------------

    def close(self) -> None:
        """Close the database, remove the pid file, release the lock (idempotent)."""
        if self._closed:
            return
        self._closed = True
        if self._workers is not None:
            self._workers.stop(WORKER_STOP_SECONDS)
            if self.service is not None:
                self.service.pipeline.detach()
        if self._tasks is not None and not self._tasks.join(BACKGROUND_JOIN_SECONDS):
            log.warning("start-up tasks still running at shutdown; not waiting for them")
        self._stop_relay()
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self.service is not None:
            try:
                self.service.close()
            except DATABASE_ERRORS as exc:
                log.warning("closing the database: %s", exc)
        if self._lock is not None and self._lock.held:
            if self.paths is not None:
                remove_pid_file(self.paths.pid_file, os.getpid())
            self._lock.release()
        if self._logs is not None:
            self._logs.close()
            self._logs = None


def run_headless(options: RuntimeOptions) -> int:
    """The `--headless` process: start, serve until SIGINT/SIGTERM, stop cleanly."""
    return run_runtime(
        options,
        lambda runtime: asyncio.run(serve_with_signals(runtime.serve, runtime.request_stop)),
    )


def run_runtime(
    options: RuntimeOptions,
    serve: Callable[[DaemonRuntime], int],
    failed: Callable[[StartupError], None] | None = None,
) -> int:
    """A daemon process (headless, or under the desktop app): open the runtime, `serve` it
    until it returns the exit code, then stop cleanly. A start that fails is reported on
    stderr (and to `failed`) and gives its exit code."""
    runtime = DaemonRuntime(options)
    interrupt_on_term()
    try:
        try:
            runtime.open()
        except StartupError as exc:
            report_startup_error(exc)
            if failed is not None:
                failed(exc)
            return exc.exit_code
        return serve(runtime)
    except KeyboardInterrupt:  # a signal before the loop took over signal handling
        return EXIT_OK
    finally:
        runtime.close()
        ignore_stop_signals()  # the process ends here: no late signal may kill it


def report_startup_error(exc: StartupError) -> None:
    """Print why the daemon did not start, one line on stderr."""
    print(f"signet-desktop: {exc.message}", file=sys.stderr, flush=True)
