"""The virtual X display the real-window tests run on (`xvfb-run`), or why there is none."""

from __future__ import annotations

import os
import shutil

import pytest


def xvfb_run() -> str:
    """The `xvfb-run` executable; a skip without it (a failure where CI asks for it:
    `.ci/run` sets SIGNET_TEST_REQUIRE_XVFB=1)."""
    found = shutil.which("xvfb-run")
    if found is None:
        if os.environ.get("SIGNET_TEST_REQUIRE_XVFB") == "1":
            pytest.fail("xvfb-run is missing (apt-get install xvfb xauth)")
        pytest.skip("xvfb-run is not installed (apt-get install xvfb xauth)")
    return found


def x_env(home: os.PathLike[str] | str) -> dict[str, str]:
    """The environment of a child on the xcb platform: no SIGNET_* settings, its own HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNET_")}
    env.update(QT_QPA_PLATFORM="xcb", HOME=str(home), XDG_CONFIG_HOME=os.path.join(home, "cfg"))
    return env
