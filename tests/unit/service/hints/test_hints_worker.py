"""The hints worker end to end over a real database and the scripted LLM server (real wire)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from signet_desktop.config.pipeline import HintsConfig
from signet_desktop.domain.memory import Actor, MemoryPatch
from signet_desktop.inference.errors import ProviderNotConfigured
from signet_desktop.inference.openai_compat import OpenAICompatProvider
from signet_desktop.inference.retry import RetryPolicy
from signet_desktop.inference.types import ChatProvider, ChatRequest, ChatResponse, Usage
from signet_desktop.queue import jobs
from signet_desktop.queue.worker import WorkerSettings
from signet_desktop.service.events import EventBus
from signet_desktop.service.hints.service import DISABLED, JOB_TYPE, HintService
from signet_desktop.service.hints.worker import HintsWorker
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage import hints as hint_rows
from signet_desktop.storage.database import Database
from signet_desktop.storage.guard import in_write_transaction
from tests.support.fake_llm import FakeLLM, garbage, reply, slow

FAST = WorkerSettings(poll_s=0.01, max_backoff_s=0.05, retry_in_s=lambda attempts: 0.0)
FACT = "Ana moved to Lisbon in 2021 to open a bakery near the river."
ANSWER = json.dumps({"hints": ["Where does Ana live?", "When did Ana move to Lisbon?"]})


def enabled(**overrides: object) -> HintsConfig:
    return HintsConfig(enabled=True).model_copy(update=overrides)


def wire(fake: FakeLLM) -> Callable[[], ChatProvider]:
    provider = OpenAICompatProvider(
        base_url=fake.base_url, model="hint-model", retry=RetryPolicy(attempts=1)
    )
    return lambda: provider


def unconfigured() -> ChatProvider:
    raise ProviderNotConfigured("set inference.workloads.memoryExtraction")


@dataclass
class Harness:
    db: Database
    memories: MemoryService
    service: HintService
    worker: HintsWorker
    notes: list[tuple[str, str | None]] = field(default_factory=list)

    def remember(self, content: str, agent: str = "default") -> str:
        request = RememberRequest(content=content, agent_id=agent)
        return self.memories.remember(request, Actor()).memory.id

    def hints(self, memory_id: str, agent: str = "default") -> list[str]:
        return hint_rows.hints_for(self.db.reader(), agent, [memory_id]).get(memory_id, [])

    def job(self, memory_id: str) -> jobs.Job:
        row = (
            self.db.reader()
            .execute("SELECT id FROM memory_jobs WHERE memory_id = ?", (memory_id,))
            .fetchone()
        )
        found = jobs.get_job(self.db.reader(), str(row[0]))
        assert found is not None
        return found


def harness(
    db: Database,
    provider: Callable[[], ChatProvider],
    config: HintsConfig | None = None,
    *,
    max_attempts: int = 3,
    rescan_s: float = 3600.0,
) -> Harness:
    bus = EventBus()
    memories = MemoryService(db, events=bus)
    service = HintService(db, config or enabled(), provider, max_attempts=max_attempts)
    notes: list[tuple[str, str | None]] = []
    worker = HintsWorker(
        db,
        service,
        settings=FAST,
        events=bus,
        status=lambda n, d: notes.append((n, d)),
        rescan_s=rescan_s,
    )
    bus.connect(worker.notice)
    return Harness(db, memories, service, worker, notes)


def test_a_new_memory_gets_its_hints_through_the_llm(db: Database, fake_llm: FakeLLM) -> None:
    fake_llm.script(reply(ANSWER))
    h = harness(db, wire(fake_llm))
    memory = h.remember(FACT)
    assert h.worker.run_once()  # idle step: the noticed memory is enqueued
    assert h.worker.run_once()  # the job: one LLM call, then the hints are written
    assert h.hints(memory) == ["Where does Ana live?", "When did Ana move to Lisbon?"]
    job = h.job(memory)
    assert job.status == "completed" and json.loads(job.result or "{}")["hints"] == 2
    [request] = fake_llm.requests
    assert request.body["model"] == "hint-model"
    assert request.body["response_format"] == {"type": "json_object"}
    assert FACT in request.body["messages"][1]["content"]
    assert h.notes == [("hints", "ready")]


MOVED = "Ana moved again in 2025: the bakery is now in Porto, by the station."


def test_an_edited_memory_is_asked_again_for_its_new_text(db: Database, fake_llm: FakeLLM) -> None:
    fake_llm.script(reply(ANSWER), reply('{"hints": ["Which city is Ana in now?"]}'))
    h = harness(db, wire(fake_llm))
    memory = h.remember(FACT)
    h.worker.run_once()
    h.worker.run_once()
    assert len(h.hints(memory)) == 2
    h.memories.modify("default", memory, MemoryPatch(content=MOVED),
                      reason="moved again", if_version=None, actor=Actor())  # fmt: skip
    assert h.hints(memory) == []  # the old text's hints went with the edit
    assert h.worker.run_once() and h.worker.run_once()
    assert h.hints(memory) == ["Which city is Ana in now?"]
    assert "Porto" in fake_llm.requests[-1].body["messages"][1]["content"]


def test_a_new_memory_whose_job_another_daemon_ran_is_not_queued_again(
    db: Database, fake_llm: FakeLLM
) -> None:
    """Daemons on one PostgreSQL queue: another daemon (here, a second worker) may run the job
    of a memory this one noticed before this one's idle step enqueues it."""
    h = harness(db, wire(fake_llm))
    other = harness(db, wire(fake_llm))  # its backfill scan finds the memory first
    fake_llm.script(reply(ANSWER))
    memory = h.remember(FACT)
    assert other.worker.run_once()  # scan: the job is queued there
    assert other.worker.run_once()  # and run: completed, one LLM call
    h.worker.run_once()  # the noticed memory: it had a job already, none is added
    rows = db.reader().execute("SELECT status FROM memory_jobs WHERE memory_id = ?", (memory,))
    assert [r[0] for r in rows.fetchall()] == ["completed"]
    assert len(fake_llm.requests) == 1


def test_junk_json_writes_nothing_and_the_job_retries_then_dies(
    db: Database, fake_llm: FakeLLM
) -> None:
    fake_llm.script(reply("Sure! Here are some questions: where, when"), garbage())
    h = harness(db, wire(fake_llm), max_attempts=2)
    memory = h.remember(FACT)
    h.worker.run_once()
    h.worker.run_once()
    assert h.job(memory).status == "pending" and "not JSON" in (h.job(memory).error or "")
    h.worker.run_once()
    assert h.job(memory).status == "dead"
    assert h.hints(memory) == [] and len(fake_llm.requests) == 2


def test_a_timeout_writes_nothing_and_fails_the_attempt(db: Database, fake_llm: FakeLLM) -> None:
    fake_llm.script(slow(2.0, ANSWER))
    h = harness(db, wire(fake_llm), enabled(timeout_ms=200))
    memory = h.remember(FACT)
    h.worker.run_once()
    h.worker.run_once()
    job = h.job(memory)
    assert job.status == "pending" and job.attempts == 1 and job.error
    assert h.hints(memory) == []


def test_a_memory_deleted_while_the_llm_runs_gets_nothing(db: Database) -> None:
    h: Harness

    class Forgetting:
        name, model = "fake", "fake"

        def complete(self, request: ChatRequest) -> ChatResponse:
            h.memories.forget("default", memory, reason="test", actor=Actor())
            return ChatResponse(ANSWER, (), "stop", Usage(), "fake", "fake", 1.0)

    h = harness(db, lambda: Forgetting())
    memory = h.remember(FACT)
    h.worker.run_once()
    h.worker.run_once()
    job = h.job(memory)
    assert job.status == "completed"
    assert json.loads(job.result or "{}") == {
        "memoryId": memory,
        "hints": 0,
        "proposed": 2,
        "skipped": "deleted",
    }
    assert hint_rows.count(db.reader()) == 0


def test_the_llm_is_never_called_inside_a_write_transaction(db: Database) -> None:
    seen: list[bool] = []

    class Watching:
        name, model = "fake", "fake"

        def complete(self, request: ChatRequest) -> ChatResponse:
            seen.append(in_write_transaction())
            return ChatResponse(ANSWER, (), "stop", Usage(), "fake", "fake", 1.0)

    h = harness(db, lambda: Watching())
    memory = h.remember(FACT)
    h.worker.run_once()
    h.worker.run_once()
    assert seen == [False] and len(h.hints(memory)) == 2
    stored = h.memories.get("default", memory)
    with db.write(), pytest.raises(RuntimeError, match="write transaction"):
        h.service.generate(stored)  # the guard refuses, the provider is not reached
    assert seen == [False]


def test_disabled_or_unconfigured_is_idle_and_says_why(db: Database, fake_llm: FakeLLM) -> None:
    off = harness(db, wire(fake_llm), HintsConfig())
    memory = off.remember(FACT)
    assert not off.worker.run_once() and not off.worker.run_once()
    assert off.notes == [("hints", DISABLED)]
    none = harness(db, unconfigured)
    none.remember("Another memory long enough to deserve a few hints of its own.")
    assert not none.worker.run_once()
    [(name, detail)] = none.notes
    assert name == "hints" and detail == (
        "idle: no inference target for workload memory_extraction — "
        "set inference.workloads.memoryExtraction"
    )
    count = db.reader().execute("SELECT COUNT(*) FROM memory_jobs").fetchone()[0]
    assert count == 0 and fake_llm.requests == [] and off.hints(memory) == []


def test_the_backfill_scan_finds_memories_written_before_the_worker(
    db: Database, fake_llm: FakeLLM
) -> None:
    before = MemoryService(db)  # no bus: the worker never heard of these
    long_id = before.remember(RememberRequest(content=FACT), Actor()).memory.id
    before.remember(RememberRequest(content="too short"), Actor())
    chunk = RememberRequest(content=FACT + " (chunk)", type="document_chunk")
    before.remember(chunk, Actor())
    fake_llm.script(reply(ANSWER))
    h = harness(db, wire(fake_llm))
    assert h.worker.run_once()  # enqueues the one eligible memory
    assert h.worker.run_once()
    assert len(h.hints(long_id)) == 2
    rows = db.reader().execute("SELECT memory_id FROM memory_jobs WHERE job_type = ?", (JOB_TYPE,))
    assert [r[0] for r in rows] == [long_id]
    assert not h.worker.run_once()  # scan done; a hinted memory is not asked again


def test_the_scan_runs_again_for_memories_no_event_announced(
    db: Database, fake_llm: FakeLLM
) -> None:
    """Another daemon on a shared PostgreSQL database acknowledged a memory and died before
    enqueueing its job: this worker hears no event for it; its next scan finds it."""
    h = harness(db, wire(fake_llm))
    later = harness(db, wire(fake_llm), rescan_s=0.0)
    assert not h.worker.run_once() and not later.worker.run_once()  # both scans: nothing yet
    other_daemon = MemoryService(db)  # no bus: neither worker hears of it
    memory = other_daemon.remember(RememberRequest(content=FACT), Actor()).memory.id
    assert not h.worker.run_once()  # the first scan is done and the next one is not due
    fake_llm.script(reply(ANSWER))
    assert later.worker.run_once()  # due at once: the scan again, and the job queued
    assert later.worker.run_once()
    assert len(h.hints(memory)) == 2


def test_agent_scope_hints_belong_to_the_memorys_agent(db: Database, fake_llm: FakeLLM) -> None:
    fake_llm.script(reply(ANSWER))
    h = harness(db, wire(fake_llm))
    memory = h.remember(FACT, agent="a")
    h.worker.run_once()
    h.worker.run_once()
    assert len(h.hints(memory, agent="a")) == 2 and h.hints(memory, agent="b") == []
    assert h.service.count("b") == 0


def test_the_hosted_loop_runs_jobs_and_stops_promptly(db: Database, fake_llm: FakeLLM) -> None:
    fake_llm.script(reply(ANSWER))
    h = harness(db, wire(fake_llm))
    stop = threading.Event()
    thread = threading.Thread(target=h.worker.run_forever, args=(stop,))
    thread.start()
    memory = h.remember(FACT)  # noticed: wakes the loop
    deadline = time.monotonic() + 5
    while not h.hints(memory) and time.monotonic() < deadline:
        time.sleep(0.02)
    stop.set()
    thread.join(2)
    assert not thread.is_alive() and len(h.hints(memory)) == 2


def test_an_idle_hosted_loop_stops_promptly(db: Database) -> None:
    h = harness(db, unconfigured)
    stop = threading.Event()
    thread = threading.Thread(target=h.worker.run_forever, args=(stop,))
    thread.start()
    time.sleep(0.05)
    stop.set()
    thread.join(2)
    assert not thread.is_alive() and h.notes[0][1].startswith("idle: no inference target")


def test_a_memory_that_already_has_hints_is_not_sent_to_the_llm(
    db: Database, fake_llm: FakeLLM
) -> None:
    h = harness(db, wire(fake_llm))
    memory = h.remember(FACT)
    with db.write() as conn:  # as a structured remember payload would
        hint_rows.insert_hints(conn, "default", memory, ["where did Ana move"])
    h.worker.run_once()
    h.worker.run_once()
    assert json.loads(h.job(memory).result or "{}")["skipped"] == "has_hints"
    assert fake_llm.requests == [] and h.hints(memory) == ["where did Ana move"]
