"""A workspace embedded with the float32 graph, opened with the int8 default: a new generation
is built in the background (with coverage as its progress), then recall uses it; float32 chosen
again reopens the old one. The real native embedder, through the facade."""

from __future__ import annotations

from pathlib import Path

import pytest

from signet_desktop.config.models import EmbeddingConfig, SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallQuery
from signet_desktop.embedding.graphs import PRECISIONS
from signet_desktop.embedding.native import MODEL_NAME
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest

pytestmark = pytest.mark.slow  # loads both graphs: a few seconds

FACTS = (
    "billing runs on Postgres 16",
    "the deploy train leaves every Friday at noon",
    "Mara owns the search service",
    "we prefer tea over coffee in the office",
)
# Each remember embeds inline within `embedding.timeout_ms`, else its vector is left to a
# backfill job: the first one also loads the graph, which at load 20 took over the default
# 10 s. The wait is not what this test is about, so it is made generous.
TIMEOUT_MS = 120_000
FLOAT32 = SignetConfig(embedding=EmbeddingConfig(precision="float32", timeout_ms=TIMEOUT_MS))
INT8_DEFAULT = SignetConfig(embedding=EmbeddingConfig(timeout_ms=TIMEOUT_MS))


def _open(root: Path, config: SignetConfig) -> SignetService:
    return build_service(WorkspacePaths.for_root(root), config, BuildOptions(inline_vectors=True))


def _semantic_top(service: SignetService, text: str) -> str:
    # Recall waits at most 5 s for the query's vector (recall/vector.py), and the first one
    # also loads the graph: at load 20 that took longer. Load it first, as the daemon's
    # warm-up does, so the query measures what this test is about.
    embedder = service.embeddings.parts.embedder
    assert embedder is not None
    embedder.embed(["warm-up"])
    query = RecallQuery(query=text, limit=1, channels=("semantic",), min_score=0.0)
    hits = service.recall.search(query).hits
    return hits[0].memory.content if hits else ""


def test_the_int8_default_re_embeds_a_float32_workspace_and_float32_stays_selectable(
    tmp_path: Path,
) -> None:
    old = _open(tmp_path, FLOAT32)
    try:
        for fact in FACTS:
            old.memories.remember(RememberRequest(content=fact), Actor())
        before = old.embeddings.status()
        assert before.model == MODEL_NAME and before.coverage is not None
        assert (before.coverage.status, before.coverage.ratio) == ("active", 1.0)
        float32_generation = before.coverage.generation_id
    finally:
        old.close()

    new = _open(tmp_path, INT8_DEFAULT)  # the default: embedding.precision int8
    try:
        status = new.embeddings.status()
        assert status.model == f"{MODEL_NAME}+{PRECISIONS['int8']}"
        assert status.coverage is not None and status.coverage.generation_id != float32_generation
        assert (status.coverage.status, status.coverage.embedded) == ("building", 0)
        assert _semantic_top(new, "which database does billing use?") == ""  # no mixing
        first = new.embeddings.backfill(limit=2)  # what the background worker does, in steps
        assert first.embedded == 2 and first.coverage is not None
        assert first.coverage.embedded == 2 and first.coverage.status == "building"
        new.embeddings.backfill(limit=100)
        audit = new.embeddings.audit()
        assert audit.status.coverage is not None and audit.status.coverage.status == "active"
        assert {
            (g.generation.model, g.generation.status, g.vectors) for g in audit.generations
        } == {
            (MODEL_NAME, "retired", len(FACTS)),
            (status.model, "active", len(FACTS)),
        }
        assert _semantic_top(new, "which database does billing use?") == FACTS[0]
    finally:
        new.close()

    back = _open(tmp_path, FLOAT32)
    try:
        again = back.embeddings.status()
        assert again.model == MODEL_NAME and again.coverage is not None
        assert again.coverage.generation_id == float32_generation
        outcome = back.embeddings.backfill(limit=100)
        assert outcome.embedded == 0  # nothing to embed: the old vectors still count
        assert outcome.coverage is not None and outcome.coverage.status == "active"
        assert _semantic_top(back, "who owns search?") == FACTS[2]
    finally:
        back.close()
