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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every end-to-end test in one xdist group: they start daemons and real harness binaries
    and some count the harness processes left on the machine, which a test running beside
    them on the other worker would disturb. The other worker takes the rest meanwhile."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).parents:
            item.add_marker(pytest.mark.xdist_group("e2e"))
