"""Frozen entry point: `signet-desktop` (the app), or `signet` (the CLI) through a symlink.

One executable serves both commands so the one-folder bundle carries one copy of Python and
its libraries: `build.sh` links `signet` to `signet-desktop`, and the name the process was
started under picks the entry point.
"""

from __future__ import annotations

import multiprocessing
import os
import sys


def main() -> int:
    # A frozen app that starts child processes (the map's UMAP worker) must call this first.
    multiprocessing.freeze_support()
    name = os.path.basename(sys.argv[0]).removesuffix(".exe")
    if name == "signet":
        from signet_desktop.cli.main import main as cli_main

        return cli_main()
    from signet_desktop.main import main as app_main

    return app_main()


if __name__ == "__main__":
    sys.exit(main())
