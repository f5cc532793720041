"""Frozen entry point: `signet-desktop` (the app), or `signet` (the CLI) through a symlink.

One executable serves both commands so the one-folder bundle carries one copy of Python and
its libraries: `build.sh` links `signet` to `signet-desktop`, and the name the process was
started under picks the entry point. A frozen `sys.executable` is this program, so it also
answers `-m signet_desktop.<module> ...` as `python -m` would: the map's UMAP worker is
started that way (`projection/runner.py`).
"""

from __future__ import annotations

import multiprocessing
import os
import runpy
import sys

PACKAGE_PREFIX = "signet_desktop."


def run_module(argv: list[str]) -> int:
    """`-m MODULE ARGS...`: run one of our modules as `__main__` (nothing outside the package)."""
    if len(argv) < 2 or not argv[1].startswith(PACKAGE_PREFIX):
        print("usage: signet-desktop -m signet_desktop.<module> [args...]", file=sys.stderr)
        return 2
    sys.argv = [argv[1], *argv[2:]]
    runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    return 0


def main() -> int:
    # A frozen app that starts child processes through multiprocessing must call this first.
    multiprocessing.freeze_support()
    if sys.argv[1:2] == ["-m"]:
        return run_module(sys.argv[1:])
    name = os.path.basename(sys.argv[0]).removesuffix(".exe")
    if name == "signet":
        from signet_desktop.cli.main import main as cli_main

        return cli_main()
    from signet_desktop.main import main as app_main

    return app_main()


if __name__ == "__main__":
    sys.exit(main())
