"""Graph-aware recall latency at 100k memories and 10k entities, beside flat hybrid, same run.

Run: uv run python bench/graph_recall.py [--size 100000] [--entities 10000] [--queries 200]

The store is `bench/recall_latency.py`'s (Zipf corpus in sessions of 40, 5,000 real MiniLM
vectors and blends of them, written in bulk), plus a graph written directly with SQL: 10,000
entities named by corpus words of frequency ranks 50.. (so the most frequent are hubs with
thousands of mentions), each memory linked to at most three entities it contains, two aspects
per entity with three claims each (evidence: memories mentioning it), and two dependency
edges per entity (strength 0.2-0.9, so some fall below minDependencyStrength). Every timing is
a full `SignetService.recall` call through the facade (validation, the query embedding with
the native all-MiniLM-L6-v2, BM25, in-memory exact vector search, traversal, fusion, context,
the default post-fusion stages, the final cut, hydration), limit 10: "flat hybrid" selects the
lexical and semantic channels, "graph-aware" every channel, on the same service, alternating
query by query so both see the same machine load.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import zipf_queries, zipf_sentences, zipf_vocabulary
from recall_latency import corpus_vectors, embedded_pool, fill, percentile

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.embedding.native import NativeMiniLM
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.storage.database import open_database

LIMIT = 10
NOW = "2026-01-01T00:00:00.000Z"
FLAT = ("lexical", "semantic")
FIRST_ENTITY_RANK = 50
LINKS_PER_MEMORY = 3


def seed_graph(db_path: Path, texts: list[str], entity_count: int, seed: int = 9) -> dict[str, int]:
    """Entities, mentions, aspects, claims and dependencies (see the module docstring)."""
    rng = random.Random(seed)
    vocab = zipf_vocabulary(30_000)[FIRST_ENTITY_RANK : FIRST_ENTITY_RANK + entity_count]
    entity_ids = {word: f"ent-{i}" for i, word in enumerate(vocab)}
    db = open_database(db_path)
    mentions: dict[str, list[str]] = {}
    with db.write() as conn:
        conn.executemany(
            "INSERT INTO entities (id, agent_id, name, canonical_name, created_at, updated_at)"
            " VALUES (?, 'default', ?, ?, ?, ?)",
            [(eid, word, word, NOW, NOW) for word, eid in entity_ids.items()],
        )
        memory_ids = [r[0] for r in conn.execute("SELECT id FROM memories ORDER BY seq")]
        rows = []
        for memory_id, text in zip(memory_ids, texts, strict=True):
            linked = list(dict.fromkeys(w for w in text.split() if w in entity_ids))
            for word in linked[:LINKS_PER_MEMORY]:
                rows.append((memory_id, entity_ids[word], NOW))
                mentions.setdefault(entity_ids[word], []).append(memory_id)
        conn.executemany(
            "INSERT INTO memory_entity_mentions (memory_id, entity_id, agent_id, created_at)"
            " VALUES (?, ?, 'default', ?)",
            rows,
        )
        aspects, claims, edges = [], [], []
        all_ids = list(entity_ids.values())
        for eid in all_ids:
            evidence = mentions.get(eid, [])
            for a in range(2):
                aspect_id = f"{eid}-a{a}"
                aspects.append(
                    (aspect_id, eid, f"aspect {a}", f"aspect {a}", rng.random(), NOW, NOW)
                )
                for c in range(3):
                    memory = rng.choice(evidence) if evidence else None
                    content = f"claim {c} of {eid}"
                    claims.append(
                        (f"{aspect_id}-c{c}", aspect_id, memory, content, content,
                         rng.uniform(0.3, 1.0), NOW, NOW)
                    )  # fmt: skip
            for d in range(2):
                target = rng.choice(all_ids)
                if target != eid:
                    edges.append(
                        (str(uuid.uuid4()), eid, target, f"dep{d}", rng.uniform(0.2, 0.9), NOW, NOW)
                    )
        conn.executemany(
            "INSERT INTO entity_aspects (id, entity_id, agent_id, name, canonical_name, weight,"
            " created_at, updated_at) VALUES (?, ?, 'default', ?, ?, ?, ?, ?)",
            aspects,
        )
        conn.executemany(
            "INSERT INTO entity_attributes (id, aspect_id, agent_id, memory_id, content,"
            " normalized_content, confidence, created_at, updated_at)"
            " VALUES (?, ?, 'default', ?, ?, ?, ?, ?, ?)",
            claims,
        )
        conn.executemany(
            "INSERT OR IGNORE INTO entity_dependencies (id, source_entity_id, target_entity_id,"
            " agent_id, dependency_type, strength, created_at, updated_at)"
            " VALUES (?, ?, ?, 'default', ?, ?, ?, ?)",
            edges,
        )
        top = conn.execute("SELECT MAX(mentions) FROM entities").fetchone()[0]
    db.close()
    return {"mentions": len(rows), "claims": len(claims), "edges": len(edges), "max_degree": top}


def run(
    size: int, entity_count: int, query_count: int, pool_size: int, store: str | None = None
) -> dict[str, Any]:
    embedder = NativeMiniLM()
    embedder.load()
    texts = zipf_sentences(size)
    qs = zipf_queries(texts, query_count + 20)
    pool, _ = embedded_pool(embedder, "zipf", texts, pool_size)
    out: dict[str, Any] = {"size": size, "entities": entity_count}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(store) if store else Path(tmp)
        started = time.perf_counter()
        if store and (root / "memory" / "memories.db").exists():  # built by an earlier run
            db = open_database(root / "memory" / "memories.db")
            conn = db.reader()
            out["store"] = {
                "mentions": conn.execute("SELECT COUNT(*) FROM memory_entity_mentions").fetchone()[
                    0
                ],
                "claims": conn.execute("SELECT COUNT(*) FROM entity_attributes").fetchone()[0],
                "edges": conn.execute("SELECT COUNT(*) FROM entity_dependencies").fetchone()[0],
                "max_degree": conn.execute("SELECT MAX(mentions) FROM entities").fetchone()[0],
            }
            db.close()
            out["fill_s"] = out["graph_s"] = 0.0
        else:
            fill(root, texts, corpus_vectors(pool, size), embedder.model)
            out["fill_s"] = time.perf_counter() - started
            started = time.perf_counter()
            out["store"] = seed_graph(root / "memory" / "memories.db", texts, entity_count)
            out["graph_s"] = time.perf_counter() - started
        service = build_service(
            WorkspacePaths.for_root(root), SignetConfig(), BuildOptions(embedder=embedder)
        )
        for q in qs[:20]:  # warm the matrix, the model and the caches
            service.recall.search(RecallQuery(query=q, limit=LIMIT))
        samples: dict[str, list[float]] = {"flat": [], "graph": []}
        stages: dict[str, list[float]] = {}
        focal, partial = 0, 0
        for q in qs[20:]:
            for name, channels in (("flat", FLAT), ("graph", None)):
                started = time.perf_counter()
                result = service.recall.search(RecallQuery(query=q, limit=LIMIT, channels=channels))
                samples[name].append((time.perf_counter() - started) * 1000)
                if channels is None:
                    for stage in result.timings:
                        stages.setdefault(stage.name, []).append(stage.duration_ms)
                    if result.traversal is not None:
                        focal += 1
                        partial += result.traversal.partial
        service.close()
    for name, values in samples.items():
        out[name] = (statistics.median(values), percentile(values, 95))
    out["stages"] = {k: statistics.median(v) for k, v in stages.items()}
    out["traversal_p95"] = percentile(stages.get("traversal", [0.0]), 95)
    out["focal"], out["partial"], out["queries"] = focal, partial, query_count
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--pool", type=int, default=5000)
    parser.add_argument(
        "--store", metavar="DIR", help="keep the built store in DIR and reuse it next time"
    )
    args = parser.parse_args()
    r = run(args.size, args.entities, args.queries, args.pool, args.store)
    g = r["store"]
    print(
        f"\n{r['size']:,} memories, {r['entities']:,} entities ({g['mentions']:,} mentions, "
        f"max degree {g['max_degree']:,}; {g['claims']:,} claims; {g['edges']:,} edges); "
        f"fill {r['fill_s']:.0f} s, graph {r['graph_s']:.0f} s"
    )
    print(
        f"queries naming an entity: {r['focal']} of {r['queries']}; partial walks: {r['partial']}"
    )
    print("\n| recall | p50 ms | p95 ms |\n| --- | ---: | ---: |")
    print(f"| flat hybrid | {r['flat'][0]:.1f} | {r['flat'][1]:.1f} |")
    print(f"| graph-aware hybrid | {r['graph'][0]:.1f} | {r['graph'][1]:.1f} |")
    print(f"\np95 difference: {r['graph'][1] - r['flat'][1]:+.1f} ms (target: within 5 ms)")
    print(f"traversal stage p95: {r['traversal_p95']:.2f} ms")
    print(
        "graph-aware stage medians (ms): "
        + ", ".join(f"{k} {v:.2f}" for k, v in r["stages"].items())
    )


if __name__ == "__main__":
    main()
