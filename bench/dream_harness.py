"""A Dreaming pass through the user's harness (executor acpx: the real Claude Code, Codex and
OpenCode) beside the same pass through an HTTP provider (executor anthropic), on one scripted
conversation.

    uv run python bench/dream_harness.py [--passes 10] [--orphan-passes 20] [--claude PATH]
                                         [--codex PATH] [--opencode PATH]

The HTTP provider and Claude Code talk to a scripted Anthropic Messages server on loopback,
Codex (through the user's config.toml) to a scripted OpenAI Responses server, OpenCode
(through the user's opencode.json) to a scripted Chat Completions server; all answer at once,
with the same turns: search_evidence, one apply_ontology_ops citing the new memory
exactly, a summary.
Each pass gets one new memory first, then `POST /api/dream/trigger`; the time is from the
trigger to the pass's end as `GET /api/dream/passes/{id}` reports it (polled every 10 ms).
Prints p50/p95 wall time per path, what each pass applied, and the harness processes left
running after `--orphan-passes` passes per harness (counted with `ps`).
The binaries: `--claude`/`--codex`/`--opencode`, else $SIGNET_TEST_CLAUDE_BIN,
$SIGNET_TEST_CODEX_BIN, $SIGNET_TEST_OPENCODE_BIN (`.ci/run` installs all three); Codex or
OpenCode is left out when its binary is not given.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.support import openai_server  # noqa: E402
from tests.support.anthropic_server import ToolUse, model_server  # noqa: E402

PREFIX = "Signet Desktop listening on "
OFFLINE = {
    "ANTHROPIC_API_KEY": "sk-ant-bench-dummy",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


CODEX_CONFIG = """model = "scripted-model"
model_provider = "scripted"
[model_providers.scripted]
name = "Scripted model on loopback"
base_url = "{url}"
wire_api = "responses"
env_key = "SCRIPTED_MODEL_API_KEY"
[analytics]
enabled = false
"""


def config(path: str, model_url: str, binary: str) -> str:
    if path != "http":
        target = f"executor: acpx\n      acpx: {{agent: {binary}}}\n"
    else:
        target = f"executor: anthropic\n      endpoint: {model_url}\n      models: {{m: {{}}}}\n"
    return (
        "embedding:\n  provider: none\nmemory:\n  dreaming:\n    enabled: false\n"
        f"inference:\n  targets:\n    t:\n      {target}"
        "  workloads:\n    memoryExtraction: {target: t}\n"
    )


def start_daemon(workspace: Path, home: Path, env: dict[str, str]) -> tuple[Any, str]:
    command = [sys.executable, "-m", "signet_desktop.main", "--headless"]
    command += ["--workspace", str(workspace), "--port", "0", "--log-level", "warning"]
    proc = subprocess.Popen(
        command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit(f"daemon exited {proc.wait()}")
        if line.startswith(PREFIX):
            return proc, line.removeprefix(PREFIX).split()[0]
    raise SystemExit("daemon did not start")


def harness_processes(binary: str) -> int:
    """Running processes of the harness: its path, or the native binary Codex's or OpenCode's
    npm launcher starts (known by the pass's arguments)."""
    listed = subprocess.run(["ps", "-ww", "-eo", "args="], capture_output=True, text=True)
    return sum(
        1
        for line in listed.stdout.splitlines()
        if any(mark in line for mark in (binary, "/mcp/dream", "--agent signet-dreaming"))
        and "ps -ww" not in line
    )


def operation(ref: str) -> dict[str, Any]:
    return {
        "operation": "create_entity",
        "payload": {"name": f"Service {ref[-6:]}", "type": "system"},
        "evidence": [{"quote": "deploys on Fridays", "source_ref": ref}],
        "confidence": 0.9,
    }


def anthropic_reply(prefix: str, current: dict[str, str]) -> Any:
    def reply(body: dict[str, Any]) -> ToolUse | str:
        step = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        turns: list[ToolUse | str] = [
            ToolUse(prefix + "search_evidence", {"query": "deploy"}),
            ToolUse(prefix + "apply_ontology_ops", {"operations": [operation(current["ref"])]}),
            "Recorded the service.",
        ]
        return turns[min(step, len(turns) - 1)]

    return reply


def openai_reply(path: str, current: dict[str, str]) -> Any:
    """Codex's turns (Responses items in its MCP namespace) or OpenCode's (chat tool calls)."""
    namespace, prefix = (
        ("mcp__signet_dreaming", "") if path == "codex" else (None, "signet-dreaming_")
    )

    def reply(body: dict[str, Any]) -> openai_server.Answer:
        if path == "codex":
            step = sum(1 for i in body["input"] if i.get("type") == "function_call_output")
        else:
            step = sum(1 for m in body.get("messages", []) if m.get("role") == "tool")
        ops = {"operations": [operation(current["ref"])]}
        turns: list[openai_server.Answer] = [
            openai_server.FunctionCall(prefix + "search_evidence", {"query": "deploy"}, namespace),
            openai_server.FunctionCall(prefix + "apply_ontology_ops", ops, namespace),
            "Recorded the service.",
        ]
        return turns[min(step, len(turns) - 1)]

    return reply


def opencode_config(url: str) -> str:
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "Scripted model on loopback",
        "options": {"baseURL": url, "apiKey": "sk-bench-dummy"},
        "models": {"scripted-model": {"name": "Scripted model"}},
    }
    return json.dumps({"provider": {"scripted": provider}, "model": "scripted/scripted-model"})


def run_path(path: str, passes: int, binary: str, root: Path) -> tuple[list[float], list[int]]:
    """`passes` passes through `path` (http | claude | codex | opencode); their times and
    applied counts."""
    current = {"ref": ""}
    if path in ("codex", "opencode"):
        server = openai_server.model_server(openai_reply(path, current))
    else:
        prefix = "mcp__signet-dreaming__" if path == "claude" else ""
        server = model_server(anthropic_reply(prefix, current))
    times: list[float] = []
    applied: list[int] = []
    with server as model:
        workspace, home = root / f"{path}-ws", root / f"{path}-home"
        workspace.mkdir()
        home.mkdir()
        (workspace / "agent.yaml").write_text(config(path, model.url, binary))
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNET_")}
        env.update(HOME=str(home), PYTHONUNBUFFERED="1", ANTHROPIC_BASE_URL=model.url, **OFFLINE)
        if path == "codex":
            (home / ".codex").mkdir()
            (home / ".codex" / "config.toml").write_text(CODEX_CONFIG.format(url=model.url))
            env["SCRIPTED_MODEL_API_KEY"] = "sk-bench-dummy"
        if path == "opencode":
            (home / ".config" / "opencode").mkdir(parents=True)
            (home / ".config" / "opencode" / "opencode.json").write_text(opencode_config(model.url))
            env.update(OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_AUTOUPDATE="1")
        proc, url = start_daemon(workspace, home, env)
        try:
            with httpx.Client(base_url=url, timeout=30) as http:
                for n in range(passes):
                    text = f"Service number {n} deploys on Fridays from the release branch."
                    saved = http.post("/api/memory/remember", json={"content": text}).json()
                    current["ref"] = f"memory:{saved['id']}"
                    started = time.perf_counter()
                    pass_id = http.post("/api/dream/trigger", json={}).json()["passId"]
                    while True:
                        detail = http.get(f"/api/dream/passes/{pass_id}").json()
                        if detail["status"] != "running":
                            break
                        time.sleep(0.01)
                    times.append((time.perf_counter() - started) * 1000)
                    if detail["status"] != "completed":
                        raise SystemExit(f"{path} pass {n}: {detail['status']} {detail['error']}")
                    applied.append(detail["mutations"]["applied"])
        finally:
            proc.terminate()
            proc.wait(30)
    return times, applied


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passes", type=int, default=10)
    parser.add_argument("--orphan-passes", type=int, default=20)
    parser.add_argument("--claude", default=os.environ.get("SIGNET_TEST_CLAUDE_BIN", ""))
    parser.add_argument("--codex", default=os.environ.get("SIGNET_TEST_CODEX_BIN", ""))
    parser.add_argument("--opencode", default=os.environ.get("SIGNET_TEST_OPENCODE_BIN", ""))
    args = parser.parse_args()
    if not args.claude or not Path(args.claude).is_file():
        raise SystemExit("set --claude or SIGNET_TEST_CLAUDE_BIN to the Claude Code binary")
    harnesses = [("claude", "Claude Code (executor acpx)", args.claude)]
    if args.codex and Path(args.codex).is_file():
        harnesses.append(("codex", "Codex (executor acpx)", args.codex))
    if args.opencode and Path(args.opencode).is_file():
        harnesses.append(("opencode", "OpenCode (executor acpx)", args.opencode))
    rows: list[tuple[str, list[float], list[int]]] = []
    left: list[str] = []
    with tempfile.TemporaryDirectory(prefix="dream-harness-") as tmp:
        root = Path(tmp)
        times, applied = run_path("http", args.passes, args.claude, root)
        rows.append(("HTTP provider (executor anthropic)", times, applied))
        runs = max(args.passes, args.orphan_passes)
        for path, name, binary in harnesses:
            before = harness_processes(binary)
            times, applied = run_path(path, runs, binary, root)
            rows.append((name, times[: args.passes], applied))
            left.append(f"{name.split(' (')[0]}: {harness_processes(binary) - before}")
    print(f"{'path':<34} {'passes':>6} {'p50 ms':>8} {'p95 ms':>8} {'applied/pass':>13}")
    for name, times, applied in rows:
        print(
            f"{name:<34} {len(times):>6} {statistics.median(times):>8.0f} {pct(times, 95):>8.0f}"
            f" {statistics.mean(applied):>13.1f}"
        )
    runs = max(args.passes, args.orphan_passes)
    print(f"harness processes left after {runs} passes each: {', '.join(left)}")


if __name__ == "__main__":
    main()
