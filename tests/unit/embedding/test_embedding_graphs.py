"""The native embedder's graphs (float32, int8): each its own model name, hence generation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from signet_desktop.config.models import EmbeddingConfig, SignetConfig
from signet_desktop.domain.memory import Actor
from signet_desktop.embedding.generations import list_generations
from signet_desktop.embedding.graphs import (
    FLOAT32,
    GRAPHS,
    PRECISIONS,
    base_model_name,
    dense_for,
    graph_model_name,
)
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.native import MODEL_NAME, NativeMiniLM
from signet_desktop.embedding.provider import EmbeddingError
from signet_desktop.embedding.registry import build_embedder, configured_model
from signet_desktop.embedding.tracker import EmbeddingTracker
from signet_desktop.recall.calibration import MINILM, calibration_for
from signet_desktop.service.container import configured_embedder
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database, open_database

FIXTURE = Path(__file__).parents[2] / "fixtures" / "minilm_reference.json"
INT8 = PRECISIONS["int8"]


@pytest.fixture(scope="module")
def sentences() -> list[str]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return list(data["sentences"])


@pytest.fixture(scope="module")
def float32_model() -> Iterator[NativeMiniLM]:
    embedder = NativeMiniLM(graph=FLOAT32)
    yield embedder
    embedder.close()


@pytest.fixture(scope="module")
def int8_model() -> Iterator[NativeMiniLM]:
    embedder = NativeMiniLM(graph=INT8)
    yield embedder
    embedder.close()


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "g.db")
    yield database
    database.close()


def test_every_graph_is_its_own_model_name() -> None:
    names = {graph_model_name(MODEL_NAME, graph) for graph in GRAPHS}
    assert len(names) == len(GRAPHS)
    assert graph_model_name(MODEL_NAME, FLOAT32) == MODEL_NAME  # existing vectors stay valid
    assert graph_model_name(MODEL_NAME, INT8) == f"{MODEL_NAME}+{INT8}"
    assert {base_model_name(name) for name in names} == {MODEL_NAME}
    with pytest.raises(ValueError, match="unknown embedder graph"):
        graph_model_name(MODEL_NAME, "int4")
    with pytest.raises(ValueError, match="unknown embedder graph"):
        dense_for("int4")


def test_precision_selects_the_graph_and_float32_stays_selectable() -> None:
    def native(precision: str) -> NativeMiniLM:
        config = SignetConfig(embedding=EmbeddingConfig(precision=precision))  # type: ignore[arg-type]
        embedder = configured_embedder(config)
        assert isinstance(embedder, NativeMiniLM) and not embedder.is_loaded
        return embedder

    assert native("float32").model == MODEL_NAME
    default = configured_embedder(SignetConfig())
    assert default is not None and default.model == f"{MODEL_NAME}+{INT8}"  # int8 by default
    assert native("int8").model == f"{MODEL_NAME}+{INT8}"
    assert configured_model("native", MODEL_NAME, "int8") == native("int8").model
    assert configured_model("ollama", "all-minilm", "int8") == "all-minilm"  # native only
    with pytest.raises(ValueError, match="precision"):
        EmbeddingConfig(precision="int4")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown embedding precision"):
        build_embedder(
            "native", model=None, dimensions=None, base_url=None, api_key=None, timeout_s=1.0,
            precision="int4",
        )  # fmt: skip


def test_quantised_graphs_keep_the_models_calibration() -> None:
    assert calibration_for(f"{MODEL_NAME}+{INT8}") is MINILM
    assert calibration_for("nomic-embed-text") is None


def test_int8_vectors_are_unit_and_close_to_float32(
    float32_model: NativeMiniLM, int8_model: NativeMiniLM, sentences: list[str]
) -> None:
    exact, quantised = float32_model.embed(sentences), int8_model.embed(sentences)
    assert quantised.shape == exact.shape and quantised.dtype == np.float32
    assert np.allclose(np.linalg.norm(quantised, axis=1), 1.0, atol=1e-4)
    cosines = (exact * quantised).sum(axis=1)
    assert cosines.min() > 0.97  # bench/quantized_embedding.py: 0.980 at worst, 0.992 mean
    assert not np.allclose(exact, quantised, atol=1e-3)  # another vector space: never mixed


@pytest.mark.parametrize(
    ("graph", "independent"),
    [
        ("int8-token", True),
        ("int8-token-vocab", True),
        ("int8-block-compute", True),
        ("int8-dynamic", False),
    ],
)
def test_a_texts_vector_depends_on_its_batch_only_with_one_activation_scale_per_call(
    graph: str, independent: bool, sentences: list[str]
) -> None:
    embedder = NativeMiniLM(graph=graph, workers=1)
    try:
        batch = embedder.embed(sentences[:8])
        alone = np.vstack([embedder.embed([text]) for text in sentences[:8]])
    finally:
        embedder.close()
    worst = float((batch * alone).sum(axis=1).min())
    # per token / per block: the same vector alone or in a batch (recall's query is alone, the
    # memories it must find were embedded in batches); per call: the batch moves it
    assert (worst > 0.99999) is independent, worst


def test_the_numpy_engine_computes_float32_only() -> None:
    with pytest.raises(EmbeddingError, match="needs the onnx engine"):
        NativeMiniLM(engine="numpy", graph=INT8).load()


def _tracker(db: Database, embedder: NativeMiniLM) -> EmbeddingTracker:
    tracker = EmbeddingTracker(db, VectorIndex(db), embedder, batch_size=2)
    tracker.start()
    return tracker


def _drain(tracker: EmbeddingTracker) -> list[float]:
    """Run the tracker until it settles; the coverage ratio after each step (its progress)."""
    progress = []
    while tracker.run_once().did_work:
        progress.append(tracker.coverage(fresh=True).ratio)
        assert len(progress) < 50, "tracker never settles"
    return progress


def test_switching_precision_re_embeds_into_a_new_generation_and_back(
    db: Database, float32_model: NativeMiniLM, int8_model: NativeMiniLM
) -> None:
    service = MemoryService(db)
    for text in ("the cat sat on the mat", "deploys run on fridays", "tea over coffee", "ok"):
        service.remember(RememberRequest(content=text), Actor())
    first = _tracker(db, float32_model)
    _drain(first)
    assert first.generation.status == "active" and first.generation.model == MODEL_NAME

    switched = _tracker(db, int8_model)  # embedding.precision: int8 at the next start
    assert switched.generation.id != first.generation.id
    assert switched.generation.status == "building"  # recall keeps off the half-built space
    progress = _drain(switched)
    assert progress[0] < 1.0 and max(progress) == 1.0  # re-embedded step by step, with progress
    assert switched.generation.status == "active"
    assert {g.model: g.status for g in list_generations(db.reader())} == {
        MODEL_NAME: "retired",
        f"{MODEL_NAME}+{INT8}": "active",
    }

    back = _tracker(db, float32_model)  # float32 chosen again: its generation is reopened
    assert back.generation.id == first.generation.id
    _drain(back)
    assert back.generation.status == "active"
