"""`signet token` against the real app on a loopback socket: create, list, revoke, use."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from support.daemon import Capture, CliDaemon, run_daemon
from support.db import database_of

from signet_desktop.cli.main import main
from signet_desktop.embedding.hashing import HashEmbedder

AUTH = {"auth": {"defaultTokenTtlSeconds": 3600, "sessionTokenTtlSeconds": 600}}


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[CliDaemon]:
    with run_daemon(tmp_path / "ws", HashEmbedder(), config=AUTH) as d:
        yield d


def _run(
    daemon: CliDaemon, capsys: Capture, *argv: str, token: str | None = None
) -> tuple[int, str, str]:
    capsys.readouterr()
    env = {"SIGNET_DAEMON_URL": daemon.url, **({"SIGNET_TOKEN": token} if token else {})}
    code = main(list(argv), env=env)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _seconds(created: str, expires: str) -> float:
    parse = lambda text: datetime.fromisoformat(text.replace("Z", "+00:00"))  # noqa: E731
    return (parse(expires) - parse(created)).total_seconds()


def test_create_list_use_and_revoke(daemon: CliDaemon, capsys: Capture) -> None:
    code, out, err = _run(daemon, capsys, "token", "create", "--name", "reader", "--agent",
                          "work", "--permission", "read", "--json")  # fmt: skip
    assert code == 0, err
    created = json.loads(out)
    secret = created["secret"]
    assert secret.startswith("sgt_") and created["agents"] == ["work"]
    assert _seconds(created["createdAt"], created["expiresAt"]) == 3600  # auth.defaultTokenTtl…

    code, out, err = _run(daemon, capsys, "token", "list")
    assert code == 0 and "reader" in out and "active" in out and "work" in out
    assert secret not in out
    stored = database_of(daemon.service).reader().execute("SELECT * FROM api_tokens").fetchall()
    assert secret not in repr([tuple(row) for row in stored])  # only its hash is kept

    # The token works for what it holds, and only that.
    code, out, err = _run(daemon, capsys, "recall", "anything", token=secret)
    assert code == 0, err
    before = daemon.count_rows()
    code, out, err = _run(daemon, capsys, "remember", "not allowed", token=secret)
    assert code == 2 and "permission" in err
    assert daemon.count_rows() == before

    code, out, err = _run(daemon, capsys, "token", "revoke", "reader")
    assert code == 0 and "Revoked token reader" in out, err
    code, out, err = _run(daemon, capsys, "recall", "anything", token=secret)
    assert code == 2 and "revoked" in err
    code, out, err = _run(daemon, capsys, "token", "list", "--json")
    assert json.loads(out)["tokens"][0]["state"] == "revoked"


def test_ttl_and_session_tokens(daemon: CliDaemon, capsys: Capture) -> None:
    code, out, err = _run(daemon, capsys, "token", "create", "--name", "short", "--agent", "a",
                          "--permission", "write", "--ttl", "2h", "--json")  # fmt: skip
    assert code == 0, err
    made = json.loads(out)
    assert _seconds(made["createdAt"], made["expiresAt"]) == 7200
    code, out, err = _run(daemon, capsys, "token", "create", "--name", "sess", "--agent", "a",
                          "--permission", "read", "--session", "--json")  # fmt: skip
    session = json.loads(out)
    assert session["kind"] == "session"
    assert _seconds(session["createdAt"], session["expiresAt"]) == 600  # auth.sessionTokenTtl…


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--name", "x", "--agent", "a", "--permission", "root"), "invalid choice"),
        (("--name", "x", "--agent", "a", "--permission", "read", "--ttl", "10"), "ttlSeconds"),
        (("--name", "x", "--agent", "a", "--permission", "read", "--ttl", "soon"), "duration"),
        (("--name", "bad name", "--agent", "a", "--permission", "read"), "name"),
        (("--name", "x", "--agent", "a b", "--permission", "read"), "agentId"),
    ],
)
def test_bad_input_is_refused_and_writes_nothing(
    daemon: CliDaemon, capsys: Capture, argv: tuple[str, ...], message: str
) -> None:
    try:
        code, _out, err = _run(daemon, capsys, "token", "create", *argv)
    except SystemExit as exit_:  # argparse refuses before anything is sent
        code, err = int(exit_.code or 0), capsys.readouterr().err
    assert code == 2 and message in err, err
    assert daemon.scalar("SELECT COUNT(*) FROM api_tokens") == 0


def test_a_name_is_never_reused_and_unknown_revokes_are_404(
    daemon: CliDaemon, capsys: Capture
) -> None:
    args = ("token", "create", "--name", "once", "--agent", "a", "--permission", "read")
    assert _run(daemon, capsys, *args)[0] == 0
    code, _out, err = _run(daemon, capsys, *args)
    assert code == 2 and "already exists" in err
    code, _out, err = _run(daemon, capsys, "token", "revoke", "nope")
    assert code == 2 and "no token" in err
    assert daemon.scalar("SELECT COUNT(*) FROM api_tokens") == 1
