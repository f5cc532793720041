"""Schemathesis against the real app in-process: how many cases answer 5xx (goal: 0).

Builds the real service over a temp workspace (the deterministic hash embedder stands in for
MiniLM), serves it through ASGI, loads `/openapi.json` with schemathesis and sends every
operation `--cases` cases, half drawn as schema-valid requests and half as schema-violating
ones (wrong types, out-of-range numbers, control characters, missing fields). Each 5xx is
listed once per (operation, status) with the request that caused it, so it can be minimised
into a regression test. `/api/events` is sent with the daemon "shutting down", so its stream
ends at once instead of following.

    uv run python bench/http_fuzz.py [--cases 120] [--seed 1]
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.generation import GenerationMode

from signet_desktop.api.http.app import create_app
from signet_desktop.api.http.settings import HttpSettings
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service

BASE_URL = "http://127.0.0.1:3850"  # the request gate refuses foreign Host headers
MODES = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)


def _describe(case: Any) -> str:
    parts = [f"{case.method} {case.formatted_path}"]
    for name in ("path_parameters", "query", "body"):
        value = getattr(case, name, None)
        if value not in (None, {}):
            parts.append(f"{name}={value!r}"[:400])
    return " ".join(parts)


def run_operation(operation: Any, app: Any, cases: int, rng: int, tally: Counter[str]) -> None:
    """Send `cases` cases of one operation per generation mode; count statuses, list 5xx."""
    streaming = operation.path == "/api/events"
    for mode in MODES:
        strategy = operation.as_strategy(generation_mode=mode)

        @seed(rng)
        @settings(
            max_examples=cases // len(MODES),
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=strategy)
        def send(case: Any) -> None:
            app.state.shutting_down = streaming
            try:
                response = case.call(base_url=BASE_URL)
            finally:
                app.state.shutting_down = False
            tally["cases"] += 1
            status = response.status_code
            tally[f"{status // 100}xx"] += 1
            if (
                status >= 500
                and status != 500
                and str(status) in operation.definition.raw.get("responses", {})
            ):
                tally["declared 5xx"] += 1  # e.g. 503: no inference provider for a Dreaming pass
            elif status >= 500:
                key = f"{operation.method.upper()} {operation.path} -> {status}"
                if key not in tally:
                    print(f"5xx: {key}: {_describe(case)}", file=sys.stderr)
                tally[key] += 1

        try:
            send()
        except Unsatisfiable:  # nothing to violate (an operation without parameters)
            tally["unsatisfiable"] += 1


def fuzz(
    app: Any, cases: int, rng: int, paths: frozenset[str] | None = None
) -> tuple[int, Counter[str]]:
    """Send `cases` cases to every operation of `app` (or those of `paths`);
    (operations, tally by status)."""
    schema = schemathesis.openapi.from_dict(app.openapi())
    schema.app = app
    tally: Counter[str] = Counter()
    operations = [result.ok() for result in schema.get_all_operations()]
    operations = [op for op in operations if paths is None or op.path in paths]
    for operation in operations:
        run_operation(operation, app, cases, rng, tally)
    return len(operations), tally


def server_errors(tally: Counter[str]) -> int:
    """Cases answered 500 or an undeclared 5xx."""
    return sum(n for key, n in tally.items() if "->" in key)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=120, help="cases per operation")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)  # the 500s are counted here, not logged
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
        service = build_service(WorkspacePaths.for_root(root), SignetConfig(), options)
        try:
            app = create_app(service, HttpSettings(agents_dir=str(root)))
            started = time.perf_counter()
            operations, tally = fuzz(app, args.cases, args.seed)
            elapsed = time.perf_counter() - started
        finally:
            service.close()
    fives = server_errors(tally)
    print("| operations | cases | 2xx | 4xx | 500 or undeclared 5xx | declared 503 | seconds |")
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {operations} | {tally['cases']} | {tally['2xx']} | {tally['4xx']} | "
        f"{fives} | {tally['declared 5xx']} | {elapsed:.0f} |"
    )
    for key, count in sorted(tally.items()):
        if "->" in key:
            print(f"  {count:>5}  {key}")
    return 1 if fives else 0


if __name__ == "__main__":
    sys.exit(main())
