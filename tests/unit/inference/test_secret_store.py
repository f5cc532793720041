"""The secret store on disk: owner-only files, per-agent directories, names only out."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from pydantic import SecretStr

from signet_desktop.domain.errors import InvalidInput, NotFound
from signet_desktop.domain.memory import Actor
from signet_desktop.inference.secret_store import SecretStore
from signet_desktop.inference.secrets import resolve_secret
from signet_desktop.service.secrets import SecretService

ACTOR = Actor(changed_by="tester")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_values_are_owner_only_files_and_the_resolver_reads_them(tmp_path: Path) -> None:
    root = tmp_path / ".secrets"
    store = SecretStore(root)
    assert store.put("default", "API_KEY", "sk-1") is True
    assert store.put("work", "API_KEY", "sk-work") is True
    assert (root / "API_KEY").read_text() == "sk-1" and mode(root / "API_KEY") == 0o600
    agent_dir = root / ".agents" / "work"
    assert (agent_dir / "API_KEY").read_text() == "sk-work"
    assert {mode(p) for p in (root, root / ".agents", agent_dir)} == {0o700}
    resolved = resolve_secret(SecretStr("$secret:API_KEY"), key_path="k", env={}, secrets_dir=root)
    assert resolved.get_secret_value() == "sk-1"  # the default agent's is agent.yaml's


def test_a_widened_directory_is_made_owner_only_again(tmp_path: Path) -> None:
    root = tmp_path / ".secrets"
    root.mkdir(mode=0o755)
    os.chmod(root, 0o755)
    SecretStore(root).put("default", "K", "v")
    assert mode(root) == 0o700


def test_names_list_only_secret_files(tmp_path: Path) -> None:
    root = tmp_path / ".secrets"
    store = SecretStore(root)
    assert store.names("default") == []  # no directory yet
    store.put("default", "B_KEY", "b")
    store.put("default", "A_KEY", "a")
    (root / ".tmp-left-over").write_text("x")
    (root / "not-a-name").write_text("x")
    (root / "SUBDIR").mkdir()
    store.put("other", "C_KEY", "c")
    assert store.names("default") == ["A_KEY", "B_KEY"]
    assert store.names("other") == ["C_KEY"]


def test_a_failed_write_leaves_no_temp_file_and_the_old_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SecretStore(tmp_path / ".secrets")
    store.put("default", "K", "old")

    def broken(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        store.put("default", "K", "new")
    assert sorted(p.name for p in (tmp_path / ".secrets").iterdir()) == ["K"]
    assert (tmp_path / ".secrets" / "K").read_text() == "old"


def test_the_service_checks_before_it_writes(tmp_path: Path) -> None:
    changed: list[str] = []
    service = SecretService(SecretStore(tmp_path / ".secrets"), on_change=changed.append)
    for name, value, code in (
        ("ok_NAME", None, "value_required"),
        ("ok_NAME", SecretStr(""), "value_required"),
        ("ok_NAME", SecretStr("x" * 65_537), "value_invalid"),
        ("1BAD", SecretStr("v"), "secret_name_invalid"),
        ("../escape", SecretStr("v"), "secret_name_invalid"),
        ("exec", SecretStr("v"), "secret_name_invalid"),
    ):
        with pytest.raises(InvalidInput) as refused:
            service.put("default", name, value, actor=ACTOR)
        assert refused.value.code == code
        assert "x" * 20 not in refused.value.message
    with pytest.raises(InvalidInput):
        service.put("../x", "K", SecretStr("v"), actor=ACTOR)
    assert not (tmp_path / ".secrets").exists() and changed == []
    service.put("work", "K", SecretStr("v"), actor=ACTOR)
    assert service.names("work") == ("K",) and service.names("default") == ()
    with pytest.raises(NotFound) as missing:
        service.delete("default", "K", actor=ACTOR)
    assert missing.value.code == "secret_not_found"
    assert service.delete("work", "K", actor=ACTOR) == "K"
    assert changed == ["work", "work"]


def test_refresh_builds_providers_again_and_close_closes_the_retired(tmp_path: Path) -> None:
    from signet_desktop.config.loader import parse_config_text
    from signet_desktop.inference.workloads import WorkloadProviders

    root = tmp_path / ".secrets"
    config = parse_config_text(
        "inference:\n"
        "  accounts: {mine: {provider: openai-compatible, apiKey: $secret:K}}\n"
        "  targets: {box: {executor: openai-compatible, account: mine,\n"
        "                  endpoint: 'http://127.0.0.1:9/v1', models: {m: {}}}}\n"
        "  workloads: {memoryExtraction: {target: box}}\n"
    ).config.inference
    SecretStore(root).put("default", "K", "one")
    providers = WorkloadProviders(config, env={}, secrets_dir=root)
    first = providers.get("memory_extraction")
    assert providers.get("memory_extraction") is first  # cached
    providers.refresh()
    second = providers.get("memory_extraction")
    assert second is not first
    closed: list[object] = []
    for provider in (first, second):
        original = provider.close  # type: ignore[attr-defined]
        provider.close = lambda p=provider, o=original: (closed.append(p), o())  # type: ignore[attr-defined]
    providers.close()
    assert closed == [first, second]
