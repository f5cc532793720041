"""Argument parsing: bounds, repeatable tags, options before/after the command, help, version."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

import pytest

from signet_desktop.cli.argtypes import time_bound
from signet_desktop.cli.main import build_parser, main
from signet_desktop.cli.memory_commands import recall_body


def parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(list(argv))


def test_version_prints_and_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("signet 0.")


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["remember", "--help"],
        ["recall", "--help"],
        ["memory", "--help"],
        ["memory", "forget", "--help"],
        ["status", "--help"],
        ["doctor", "--help"],
    ],
)
def test_every_command_has_help_with_examples(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "usage: signet" in out
    if argv[-2:] != ["forget", "--help"]:
        assert "examples:" in out


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([], env={}) == 2
    assert "usage: signet" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["recall", "x", "--limit", "0"], "must be between 1 and 100, got 0"),
        (["recall", "x", "-l", "-3"], "must be between 1 and 100"),
        (["recall", "x", "-l", "101"], "must be between 1 and 100"),
        (["recall", "x", "-l", "ten"], "not an integer"),
        (["recall", "x", "--min-score", "1.5"], "between 0 and 1"),
        (["remember", "x", "-i", "nan"], "between 0 and 1"),
        (["remember", "x", "--type", "gossip"], "invalid choice"),
        (["remember", "x", "--bogus"], "unrecognized arguments: --bogus"),
        (["memory", "forget", "abc", "--reason", "  "], "must not be empty"),
        (["memory"], "required: COMMAND"),
        (["recall", "x", "--timeout", "0"], "between 0 and 600"),
    ],
)
def test_bad_arguments_exit_2_with_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv, env={"SIGNET_DAEMON_URL": "http://127.0.0.1:9"}) == 2
    assert message in capsys.readouterr().err


def test_url_accepted_before_and_after_command() -> None:
    assert parse("--url", "http://a:1", "recall", "q").url == "http://a:1"
    assert parse("recall", "q", "--url", "http://b:2").url == "http://b:2"
    assert parse("memory", "get", "m1", "--url", "http://c:3").url == "http://c:3"
    assert not hasattr(parse("recall", "q"), "url")


def test_tags_split_on_commas_and_repeat() -> None:
    args = parse("remember", "note", "-t", "infra, db", "-t", "ops", "-t", "a,,b")
    assert args.tags == ["infra", "db", "ops", "a", "b"]


def test_unquoted_words_are_joined() -> None:
    assert parse("remember", "we", "use", "postgres").content == ["we", "use", "postgres"]


def test_recall_body_uses_signet_field_names() -> None:
    args = parse(
        "recall", "billing", "db", "-l", "5", "-t", "decision", "--tags", "a,b", "--who", "me",
        "--project", "/repo", "--since", "2025-01-01", "--until", "2025-12-31",
        "--keyword-query", "postgres", "--pinned", "--importance-min", "0.4",
        "--min-score", "0.2", "--expand", "--agent", "agent-a", "--as-of", "2025-03-12",
    )  # fmt: skip
    assert recall_body(args) == {
        "query": "billing db",
        "limit": 5,
        "type": "decision",
        "tags": ["a", "b"],
        "who": "me",
        "project": "/repo",
        "since": "2025-01-01",
        "until": "2025-12-31",
        "asOf": "2025-03-12",
        "keywordQuery": "postgres",
        "pinned": True,
        "importance_min": 0.4,
        "min_score": 0.2,
        "expand": True,
        "agentId": "agent-a",
    }


def test_recall_body_minimal() -> None:
    assert recall_body(parse("recall", "x")) == {"query": "x", "limit": 10}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2025-01-31", "2025-01-31"),
        ("2025-01-31T12:00", "2025-01-31T12:00"),
        ("today", "2026-03-10T00:00:00Z"),
        ("Yesterday", "2026-03-09T00:00:00Z"),
        ("7d", "2026-03-03T15:30:00Z"),
        ("2h", "2026-03-10T13:30:00Z"),
        ("30m", "2026-03-10T15:00:00Z"),
        ("1w", "2026-03-03T15:30:00Z"),
    ],
)
def test_time_bounds_accept_iso_and_relative_times(text: str, expected: str) -> None:
    now = datetime(2026, 3, 10, 15, 30, tzinfo=UTC)
    assert time_bound(text, now=now) == expected


@pytest.mark.parametrize("text", ["last tuesday", "7 days ago", "-3d", "2025-13-01"])
def test_unknown_time_formats_say_which_work(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="yesterday, or an age such as"):
        time_bound(text)
