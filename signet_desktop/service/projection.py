"""The projection capability: the embedding map's layouts, the background UMAP run, its cache.

`map_data` answers at once with PCA (and a cached UMAP when one still fits the vectors);
`start_umap` runs UMAP in a separate process (`projection/runner.py`) on a thread of its
own, publishing `projection.progress` and `projection.finished`; the result is cached in
`umap_cache` (`storage/projections.py`) under (agent, model, dimensions, embedding count).
`projection` is Signet's `GET /api/embeddings/projection`: ready from the cache, else
computing (and a run started). A cached row that no longer decodes is deleted and
recomputed; one whose ids differ from today's vectors is stale and recomputed on request.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from signet_desktop.domain.errors import InvalidInput, Unavailable
from signet_desktop.domain.events import EventSink
from signet_desktop.domain.memory import utc_now
from signet_desktop.domain.scope import check_agent_id
from signet_desktop.embedding.generations import Generation, active_generation
from signet_desktop.projection import payload
from signet_desktop.projection.events import ProjectionFinished, ProjectionProgress
from signet_desktop.projection.layout import DIMENSIONS, pca_layout, trivial_layout
from signet_desktop.projection.runner import (
    ProgressCallback,
    ProjectionCancelled,
    ProjectionFailed,
    RunnerConfig,
    UmapRun,
)
from signet_desktop.projection.source import MapPoint, VectorSet, load_vectors
from signet_desktop.storage import projections
from signet_desktop.storage.handle import DatabaseHandle

log = logging.getLogger(__name__)

RETRY_AFTER_S = 60.0  # a failed run is not restarted by every poll of the HTTP route
CLOSE_JOIN_S = 5.0

Coords = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class JobStatus:
    """A UMAP run: idle (none yet), running, completed, failed or cancelled."""

    state: str = "idle"
    phase: str | None = None
    fraction: float = 0.0
    points: int = 0
    error: str | None = None
    started_at: str | None = None
    finished_at: str | None = None

    @property
    def running(self) -> bool:
        return self.state == "running"


@dataclass(frozen=True, slots=True)
class Layout:
    """Coordinates row for row with the points, the method that made them, KNN edges."""

    method: str  # pca | umap | trivial
    coords: Coords
    edges: tuple[tuple[int, int], ...] = ()
    cached_at: str | None = None


@dataclass(frozen=True, slots=True)
class MapData:
    """Everything the map pane draws: points, PCA at once, UMAP when cached, the run."""

    agent_id: str
    dimensions: int
    generation: Generation | None
    points: tuple[MapPoint, ...]
    pca: Layout
    umap: Layout | None
    job: JobStatus


@dataclass(frozen=True, slots=True)
class ProjectionAnswer:
    """Signet's projection route: ready (with the layout) or computing (with the run)."""

    status: str  # ready | computing
    dimensions: int
    points: tuple[MapPoint, ...]
    layout: Layout | None
    job: JobStatus


class _Job:
    """One run in flight (or finished) for an (agent, dimensions) key."""

    def __init__(self, agent_id: str, dimensions: int, vectors: VectorSet) -> None:
        self.agent_id = agent_id
        self.dimensions = dimensions
        self.vectors = vectors
        self.run: UmapRun | None = None
        self.thread: threading.Thread | None = None
        self.finished_mono: float | None = None
        self._lock = threading.Lock()
        self._status = JobStatus("running", "starting", 0.0, len(vectors), started_at=utc_now())

    @property
    def status(self) -> JobStatus:
        with self._lock:
            return self._status

    def progressed(self, phase: str, fraction: float) -> None:
        with self._lock:
            self._status = replace(self._status, phase=phase, fraction=fraction)

    def finished(self, state: str, error: str | None = None) -> None:
        with self._lock:
            fraction = 1.0 if state == "completed" else self._status.fraction
            self._status = replace(
                self._status, state=state, error=error, fraction=fraction, finished_at=utc_now()
            )
            self.finished_mono = time.monotonic()


def check_dimensions(dimensions: object) -> int:
    """2 or 3, else `dimensions_invalid`."""
    if dimensions not in DIMENSIONS or isinstance(dimensions, bool):
        raise InvalidInput("dimensions must be 2 or 3", code="dimensions_invalid")
    assert isinstance(dimensions, int)
    return dimensions


def model_key(generation: Generation) -> str:
    """The cache's `model` column: the generation's model and width (one vector space)."""
    return f"{generation.model}@{generation.dimensions}"


class ProjectionService:
    """Layouts of one agent's current vectors, and the UMAP runs that refine them."""

    def __init__(
        self, db: DatabaseHandle, events: EventSink, *, runner: RunnerConfig | None = None
    ) -> None:
        self._db = db
        self._events = events
        self.runner = runner or RunnerConfig()
        self._jobs: dict[tuple[str, int], _Job] = {}
        self._lock = threading.Lock()
        self._closed = False

    # -- reads -----------------------------------------------------------------------------

    def map_data(self, agent_id: str, dimensions: int = 2) -> MapData:
        """Points with PCA coordinates now, the cached UMAP if it fits, the run's status."""
        agent_id, dimensions = check_agent_id(agent_id), check_dimensions(dimensions)
        vectors = self._vectors(agent_id)
        pca = Layout("pca", pca_layout(vectors.matrix, dimensions))
        return MapData(
            agent_id=agent_id,
            dimensions=dimensions,
            generation=vectors.generation,
            points=vectors.points,
            pca=pca,
            umap=self._cached(agent_id, dimensions, vectors),
            job=self.job_status(agent_id, dimensions),
        )

    def job_status(self, agent_id: str, dimensions: int = 2) -> JobStatus:
        """The latest UMAP run for this agent and width (idle when there was none)."""
        key = (check_agent_id(agent_id), check_dimensions(dimensions))
        with self._lock:
            job = self._jobs.get(key)
        return JobStatus() if job is None else job.status

    def projection(self, agent_id: str, dimensions: int = 2) -> ProjectionAnswer:
        """Signet's route: the cached UMAP (ready), or computing while a run makes it."""
        agent_id, dimensions = check_agent_id(agent_id), check_dimensions(dimensions)
        vectors = self._vectors(agent_id)
        trivial = trivial_layout(len(vectors), dimensions)
        if trivial is not None:
            return ProjectionAnswer(
                "ready", dimensions, vectors.points, Layout("trivial", trivial), JobStatus()
            )
        cached = self._cached(agent_id, dimensions, vectors)
        if cached is not None:
            return ProjectionAnswer(
                "ready", dimensions, vectors.points, cached, self.job_status(agent_id, dimensions)
            )
        job = self._start(agent_id, dimensions, vectors, retry_failed=False)
        return ProjectionAnswer("computing", dimensions, vectors.points, None, job)

    # -- runs ------------------------------------------------------------------------------

    def start_umap(self, agent_id: str, dimensions: int = 2) -> JobStatus:
        """Start a UMAP run over today's vectors (or return the one already running)."""
        agent_id, dimensions = check_agent_id(agent_id), check_dimensions(dimensions)
        vectors = self._vectors(agent_id)
        if trivial_layout(len(vectors), dimensions) is not None:
            return JobStatus(points=len(vectors))  # 0-2 points: nothing to reduce
        return self._start(agent_id, dimensions, vectors, retry_failed=True)

    def cancel_umap(self, agent_id: str, dimensions: int = 2) -> JobStatus:
        """Terminate the running UMAP process, if any; returns the run's status."""
        key = (check_agent_id(agent_id), check_dimensions(dimensions))
        with self._lock:
            job = self._jobs.get(key)
        if job is None:
            return JobStatus()
        if job.run is not None and job.status.running:
            job.run.cancel()
            if job.thread is not None:
                job.thread.join(CLOSE_JOIN_S)
        return job.status

    def close(self) -> None:
        """Cancel every running process (idempotent); the database closes after this."""
        with self._lock:
            self._closed = True
            jobs = list(self._jobs.values())
        for job in jobs:
            if job.run is not None:
                job.run.cancel()
        for job in jobs:
            if job.thread is not None:
                job.thread.join(CLOSE_JOIN_S)

    # -- internals -------------------------------------------------------------------------

    def _vectors(self, agent_id: str) -> VectorSet:
        conn = self._db.reader()
        return load_vectors(conn, active_generation(conn), agent_id)

    def _cached(self, agent_id: str, dimensions: int, vectors: VectorSet) -> Layout | None:
        """The cached UMAP for exactly these vectors, reordered to them; drops a corrupt row."""
        if vectors.generation is None or len(vectors) == 0:
            return None
        row = projections.find_projection(
            self._db.reader(),
            agent_id=agent_id,
            model=model_key(vectors.generation),
            dimensions=dimensions,
            embedding_count=len(vectors),
        )
        if row is None:
            return None
        decoded = payload.decode(row.payload, embedding_count=len(vectors), dimensions=dimensions)
        if decoded is None:
            log.warning("umap_cache row %s is corrupt; dropping it to recompute", row.id)
            with self._db.write() as conn:
                projections.delete_projection(conn, row.id)
            return None
        position = {memory_id: i for i, memory_id in enumerate(decoded.ids)}
        if set(position) != set(vectors.ids):
            return None  # same count, other memories: stale
        order = np.array([position[memory_id] for memory_id in vectors.ids], dtype=np.int64)
        back = np.empty_like(order)
        back[order] = np.arange(len(order))
        edges = tuple((int(back[a]), int(back[b])) for a, b in decoded.edges)
        return Layout(decoded.method, decoded.coords[order], edges, row.created_at)

    def _start(
        self, agent_id: str, dimensions: int, vectors: VectorSet, *, retry_failed: bool
    ) -> JobStatus:
        key = (agent_id, dimensions)
        with self._lock:
            if self._closed:
                raise Unavailable("the service is closing", code="closing")
            current = self._jobs.get(key)
            if current is not None and current.status.running:
                return current.status
            if current is not None and not retry_failed:
                self._refuse_recent_failure(current)
            job = _Job(agent_id, dimensions, vectors)
            job.run = UmapRun(vectors.matrix, dimensions, self.runner, progress=self._reporter(job))
            job.thread = threading.Thread(
                target=self._execute,
                args=(job,),
                name=f"umap-{agent_id}-{dimensions}d",
                daemon=True,
            )
            self._jobs[key] = job
            job.thread.start()
            return job.status

    @staticmethod
    def _refuse_recent_failure(job: _Job) -> None:
        status = job.status
        if status.state != "failed" or job.finished_mono is None:
            return
        if time.monotonic() - job.finished_mono < RETRY_AFTER_S:
            raise Unavailable(
                f"the UMAP projection failed: {status.error}", code="projection_failed"
            )

    def _reporter(self, job: _Job) -> ProgressCallback:
        def report(phase: str, fraction: float) -> None:
            job.progressed(phase, fraction)
            self._events.publish(
                ProjectionProgress(
                    agent_id=job.agent_id, dimensions=job.dimensions, phase=phase, fraction=fraction
                )
            )

        return report

    def _execute(self, job: _Job) -> None:
        """The run's thread: wait for the process, cache the result, announce the end."""
        assert job.run is not None and job.vectors.generation is not None
        error = None
        try:
            result = job.run.wait()
            text = payload.encode(
                method="umap",
                ids=job.vectors.ids,
                coords=result.coords,
                edges=result.edges,
                params={"seed": self.runner.seed, "generation": job.vectors.generation.id},
            )
            with self._db.write() as conn:
                projections.store_projection(
                    conn,
                    agent_id=job.agent_id,
                    model=model_key(job.vectors.generation),
                    dimensions=job.dimensions,
                    embedding_count=len(job.vectors),
                    payload=text,
                )
            outcome = "completed"
        except ProjectionCancelled:
            outcome = "cancelled"
        except ProjectionFailed as exc:
            outcome, error = "failed", str(exc)
        except Exception as exc:  # a bug or a closed database: report it, never kill the app
            log.exception("UMAP run for %s failed", job.agent_id)
            outcome, error = "failed", f"{type(exc).__name__}: {exc}"
        job.finished(outcome, error)
        self._events.publish(
            ProjectionFinished(
                agent_id=job.agent_id,
                dimensions=job.dimensions,
                outcome=outcome,
                points=len(job.vectors),
                error=error,
            )
        )
