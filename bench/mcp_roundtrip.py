"""MCP `memory_search` round trip over stdio (`signet-mcp`) and Streamable HTTP (`/mcp`).

Starts a real `signet-desktop --headless` on a temp workspace, stores `--memories` memories
through `POST /api/memory/remember`, then times `--queries` `memory_search` calls (limit 10)
with the SDK's own client on each transport, after 10 warm-up calls, one call at a time,
the transports taking turns query by query (so load on the machine hits all alike).
Beside them, the same recall as a bare `POST /api/memory/recall` (httpx, keep-alive): the
difference is what MCP costs on top of HTTP. Also the cold start of `signet-mcp`: spawn to
the `initialize` answer, next to a bare `python -c pass`.

By default the daemon runs without an embedder (`embedding.provider: none`, keyword recall
only) so the numbers are the transports', not the model's; `--embedder native` runs MiniLM
(hybrid recall; the query embedding is then part of every call).

    uv run python bench/mcp_roundtrip.py [--memories 1000] [--queries 200] [--embedder native]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import httpx2
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import queries, sentences

REPO_ROOT = Path(__file__).resolve().parents[1]
PREFIX = "Signet Desktop listening on "
SIGNET_MCP = str(Path(sys.executable).parent / "signet-mcp")
WARMUP = 10
COLD_STARTS = 5
START_TIMEOUT_S = 120.0


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNET_")}
    env.update(HOME=str(home), PYTHONUNBUFFERED="1")
    return env


def start_daemon(workspace: Path, home: Path, embedder: str) -> tuple[subprocess.Popen[str], str]:
    workspace.mkdir(parents=True)
    (workspace / "agent.yaml").write_text(f"embedding:\n  provider: {embedder}\n")
    command = [sys.executable, "-m", "signet_desktop.main", "--headless"]
    command += ["--workspace", str(workspace), "--port", "0", "--log-level", "warning"]
    proc = subprocess.Popen(
        command,
        cwd=REPO_ROOT,
        env=clean_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit(f"daemon exited {proc.wait()}")
        if line.startswith(PREFIX):
            return proc, line.removeprefix(PREFIX).split()[0]
    raise SystemExit("daemon did not start")


def seed(url: str, count: int) -> None:
    started = time.perf_counter()
    with httpx.Client(base_url=url, timeout=30) as http:
        for text in sentences(count):
            http.post("/api/memory/remember", json={"content": text}).raise_for_status()
    print(f"seeded {count} memories in {time.perf_counter() - started:.1f} s", file=sys.stderr)


Call = Callable[[str], Awaitable[None]]


def tool_call(session: ClientSession) -> Call:
    async def call(text: str) -> None:
        result = await session.call_tool("memory_search", {"query": text, "limit": 10})
        assert not result.is_error, result.content

    return call


async def interleaved(url: str, home: Path, texts: list[str]) -> dict[str, list[float]]:
    """Each query on every transport in turn, so load on the machine hits all alike."""
    async with (
        httpx.AsyncClient(base_url=url, timeout=30) as bare,
        httpx2.AsyncClient(timeout=30) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (http_read, http_write),
        ClientSession(http_read, http_write) as over_http,
        stdio_client(stdio_params(url, home)) as (stdio_read, stdio_write),
        ClientSession(stdio_read, stdio_write) as over_stdio,
    ):
        await over_http.initialize()
        await over_stdio.initialize()

        async def bare_recall(text: str) -> None:
            answer = await bare.post("/api/memory/recall", json={"query": text, "limit": 10})
            answer.raise_for_status()

        calls: dict[str, Call] = {
            "POST /api/memory/recall (bare)": bare_recall,
            "memory_search, Streamable HTTP": tool_call(over_http),
            "memory_search, stdio signet-mcp": tool_call(over_stdio),
        }
        samples: dict[str, list[float]] = {name: [] for name in calls}
        for index, text in enumerate(texts[:WARMUP] + texts):
            for name, call in calls.items():
                started = time.perf_counter()
                await call(text)
                if index >= WARMUP:
                    samples[name].append((time.perf_counter() - started) * 1000)
        return samples


def stdio_params(url: str, home: Path) -> StdioServerParameters:
    return StdioServerParameters(command=SIGNET_MCP, args=["--url", url], env=clean_env(home))


async def cold_starts(url: str, home: Path) -> list[float]:
    samples = []
    for _ in range(COLD_STARTS):
        started = time.perf_counter()
        async with (
            stdio_client(stdio_params(url, home)) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            samples.append((time.perf_counter() - started) * 1000)
    return samples


def python_starts() -> list[float]:
    samples = []
    for _ in range(COLD_STARTS):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def row(name: str, samples: list[float]) -> str:
    p50, p95 = percentile(samples, 50), percentile(samples, 95)
    return f"{name:<34} {p50:>9.1f} {p95:>9.1f} {max(samples):>9.1f} {len(samples):>6}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embedder", choices=("none", "native"), default="none")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home = root / "home"
        home.mkdir()
        proc, url = start_daemon(root / "ws", home, args.embedder)
        try:
            seed(url, args.memories)
            texts = queries(args.queries)
            results = list(asyncio.run(interleaved(url, home, texts)).items())
            results.append(
                ("signet-mcp cold start (initialize)", asyncio.run(cold_starts(url, home)))
            )
            results.append(("python -c pass", python_starts()))
        finally:
            proc.terminate()
            proc.wait(30)
    print(
        f"MCP round trip: {args.memories} memories, embedder {args.embedder}, limit 10, "
        f"one call at a time, {os.cpu_count()} cores"
    )
    print(f"{'case':<34} {'p50 ms':>9} {'p95 ms':>9} {'max ms':>9} {'n':>6}")
    for name, samples in results:
        print(row(name, samples))
    bare = statistics.median(results[0][1])
    for name, samples in results[1:3]:
        print(f"  {name}: +{statistics.median(samples) - bare:.1f} ms p50 over bare HTTP")


if __name__ == "__main__":
    main()
