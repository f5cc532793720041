"""`signet-desktop`: the process entry point (tray app by default, `--headless` for servers).

The headless path never imports Qt: the desktop shell (`signet_desktop.ui.app`) is imported
only when it is asked for, so servers and CI run without a display or PySide6.
"""

from __future__ import annotations

import argparse
import ctypes.util
import dataclasses
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from signet_desktop.daemon.address import AddressError, parse_port
from signet_desktop.daemon.daemonlog import LEVELS
from signet_desktop.daemon.hardexit import leave
from signet_desktop.daemon.runtime import (
    EXIT_FAILURE,
    EXIT_USAGE,
    RuntimeOptions,
    ServeContext,
    StartupError,
    package_version,
    run_headless,
)
from signet_desktop.domain.address import DEFAULT_HOST, DEFAULT_PORT
from signet_desktop.embedding.heap import limit_malloc_arenas

DESCRIPTION = """\
Signet Desktop: a local-first memory service for AI coding agents.

Starts the memory daemon (HTTP on 127.0.0.1:3850, Signet-compatible routes) over the
workspace's SQLite database (or the PostgreSQL one its agent.yaml names in storage.url,
docs/TEAM.md). Without --headless it also shows a tray icon and a small window; with
--headless it runs without any GUI (servers, CI, machines without a display). The workspace
and its database are created on first run."""

EPILOG = f"""\
examples:
  signet-desktop                         tray icon + window, default workspace (~/.agents)
  signet-desktop --headless              daemon only, on 127.0.0.1:{DEFAULT_PORT}
  signet-desktop --headless --workspace ~/work/agents --port 3851
  signet-desktop --headless --port 0     pick a free port (printed on the first line)

environment:
  SIGNET_WORKSPACE   workspace directory (also SIGNET_PATH); --workspace wins
  SIGNET_PORT        port to listen on (default {DEFAULT_PORT}); --port wins
  SIGNET_BIND, SIGNET_HOST
                     address to listen on (default {DEFAULT_HOST}); --host wins. A non-loopback
                     address requires auth.token in agent.yaml.
  Clients (the signet CLI, Signet's hooks and SDK) find the daemon through
  SIGNET_DAEMON_URL, or SIGNET_HOST and SIGNET_PORT.
  SIGNET_DISABLE_SQLITE_VEC=1
                     run without sqlite-vec (semantic recall then scans the newest vectors
                     and says vectorCompleteness "recent-window"), to try the fallback.

exit status:
  0 stopped cleanly (SIGINT/SIGTERM or Quit)   1 already running, or the port is busy
  2 unusable configuration, database file or option value"""


def _port(value: str) -> int:
    try:
        return parse_port(value, "--port")
    except AddressError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and the man page)."""
    parser = argparse.ArgumentParser(
        prog="signet-desktop",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--headless", action="store_true", help="run the daemon without any GUI (no Qt import)"
    )
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        help="workspace directory (default: $SIGNET_WORKSPACE, else ~/.agents)",
    )
    parser.add_argument(
        "--host", metavar="ADDR", help=f"address to listen on (default: {DEFAULT_HOST})"
    )
    parser.add_argument(
        "--port",
        metavar="N",
        type=_port,
        help=f"port to listen on; 0 picks a free one (default: {DEFAULT_PORT})",
    )
    parser.add_argument(
        "--log-level",
        choices=LEVELS,
        default="info",
        help="log verbosity on stderr and in .daemon/logs/daemon.log (default: info)",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    return parser


def http_app(context: ServeContext) -> Any:
    """The FastAPI application over the service (imported here: the API sits above service)."""
    from signet_desktop.api.http.app import create_app
    from signet_desktop.api.http.settings import InsecureBindError, settings_from_auth

    try:
        settings = settings_from_auth(
            context.loaded.config.auth,
            host=context.host,
            port=context.port,
            agents_dir=str(context.paths.root),
            version=context.version,
            features=context.loaded.config.features,
        )
    except InsecureBindError as exc:
        raise StartupError(str(exc), EXIT_USAGE) from None
    app = create_app(
        context.service, dataclasses.replace(settings, started_at=context.started_epoch)
    )

    def shutting_down() -> None:
        app.state.shutting_down = True  # /health and /health/ready say so while we drain

    context.on_stop(shutting_down)
    return app


def options_from(args: argparse.Namespace) -> RuntimeOptions:
    """RuntimeOptions from parsed arguments."""
    return RuntimeOptions(
        app_factory=http_app,
        workspace=args.workspace,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        mode="headless" if args.headless else "desktop",
    )


# Qt's xcb platform plugin aborts the process (no exception to catch) without these.
XCB_LIBRARIES = {"xcb-cursor": "libxcb-cursor0", "xcb-icccm": "libxcb-icccm4"}


def missing_xcb_packages(env: Mapping[str, str], find: Callable[[str], str | None]) -> list[str]:
    """Debian package names of the X11 libraries Qt needs and this machine lacks."""
    if not sys.platform.startswith("linux") or not env.get("DISPLAY"):
        return []
    if env.get("WAYLAND_DISPLAY") or env.get("QT_QPA_PLATFORM", "xcb") != "xcb":
        return []
    return [package for library, package in XCB_LIBRARIES.items() if find(library) is None]


def _run_desktop(options: RuntimeOptions) -> int:
    missing = missing_xcb_packages(os.environ, ctypes.util.find_library)
    if missing:
        print(
            "signet-desktop: Qt cannot open an X11 window on this machine: it needs "
            f"{', '.join(missing)} (e.g. `sudo apt install {' '.join(missing)}`); "
            "run `signet-desktop --headless` for the daemon without a GUI",
            file=sys.stderr,
        )
        return EXIT_FAILURE
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY")
        or os.environ.get("WAYLAND_DISPLAY")
        or os.environ.get("QT_QPA_PLATFORM")
    ):
        print(
            "signet-desktop: no display found (DISPLAY and WAYLAND_DISPLAY are unset); "
            "run `signet-desktop --headless` for the daemon without a GUI",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        from signet_desktop.ui.app import run_desktop
    except ImportError as exc:
        print(
            f"signet-desktop: the desktop shell cannot load ({exc}); "
            "run `signet-desktop --headless` for the daemon without a GUI",
            file=sys.stderr,
        )
        return EXIT_FAILURE
    return run_desktop(options)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments and run the daemon headless or under the Qt shell."""
    limit_malloc_arenas()  # before any thread starts: one arena, not one per thread
    args = build_parser().parse_args(argv)
    options = options_from(args)
    code = run_headless(options) if args.headless else _run_desktop(options)
    return leave(code)  # work abandoned at shutdown must not hold or abort the exit


if __name__ == "__main__":
    sys.exit(main())
