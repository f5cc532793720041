"""The CPU an HTTP app spends on its first requests: FastAPI builds an included router's routes
(their request and response models) when a request first reaches it, once per app.

For each build, in its own process: a service over an empty workspace (hash embedder), then
`create_app`, then one GET to a route of every router in the app's order (the last pays for
the routers before it), then the same GETs again. Reported per build, the median of N
processes: CPU ms of `create_app`, of the first pass over every router, of the second pass.
A daemon pays the first pass once, spread over its first requests; the test suite pays it
in every test that builds an app.

    uv run python bench/first_request.py [--runs 5] [--baseline-dir /tmp/prev]

`--baseline-dir` points at another checkout with its own `.venv` (e.g. a `git worktree` of
the previous build after `uv sync`); it is measured in the same run, side by side.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

# One GET without path parameters per router, in create_app's order (and two probes).
PATHS = (
    "/health", "/health/ready", "/api/status", "/api/memories", "/api/embeddings/status",
    "/api/embeddings/projection", "/api/pipeline/status", "/api/sessions",
    "/api/diagnostics/memory-safety", "/api/sources", "/api/artifacts", "/api/memory-md",
    "/api/diagnostics/queue", "/api/documents", "/api/connectors", "/api/maintenance",
    "/api/telemetry/memory-search", "/api/knowledge/entities", "/api/ontology/proposals",
    "/api/dream/status", "/api/inference/status", "/api/tokens", "/api/secrets",
)  # fmt: skip

CHILD = """
import asyncio, json, sys, tempfile, time
from pathlib import Path
import httpx
from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service

async def requests(app, paths):
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:3850") as c:
        started = time.process_time()
        statuses = [(await c.get(p)).status_code for p in paths]
        first = time.process_time() - started
        started = time.process_time()
        for p in paths:
            await c.get(p)
        return first, time.process_time() - started, statuses

with tempfile.TemporaryDirectory() as root:
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    service = build_service(WorkspacePaths.for_root(Path(root)), SignetConfig(), options)
    started = time.process_time()
    app = create_app(service, HttpSettings(agents_dir=root))
    create = time.process_time() - started
    first, again, statuses = asyncio.run(requests(app, json.loads(sys.argv[1])))
    service.close()
print(json.dumps({"create": create, "first": first, "again": again, "statuses": statuses}))
"""


def one_run(checkout: Path) -> dict[str, object]:
    """One process of `checkout`'s own venv: its timings as a dict."""
    python = checkout / ".venv" / "bin" / "python"
    out = subprocess.run(
        [str(python), "-c", CHILD, json.dumps(PATHS)],
        cwd=checkout, capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline-dir", type=Path, default=None)
    args = parser.parse_args()
    builds = [("this build", REPO_ROOT)]
    if args.baseline_dir is not None:
        builds.insert(0, ("previous build", args.baseline_dir.resolve()))
    print(f"create_app and a GET to each of {len(PATHS)} routers, CPU ms, median of "
          f"{args.runs} processes (alternating builds)\n")  # fmt: skip
    samples: dict[str, list[dict[str, object]]] = {name: [] for name, _ in builds}
    for _ in range(args.runs):
        for name, checkout in builds:
            samples[name].append(one_run(checkout))
    print("| build | create_app | first GET to every router | the same GETs again | non-200 |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, runs in samples.items():

        def median_ms(key: str, runs: list[dict[str, object]] = runs) -> float:
            return 1000 * statistics.median(float(str(r[key])) for r in runs)

        refused = sum(1 for s in runs[0]["statuses"] if s != 200)  # type: ignore[attr-defined]
        print(f"| {name} | {median_ms('create'):.1f} | {median_ms('first'):.0f} "
              f"| {median_ms('again'):.0f} | {refused} |")  # fmt: skip


if __name__ == "__main__":
    main()
