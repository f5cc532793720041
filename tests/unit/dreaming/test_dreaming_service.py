"""service/dreaming/service.py: triggers, the scheduled sweep, status reasons, start-up recovery."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from signet_desktop.config.models import DreamingConfig
from signet_desktop.domain.dreaming import DreamingState
from signet_desktop.domain.errors import Conflict, InvalidInput, NotFound, Unavailable
from signet_desktop.dreaming.runner import PassRunner
from signet_desktop.dreaming.scheduler import iso
from signet_desktop.inference.errors import ProviderNotConfigured
from signet_desktop.inference.types import ChatProvider
from signet_desktop.service.dreaming.service import DreamingService
from signet_desktop.service.dreaming.worker import DreamingWorker
from signet_desktop.storage import attention, dreaming_operations
from signet_desktop.storage import dreaming_passes as passes
from signet_desktop.storage.database import Database
from tests.unit.dreaming.dream_fakes import RecordingSeam, ScriptedProvider, add_memory, answer


def service(
    db: Database,
    provider: ChatProvider | None = None,
    *,
    enabled: bool = True,
    load: float = 0.0,
    **config: object,
) -> DreamingService:
    settings = DreamingConfig(enabled=enabled, **config)  # type: ignore[arg-type]
    runner = PassRunner(db, config=settings, seam=lambda a, p: RecordingSeam("Lisbon"))

    def factory() -> ChatProvider:
        if provider is None:
            raise ProviderNotConfigured("set inference.workloads.memoryExtraction")
        return provider

    return DreamingService(db, settings, runner, provider=factory, load=lambda: load)


def test_trigger_validates_before_writing(db: Database) -> None:
    with pytest.raises(InvalidInput):
        service(db, ScriptedProvider()).trigger("a", "everything")
    with pytest.raises(InvalidInput):
        service(db, ScriptedProvider()).trigger("bad agent id!")
    with pytest.raises(Unavailable) as caught:
        service(db, None).trigger("a")
    assert caught.value.code == "inference_not_configured"
    assert passes.list_passes(db.reader(), "a") == []


def test_trigger_runs_in_the_background_and_409s_meanwhile(db: Database) -> None:
    add_memory(db, "a", "m1", "Alice moved to Lisbon.")
    gate = threading.Event()

    class Waiting(ScriptedProvider):
        def complete(self, request):  # type: ignore[no-untyped-def]
            gate.wait(5)
            return super().complete(request)

    svc = service(db, Waiting([answer("done")]))
    pass_id = svc.trigger("a")
    with pytest.raises(Conflict) as caught:
        svc.trigger("a", "compact")
    assert caught.value.code == "pass_running" and caught.value.details["pass_id"] == pass_id
    assert svc.status("a").running_pass_id == pass_id
    gate.set()
    assert svc.wait(pass_id, 5)
    assert svc.get_pass("a", pass_id).record.status == "completed"
    with pytest.raises(NotFound):
        svc.get_pass("b", pass_id)
    assert svc.list_passes("b") == []


def test_status_says_why_it_is_idle(db: Database) -> None:
    assert service(db, None, enabled=False).status("a").idle == "disabled"
    unconfigured = service(db, None).status("a")
    assert unconfigured.idle == "no-inference" and "memoryExtraction" in unconfigured.detail
    assert service(db, ScriptedProvider()).status("a").idle == "no-evidence"
    add_memory(db, "a", "m1", "Alice moved to Lisbon.")
    with db.write() as conn:
        earlier = datetime.now(UTC) - timedelta(minutes=1)  # attention below is newer
        passes.put_state(conn, DreamingState("a", last_pass_at=iso(earlier)))
    waiting = service(db, ScriptedProvider()).status("a")
    assert waiting.idle == "below-threshold" and waiting.pending_sources == 1
    with db.write() as conn:
        attention.create_attention(
            conn, agent_id="a", kind="hygiene", subject_ref="entity:e", details={}
        )
    deferred = service(db, ScriptedProvider(), load=5.0).status("a")
    assert deferred.idle == "deferred" and "load" in deferred.detail


def test_sweep_runs_due_agents_only_when_enabled(db: Database) -> None:
    add_memory(db, "a", "m1", "Alice moved to Lisbon.")  # first run: due
    add_memory(db, "b", "m2", "Bob moved to Porto.")
    provider = ScriptedProvider([answer("a done"), answer("b done")])
    assert service(db, provider, enabled=False).check_once() == []
    assert provider.requests == []
    done = service(db, provider).check_once()
    assert sorted(p.agent_id for p in done) == ["a", "b"]
    assert all(p.trigger_reason == "first-run" and p.status == "completed" for p in done)
    assert service(db, provider).check_once() == []  # consumed: nothing new
    assert len(provider.requests) == 2


def test_sweep_defers_under_pressure_and_backs_off_after_failure(db: Database) -> None:
    add_memory(db, "a", "m1", "Alice moved to Lisbon.")
    assert service(db, ScriptedProvider(), load=9.0).check_once() == []
    failing = ScriptedProvider([ProviderNotConfigured("gone")])
    (failed,) = service(db, failing).check_once()
    assert failed.status == "failed"
    assert service(db, ScriptedProvider()).check_once() == []  # backing off
    assert service(db, ScriptedProvider()).status("a").idle == "backing-off"


def test_recover_marks_interrupted_and_keeps_counts(db: Database) -> None:
    with db.write() as conn:
        pass_id = passes.create_pass(
            conn, agent_id="a", mode="incremental", trigger_reason="manual"
        )
        dreaming_operations.append(
            conn,
            agent_id="a",
            pass_id=pass_id,
            request_id="r1",
            actor="dreaming",
            records=[
                dreaming_operations.NewOperationRecord(
                    "create_entity", {"name": "A"}, (), None, "applied", None, None, None
                )
            ],
        )
    svc = service(db, ScriptedProvider())
    assert svc.recover() == 1 and svc.recover() == 0
    record = svc.get_pass("a", pass_id).record
    assert record.status == "failed" and record.error == "interrupted"
    assert record.mutations.applied == 1
    assert svc.wait(svc.trigger("a"), 5)  # the agent is free again


def test_worker_sweeps_until_stopped(db: Database) -> None:
    add_memory(db, "a", "m1", "Alice moved to Lisbon.")
    worker = DreamingWorker(service(db, ScriptedProvider([answer("ok")])), interval_s=0.01)
    stop = threading.Event()
    thread = threading.Thread(target=worker.run_forever, args=(stop,))
    thread.start()
    for _ in range(500):
        found = passes.list_passes(db.reader(), "a")
        if found and found[0].status != "running":
            break
        stop.wait(0.01)
    stop.set()
    thread.join(5)
    assert not thread.is_alive() and worker.sweeps >= 1
    assert passes.list_passes(db.reader(), "a")[0].status == "completed"


def test_the_pending_evidence_is_summed_again_only_after_a_write(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    from signet_desktop.service.dreaming import pending_cache

    sums: list[str] = []
    real = pending_cache.dreaming_evidence.pending_tokens

    def counted(conn: object, agent_id: str) -> tuple[int, int]:
        sums.append(agent_id)
        return real(conn, agent_id)  # type: ignore[arg-type]

    monkeypatch.setattr(pending_cache.dreaming_evidence, "pending_tokens", counted)
    dreaming = service(db)
    add_memory(db, "a", "m1", "the deploy runs on Fridays")
    first = dreaming.status("a")
    assert dreaming.status("a").pending_sources == first.pending_sources == 1
    assert sums == ["a"]  # nothing changed: the second status did not walk the store
    add_memory(db, "a", "m2", "billing moved to Postgres 16")
    assert dreaming.status("a").pending_sources == 2  # a write: summed again
    assert sums == ["a", "a"]
