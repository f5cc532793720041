"""A Dreaming pass through the user's harness (executor acpx, the real Claude Code) beside the
same pass through an HTTP provider (executor anthropic), on one scripted conversation.

    uv run python bench/dream_harness.py [--passes 10] [--orphan-passes 20] [--claude PATH]

Both daemons talk to the same scripted Anthropic Messages server on loopback (instant
answers): search_evidence, one apply_ontology_ops citing the new memory exactly, a summary.
Each pass gets one new memory first, then `POST /api/dream/trigger`; the time is from the
trigger to the pass's end as `GET /api/dream/passes/{id}` reports it (polled every 10 ms).
Prints p50/p95 wall time per path, what each pass applied, and the harness processes left
running after `--orphan-passes` harness passes (counted with `ps`).
The Claude Code binary: `--claude`, else $SIGNET_TEST_CLAUDE_BIN (`.ci/run` installs it).
"""

from __future__ import annotations

import argparse
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

from tests.support.anthropic_server import ToolUse, model_server  # noqa: E402

PREFIX = "Signet Desktop listening on "
OFFLINE = {
    "ANTHROPIC_API_KEY": "sk-ant-bench-dummy",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


def config(path: str, model_url: str, claude: str) -> str:
    if path == "harness":
        target = f"executor: acpx\n      acpx: {{agent: {claude}}}\n"
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
    listed = subprocess.run(["ps", "-eo", "args="], capture_output=True, text=True).stdout
    return sum(1 for line in listed.splitlines() if binary in line and "ps -eo" not in line)


def run_path(path: str, passes: int, claude: str, root: Path) -> tuple[list[float], list[int]]:
    prefix = "mcp__signet-dreaming__" if path == "harness" else ""
    current = {"ref": ""}

    def reply(body: dict[str, Any]) -> ToolUse | str:
        step = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        ref = current["ref"]
        operation = {
            "operation": "create_entity",
            "payload": {"name": f"Service {ref[-6:]}", "type": "system"},
            "evidence": [{"quote": "deploys on Fridays", "source_ref": ref}],
            "confidence": 0.9,
        }
        turns: list[ToolUse | str] = [
            ToolUse(prefix + "search_evidence", {"query": "deploy"}),
            ToolUse(prefix + "apply_ontology_ops", {"operations": [operation]}),
            "Recorded the service.",
        ]
        return turns[min(step, len(turns) - 1)]

    times: list[float] = []
    applied: list[int] = []
    with model_server(reply) as model:
        workspace, home = root / f"{path}-ws", root / f"{path}-home"
        workspace.mkdir()
        home.mkdir()
        (workspace / "agent.yaml").write_text(config(path, model.url, claude))
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNET_")}
        env.update(HOME=str(home), PYTHONUNBUFFERED="1", ANTHROPIC_BASE_URL=model.url, **OFFLINE)
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
    args = parser.parse_args()
    if not args.claude or not Path(args.claude).is_file():
        raise SystemExit("set --claude or SIGNET_TEST_CLAUDE_BIN to the Claude Code binary")
    with tempfile.TemporaryDirectory(prefix="dream-harness-") as tmp:
        root = Path(tmp)
        before = harness_processes(args.claude)
        http_times, http_applied = run_path("http", args.passes, args.claude, root)
        runs = max(args.passes, args.orphan_passes)
        harness_times, harness_applied = run_path("harness", runs, args.claude, root)
        left = harness_processes(args.claude) - before
    print(f"{'path':<34} {'passes':>6} {'p50 ms':>8} {'p95 ms':>8} {'applied/pass':>13}")
    for name, times, applied in (
        ("HTTP provider (executor anthropic)", http_times, http_applied),
        ("Claude Code (executor acpx)", harness_times[: args.passes], harness_applied),
    ):
        print(
            f"{name:<34} {len(times):>6} {statistics.median(times):>8.0f} {pct(times, 95):>8.0f}"
            f" {statistics.mean(applied):>13.1f}"
        )
    print(f"harness processes left after {len(harness_times)} passes: {left}")


if __name__ == "__main__":
    main()
