"""Claude Code hook round trips against a daemon holding memories and transcript turns.

Run: uv run python bench/hook_roundtrip.py [--memories 10000] [--turns 0] [--runs 100]
(issue 23's scale: --memories 100000 --turns 200000)

Three rows, p50/p95/max in ms, measured from this (client) process:
- `python -c pass`: a bare interpreter start on this machine, the floor of any command hook;
- HTTP hook: POST Claude Code's own UserPromptSubmit payload to
  `/api/hooks/claude-code/user-prompt-submit` on a kept-alive connection, as Claude Code's
  HTTP hooks do (no process starts; target p95 <= 40 ms);
- command hook: `signet hook user-prompt-submit -H claude-code --url URL` with the payload
  on stdin, process start included, as `signet install claude-code` writes it (target p95 <=
  150 ms);
- session-start command hook: `signet hook session-start ...` for a new session each run
  (Claude Code runs no HTTP hook at SessionStart), head of MEMORY.md, start memories and the
  last session's context.
`--turns N` also retains N transcript turns (sessions of 100 turns, through
`TranscriptService.capture`, as hooks and imports do), so the prompt hook's recall covers the
transcript channel too.

The daemon is a separate process (this script with `--serve`): `build_service` +
`create_app` over a temp workspace served by uvicorn with the daemon's own `server_config`.
Its 10k memories are written with `remember_many` and the deterministic hash embedder, so the
store fills in seconds; the hook path (session claim, the entity lookup, lexical + vector
recall, the context ledger, the injection renderer) is the real one, but the query embedding
is the hash embedder's (the native MiniLM query embedding costs are in
bench/query_embedding.py). Every prompt is a new question in the same session, so the ledger
grows as it would in a long session.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # see bench/locomo.py

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import queries, sentences

READY_PREFIX = "ready "
PROJECT = "/work/billing"
SESSION = "bench-hook-session"
CONFIG = {"hooks": {"userPromptSubmit": {"minScore": 0.05}}}  # the hash embedder scores low


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


# -- the daemon process ---------------------------------------------------------------------


def fill_turns(service: object, count: int) -> None:
    """`count` turns of real-looking text in sessions of 100, alternating user/assistant."""
    from signet_desktop.domain.sessions import Turn

    texts = sentences(count)
    for start in range(0, count, 100):
        turns = [
            Turn(f"t{i}", "user" if i % 2 == 0 else "assistant", text)
            for i, text in enumerate(texts[start : start + 100], start)
        ]
        service.transcripts.capture(  # type: ignore[attr-defined]
            "default", f"bench-{start // 100}", "claude-code", turns, project=PROJECT,
            complete=True,
        )  # fmt: skip


def serve(root: Path, size: int, turns: int = 0) -> None:
    """Fill a workspace with `size` memories (and `turns` transcript turns) and serve it;
    prints `ready URL` when listening."""
    import uvicorn

    from signet_desktop.api.http.app import create_app
    from signet_desktop.api.http.settings import HttpSettings
    from signet_desktop.config.models import SignetConfig
    from signet_desktop.config.workspace import WorkspacePaths
    from signet_desktop.daemon.address import ListenAddress, bind
    from signet_desktop.daemon.server import server_config
    from signet_desktop.domain.memory import Actor
    from signet_desktop.embedding.hashing import HashEmbedder
    from signet_desktop.service.container import BuildOptions, build_service
    from signet_desktop.service.memories.service import RememberRequest

    paths = WorkspacePaths.for_root(root)
    paths.ensure()
    service = build_service(
        paths, SignetConfig.model_validate(CONFIG), BuildOptions(embedder=HashEmbedder(384))
    )
    started = time.perf_counter()
    texts = sentences(size)
    for start in range(0, size, 2000):
        batch = [
            RememberRequest(
                content=text,
                who=("claude-code", "codex", "opencode")[i % 3],
                project=PROJECT if i % 2 else None,
            )
            for i, text in enumerate(texts[start : start + 2000], start)
        ]
        service.memories.remember_many(batch, Actor("bench", "system"))
    if turns:
        fill_turns(service, turns)
    fill_s = time.perf_counter() - started
    # The daemon's own bind (proto IPPROTO_TCP): asyncio sets TCP_NODELAY on accepted sockets
    # only then; a bare socket.socket() has proto 0 and every kept-alive answer then waits
    # ~40 ms for a delayed ACK (uvicorn writes the head and the body apart).
    sock = bind(ListenAddress("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = create_app(service, HttpSettings(host="127.0.0.1", port=port, agents_dir=str(root)))
    config = server_config(app, "127.0.0.1", port)
    config.log_level = "error"
    server = uvicorn.Server(config)
    print(f"{READY_PREFIX}http://127.0.0.1:{port} {fill_s:.1f}", flush=True)
    try:
        server.run(sockets=[sock])
    finally:
        service.close()


# -- the client -----------------------------------------------------------------------------


def claude_payload(prompt: str) -> dict[str, str]:
    return {
        "session_id": SESSION,
        "transcript_path": f"/home/dev/.claude/projects/-work-billing/{SESSION}.jsonl",
        "cwd": PROJECT,
        "hook_event_name": "UserPromptSubmit",
        "permission_mode": "default",
        "prompt": prompt,
    }


def time_http(url: str, prompts: list[str]) -> tuple[list[float], int]:
    import httpx

    samples, injected = [], 0
    with httpx.Client(base_url=url, timeout=10, trust_env=False) as client:
        client.post("/api/hooks/claude-code/user-prompt-submit", json=claude_payload("warm up"))
        for prompt in prompts:
            started = time.perf_counter()
            reply = client.post(
                "/api/hooks/claude-code/user-prompt-submit", json=claude_payload(prompt)
            )
            samples.append((time.perf_counter() - started) * 1000)
            reply.raise_for_status()
            injected += bool(reply.json())
    return samples, injected


def time_command(
    url: str, prompts: list[str], home: Path, event: str = "user-prompt-submit"
) -> tuple[list[float], int]:
    signet = Path(sys.executable).with_name("signet")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNET_")}
    env.update(HOME=str(home), SIGNET_WORKSPACE=str(home / "ws"))
    samples, injected = [], 0
    for index, prompt in enumerate(prompts):
        session = f"{SESSION}-cmd" if event == "user-prompt-submit" else f"{SESSION}-start-{index}"
        data = json.dumps(claude_payload(prompt) | {"session_id": session}).encode()
        started = time.perf_counter()
        proc = subprocess.run(
            [str(signet), "hook", event, "-H", "claude-code", "--url", url],
            input=data,
            capture_output=True,
            env=env,
            check=False,
        )
        samples.append((time.perf_counter() - started) * 1000)
        if proc.returncode != 0 or proc.stderr:
            raise RuntimeError(f"hook failed: {proc.stderr.decode()}")
        injected += bool(proc.stdout.strip())
    return samples, injected


def time_bare_python(runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def row(name: str, samples: list[float], target: str, note: str) -> str:
    p50, p95, top = percentile(samples, 50), percentile(samples, 95), max(samples)
    return f"| {name} | {p50:.1f} | {p95:.1f} | {top:.1f} | {target} | {note} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=0, help="transcript turns to retain too")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--serve", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(Path(args.serve), args.memories, args.turns)
        return
    with tempfile.TemporaryDirectory(prefix="signet-hook-bench-") as tmp:
        root = Path(tmp)
        command = [sys.executable, __file__, "--serve", str(root / "ws"), "--memories"]
        command += [str(args.memories), "--turns", str(args.turns)]
        daemon = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        try:
            assert daemon.stdout is not None
            line = daemon.stdout.readline()
            if not line.startswith(READY_PREFIX):
                raise RuntimeError(f"the bench daemon did not start (exit {daemon.wait(30)})")
            url, fill_s = line.removeprefix(READY_PREFIX).split()
            prompts = queries(args.runs)
            http, http_hits = time_http(url, prompts)
            (root / "home").mkdir()
            cmd, cmd_hits = time_command(url, prompts, root / "home")
            start, start_hits = time_command(url, prompts, root / "home", "session-start")
            bare = time_bare_python(args.runs)
        finally:
            daemon.terminate()
            daemon.wait(30)
    print(
        f"hook round trip: {args.memories} memories, {args.turns} transcript turns"
        f" (filled in {fill_s} s), {args.runs} prompts"
    )
    print("| path | p50 ms | p95 ms | max ms | target p95 | note |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    print(row("`python -c pass`", bare, "-", "bare interpreter start"))
    print(row("HTTP hook", http, "40", f"{http_hits}/{args.runs} answers carried context"))
    print(row("command hook", cmd, "150", f"{cmd_hits}/{args.runs} printed context"))
    print(row("session-start command hook", start, "150", f"{start_hits}/{args.runs} printed"))


if __name__ == "__main__":
    main()
