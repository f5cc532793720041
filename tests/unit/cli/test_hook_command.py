"""`signet hook`: payload mapping, output, fail-open paths and the light import path."""

from __future__ import annotations

import io
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_fakes import FakeDaemon

from signet_desktop.cli import hook
from signet_desktop.cli.main import main as cli_main

PAYLOADS = Path(__file__).resolve().parents[1] / "harness" / "fixtures" / "payloads"
# `cli/main.py` starts importing, then hands `hook` to cli/hook.py before its own imports.
LIGHT_MODULES = {
    "signet_desktop.cli",
    "signet_desktop.cli.main",
    "signet_desktop.cli.hook",
    "signet_desktop.domain",
    "signet_desktop.domain.address",
}
SESSION = "2f0c6a1e-7d3b-4a8e-9f5c-1b2d3e4f5a6b"


def payload(name: str) -> bytes:
    return (PAYLOADS / f"{name}.json").read_bytes()


class Run:
    def __init__(self, code: int, out: str, err: str, seconds: float) -> None:
        self.code, self.out, self.err, self.seconds = code, out, err, seconds


def run_hook(args: list[str], stdin: bytes, env: dict[str, str]) -> Run:
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    code = hook.main(args, env, io.BytesIO(stdin), out, err)
    return Run(code, out.getvalue(), err.getvalue(), time.monotonic() - started)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"SIGNET_WORKSPACE": str(tmp_path / "ws"), "HOME": str(tmp_path)}


def hooks_log(env: dict[str, str]) -> Path:
    return Path(env["SIGNET_WORKSPACE"]) / ".daemon" / "logs" / "hooks.log"


def test_prompt_submit_maps_claude_code_payload_and_prints_inject(
    fake_daemon: FakeDaemon, env: dict[str, str]
) -> None:
    fake_daemon.reply(
        "POST", "/api/hooks/user-prompt-submit", 200, {"inject": "billing uses postgres 16"}
    )
    env["SIGNET_DAEMON_URL"] = fake_daemon.url
    run = run_hook(
        ["user-prompt-submit", "-H", "claude-code"], payload("claude_code_user_prompt_submit"), env
    )
    assert (run.code, run.out, run.err) == (0, "billing uses postgres 16\n", "")
    [request] = fake_daemon.requests
    assert request.body == {
        "harness": "claude-code",
        "runtimePath": "legacy",
        "sessionKey": SESSION,
        "project": "/work/billing",
        "userPrompt": "which database does the billing service use?",
        "transcriptPath": f"/home/dev/.claude/projects/-work-billing/{SESSION}.jsonl",
    }
    assert request.headers["content-type"] == "application/json"
    assert request.headers["x-signet-runtime-path"] == "legacy"
    assert request.headers["x-signet-actor-type"] == "harness"
    assert not hooks_log(env).exists()


def test_project_flag_wins_over_cwd_on_every_event_and_pre_compact_prints_summary_prompt(
    fake_daemon: FakeDaemon, env: dict[str, str]
) -> None:
    fake_daemon.reply(
        "POST", "/api/hooks/pre-compaction", 200, {"summaryPrompt": "Summarise.", "guidelines": ""}
    )
    env["SIGNET_DAEMON_URL"] = fake_daemon.url
    for event in ("pre-compaction", "pre-compact"):
        run = run_hook(
            [event, "-H", "claude-code", "--project", "/work/other"],
            payload("claude_code_pre_compact"),
            env,
        )
        assert (run.code, run.out, run.err) == (0, "Summarise.\n", "")
    assert [r.path for r in fake_daemon.requests] == ["/api/hooks/pre-compaction"] * 2
    assert all(r.body["project"] == "/work/other" for r in fake_daemon.requests)


def test_session_end_sends_transcript_session_cwd_and_reason(
    fake_daemon: FakeDaemon, env: dict[str, str]
) -> None:
    fake_daemon.reply("POST", "/api/hooks/session-end", 200, {"memoriesSaved": 0})
    env["SIGNET_DAEMON_URL"] = fake_daemon.url
    run = run_hook(["session-end", "-H", "codex"], payload("codex_session_end"), env)
    assert (run.code, run.out, run.err) == (0, "", "")
    body = fake_daemon.requests[0].body
    assert body["harness"] == "codex" and "reason" not in body  # Codex sends none
    assert body["sessionId"] == body["sessionKey"] == "019a1b2c-3d4e-7f60-8a9b-0c1d2e3f4a5b"
    assert body["cwd"] == body["project"] == "/work/billing"
    assert body["transcriptPath"].endswith("019a1b2c-3d4e-7f60-8a9b-0c1d2e3f4a5b.jsonl")


def test_signet_shaped_payload_takes_session_id_user_prompt_and_last_assistant_message(
    fake_daemon: FakeDaemon, env: dict[str, str]
) -> None:
    fake_daemon.reply("POST", "/api/hooks/user-prompt-submit", 200, {"inject": ""})
    env["SIGNET_DAEMON_URL"] = fake_daemon.url
    run = run_hook(
        ["user-prompt-submit", "--harness=opencode"], payload("signet_user_prompt_messages"), env
    )
    assert (run.code, run.out) == (0, "")  # an empty inject prints nothing
    body = fake_daemon.requests[0].body
    assert body["sessionKey"] == "oc-77" and body["project"] == "/work/web"
    assert body["userPrompt"] == "and the frontend?"
    assert body["lastAssistantMessage"] == "Svelte on the front,\nGo behind it."


@pytest.mark.parametrize("stdin", [b"", b"{not json", b"[1, 2]", b"\xff\xfe", b"null"])
def test_malformed_stdin_is_an_empty_payload(
    fake_daemon: FakeDaemon, env: dict[str, str], stdin: bytes
) -> None:
    fake_daemon.reply("POST", "/api/hooks/session-start", 200, {"inject": "hello"})
    env["SIGNET_DAEMON_URL"] = fake_daemon.url
    run = run_hook(["session-start", "-H", "claude-code"], stdin, env)
    assert (run.code, run.out, run.err) == (0, "hello\n", "")
    assert fake_daemon.requests[0].body == {"harness": "claude-code", "runtimePath": "legacy"}


def test_no_daemon_exits_0_with_one_stderr_line_and_one_log_line(
    closed_url: str, env: dict[str, str]
) -> None:
    env["SIGNET_DAEMON_URL"] = closed_url
    run = run_hook(["session-start", "-H", "claude-code"], payload("codex_session_start"), env)
    assert (run.code, run.out) == (0, "")
    assert run.err == "[signet] daemon not running, hook skipped\n"
    lines = hooks_log(env).read_text().splitlines()
    assert len(lines) == 1 and "event=session-start harness=claude-code" in lines[0]
    assert "daemon not running" in lines[0]
    assert hooks_log(env).stat().st_mode & 0o777 == 0o600
    assert hooks_log(env).parent.stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("status", [500, 503, 409, 400])
def test_non_2xx_fails_open(fake_daemon: FakeDaemon, env: dict[str, str], status: int) -> None:
    fake_daemon.reply("POST", "/api/hooks/user-prompt-submit", status, {"error": "boom"})
    env["SIGNET_DAEMON_URL"] = fake_daemon.url
    run = run_hook(["user-prompt-submit", "-H", "claude-code"], b"{}", env)
    assert (run.code, run.out) == (0, "")
    assert run.err == f"[signet] daemon answered HTTP {status}, hook skipped\n"
    assert len(hooks_log(env).read_text().splitlines()) == 1


def test_non_json_answer_fails_open(fake_daemon: FakeDaemon, env: dict[str, str]) -> None:
    fake_daemon.reply("POST", "/api/hooks/session-start", 200, "<html>proxy</html>")
    env["SIGNET_DAEMON_URL"] = fake_daemon.url
    run = run_hook(["session-start", "-H", "claude-code"], b"{}", env)
    assert (run.code, run.out) == (0, "")
    assert "other than JSON" in run.err


@pytest.fixture
def hanging_url() -> Iterator[str]:
    """Accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.05)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(2)
    for conn in held:
        conn.close()
    server.close()


def test_a_hanging_daemon_costs_the_timeout_and_no_more(
    hanging_url: str, env: dict[str, str]
) -> None:
    env.update(SIGNET_DAEMON_URL=hanging_url, SIGNET_PROMPT_SUBMIT_TIMEOUT="300")
    run = run_hook(["user-prompt-submit", "-H", "claude-code"], b"{}", env)
    assert (run.code, run.out) == (0, "")
    assert run.err == "[signet] daemon did not answer within 0.3 s, hook skipped\n"
    assert 0.25 < run.seconds < 1.5


def test_a_stdin_that_never_closes_cannot_hold_the_hook(
    fake_daemon: FakeDaemon, env: dict[str, str]
) -> None:
    class Endless(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
            time.sleep(10)
            return 0

    env.update(SIGNET_DAEMON_URL=fake_daemon.url, SIGNET_SESSION_START_TIMEOUT="200")
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    code = hook.main(["session-start", "-H", "x"], env, Endless(), out, err)  # type: ignore[arg-type]
    assert code == 0 and time.monotonic() - started < 8  # not the stdin's 10 s: the deadline
    assert "did not answer within 0.2 s" in err.getvalue() and fake_daemon.requests == []


@pytest.mark.parametrize("name", ["SIGNET_NO_HOOKS", "SIGNET_BYPASS"])
def test_bypass_env_skips_without_contacting_the_daemon(
    fake_daemon: FakeDaemon, env: dict[str, str], name: str
) -> None:
    env.update(SIGNET_DAEMON_URL=fake_daemon.url, **{name: "1"})
    run = run_hook(["session-start", "-H", "claude-code"], b"{}", env)
    assert (run.code, run.out, run.err) == (0, "", "")
    assert fake_daemon.requests == [] and not hooks_log(env).exists()


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["session-start"],
        ["bogus", "-H", "x"],
        ["session-start", "-H"],
        ["session-start", "-H", "x", "--nope"],
    ],
)
def test_bad_arguments_exit_0_not_2(
    fake_daemon: FakeDaemon, env: dict[str, str], args: list[str]
) -> None:
    env["SIGNET_DAEMON_URL"] = fake_daemon.url
    run = run_hook(args, b"{}", env)
    assert (run.code, run.out) == (0, "")
    assert run.err.startswith("[signet] bad arguments") and run.err.count("\n") == 1
    assert fake_daemon.requests == []


def test_an_unwritable_log_never_breaks_the_hook(closed_url: str, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    env = {"SIGNET_WORKSPACE": str(blocker), "SIGNET_DAEMON_URL": closed_url}
    run = run_hook(["session-start", "-H", "claude-code"], b"{}", env)
    assert run.code == 0 and "daemon not running" in run.err


def test_timeouts_default_and_env_overrides_in_ms() -> None:
    assert hook.timeout_for("session-start", {}) == 5.0
    assert hook.timeout_for("session-end", {}) == 60.0
    assert hook.timeout_for("user-prompt-submit", {"SIGNET_PROMPT_SUBMIT_TIMEOUT": "1500"}) == 1.5
    assert hook.timeout_for("session-start", {"SIGNET_SESSION_START_TIMEOUT": "soon"}) == 5.0


def test_daemon_url_resolution() -> None:
    assert hook.daemon_url(None, {}) == "http://127.0.0.1:3850"
    assert hook.daemon_url(None, {"SIGNET_PORT": "4000"}) == "http://127.0.0.1:4000"
    assert hook.daemon_url(None, {"SIGNET_DAEMON_URL": "http://h:1/"}) == "http://h:1"
    assert hook.daemon_url("http://x:2", {"SIGNET_DAEMON_URL": "http://h:1"}) == "http://x:2"
    assert hook.split_url("http://[::1]:9/base") == ("http", "::1", 9, "/base")


def test_chunked_answer_is_decoded() -> None:
    raw = (
        b'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{"a":\r\n3\r\n 1}\r\n0\r\n\r\n'
    )
    assert hook.parse_response(raw) == (200, b'{"a": 1}')


def test_the_full_cli_runs_the_hook_too(fake_daemon: FakeDaemon, env: dict[str, str]) -> None:
    fake_daemon.reply("POST", "/api/hooks/session-start", 200, {"inject": "hi"})
    env["SIGNET_DAEMON_URL"] = fake_daemon.url
    assert cli_main(["hook", "session-start", "-H", "claude-code"], env=env) == 0
    assert fake_daemon.requests[0].body["harness"] == "claude-code"


def test_the_hook_import_path_stays_light(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("signet")
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", str(script), "hook", "session-start", "-H", "x"],
        input=b"{}",
        capture_output=True,
        env={"SIGNET_DAEMON_URL": "http://127.0.0.1:9", "SIGNET_WORKSPACE": str(tmp_path)},
        timeout=30,
    )
    assert proc.returncode == 0
    imported = {line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines()}
    assert "signet_desktop.cli.hook" in imported
    heavy = {"pydantic", "fastapi", "httpx", "numpy", "http.client", "argparse", "typing"}
    assert not heavy & imported, heavy & imported
    assert not {m for m in imported if m.startswith("signet_desktop.") and m not in LIGHT_MODULES}
