"""A directory named agent.yaml stops the daemon with exit 2 and a message naming it."""

from __future__ import annotations

import pytest

from tests.e2e.launcher import Launcher, args_for, no_traceback

pytestmark = pytest.mark.slow


def test_agent_yaml_directory_exits_2_naming_the_path(launcher: Launcher) -> None:
    workspace = launcher.tmp_path / "ws"
    (workspace / "agent.yaml").mkdir(parents=True)
    daemon = launcher.run_to_exit(*args_for(workspace))
    stderr = daemon.stderr()
    assert daemon.exit_code == 2, stderr
    no_traceback(stderr)
    assert str(workspace / "agent.yaml") in stderr
    assert not (workspace / "memory" / "memories.db").exists()
