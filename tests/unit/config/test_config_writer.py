"""The agent.yaml writer: validated first, backed up, replaced atomically, nothing on a refusal."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from signet_desktop.config import WorkspacePaths, load_config
from signet_desktop.config.inference_binding import http_binding
from signet_desktop.config.writer import (
    ConfigWriteError,
    apply_changes,
    update_config,
    write_config_text,
)

ORIGINAL = "# my settings\nsearch:\n  alpha: 0.4\nauth:\n  mode: local\n"


@pytest.fixture
def paths(tmp_path: Path) -> WorkspacePaths:
    found = WorkspacePaths.for_root(tmp_path / "ws")
    found.ensure()
    (found.root / "agent.yaml").write_text(ORIGINAL, encoding="utf-8")
    return found


def test_a_valid_change_is_written_and_loads(paths: WorkspacePaths) -> None:
    result = update_config(paths, {"auth.mode": "hybrid", "memory.dreaming.enabled": True})
    assert result.changed
    config = load_config(paths).config
    assert config.auth.mode == "hybrid"
    assert config.memory.dreaming.enabled is True
    assert config.search.alpha == 0.4  # what was not asked for stays
    assert result.loaded.config.auth.mode == "hybrid"


def test_the_old_file_is_kept_as_a_backup(paths: WorkspacePaths) -> None:
    result = update_config(paths, {"auth.mode": "team", "auth.token": "x" * 32})
    assert result.backup == paths.root / "agent.yaml.bak"
    assert result.backup.read_text(encoding="utf-8") == ORIGINAL  # comments and all


@pytest.mark.parametrize(
    "changes",
    [
        {"auth.mode": "everyone"},  # not a mode
        {"search.alpha": 7},  # out of range
        {"inference.targets.x": {"executor": "claude-code"}},  # a removed executor
        {"search.alpha.deep": 1},  # alpha is not a mapping
    ],
)
def test_a_rejected_write_leaves_the_file_byte_identical(
    paths: WorkspacePaths, changes: dict[str, object]
) -> None:
    file = paths.root / "agent.yaml"
    before = file.read_bytes()
    stat = file.stat()
    with pytest.raises(ConfigWriteError) as caught:
        update_config(paths, changes)
    assert "not saved" in str(caught.value) or "cannot set" in str(caught.value)
    assert file.read_bytes() == before
    assert file.stat().st_mtime_ns == stat.st_mtime_ns
    assert not (paths.root / "agent.yaml.bak").exists()
    assert [p.name for p in paths.root.iterdir() if p.name.startswith(".agent")] == []


def test_the_message_names_the_bad_key(paths: WorkspacePaths) -> None:
    with pytest.raises(ConfigWriteError, match=r"auth\.mode"):
        update_config(paths, {"auth.mode": "everyone"})


def test_a_file_that_does_not_load_is_not_rewritten(paths: WorkspacePaths) -> None:
    file = paths.root / "agent.yaml"
    file.write_text("search: [unclosed\n", encoding="utf-8")
    before = file.read_bytes()
    with pytest.raises(ConfigWriteError, match="fix it first"):
        update_config(paths, {"auth.mode": "team"})
    assert file.read_bytes() == before


def test_the_write_is_atomic_and_keeps_the_mode(
    paths: WorkspacePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = paths.root / "agent.yaml"
    file.chmod(0o640)
    inode = file.stat().st_ino
    replaced: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(src: str, dst: str) -> None:
        replaced.append((str(src), str(dst)))
        assert Path(dst).read_text(encoding="utf-8") == ORIGINAL  # old file whole until then
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    update_config(paths, {"auth.mode": "hybrid"})
    [(temp, target)] = replaced
    assert Path(temp).parent == paths.root and target == str(file)
    assert file.stat().st_ino != inode  # a new file took its place
    assert file.stat().st_mode & 0o777 == 0o640


def test_a_failed_replace_leaves_the_file_and_no_temp(
    paths: WorkspacePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = paths.root / "agent.yaml"
    before = file.read_bytes()

    def refuse(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(ConfigWriteError, match="No space left"):
        update_config(paths, {"auth.mode": "hybrid"})
    assert file.read_bytes() == before
    assert [p.name for p in paths.root.iterdir() if p.name.endswith(".tmp")] == []


def test_no_file_yet_creates_agent_yaml_without_a_backup(tmp_path: Path) -> None:
    paths = WorkspacePaths.for_root(tmp_path / "fresh")
    paths.ensure()
    result = update_config(paths, {"auth.mode": "hybrid"})
    assert result.path == paths.root / "agent.yaml" and result.backup is None
    assert load_config(paths).config.auth.mode == "hybrid"
    assert result.path.stat().st_mode & 0o777 == 0o600


def test_an_unchanged_value_writes_nothing(paths: WorkspacePaths) -> None:
    file = paths.root / "agent.yaml"
    before = file.read_bytes()
    result = update_config(paths, {"auth.mode": "local"})
    assert not result.changed and file.read_bytes() == before


def test_none_removes_a_key_and_the_sections_it_empties() -> None:
    data = {"auth": {"mode": "team"}, "search": {"alpha": 0.3}}
    assert apply_changes(data, {"auth.mode": None}) == {"search": {"alpha": 0.3}}
    assert data == {"auth": {"mode": "team"}, "search": {"alpha": 0.3}}  # a copy


def test_write_text_refuses_invalid_yaml(paths: WorkspacePaths) -> None:
    file = paths.root / "agent.yaml"
    before = file.read_bytes()
    with pytest.raises(ConfigWriteError, match="would not load"):
        write_config_text(paths, "auth: {mode: local\n")
    assert file.read_bytes() == before


def test_an_http_binding_loads_as_the_dreaming_target(paths: WorkspacePaths) -> None:
    changes = http_binding("openai", "gpt-4.1-mini", secret="OPENAI_API_KEY")
    update_config(paths, changes)
    inference = load_config(paths).config.inference
    binding = inference.workloads.memory_extraction
    assert binding is not None and binding.target == "dreaming-http"
    target = inference.targets["dreaming-http"]
    assert (target.executor, target.account, list(target.models)) == (
        "openai",
        "dreaming-http",
        ["gpt-4.1-mini"],
    )
    account = inference.accounts["dreaming-http"]
    assert account.api_key is not None
    assert account.api_key.get_secret_value() == "$secret:OPENAI_API_KEY"
