"""`signet secret` against the real app on a loopback socket: list, put, has, delete."""

from __future__ import annotations

import io
import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.daemon import Capture, CliDaemon, run_daemon

from signet_desktop.cli import secret_commands
from signet_desktop.embedding.hashing import HashEmbedder

VALUE = "sk-cli-VALUE-NEVER-PRINTED-9907"


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[CliDaemon]:
    with run_daemon(tmp_path / "ws", HashEmbedder()) as d:
        yield d


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_put_list_has_delete(
    daemon: CliDaemon, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = daemon.cli(capsys, "secret", "list")
    assert code == 0 and "No secrets stored" in out
    monkeypatch.setattr("sys.stdin", io.StringIO(VALUE + "\n"))  # piped: one newline dropped
    code, out, err = daemon.cli(capsys, "secret", "put", "OPENAI_API_KEY")
    assert code == 0 and out.strip() == "Secret OPENAI_API_KEY stored.", err
    stored = daemon.workspace / ".secrets" / "OPENAI_API_KEY"
    assert stored.read_text() == VALUE and stat.S_IMODE(stored.stat().st_mode) == 0o600
    monkeypatch.setattr("sys.stdin", Tty())
    monkeypatch.setattr(secret_commands.getpass, "getpass", lambda prompt, stream: "prompted")
    code, out, _ = daemon.cli(capsys, "secret", "set", "GITHUB_TOKEN", "--agent", "work")
    assert code == 0 and "GITHUB_TOKEN stored" in out
    assert (daemon.workspace / ".secrets" / ".agents" / "work" / "GITHUB_TOKEN").read_text() == (
        "prompted"
    )
    code, out, _ = daemon.cli(capsys, "secret", "list")
    assert out.split() == ["OPENAI_API_KEY"]  # the default agent's only
    code, out, _ = daemon.cli(capsys, "secret", "list", "--agent", "work", "--json")
    assert json.loads(out) == {"secrets": ["GITHUB_TOKEN"]}
    assert daemon.cli(capsys, "secret", "has", "OPENAI_API_KEY")[:2] == (0, "true\n")
    assert daemon.cli(capsys, "secret", "has", "GITHUB_TOKEN")[:2] == (1, "false\n")
    code, out, _ = daemon.cli(capsys, "secret", "delete", "OPENAI_API_KEY")
    assert code == 0 and "deleted" in out and not stored.exists()
    code, _, err = daemon.cli(capsys, "secret", "delete", "OPENAI_API_KEY")
    assert code == 2 and "not found" in err


def test_refusals_print_no_value_and_store_nothing(
    daemon: CliDaemon, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, _, err = daemon.cli(capsys, "secret", "put", "EMPTY")
    assert code == 2 and "empty" in err
    code, out, err = daemon.cli(capsys, "secret", "put", "bad-name", VALUE)
    assert code == 2 and "secret name" in err
    assert "shell history" in err and VALUE not in out + err
    assert not (daemon.workspace / ".secrets").exists()
