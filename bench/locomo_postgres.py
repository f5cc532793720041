"""LoCoMo dev on SQLite and on PostgreSQL, side by side: the parity of recall across backends.

Run: uv run python bench/locomo_postgres.py [--data PATH] [--conversations N] [--hybrid]
         [--cache FILE] [--storage-url postgresql://host/database]

`bench/locomo.py`'s protocol (entities seeded, every turn remembered through the facade,
every category 1-4 question with evidence recalled with limit 10 and min_score 0, as asked on
the conversation's last day), run once per backend with the same code: a fresh workspace per
conversation on SQLite, a fresh database per conversation on PostgreSQL (the embedded server
the tests use, tests/support/postgres_server.py, or the server of `--storage-url`, where the
bench creates and drops its own databases). Rows: the lexical channel alone; with
`--hybrid` also the vector channel alone, fusion only and flat hybrid (lexical + semantic +
context), embedded by the native all-MiniLM-L6-v2 (`--cache` keeps the turns' vectors across
runs, saved after each backend). Graph-aware hybrid is not run: the traversal channel fails
on PostgreSQL (a json_each statement). Recall@k and MRR as `bench/locomo.py` counts them,
and each row's difference (PostgreSQL - SQLite).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as bench/locomo.py: one BLAS thread

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from locomo import (
    BENCH_CONFIG,
    DEFAULT_DATA,
    FLAT_HYBRID,
    QueryCache,
    Scores,
    Variant,
    asked_on,
    conversation_entities,
    ingest,
    percentile,
    questions,
    ranked_dia_ids,
    registered,
    seed_entities,
    variants,
)
from longmemeval import CachedEmbedder, bench_embedder

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.storage.postgres.connect import connect_postgres

LEXICAL = "lexical"
# Graph-aware hybrid is left out: the traversal channel does not run on PostgreSQL yet.
HYBRID_ROWS = ("vector", "fusion only", FLAT_HYBRID)
Store = Callable[[int], Iterator[str]]  # conversation index -> a storage.url, then cleaned up


@contextmanager
def sqlite_store(_: int) -> Iterator[str]:
    yield "sqlite:"


def postgres_store(server_url: Callable[[str], str]) -> Callable[[int], Any]:
    """A fresh database per conversation on the server `server_url(database)` names."""

    @contextmanager
    def store(index: int) -> Iterator[str]:
        name = f"locomo_bench_{os.getpid()}_{index}"
        admin = connect_postgres(server_url("postgres"))
        admin.execute(f"CREATE DATABASE {name}")
        try:
            yield server_url(name)
        finally:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            admin.close()

    return store


Result = tuple[dict[str, Scores], dict[str, list[float]], dict[tuple[str, int, str], list[str]]]


def evaluate(
    samples: list[dict[str, Any]], store: Callable[[int], Any], embedder: Any, hybrid: bool
) -> Result:
    """Every sample on one backend: scores, latencies and each question's ranking per row."""
    scores: dict[str, Scores] = defaultdict(Scores)
    latency: dict[str, list[float]] = defaultdict(list)
    rankings: dict[tuple[str, int, str], list[str]] = {}
    for index, sample in enumerate(samples):
        with store(index) as url, tempfile.TemporaryDirectory() as tmp:
            config = SignetConfig.model_validate({**BENCH_CONFIG, "storage": {"url": url}})
            options = BuildOptions(embedder=embedder) if hybrid else BuildOptions(no_embedder=True)
            service = build_service(WorkspacePaths.for_root(Path(tmp)), config, options)
            try:
                rows = _rows(variants(*registered(service)), hybrid)
                seed_entities(service, conversation_entities(sample["conversation"]))
                dia_of = ingest(service, sample)
                for number, question in enumerate(questions(sample)):
                    if hybrid:
                        embedder.embed([question.text])
                    for variant in rows:
                        ranked, ms, _ = ranked_dia_ids(
                            service, question.text, variant, dia_of, asked_on(sample)
                        )
                        scores[variant.name].add(ranked, question.evidence)
                        latency[variant.name].append(ms)
                        rankings[(sample["sample_id"], number, variant.name)] = ranked
            finally:
                service.close()
    return scores, latency, rankings


def _rows(all_variants: list[Variant], hybrid: bool) -> list[Variant]:
    wanted = (LEXICAL, *HYBRID_ROWS) if hybrid else (LEXICAL,)
    return [v for v in all_variants if v.name in wanted]


def print_table(results: dict[str, Result]) -> None:
    print("| row | backend | n | hit@10 | recall@5 | recall@10 | MRR | p50 ms | p95 ms |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    backends = list(results)
    for name in results[backends[0]][0]:
        for backend in backends:
            scores, latency, _ = results[backend]
            r, lat = scores[name].row(), latency[name]
            print(
                f"| {name} | {backend} | {scores[name].count} | {r['hit@10']:.3f} "
                f"| {r['recall@5']:.3f} | {r['recall@10']:.3f} | {r['mrr']:.3f} "
                f"| {percentile(lat, 50):.1f} | {percentile(lat, 95):.1f} |"
            )
        if len(backends) == 2:
            a, b = (results[x][0][name].row() for x in backends)
            print(
                f"| {name} | difference | | {b['hit@10'] - a['hit@10']:+.3f} "
                f"| {b['recall@5'] - a['recall@5']:+.3f} | {b['recall@10'] - a['recall@10']:+.3f} "
                f"| {b['mrr'] - a['mrr']:+.3f} | | |"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=0, help="0 = all")
    parser.add_argument("--hybrid", action="store_true", help="also the hybrid rows (embedder)")
    parser.add_argument("--cache", type=Path, help="a file keeping the turns' vectors")
    parser.add_argument("--storage-url", help="a PostgreSQL server (default: an embedded one)")
    parser.add_argument("--only", choices=("sqlite", "postgresql"), help="one backend only")
    parser.add_argument(
        "--tokens", action="store_true", help="also compare the two tokenisations (locomo_tokens)"
    )
    args = parser.parse_args()
    if not args.data.exists():
        print(f"skipped: {args.data} not found (LoCoMo data is not shipped with the project)")
        return 0
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    samples = samples[: args.conversations] if args.conversations else samples
    embedder: Any = None
    if args.hybrid:
        native = bench_embedder(None)
        native = CachedEmbedder(native, args.cache) if args.cache else native
        embedder = QueryCache(native)
    results = {}
    started = time.perf_counter()
    if args.only != "postgresql":
        results["SQLite"] = evaluate(samples, sqlite_store, embedder, args.hybrid)
        _save(embedder, args.cache)
    if args.only != "sqlite":
        results["PostgreSQL"] = _on_postgres(args.storage_url, samples, embedder, args.hybrid)
        _save(embedder, args.cache)
    print(f"\nLoCoMo dev, {len(samples)} conversations, {time.perf_counter() - started:.0f} s\n")
    print_table(results)
    if len(results) == 2:
        lite, pg = (r[2] for r in results.values())
        print("\nquestions whose top 10 is the same list on both backends:\n")
        for name in results["SQLite"][0]:
            keys = [key for key in lite if key[2] == name]
            same = sum(lite[key] == pg[key] for key in keys)
            print(f"- {name}: {same} of {len(keys)}")
    if args.tokens:
        from locomo_tokens import print_tokenisation

        print_tokenisation(samples)
    return 0


def _save(embedder: Any, cache: Path | None) -> None:
    if cache and embedder is not None:
        embedder._inner.save()  # the CachedEmbedder under the QueryCache


def _on_postgres(
    url: str | None, samples: list[dict[str, Any]], embedder: Any, hybrid: bool
) -> Any:
    if url:
        base = url.rsplit("/", 1)[0]
        return evaluate(samples, postgres_store(lambda db: f"{base}/{db}"), embedder, hybrid)
    from support.postgres_server import start_postgres

    server = start_postgres()
    try:
        return evaluate(samples, postgres_store(server.url), embedder, hybrid)
    finally:
        server.stop()


if __name__ == "__main__":
    raise SystemExit(main())
