"""`signet storage migrate --help` says what the command does and how to resume it."""

from __future__ import annotations

import pytest

from signet_desktop.cli.main import main


def test_the_help_explains_source_target_resume_and_verification(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["storage", "migrate", "--help"], env={}) == 0
    text = " ".join(capsys.readouterr().out.split())
    for words in (
        "--to URL",
        "--from URL",
        "--batch-size N",
        "Stop the daemon first",
        "run the same command again and it continues where it stopped",
        "content hash",
        "sqlite:PATH",
    ):
        assert words in text, words


def test_the_storage_group_is_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"], env={}) == 0
    assert "storage" in capsys.readouterr().out


def test_migrate_needs_a_target(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["storage", "migrate"], env={}) == 2
    assert "--to" in capsys.readouterr().err
