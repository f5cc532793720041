"""Commands end to end against a scripted fake daemon: requests sent, output, exit codes."""

from __future__ import annotations

import io
import json

import pytest
from cli_fakes import FakeDaemon

from signet_desktop.cli.context import CliContext
from signet_desktop.cli.main import build_parser, main, run
from signet_desktop.client.daemon import start_command

Capture = pytest.CaptureFixture[str]


def call(fake: FakeDaemon, *argv: str, **env: str) -> int:
    return main(list(argv), env={"SIGNET_DAEMON_URL": fake.url, **env})


def test_remember_posts_fields_and_prints_saved(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    fake_daemon.reply(
        "POST", "/api/memory/remember", 200, {"id": "m1", "deduped": False, "embedded": True}
    )
    code = call(
        fake_daemon, "remember", "use", "postgres", "-w", "alice", "-t", "db", "--critical",
        "--type", "decision", "--project", "/repo", "--private", "--agent", "a1",
    )  # fmt: skip
    assert code == 0
    assert capsys.readouterr().out == "Saved m1\n"
    (request,) = fake_daemon.requests
    assert request.headers["x-signet-agent-id"] == "a1"
    assert request.body == {
        "content": "use postgres",
        "who": "alice",
        "tags": ["db"],
        "importance": 1.0,
        "pinned": True,
        "type": "decision",
        "project": "/repo",
        "visibility": "private",
        "agentId": "a1",
    }


def test_remember_deduped_message(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    fake_daemon.reply("POST", "/api/memory/remember", 200, {"id": "m1", "deduped": True})
    assert call(fake_daemon, "remember", "x") == 0
    assert capsys.readouterr().out == "Already stored m1 (deduped)\n"


@pytest.mark.parametrize("content", ["", "   ", "\n\t"])
def test_empty_content_sends_nothing(
    fake_daemon: FakeDaemon, capsys: Capture, content: str
) -> None:
    assert call(fake_daemon, "remember", content) == 2
    assert "content is empty" in capsys.readouterr().err
    assert fake_daemon.requests == []


def test_remember_reads_stdin_for_dash(fake_daemon: FakeDaemon) -> None:
    fake_daemon.reply("POST", "/api/memory/remember", 200, {"id": "m9"})
    parser = build_parser()
    args = parser.parse_args(["remember", "-"])
    out = io.StringIO()
    ctx = CliContext(
        env={"SIGNET_DAEMON_URL": fake_daemon.url},
        out=out,
        err=io.StringIO(),
        stdin=io.StringIO("line one\nline two\n"),
    )
    assert run(args, ctx, parser) == 0
    assert fake_daemon.requests[0].body == {"content": "line one\nline two\n"}
    assert out.getvalue() == "Saved m9\n"


def test_remember_empty_stdin_is_refused(fake_daemon: FakeDaemon) -> None:
    parser = build_parser()
    err = io.StringIO()
    ctx = CliContext(env={"SIGNET_DAEMON_URL": fake_daemon.url}, err=err, stdin=io.StringIO(""))
    assert run(parser.parse_args(["remember", "-"]), ctx, parser) == 2
    assert fake_daemon.requests == []


def test_recall_json_prints_raw_answer(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    answer = {"results": [{"id": "m1", "content": "ü", "score": 0.5}], "method": "hybrid"}
    fake_daemon.reply("POST", "/api/memory/recall", 200, answer)
    assert call(fake_daemon, "recall", "q", "--json") == 0
    assert json.loads(capsys.readouterr().out) == answer


def test_recall_empty_prints_no_match(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    fake_daemon.reply("POST", "/api/memory/recall", 200, {"results": []})
    assert call(fake_daemon, "recall", "nothing") == 0
    assert capsys.readouterr().out == "No memories matched.\n"


def test_daemon_4xx_message_exit_2(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    fake_daemon.reply("GET", "/api/memory/nope", 404, {"error": "memory not found"})
    assert call(fake_daemon, "memory", "get", "nope") == 2
    captured = capsys.readouterr()
    assert captured.err == "error: memory not found\n"
    assert captured.out == ""


@pytest.mark.parametrize("status", [429, 500, 503])
def test_daemon_5xx_and_429_exit_1(fake_daemon: FakeDaemon, capsys: Capture, status: int) -> None:
    fake_daemon.reply("POST", "/api/memory/recall", status, {"error": "busy", "requestId": "r1"})
    assert call(fake_daemon, "recall", "q") == 1
    err = capsys.readouterr().err
    assert err.startswith("error: busy")
    assert "Traceback" not in err


def test_daemon_down_exit_3(closed_url: str, capsys: Capture) -> None:
    assert main(["recall", "q"], env={"SIGNET_DAEMON_URL": closed_url}) == 3
    err = capsys.readouterr().err
    assert err.strip() == (
        f"Signet daemon is not running at {closed_url} — start it with `{start_command()}`"
    )
    # The suite runs from the checkout's .venv: the hint must be the command that works there.
    assert start_command().endswith("uv run signet-desktop --headless")


def test_host_and_port_env_are_used(closed_url: str, capsys: Capture) -> None:
    port = closed_url.rsplit(":", 1)[1]
    assert main(["status"], env={"SIGNET_HOST": "127.0.0.1", "SIGNET_PORT": port}) == 3
    assert f"http://127.0.0.1:{port}" in capsys.readouterr().err


def test_bad_port_env_exit_2(capsys: Capture) -> None:
    assert main(["status"], env={"SIGNET_PORT": "http"}) == 2
    assert "SIGNET_PORT must be a port number" in capsys.readouterr().err


def test_token_from_env(fake_daemon: FakeDaemon) -> None:
    fake_daemon.reply("POST", "/api/memory/recall", 200, {"results": []})
    call(fake_daemon, "recall", "q", SIGNET_TOKEN="tok")
    assert fake_daemon.requests[0].headers["authorization"] == "Bearer tok"


def test_forget_sends_reason_force_version(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    fake_daemon.reply("DELETE", "/api/memory/m%2F1", 200, {"success": True})
    fake_daemon.reply("DELETE", "/api/memory/m/1", 200, {"success": True})
    code = call(
        fake_daemon, "memory", "forget", "m/1", "--reason", "old", "--force", "--if-version", "3"
    )
    assert code == 0
    request = fake_daemon.requests[0]
    assert request.method == "DELETE"
    assert request.path == "/api/memory/m%2F1"  # an id can never escape its route
    assert request.body == {"reason": "old", "force": True, "if_version": 3}
    assert capsys.readouterr().out.startswith("Forgot m/1")


def test_forget_and_recover_without_reason_send_the_documented_default(
    fake_daemon: FakeDaemon, capsys: Capture
) -> None:
    fake_daemon.reply("DELETE", "/api/memory/m1", 200, {"status": "deleted"})
    fake_daemon.reply("POST", "/api/memory/m1/recover", 200, {"status": "recovered"})
    assert call(fake_daemon, "memory", "forget", "m1") == 0
    assert call(fake_daemon, "memory", "recover", "m1") == 0
    assert fake_daemon.requests[0].body == {"reason": "forgotten with signet memory forget"}
    assert fake_daemon.requests[1].body == {"reason": "recovered with signet memory recover"}


def test_recover_and_history(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    fake_daemon.reply("POST", "/api/memory/m1/recover", 200, {"status": "recovered"})
    fake_daemon.reply(
        "GET",
        "/api/memory/m1/history",
        200,
        {
            "memoryId": "m1",
            "count": 2,
            "history": [
                {"event": "created", "changed_by": "user", "created_at": "2025-01-01T00:00:00Z",
                 "new_content": "hello"},
                {"event": "deleted", "changed_by": "user", "reason": "old",
                 "created_at": "2025-01-02T00:00:00Z"},
            ],
        },
    )  # fmt: skip
    assert call(fake_daemon, "memory", "recover", "m1") == 0
    assert fake_daemon.requests[0].body == {"reason": "recovered with signet memory recover"}
    assert call(fake_daemon, "memory", "history", "m1", "-l", "5") == 0
    assert fake_daemon.requests[1].query == {"limit": ["5"]}
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "Recovered m1"
    assert "created" in out and "deleted" in out and "old" in out


def test_status_summarises(fake_daemon: FakeDaemon, capsys: Capture) -> None:
    fake_daemon.reply(
        "GET", "/health", 200,
        {"status": "ok", "version": "0.1.0", "pid": 42, "uptime": 3725, "agentsDir": "/ws"},
    )  # fmt: skip
    fake_daemon.reply(
        "GET", "/api/status", 200,
        {"vector": {"available": True, "version": "v0.1.9", "error": None},
         "embedding": {"provider": "native", "model": "all-MiniLM-L6-v2", "dimensions": 384,
                       "coverage": {"generation": 1, "status": "active",
                                    "embedded": 5, "total": 7}}},
    )  # fmt: skip
    fake_daemon.reply(
        "GET", "/api/memories", 200,
        {"memories": [], "stats": {"total": 7, "withEmbeddings": 6, "critical": 1}},
    )  # fmt: skip
    assert call(fake_daemon, "status") == 0
    out = capsys.readouterr().out
    assert f"daemon      {fake_daemon.url}" in out
    assert "ok (version 0.1.0, pid 42, up 1h 2m 5s)" in out
    assert "memories    7 (1 pinned)\n" in out
    assert "sqlite-vec  loaded (v0.1.9)" in out
    # One embedded figure only: the coverage, never the listing's differently-counted one.
    assert "native all-MiniLM-L6-v2 (384 dims, coverage 5/7)" in out
    assert "6 embedded" not in out
    assert call(fake_daemon, "status", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["memories"]["total"] == 7 and data["url"] == fake_daemon.url
