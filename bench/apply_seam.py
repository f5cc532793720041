"""The Dreaming apply seam: validated and applied operations/s on 1,000 operations against a
50k-memory store.

    uv run python bench/apply_seam.py [--memories 50000] [--operations 1000]

The store: `--memories` memories of bench/corpus.py sentences (one agent), 200 entities with
one aspect each. The operations: 40% create_entity (new names), 20% create_aspect, 30%
add_claim_value (keyed, some disagreeing: contradictions are recorded), 10% flag; every
content operation cites an exact quote of a random memory (the seam loads and renders each
source and checks the quote), so the numbers include the quote check.

Rows:
- validate: `validate_operations` alone (pure read), requests of 100;
- apply/100: `apply_operations`, requests of 100 (10 batches of 10, a savepoint each);
- apply/10: requests of 10 (one batch each) — p50/p95 are per batch (validation included).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import sentences

from signet_desktop.domain.knowledge import Provenance
from signet_desktop.domain.memory import NewMemory
from signet_desktop.dreaming.apply import apply_operations, validate_operations
from signet_desktop.storage import graph, graph_claims, memories
from signet_desktop.storage.database import Database, open_database

AGENT = "bench"


def build_store(
    path: Path, count: int
) -> tuple[Database, list[tuple[str, str]], list[tuple[str, str]]]:
    db = open_database(path)
    texts = sentences(count, seed=17)
    rows: list[tuple[str, str]] = []
    for start in range(0, count, 5000):
        with db.write() as conn:
            for index in range(start, min(count, start + 5000)):
                memory_id = f"m{index:06d}"
                memories.insert_memory(
                    conn,
                    memory_id,
                    NewMemory(agent_id=AGENT, content=texts[index]),
                    actor="bench",
                    embedding_model=None,
                )
                rows.append((memory_id, texts[index]))
    prov = Provenance(actor="bench", agent_id=AGENT)
    targets = []
    with db.write() as conn:
        for index in range(200):
            entity, _ = graph.create_entity(conn, prov, name=f"Seed {index}", entity_type="system")
            aspect, _ = graph_claims.create_aspect(conn, prov, entity.id, "facts")
            targets.append((entity.id, aspect.id))
    return db, rows, targets


def operations(
    count: int, rows: list[tuple[str, str]], targets: list[tuple[str, str]], seed: int
) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for index in range(count):
        memory_id, text = rng.choice(rows)
        words = text.split()
        cut = rng.randrange(0, max(1, len(words) - 4))
        quote = " ".join(words[cut : cut + 4])
        evidence = [{"quote": quote, "source_ref": f"memory:{memory_id}"}]
        entity_id, aspect_id = rng.choice(targets)
        roll = rng.random()
        if roll < 0.4:
            name = f"E{seed}-{index}"
            op: dict[str, Any] = {"operation": "create_entity",
                                  "payload": {"name": name, "type": "concept"}}  # fmt: skip
        elif roll < 0.6:
            op = {"operation": "create_aspect",
                  "payload": {"entityId": entity_id, "name": f"a{rng.randrange(50)}"}}  # fmt: skip
        elif roll < 0.9:
            op = {"operation": "add_claim_value",
                  "payload": {"entityId": entity_id, "aspectId": aspect_id,
                              "claimKey": f"k{rng.randrange(5)}", "value": quote}}  # fmt: skip
        else:
            op = {"operation": "flag", "payload": {"subjectRef": f"entity:{entity_id}"}}
        op.update(confidence=0.8, evidence=evidence if op["operation"] != "flag" else [])
        out.append(op)
    return out


def timed(fn: Any, chunks: list[list[dict[str, Any]]]) -> tuple[list[float], int]:
    times, ok = [], 0
    for chunk in chunks:
        start = time.perf_counter()
        ok += fn(chunk)
        times.append(time.perf_counter() - start)
    return times, ok


def row(name: str, times: list[float], ops: int, ok: int) -> str:
    total = sum(times)
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return (
        f"| {name} | {ops} | {ok} | {statistics.median(times) * 1000:.1f} | {p95 * 1000:.1f} |"
        f" {ops / total:,.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=50_000)
    parser.add_argument("--operations", type=int, default=1_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        db, rows, targets = build_store(Path(tmp) / "memory" / "memories.db", args.memories)
        took = time.perf_counter() - started
        print(f"store: {args.memories:,} memories, 200 entities in {took:.1f} s")
        n = args.operations

        def validate(chunk: list[dict[str, Any]]) -> int:
            verdicts = validate_operations(
                db.reader(), agent_id=AGENT, pass_id=None, operations=chunk
            )
            return sum(v.ok for v in verdicts)

        def apply(chunk: list[dict[str, Any]]) -> int:
            report = apply_operations(
                db, agent_id=AGENT, pass_id=None, operations=chunk, actor="bench"
            )
            return report.counts["applied"] + report.counts["proposed"]

        ops = operations(n, rows, targets, seed=1)
        by100 = [ops[i : i + 100] for i in range(0, n, 100)]
        print("| run | operations | valid/applied | p50 ms | p95 ms | ops/s |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        times, ok = timed(validate, by100)
        print(row("validate (requests of 100)", times, n, ok))
        times, ok = timed(apply, by100)
        print(row("apply (requests of 100)", times, n, ok))
        ops10 = operations(n, rows, targets, seed=2)
        times, ok = timed(apply, [ops10[i : i + 10] for i in range(0, n, 10)])
        print(row("apply (requests of 10 = one batch; p50/p95 per batch)", times, n, ok))
        db.close()


if __name__ == "__main__":
    main()
