"""`signet hook <event> -H <harness>`: a harness's payload on stdin -> the daemon -> its stdout.

For harnesses that can only run a command per event (Claude Code's command hooks, the Codex
wrapper). It fails open: whatever goes wrong (no daemon, a timeout, a non-2xx answer, bad
arguments, unreadable stdin) it prints one `[signet] ...` line on stderr, appends one line to
`<workspace>/.daemon/logs/hooks.log`, and exits 0, so the agent carries on. The whole call is
bounded by the event's timeout. This module is the hook's entire import path: standard library
only (no httpx, pydantic, FastAPI or numpy), dispatched by `cli/main.py` before anything else.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time

from signet_desktop.domain.address import DEFAULT_HOST, DEFAULT_PORT

# `typing`, `pathlib`, `argparse`, `dataclasses` and `http.client` each cost 20-90 ms of a
# cold start on a busy 2-core machine; the hook runs once per prompt, so it avoids them all
# (mypy reads this name as typing.TYPE_CHECKING).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping, Sequence
    from typing import Any, BinaryIO, TextIO

    from signet_desktop.cli.context import CliContext

# CLI event name -> route under /api/hooks/ (Claude Code calls it PreCompact).
EVENTS = {
    "session-start": "session-start",
    "user-prompt-submit": "user-prompt-submit",
    "pre-compaction": "pre-compaction",
    "pre-compact": "pre-compaction",
    "compaction-complete": "compaction-complete",
    "session-end": "session-end",
}
# route -> (environment override in milliseconds, default milliseconds)
TIMEOUTS_MS = {
    "session-start": ("SIGNET_SESSION_START_TIMEOUT", 5000),
    "user-prompt-submit": ("SIGNET_PROMPT_SUBMIT_TIMEOUT", 5000),
    "pre-compaction": ("SIGNET_PRE_COMPACTION_TIMEOUT", 5000),
    "compaction-complete": ("SIGNET_COMPACTION_COMPLETE_TIMEOUT", 5000),
    "session-end": ("SIGNET_SESSION_END_TIMEOUT", 60000),
}
SKIP_ENV = ("SIGNET_NO_HOOKS", "SIGNET_BYPASS")
MAX_STDIN_BYTES = 8 * 1024 * 1024
MAX_ANSWER_BYTES = 4 * 1024 * 1024
HEADERS = {
    "content-type": "application/json",
    "x-signet-runtime-path": "legacy",
    "x-signet-actor": "signet-hook",
    "x-signet-actor-type": "harness",
}
LOG_NAME = "hooks.log"
NOT_RUNNING = "daemon not running, hook skipped"


class HookSkipped(Exception):
    """The hook did nothing useful; the message says why (one line, no traceback)."""


class HookCall:
    """One invocation, resolved from the arguments and the environment."""

    __slots__ = ("agent", "harness", "project", "route", "timeout_s", "token", "url")

    def __init__(
        self,
        *,
        route: str,
        harness: str,
        url: str,
        timeout_s: float,
        project: str | None = None,
        agent: str | None = None,
        token: str | None = None,
    ) -> None:
        self.route = route
        self.harness = harness
        self.url = url
        self.timeout_s = timeout_s
        self.project = project
        self.agent = agent
        self.token = token


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def skipped_by_env(env: Mapping[str, str]) -> bool:
    """SIGNET_NO_HOOKS=1 or SIGNET_BYPASS=1: do nothing at all."""
    return any(_truthy(env.get(name)) for name in SKIP_ENV)


def timeout_for(route: str, env: Mapping[str, str]) -> float:
    """The event's total budget in seconds (env overrides in ms, as Signet reads them)."""
    name, default_ms = TIMEOUTS_MS[route]
    raw = env.get(name, "").strip()
    try:
        ms = int(raw) if raw else default_ms
    except ValueError:
        ms = default_ms
    return max(ms, 1) / 1000.0


def daemon_url(cli_url: str | None, env: Mapping[str, str]) -> str:
    """`--url` > SIGNET_DAEMON_URL > http://SIGNET_HOST:SIGNET_PORT (as the rest of the CLI)."""
    url = (cli_url or env.get("SIGNET_DAEMON_URL", "")).strip()
    if url:
        return url.rstrip("/")
    host = env.get("SIGNET_HOST", "").strip() or DEFAULT_HOST
    if host in ("0.0.0.0", "::"):
        host = DEFAULT_HOST
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    port = env.get("SIGNET_PORT", "").strip() or str(DEFAULT_PORT)
    return f"http://{host}:{port}"


# -- payload mapping ------------------------------------------------------------------------


def _text(payload: Mapping[str, Any], *names: str) -> str | None:
    for name in names:
        value = payload.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content or None
    if isinstance(content, list):
        parts = [
            block["text"]
            for block in content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        ]
        return "\n".join(parts) or None
    return None


def last_assistant_message(payload: Mapping[str, Any]) -> str | None:
    """`last_assistant_message`, else the text of the last assistant entry of `messages[]`."""
    direct = _text(payload, "last_assistant_message", "lastAssistantMessage")
    if direct:
        return direct
    messages = payload.get("messages")
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "assistant":
            return _content_text(message.get("content"))
    return None


def hook_body(route: str, payload: Mapping[str, Any], call: HookCall) -> dict[str, Any]:
    """The Signet-shaped body for `route` from a harness payload (unknown fields ignored)."""
    session = _text(payload, "session_id", "sessionId", "sessionKey", "session_key")
    cwd = _text(payload, "cwd")
    body: dict[str, Any] = {"harness": call.harness, "runtimePath": "legacy"}
    if session:
        body["sessionKey"] = session
    project = call.project or cwd
    if project:
        body["project"] = project
    if call.agent:
        body["agentId"] = call.agent
    transcript = _text(payload, "transcript_path", "transcriptPath")
    if route == "user-prompt-submit":
        body["userPrompt"] = _text(payload, "prompt", "user_prompt", "userPrompt", "userMessage")
        last = last_assistant_message(payload)
        if last:
            body["lastAssistantMessage"] = last
        if transcript:
            body["transcriptPath"] = transcript
    elif route == "session-end":
        body.update(transcriptPath=transcript, sessionId=session, cwd=cwd)
        body["reason"] = _text(payload, "reason")
    elif route == "pre-compaction":
        body["sessionContext"] = _text(payload, "session_context", "sessionContext")
        count = payload.get("message_count", payload.get("messageCount"))
        if isinstance(count, int) and not isinstance(count, bool):
            body["messageCount"] = count
        elif isinstance(payload.get("messages"), list):
            body["messageCount"] = len(payload["messages"])
    elif route == "compaction-complete":
        body["summary"] = _text(payload, "summary", "compact_summary", "compactSummary")
    return {key: value for key, value in body.items() if value is not None}


def hook_output(route: str, answer: Any) -> str:
    """What the harness reads on stdout: `summaryPrompt` before compaction, else `inject`."""
    if not isinstance(answer, dict):
        return ""
    key = "summaryPrompt" if route == "pre-compaction" else "inject"
    value = answer.get(key)
    return value if isinstance(value, str) else ""


# -- transport ------------------------------------------------------------------------------


def parse_payload(data: bytes) -> dict[str, Any]:
    """stdin as a JSON object; anything else (empty, malformed, a list) is `{}`."""
    try:
        value = json.loads(data.decode("utf-8", errors="replace")) if data.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def read_stdin(stream: BinaryIO | None) -> bytes:
    """All of stdin (bounded); a terminal or a closed stream reads as nothing."""
    if stream is None:
        return b""
    try:
        if stream.isatty():
            return b""
        return stream.read(MAX_STDIN_BYTES)
    except (OSError, ValueError):
        return b""


def split_url(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path prefix) of an http(s) base URL, without urllib.parse."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not rest:
        raise HookSkipped(f"bad daemon URL {url!r}, hook skipped")
    netloc, slash, path = rest.partition("/")
    netloc = netloc.rpartition("@")[2]
    if netloc.startswith("["):
        host, _, tail = netloc[1:].partition("]")
        port_text = tail.removeprefix(":")
    else:
        host, _, port_text = netloc.partition(":")
    default = 443 if scheme.lower() == "https" else 80
    try:
        port = int(port_text) if port_text else default
    except ValueError:
        raise HookSkipped(f"bad daemon URL {url!r}, hook skipped") from None
    prefix = ("/" + path).rstrip("/") if slash else ""
    return scheme.lower(), host, port, prefix


def _request_headers(call: HookCall) -> dict[str, str]:
    headers = dict(HEADERS)
    if call.agent:
        headers["x-signet-agent-id"] = call.agent
    if call.token:
        headers["authorization"] = f"Bearer {call.token}"
    return headers


def post(call: HookCall, body: Mapping[str, Any]) -> Any:
    """POST the body to the daemon; HookSkipped for every failure, with a one-line reason.

    Plain HTTP/1.1 over a socket (`Connection: close`, read to EOF): the daemon is local, and
    http.client alone would add ~90 ms of imports to every prompt. https goes through urllib.
    """
    scheme, host, port, prefix = split_url(call.url)
    data = json.dumps(body).encode("utf-8")
    path = f"{prefix}/api/hooks/{call.route}"
    if scheme == "https":
        status, raw = _post_urllib(call, f"{call.url}/api/hooks/{call.route}", data)
    else:
        status, raw = _post_socket(call, host, port, path, data)
    if not 200 <= status < 300:
        raise HookSkipped(f"daemon answered HTTP {status}, hook skipped")
    try:
        return json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except ValueError:
        raise HookSkipped("daemon answered something other than JSON, hook skipped") from None


def _post_socket(call: HookCall, host: str, port: int, path: str, data: bytes) -> tuple[int, bytes]:
    deadline = time.monotonic() + call.timeout_s
    lines = [f"POST {path} HTTP/1.1", f"host: {host}:{port}", "connection: close"]
    lines += [f"{name}: {value}" for name, value in _request_headers(call).items()]
    lines.append(f"content-length: {len(data)}")
    request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", errors="replace") + data
    chunks: list[bytes] = []
    try:
        with socket.create_connection((host, port), timeout=call.timeout_s) as sock:
            sock.sendall(request)
            size = 0
            while size <= MAX_ANSWER_BYTES:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                sock.settimeout(remaining)
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
    except TimeoutError:
        raise HookSkipped(_timeout_reason(call)) from None
    except ConnectionRefusedError:
        raise HookSkipped(NOT_RUNNING) from None
    except OSError as exc:  # unknown host, reset mid-answer, unreachable network
        raise HookSkipped(f"daemon unreachable ({exc.strerror or exc}), hook skipped") from None
    return parse_response(b"".join(chunks))


def parse_response(raw: bytes) -> tuple[int, bytes]:
    """(status, body) of a whole HTTP/1.1 answer read to EOF (chunked or not)."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    status_line, _, header_block = head.partition(b"\r\n")
    parts = status_line.split(b" ", 2)
    if not sep or len(parts) < 2 or not parts[0].startswith(b"HTTP/"):
        raise HookSkipped("daemon closed the connection without an answer, hook skipped")
    try:
        status = int(parts[1])
    except ValueError:
        raise HookSkipped("daemon sent a malformed answer, hook skipped") from None
    headers = {}
    for line in header_block.split(b"\r\n"):
        name, _, value = line.partition(b":")
        headers[name.strip().lower()] = value.strip().lower()
    if headers.get(b"transfer-encoding") == b"chunked":
        body = _dechunk(body)
    elif headers.get(b"content-length", b"").isdigit():
        body = body[: int(headers[b"content-length"])]
    return status, body


def _dechunk(body: bytes) -> bytes:
    out = []
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        try:
            size = int(size_line.split(b";")[0], 16)
        except ValueError:
            break
        if size == 0:
            break
        out.append(rest[:size])
        body = rest[size + 2 :]
    return b"".join(out)


def _post_urllib(call: HookCall, url: str, data: bytes) -> tuple[int, bytes]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=data, headers=_request_headers(call))
    try:
        with urllib.request.urlopen(request, timeout=call.timeout_s) as response:
            return int(response.status), bytes(response.read(MAX_ANSWER_BYTES))
    except urllib.error.HTTPError as exc:
        return int(exc.code), b""
    except TimeoutError:
        raise HookSkipped(_timeout_reason(call)) from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise HookSkipped(_timeout_reason(call)) from None
        raise HookSkipped(NOT_RUNNING) from None
    except OSError as exc:
        raise HookSkipped(f"daemon unreachable ({exc}), hook skipped") from None


def _timeout_reason(call: HookCall) -> str:
    return f"daemon did not answer within {call.timeout_s:g} s, hook skipped"


def run_bounded(call: HookCall, stdin: BinaryIO | None) -> str:
    """Read, map, POST and render within the event's budget, on a thread we can abandon."""
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            payload = parse_payload(read_stdin(stdin))
            answer = post(call, hook_body(call.route, payload, call))
            outcome["text"] = hook_output(call.route, answer)
        except HookSkipped as exc:
            outcome["skipped"] = str(exc)
        except Exception as exc:  # fail open on our own bugs too
            outcome["skipped"] = f"hook failed ({type(exc).__name__}: {exc}), hook skipped"

    # A stdin that never closes or a daemon that drips bytes cannot hold the harness: past
    # the budget the thread is abandoned (daemon=True) and the hook exits 0.
    worker = threading.Thread(target=work, name="signet-hook", daemon=True)
    worker.start()
    worker.join(call.timeout_s)
    if "skipped" in outcome:
        raise HookSkipped(outcome["skipped"])
    if "text" not in outcome:
        raise HookSkipped(_timeout_reason(call))
    return str(outcome["text"])


# -- logging and arguments ------------------------------------------------------------------


def log_path(env: Mapping[str, str]) -> str:
    """`<workspace>/.daemon/logs/hooks.log` (SIGNET_WORKSPACE > SIGNET_PATH > ~/.agents)."""
    root = env.get("SIGNET_WORKSPACE", "").strip() or env.get("SIGNET_PATH", "").strip()
    home = env.get("HOME") or os.path.expanduser("~")
    workspace = os.path.expanduser(root) if root else os.path.join(home, ".agents")
    return os.path.join(workspace, ".daemon", "logs", LOG_NAME)


def log_failure(env: Mapping[str, str], event: str, harness: str, reason: str) -> None:
    """Append one line; a log that cannot be written is ignored (the hook must not fail)."""
    try:
        path = log_path(env)
        logs = os.path.dirname(path)
        for directory in (os.path.dirname(logs), logs):  # .daemon and logs, owner-only if new
            if not os.path.isdir(directory):
                os.makedirs(directory, mode=0o700, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        line = f"{stamp} pid={os.getpid()} event={event} harness={harness} {reason}\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8", errors="replace"))
        finally:
            os.close(fd)
    except (OSError, RuntimeError, ValueError):
        pass


OPTIONS = {"-H": "harness", "--harness": "harness", "--project": "project", "--agent": "agent"}
OPTIONS["--url"] = "url"


def parse_args(argv: Sequence[str]) -> dict[str, str]:
    """`EVENT -H HARNESS [--project P] [--agent A] [--url U]` without argparse (import cost).

    Unknown or missing arguments raise HookSkipped: exit 2 would block a Claude Code prompt.
    """
    values: dict[str, str] = {}
    items = list(argv)
    while items:
        item = items.pop(0)
        name, eq, inline = item.partition("=") if item.startswith("--") else (item, "", "")
        if name in OPTIONS:
            if not eq and not items:
                raise HookSkipped(f"bad arguments ({name} needs a value), hook skipped")
            values[OPTIONS[name]] = inline if eq else items.pop(0)
        elif item.startswith("-") or "event" in values:
            raise HookSkipped(f"bad arguments (unexpected {item!r}), hook skipped")
        else:
            values["event"] = item
    if values.get("event") not in EVENTS:
        known = ", ".join(sorted(EVENTS))
        raise HookSkipped(f"bad arguments (event must be one of {known}), hook skipped")
    if not values.get("harness", "").strip():
        raise HookSkipped("bad arguments (-H HARNESS is required), hook skipped")
    return values


def resolve(values: Mapping[str, str | None], env: Mapping[str, str]) -> HookCall:
    """The call the arguments and environment describe."""
    route = EVENTS[values["event"] or ""]
    return HookCall(
        route=route,
        harness=(values.get("harness") or "").strip().lower(),
        project=values.get("project") or None,
        agent=values.get("agent") or None,
        url=daemon_url(values.get("url"), env),
        timeout_s=timeout_for(route, env),
        token=env.get("SIGNET_TOKEN") or None,
    )


HELP = """\
usage: signet hook EVENT -H HARNESS [--project PATH] [--agent ID] [--url URL]

Run one harness hook: the harness's JSON on stdin, context on stdout. Always exits 0
(fail-open): failures print one [signet] line on stderr and go to .daemon/logs/hooks.log.

events: session-start, user-prompt-submit, pre-compaction (or pre-compact),
        compaction-complete, session-end
environment: SIGNET_NO_HOOKS=1 / SIGNET_BYPASS=1 skip; SIGNET_DAEMON_URL; timeouts in ms:
  SIGNET_SESSION_START_TIMEOUT, SIGNET_PROMPT_SUBMIT_TIMEOUT, SIGNET_PRE_COMPACTION_TIMEOUT,
  SIGNET_COMPACTION_COMPLETE_TIMEOUT (5000 each), SIGNET_SESSION_END_TIMEOUT (60000)
"""


def execute(
    call: HookCall,
    env: Mapping[str, str],
    stdin: BinaryIO | None,
    out: TextIO,
    err: TextIO,
) -> int:
    """Run one resolved hook; always 0."""
    try:
        text = run_bounded(call, stdin)
    except HookSkipped as exc:
        _report(env, err, call.route, call.harness, str(exc))
        return 0
    if text:
        out.write(text if text.endswith("\n") else text + "\n")
        out.flush()
    return 0


def _report(env: Mapping[str, str], err: TextIO, event: str, harness: str, reason: str) -> None:
    try:
        err.write(f"[signet] {reason}\n")
        err.flush()
    except (OSError, ValueError):
        pass
    log_failure(env, event, harness, reason)


def main(
    argv: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    stdin: BinaryIO | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """`signet hook ...` (argv without the leading `hook`); returns the exit status, always 0."""
    env = os.environ if env is None else env
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    if skipped_by_env(env):
        return 0
    argv = list(sys.argv[2:] if argv is None else argv)
    if "-h" in argv or "--help" in argv:
        out.write(HELP)
        return 0
    if stdin is None:
        stdin = getattr(sys.stdin, "buffer", None)
    try:
        call = resolve(parse_args(argv), env)
    except HookSkipped as exc:
        _report(env, err, "?", "?", str(exc))
        return 0
    return execute(call, env, stdin, out, err)


def register(subparsers: Any) -> None:
    """`signet hook` in the full CLI's help; `cli/main.py` dispatches it before argparse."""
    import argparse

    parser = subparsers.add_parser(
        "hook",
        help="run one harness hook (stdin JSON -> context on stdout; always exits 0)",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
    )
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace, ctx: CliContext) -> int:
    stdin = getattr(ctx.stdin, "buffer", None)
    return main(args.rest, ctx.env, stdin, ctx.out, ctx.err)


def dispatch_early(argv: Sequence[str]) -> None:
    """From the top of `cli/main.py`: `signet hook ...` runs here and exits (light imports)."""
    if len(argv) > 1 and argv[1] == "hook":
        sys.exit(main(argv[2:]))
