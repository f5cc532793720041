"""`signet hook` as the harness runs it: the installed script in a child process, the payload
on stdin, against a real served daemon, no daemon, a daemon answering 500 and one that hangs.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from support.daemon import CliDaemon, closed_loopback_url, run_daemon

from signet_desktop.embedding.hashing import HashEmbedder

pytestmark = pytest.mark.slow

PAYLOADS = Path(__file__).resolve().parents[1] / "unit" / "harness" / "fixtures" / "payloads"
SIGNET = Path(sys.executable).with_name("signet")
SESSION = "2f0c6a1e-7d3b-4a8e-9f5c-1b2d3e4f5a6b"
NOT_RUNNING = "[signet] daemon not running, hook skipped\n"
CONFIG = {"hooks": {"userPromptSubmit": {"minScore": 0.05}}}  # the hash embedder scores low


class Result:
    def __init__(self, proc: subprocess.CompletedProcess[bytes], seconds: float) -> None:
        self.code = proc.returncode
        self.out = proc.stdout.decode()
        self.err = proc.stderr.decode()
        self.seconds = seconds


def hook(url: str, home: Path, stdin: bytes, *args: str, **env: str) -> Result:
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNET_")}
    child_env.update(HOME=str(home), SIGNET_DAEMON_URL=url, SIGNET_WORKSPACE=str(home / "ws"))
    child_env.update(env)
    started = time.monotonic()
    proc = subprocess.run(
        [str(SIGNET), "hook", *args], input=stdin, capture_output=True, env=child_env, timeout=90
    )
    return Result(proc, time.monotonic() - started)


def payload(name: str, **changes: str) -> bytes:
    return json.dumps({**json.loads((PAYLOADS / f"{name}.json").read_text()), **changes}).encode()


def hooks_log(home: Path) -> list[str]:
    path = home / "ws" / ".daemon" / "logs" / "hooks.log"
    return path.read_text().splitlines() if path.exists() else []


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[CliDaemon]:
    with run_daemon(tmp_path / "daemon-ws", HashEmbedder(64), config=CONFIG) as served:
        yield served


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def remember(daemon: CliDaemon, text: str, project: str | None = None) -> None:
    body = {"content": text, **({"project": project} if project else {})}
    reply = httpx.post(f"{daemon.url}/api/memory/remember", json=body, timeout=10)
    assert reply.status_code == 200, reply.text


def test_a_claude_code_session_through_command_hooks(
    daemon: CliDaemon, home: Path, tmp_path: Path
) -> None:
    remember(daemon, "billing runs on postgres 16 in eu-west", project="/work/billing")
    for filler in ("deploys go out on tuesdays", "the staging cluster has four nodes"):
        remember(daemon, filler)
    start = hook(daemon.url, home, payload("claude_code_session_start"), "session-start",
                 "-H", "claude-code")  # fmt: skip
    assert (start.code, start.err) == (0, "")
    assert "postgres 16" in start.out

    prompt = payload("claude_code_user_prompt_submit", prompt="what runs billing, postgres?")
    submit = hook(daemon.url, home, prompt, "user-prompt-submit", "-H", "claude-code")
    assert (submit.code, submit.err) == (0, "")

    compact = hook(daemon.url, home, payload("claude_code_pre_compact"), "pre-compact",
                   "-H", "claude-code", "--project", "/work/billing")  # fmt: skip
    assert (compact.code, compact.err) == (0, "") and compact.out.strip()

    transcript = daemon.workspace / "claude" / "projects" / "-work-billing" / f"{SESSION}.jsonl"
    transcript.parent.mkdir(parents=True)
    lines = [
        {"type": "user", "uuid": "u1", "sessionId": SESSION,
         "message": {"role": "user", "content": "what runs billing?"}},
        {"type": "assistant", "uuid": "a1", "sessionId": SESSION,
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Postgres."}]}},
    ]  # fmt: skip
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    ended = payload("claude_code_session_end", transcript_path=str(transcript))
    end = hook(daemon.url, home, ended, "session-end", "-H", "claude-code")
    assert (end.code, end.out, end.err) == (0, "", "")
    completed = daemon.scalar(
        "SELECT COUNT(*) FROM session_transcripts WHERE session_key = :key"
        " AND completed_at IS NOT NULL",
        key=SESSION,
    )
    assert completed == 1
    assert hooks_log(home) == []


def test_a_codex_session_start_goes_to_the_daemon(daemon: CliDaemon, home: Path) -> None:
    remember(daemon, "codex reads the billing runbook first", project="/work/billing")
    result = hook(daemon.url, home, payload("codex_session_start"), "session-start", "-H", "codex")
    assert (result.code, result.err) == (0, "")
    assert "billing runbook" in result.out


def test_malformed_stdin_still_exits_0(daemon: CliDaemon, home: Path) -> None:
    result = hook(daemon.url, home, b"{oops", "session-start", "-H", "claude-code")
    assert result.code == 0 and result.err == ""


def test_no_daemon_exits_0_at_once_with_one_line(home: Path) -> None:
    result = hook(closed_loopback_url(), home, payload("claude_code_user_prompt_submit"),
                  "user-prompt-submit", "-H", "claude-code")  # fmt: skip
    assert (result.code, result.out, result.err) == (0, "", NOT_RUNNING)
    assert result.seconds < 5
    [line] = hooks_log(home)
    assert "event=user-prompt-submit harness=claude-code daemon not running" in line


def test_no_hooks_env_skips_without_a_daemon_or_a_log(home: Path) -> None:
    result = hook(closed_loopback_url(), home, b"{}", "session-start", "-H", "claude-code",
                  SIGNET_NO_HOOKS="1")  # fmt: skip
    assert (result.code, result.out, result.err) == (0, "", "") and hooks_log(home) == []


class Scripted(BaseHTTPRequestHandler):
    mode = "500"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.mode == "hang":
            time.sleep(30)
            return
        body = b'{"error": "boom"}'
        self.send_response(500)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(params=["500", "hang"])
def bad_daemon(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    handler = type("Handler", (Scripted,), {"mode": request.param})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield request.param, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_failing_or_hanging_daemon_costs_at_most_the_timeout(
    bad_daemon: tuple[str, str], home: Path
) -> None:
    mode, url = bad_daemon
    result = hook(url, home, payload("claude_code_user_prompt_submit"), "user-prompt-submit",
                  "-H", "claude-code", SIGNET_PROMPT_SUBMIT_TIMEOUT="1000")  # fmt: skip
    assert (result.code, result.out) == (0, "")
    if mode == "500":
        assert result.err == "[signet] daemon answered HTTP 500, hook skipped\n"
    else:
        assert result.err == "[signet] daemon did not answer within 1 s, hook skipped\n"
        assert result.seconds >= 1.0
    assert result.seconds < 3.0
    assert len(hooks_log(home)) == 1


def test_the_default_timeout_bounds_a_hanging_session_start(home: Path) -> None:
    with socket.socket() as listener:  # accepts (via the backlog) and never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        result = hook(url, home, b"{}", "session-start", "-H", "codex")
    assert result.code == 0 and "within 5 s" in result.err
    assert 5.0 <= result.seconds < 7.0
