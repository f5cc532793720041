"""Fixtures for the end-to-end tests: real processes, real sockets, temp workspaces."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.launcher import Launcher


@pytest.fixture
def launcher(tmp_path: Path) -> Iterator[Launcher]:
    launch = Launcher(tmp_path)
    yield launch
    launch.cleanup()
