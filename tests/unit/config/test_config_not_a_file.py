"""agent.yaml that exists but is not a regular file is refused, never skipped (issue 8)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from signet_desktop.config.loader import ConfigError, load_config
from signet_desktop.config.workspace import WorkspacePaths


def test_a_directory_named_agent_yaml_is_refused_naming_it(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").mkdir()
    with pytest.raises(ConfigError) as caught:
        load_config(WorkspacePaths.for_root(tmp_path))
    assert str(tmp_path / "agent.yaml") in str(caught.value)
    assert "directory" in str(caught.value)


def test_a_directory_does_not_fall_through_to_the_next_name(tmp_path: Path) -> None:
    """Signet reads the first name that exists; skipping it would apply config.yaml."""
    (tmp_path / "agent.yaml").mkdir()
    (tmp_path / "config.yaml").write_text("search:\n  top_k: 3\n")
    with pytest.raises(ConfigError, match=r"agent\.yaml"):
        load_config(WorkspacePaths.for_root(tmp_path))


def test_a_dangling_symlink_is_refused(tmp_path: Path) -> None:
    os.symlink(tmp_path / "missing.yaml", tmp_path / "agent.yaml")
    with pytest.raises(ConfigError, match="not a regular file"):
        load_config(WorkspacePaths.for_root(tmp_path))


def test_a_file_before_a_directory_is_used(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text("search:\n  top_k: 3\n")
    (tmp_path / "config.yaml").mkdir()
    assert load_config(WorkspacePaths.for_root(tmp_path)).path == tmp_path / "agent.yaml"
