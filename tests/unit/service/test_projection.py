"""The projection capability over a real database with vectors from the hash embedder.

UMAP runs go through the real worker process with a fast fake reducer (support.projection_fakes);
the one run of the real UMAP is in tests/unit/projection/test_umap_real.py.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from support.db import database_of
from support.projection_fakes import (
    ACTOR,
    FAILING,
    SLOW,
    WRONG_SHAPE,
    remember_topics,
    use_reducer,
)

from signet_desktop.config import SignetConfig, WorkspacePaths
from signet_desktop.domain.errors import InvalidInput, Unavailable
from signet_desktop.domain.events import Event
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.projection.events import ProjectionFinished, ProjectionProgress
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.service.projection import ProjectionService
from signet_desktop.storage import projections

FINISH_TIMEOUT_S = 30


class Recorder:
    """Every event published on the bus, and a way to wait for a run's end."""

    def __init__(self, service: SignetService) -> None:
        self.events: list[Event] = []
        self._finished = threading.Event()
        self.disconnect = service.events.connect(self._on)

    def _on(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, ProjectionFinished):
            self._finished.set()

    def wait_finished(self) -> ProjectionFinished:
        assert self._finished.wait(FINISH_TIMEOUT_S), "no projection.finished event"
        self._finished.clear()
        return [e for e in self.events if isinstance(e, ProjectionFinished)][-1]


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    svc = build_service(WorkspacePaths.for_root(tmp_path), SignetConfig(), options)
    use_reducer(svc)
    yield svc
    svc.close()


@pytest.fixture
def recorder(service: SignetService) -> Iterator[Recorder]:
    rec = Recorder(service)
    yield rec
    rec.disconnect()


def cache_rows(service: SignetService) -> list[tuple[str, int, int, str]]:
    conn = database_of(service).reader()
    rows = conn.execute(
        "SELECT agent_id, dimensions, embedding_count, model FROM umap_cache ORDER BY agent_id"
    ).fetchall()
    return [tuple(r) for r in rows]


def test_no_embedder_gives_an_empty_map(tmp_path: Path) -> None:
    svc = build_service(
        WorkspacePaths.for_root(tmp_path), SignetConfig(), BuildOptions(no_embedder=True)
    )
    try:
        data = svc.projection.map_data("default")
        assert data.generation is None and data.points == ()
        assert data.pca.coords.shape == (0, 2) and data.umap is None
        assert svc.projection.projection("default").status == "ready"
    finally:
        svc.close()


def test_map_data_has_every_embedded_memory_with_pca_at_once(service: SignetService) -> None:
    ids = remember_topics(service, 5)
    data = service.projection.map_data("default")
    assert sorted(p.id for p in data.points) == sorted(ids)
    assert data.pca.method == "pca" and data.pca.coords.shape == (15, 2)
    assert data.umap is None and data.job.state == "idle"
    point = next(p for p in data.points if p.id == ids[0])
    assert point.tags == ("billing",) and point.who == "alice" and point.type == "fact"
    assert point.preview.startswith("billing invoices")


def test_a_run_caches_umap_and_announces_progress(
    service: SignetService, recorder: Recorder
) -> None:
    remember_topics(service, 4)
    status = service.projection.start_umap("default")
    assert status.running and status.points == 12
    finished = recorder.wait_finished()
    assert finished.outcome == "completed" and finished.agent_id == "default"
    progress = [e for e in recorder.events if isinstance(e, ProjectionProgress)]
    assert progress and all(e.agent_id == "default" for e in progress)
    fractions = [e.fraction for e in progress]
    assert fractions == sorted(fractions)
    assert cache_rows(service) == [("default", 2, 12, "hash-64@64")]
    data = service.projection.map_data("default")
    assert data.umap is not None and data.umap.method == "umap"
    assert data.umap.coords.shape == (12, 2) and np.isfinite(data.umap.coords).all()
    assert np.abs(data.umap.coords).max() <= 210.0 + 1e-6
    assert data.job.state == "completed" and data.job.fraction == 1.0
    answer = service.projection.projection("default")
    assert answer.status == "ready" and answer.layout is not None
    assert answer.layout.edges and all(0 <= a < 12 and 0 <= b < 12 for a, b in answer.layout.edges)


def test_the_route_answer_computes_then_is_ready(
    service: SignetService, recorder: Recorder
) -> None:
    remember_topics(service, 2)
    first = service.projection.projection("default", 3)
    assert first.status == "computing" and first.layout is None and first.job.running
    again = service.projection.projection("default", 3)  # a poll while running starts nothing
    assert again.status == "computing" and again.job.started_at == first.job.started_at
    recorder.wait_finished()
    ready = service.projection.projection("default", 3)
    assert ready.status == "ready" and ready.layout is not None
    assert ready.layout.coords.shape == (6, 3)


@pytest.mark.parametrize("count", [0, 1, 2])
def test_zero_to_two_points_need_no_run(service: SignetService, count: int) -> None:
    for i in range(count):
        service.memories.remember(RememberRequest(content=f"lonely memory number {i}"), ACTOR)
    answer = service.projection.projection("default")
    assert answer.status == "ready" and answer.layout is not None
    assert answer.layout.coords.shape == (count, 2)
    assert service.projection.start_umap("default").state == "idle"
    assert cache_rows(service) == []


def test_a_corrupt_row_is_dropped_and_recomputed(
    service: SignetService, recorder: Recorder
) -> None:
    remember_topics(service, 2)
    db = database_of(service)
    with db.write() as conn:
        projections.store_projection(
            conn, agent_id="default", model="hash-64@64", dimensions=2, embedding_count=6,
            payload='{"version": 1, "ids": ["x"], "coords": [[0, 0]]}',
        )  # fmt: skip
    data = service.projection.map_data("default")
    assert data.umap is None
    assert cache_rows(service) == []  # the bad row is gone
    assert service.projection.projection("default").status == "computing"
    assert recorder.wait_finished().outcome == "completed"
    assert service.projection.projection("default").status == "ready"
    assert cache_rows(service) == [("default", 2, 6, "hash-64@64")]


def test_a_row_with_the_wrong_count_is_corrupt(service: SignetService, recorder: Recorder) -> None:
    remember_topics(service, 2)
    service.projection.start_umap("default")
    recorder.wait_finished()
    db = database_of(service)
    with db.write() as conn:
        text = conn.execute("SELECT payload FROM umap_cache").fetchone()[0]
        projections.store_projection(
            conn, agent_id="default", model="hash-64@64", dimensions=2, embedding_count=6,
            payload=text.replace('"ids":["', '"ids":["extra","', 1),
        )  # fmt: skip
    assert service.projection.map_data("default").umap is None
    assert cache_rows(service) == []


def test_other_memories_with_the_same_count_are_stale(
    service: SignetService, recorder: Recorder
) -> None:
    ids = remember_topics(service, 2)
    service.projection.start_umap("default")
    recorder.wait_finished()
    service.memories.forget("default", ids[0], reason="test", actor=ACTOR)
    service.memories.remember(RememberRequest(content="a replacement memory"), ACTOR)
    data = service.projection.map_data("default")
    assert len(data.points) == 6 and data.umap is None
    assert cache_rows(service) == [("default", 2, 6, "hash-64@64")]  # kept, replaced on rerun


def test_agents_see_only_their_own_points(service: SignetService, recorder: Recorder) -> None:
    remember_topics(service, 2, agent_id="alpha")
    assert service.projection.map_data("beta").points == ()
    assert len(service.projection.map_data("alpha").points) == 6
    service.projection.start_umap("alpha")
    recorder.wait_finished()
    assert service.projection.map_data("beta").umap is None
    assert service.projection.job_status("beta").state == "idle"
    assert all(e.agent_id == "alpha" for e in recorder.events)


@pytest.mark.parametrize(
    ("agent", "dimensions", "code"),
    [("bad agent!", 2, "agent_id_invalid"), ("default", 4, "dimensions_invalid"),
     ("default", True, "dimensions_invalid")],
)  # fmt: skip
def test_bad_input_is_refused(
    service: SignetService, agent: str, dimensions: int, code: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        service.projection.map_data(agent, dimensions)
    assert caught.value.code == code
    with pytest.raises(InvalidInput):
        service.projection.start_umap(agent, dimensions)
    assert cache_rows(service) == []


def test_cancel_terminates_the_run(service: SignetService, recorder: Recorder) -> None:
    use_reducer(service, SLOW)
    remember_topics(service, 2)
    service.projection.start_umap("default")
    while not any(isinstance(e, ProjectionProgress) for e in recorder.events):
        threading.Event().wait(0.05)
    status = service.projection.cancel_umap("default")
    assert status.state == "cancelled"
    assert recorder.wait_finished().outcome == "cancelled"
    assert cache_rows(service) == []


@pytest.mark.parametrize("reducer", [FAILING, WRONG_SHAPE])
def test_a_failed_run_is_reported_and_not_retried_by_polls(
    service: SignetService, recorder: Recorder, reducer: str
) -> None:
    use_reducer(service, reducer)
    remember_topics(service, 2)
    assert service.projection.projection("default").status == "computing"
    finished = recorder.wait_finished()
    assert finished.outcome == "failed" and finished.error
    assert service.projection.job_status("default").state == "failed"
    with pytest.raises(Unavailable) as caught:
        service.projection.projection("default")
    assert caught.value.code == "projection_failed"
    assert service.projection.start_umap("default").running  # an explicit start retries
    recorder.wait_finished()
    assert cache_rows(service) == []


def test_close_stops_a_running_process(service: SignetService, recorder: Recorder) -> None:
    projection: ProjectionService = use_reducer(service, SLOW)
    remember_topics(service, 2)
    projection.start_umap("default")
    projection.close()
    assert recorder.wait_finished().outcome == "cancelled"
    with pytest.raises(Unavailable):
        projection.start_umap("default")
