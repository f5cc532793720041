"""MEMORY.md: deterministic bytes, the safety gate, scope, the ledger, atomic writes, backups."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.db import database_of
from support.safety_fakes import INJECTION, FakeSafety

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.errors import InvalidInput, Unavailable
from signet_desktop.domain.memory import Actor
from signet_desktop.projection import memory_md as page
from signet_desktop.service.artifacts.service import ArtifactService
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.service.memory_md.service import WITHHELD_MARKER, MemoryMdService
from signet_desktop.service.memory_md.worker import MemoryMdWorker


def ticking_clock() -> Iterator[str]:
    for n in itertools.count():
        yield f"2026-12-01T10:00:{n // 1000:02d}.{n % 1000:03d}Z"


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    paths = WorkspacePaths.for_root(tmp_path)
    svc = build_service(paths, SignetConfig(), BuildOptions(no_embedder=True))
    yield svc
    svc.close()


@pytest.fixture
def facts() -> dict[str, object]:
    return {}


@pytest.fixture
def md(service: SignetService, tmp_path: Path, facts: dict[str, object]) -> MemoryMdService:
    clock = ticking_clock()
    return MemoryMdService(
        database_of(service),
        tmp_path,
        safety=FakeSafety(),
        events=service.events,
        status=facts.__setitem__,
        backups=2,
        clock=lambda: next(clock),
    )


def remember(service: SignetService, content: str, **fields: object) -> str:
    request = RememberRequest(content=content, **fields)  # type: ignore[arg-type]
    return service.memories.remember(request, Actor()).memory.id


def seed(service: SignetService) -> None:
    remember(service, "critical: never force-push main", pinned=True, type="rule")
    remember(service, "Deploys go out on Tuesdays", importance=0.9, type="decision")
    remember(service, "Billing runs on Postgres 16", project="/work/billing", type="fact")
    remember(service, "Flaky test in the invoice exporter", type="issue", project="/work/billing")
    remember(service, "Prefers short commit messages", type="preference")
    remember(service, "API key is sk-live-123456 for staging", type="fact")
    remember(service, INJECTION, importance=1.0, pinned=True)


def test_rebuilding_twice_gives_the_same_bytes(
    service: SignetService, md: MemoryMdService, tmp_path: Path
) -> None:
    seed(service)
    first = md.rebuild("default")
    data = (tmp_path / "MEMORY.md").read_bytes()
    second = md.rebuild("default")
    assert first.changed is True and second.changed is False
    assert (tmp_path / "MEMORY.md").read_bytes() == data
    other = MemoryMdService(database_of(service), tmp_path, safety=FakeSafety())
    assert other.build("default").text.encode() == data  # another instance, later: same bytes


def test_sections_in_order_pinned_first_projects_in_their_thread(
    service: SignetService, md: MemoryMdService
) -> None:
    seed(service)
    text = md.build("default").text
    titles = [
        page.GLOBAL_HEAD, page.THREAD_HEADS, page.SESSION_LEDGER, page.OPEN_THREADS,
        page.DURABLE_NOTES, page.TEMPORAL_INDEX,
    ]  # fmt: skip
    positions = [text.index(t) for t in titles]
    assert positions == sorted(positions)
    head = text[positions[0] : positions[1]]
    assert head.index("never force-push") < head.index("Tuesdays")
    assert "Postgres 16" not in head  # a project's memory is not in the global head
    threads = text[positions[1] : positions[2]]
    assert "### /work/billing" in threads and "Postgres 16" in threads
    assert "Flaky test" in text[positions[3] : positions[4]] or "Flaky test" in threads
    assert text.count("never force-push") == 1  # shown once, in the first section that has it
    assert "- 2026-" in text[positions[5] :] or "memories," in text[positions[5] :]


def test_withheld_memories_never_appear_and_secrets_are_redacted(
    service: SignetService, md: MemoryMdService
) -> None:
    seed(service)
    doc = md.build("default")
    assert "ignore previous instructions" not in doc.text.lower()
    assert "evil.example" not in doc.text and WITHHELD_MARKER not in doc.text
    assert doc.withheld >= 1 and "withheld by the safety policy" in doc.text
    assert "sk-live-123456" not in doc.text and "[redacted]" in doc.text
    head = md.head("default", 10_000)
    assert "evil.example" not in head.text


def test_another_agents_memories_never_enter_the_file(
    service: SignetService, md: MemoryMdService, tmp_path: Path
) -> None:
    seed(service)
    remember(service, "agent b's private plan", agent_id="b", pinned=True)
    a_text = md.build("default").text
    assert "agent b" not in a_text
    outcome = md.rebuild("b")
    assert Path(outcome.path) == tmp_path / "agents" / "b" / "MEMORY.md"
    b_text = Path(outcome.path).read_text()
    assert "agent b's private plan" in b_text and "force-push" not in b_text


def test_the_ledger_counts_thirty_days_back_from_the_newest_evidence(
    service: SignetService, md: MemoryMdService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    artifacts = ArtifactService(database_of(service), tmp_path, service.transcripts)
    stamps = iter(
        ["2026-10-01T09:00:00.000Z", "2026-11-25T09:00:00.000Z", "2026-11-26T09:00:00.000Z"]
    )
    monkeypatch.setattr("signet_desktop.service.artifacts.service.utc_now", lambda: next(stamps))
    artifacts.write_compaction("default", "old-session", "Old work. More.", harness="codex")
    artifacts.write_compaction(
        "default", "new-session", "Chose Postgres 16. Then.", harness="codex"
    )
    artifacts.write_compaction("b", "b-session", "B's session.", harness="codex")
    doc = md.build("default", now="2026-12-01T00:00:00Z")
    ledger = doc.text[doc.text.index(page.SESSION_LEDGER) : doc.text.index(page.OPEN_THREADS)]
    assert "new-session" in ledger and "Chose Postgres 16." in ledger
    assert "old-session" not in ledger and "b-session" not in doc.text
    assert doc.as_of == "2026-12-01T00:00:00.000Z"
    # Without `now`: relative to the newest evidence (the latest capture here), not the clock.
    assert "new-session" in md.build("default").text
    wide = md.build("default", now="2026-10-15T00:00:00Z").text
    assert "old-session" in wide and "new-session" not in wide


def test_an_unwritable_target_is_reported_and_the_previous_file_stays(
    service: SignetService,
    md: MemoryMdService,
    tmp_path: Path,
    facts: dict[str, object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seed(service)
    md.rebuild("default")
    before = (tmp_path / "MEMORY.md").read_bytes()
    remember(service, "A new decision about caching", type="decision", importance=0.95)

    def refuse(src: str, dst: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("signet_desktop.evidence.artifacts.os.replace", refuse)
    with service.events.subscribe(agent_id=None, kinds={"memory_md.failed"}) as seen:
        with pytest.raises(Unavailable) as raised:
            md.rebuild("default")
        [failed] = [d.event for d in seen.drain()]
    assert raised.value.code == "memory_md_unwritable"
    assert "Permission denied" in raised.value.message and "unchanged" in raised.value.message
    assert (tmp_path / "MEMORY.md").read_bytes() == before
    assert not list(tmp_path.glob(".MEMORY.md.*"))
    assert failed.agent_id == "default" and "Permission denied" in getattr(failed, "error", "")
    status = facts["memoryMd"]
    assert isinstance(status, dict) and status["agents"]["default"]["state"] == "error"
    assert md.last_outcome("default") is not None


def test_a_target_that_is_not_a_directory_is_reported(
    service: SignetService, tmp_path: Path
) -> None:
    blocker = tmp_path / "agents"
    blocker.write_text("a file where the agents directory should be")
    md = MemoryMdService(database_of(service), tmp_path, safety=FakeSafety())
    remember(service, "b's memory", agent_id="b")
    with pytest.raises(Unavailable):
        md.rebuild("b")
    assert blocker.read_text().startswith("a file")


def test_backups_roll_and_keep_the_newest(
    service: SignetService, md: MemoryMdService, tmp_path: Path
) -> None:
    versions = []
    for n in range(4):
        remember(service, f"Decision number {n}", type="decision")
        md.rebuild("default")
        versions.append((tmp_path / "MEMORY.md").read_bytes())
    backups = sorted((tmp_path / "memory").glob("MEMORY.backup-*.md"))
    assert len(backups) == 2  # backups=2
    assert [b.read_bytes() for b in backups] == versions[1:3]
    md.rebuild("default")  # unchanged: no write, no new backup
    assert sorted((tmp_path / "memory").glob("MEMORY.backup-*.md")) == backups


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_changes_are_debounced_into_one_rebuild(
    service: SignetService, md: MemoryMdService, tmp_path: Path
) -> None:
    clock = FakeClock()
    worker = MemoryMdWorker(md, debounce_s=3.0, max_delay_s=30.0, clock=clock, initial=())
    service.events.connect(worker.notice)
    assert worker.run_once() is False  # nothing changed
    for n in range(5):
        remember(service, f"note {n}")
        clock.now += 1.0
    assert worker.run_once() is False  # still changing (last change 1 s ago)
    assert not (tmp_path / "MEMORY.md").exists()
    clock.now += 3.0
    assert worker.run_once() is True and worker.rebuilds == 1
    assert "note 4" in (tmp_path / "MEMORY.md").read_text()
    assert worker.run_once() is False
    remember(service, "an agent b note", agent_id="b")
    clock.now += 3.0
    assert worker.due() == ["b"]


def test_a_steady_trickle_still_rebuilds_after_the_max_delay(
    service: SignetService, md: MemoryMdService
) -> None:
    clock = FakeClock()
    worker = MemoryMdWorker(md, debounce_s=3.0, max_delay_s=10.0, clock=clock, initial=())
    service.events.connect(worker.notice)
    for n in range(12):
        remember(service, f"trickle {n}")
        clock.now += 1.0
        if worker.run_once():
            break
    assert worker.rebuilds == 1 and n == 9  # 10 s after the first change


def test_the_hosted_worker_rebuilds_soon_after_a_change(
    service: SignetService, md: MemoryMdService, tmp_path: Path
) -> None:
    worker = MemoryMdWorker(md, debounce_s=0.05, max_delay_s=1.0, initial=())
    service.events.connect(worker.notice)
    stop = threading.Event()
    thread = threading.Thread(target=worker.run_forever, args=(stop,))
    thread.start()
    try:
        remember(service, "hosted change")
        deadline = time.monotonic() + 5
        while worker.rebuilds == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        stop.set()
        thread.join(5)
    assert "hosted change" in (tmp_path / "MEMORY.md").read_text()
    assert not thread.is_alive()


def test_a_hand_written_memory_md_is_backed_up_and_never_rotated_away(
    service: SignetService, md: MemoryMdService, tmp_path: Path
) -> None:
    mine = b"# My own notes\n\nKeep these.\n"
    (tmp_path / "MEMORY.md").write_bytes(mine)
    for n in range(5):
        remember(service, f"Decision {n}", type="decision")
        md.rebuild("default")
    backups = sorted((tmp_path / "memory").glob("MEMORY.backup-*.md"))
    assert mine in [b.read_bytes() for b in backups]
    assert len(backups) == 3  # the hand-written one plus the newest 2 generated ones


def test_the_cached_head_follows_memory_events(service: SignetService, md: MemoryMdService) -> None:
    service.events.connect(md.notice)
    first = remember(service, "critical: the first rule", pinned=True)
    assert "the first rule" in md.head("default", 4000).text
    remember(service, "critical: the second rule", pinned=True)
    assert "the second rule" in md.head("default", 4000).text
    service.memories.forget("default", first, reason="gone", force=True, actor=Actor())
    assert "the first rule" not in md.head("default", 4000).text


def test_thread_heads_show_the_twenty_most_active_projects(
    service: SignetService, md: MemoryMdService
) -> None:
    for n in range(25):
        when = f"2026-01-{n + 1:02d}T00:00:00.000Z"
        remember(service, f"note of project {n}", project=f"/work/p{n:02d}", created_at=when)
    text = md.build("default").text
    threads = text[text.index(page.THREAD_HEADS) : text.index(page.SESSION_LEDGER)]
    assert threads.count("### /work/p") == 20
    assert "### /work/p24" in threads and "### /work/p00" not in threads  # newest first


def test_every_agent_is_rebuilt_at_the_first_step(
    service: SignetService, md: MemoryMdService, tmp_path: Path
) -> None:
    remember(service, "a note of b", agent_id="b")
    worker = MemoryMdWorker(md, clock=FakeClock())
    assert worker.run_once() is True and worker.rebuilds == 2
    assert (tmp_path / "MEMORY.md").is_file()
    assert (tmp_path / "agents" / "b" / "MEMORY.md").is_file()
    assert worker.run_once() is False


@pytest.mark.parametrize("now", ["yesterday", "0001-01-02T00:00:00Z", "0001-01-01T00:00:00+05:00"])
def test_a_now_that_is_no_time_is_refused(md: MemoryMdService, now: str) -> None:
    with pytest.raises(InvalidInput):
        md.build("default", now=now)


def test_an_odd_stored_time_still_builds(service: SignetService, md: MemoryMdService) -> None:
    remember(service, "an imported note")
    with database_of(service).write() as conn:
        conn.execute("UPDATE memories SET updated_at = 'sometime in 2019'")
    doc = md.build("default")
    assert doc.as_of == "sometime in 2019" and "an imported note" in doc.text


def test_the_session_start_head_is_the_files_head(
    service: SignetService, md: MemoryMdService
) -> None:
    when = "2026-06-01T00:00:00.000Z"  # equal times and importance: the id decides, both ways
    for n in range(8):
        remember(service, f"tied rule {n}", importance=0.9, created_at=when, type="rule")
    remember(service, "critical: pinned rule", pinned=True)
    remember(service, "a project rule", importance=0.95, project="/p")
    text = md.build("default").text
    section = text[text.index(page.GLOBAL_HEAD) : text.index(page.THREAD_HEADS)]
    file_lines = [line for line in section.splitlines() if line.startswith("- ")]
    head_lines = md.head("default", 10_000).text.splitlines()[1:]
    assert file_lines == head_lines and len(file_lines) == 9
    assert "pinned rule" in file_lines[0]


def test_temp_files_a_killed_rebuild_left_are_swept(
    service: SignetService, md: MemoryMdService, tmp_path: Path
) -> None:
    (tmp_path / "memory").mkdir(exist_ok=True)
    stale = [tmp_path / ".MEMORY.md.abc123.tmp", tmp_path / "memory" / ".MEMORY.backup-1.md.x.tmp"]
    for temp in stale:
        temp.write_text("torn")
    other = tmp_path / "memory" / ".20261201T000000.000Z--s-1--summary.md.y.tmp"
    other.write_text("an artifact's temp: not MEMORY.md's to remove")
    md.rebuild("default")
    assert not any(t.exists() for t in stale) and other.exists()
