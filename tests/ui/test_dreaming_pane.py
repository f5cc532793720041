"""The Dreaming pane: the pass timeline, a pass's audit (tool calls, operations, quotes in
their source, window, runbook, exclusions), run a pass, revert with a dry run, and scope."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from signet_desktop.config import WorkspacePaths
from signet_desktop.domain.dreaming import DreamingPass, DreamingState, DreamingStatus, PassDetail
from signet_desktop.domain.errors import NotFound, Unavailable
from signet_desktop.domain.memory import Actor
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.pane import PaneContext, discover_panes
from signet_desktop.ui.panes.dreaming import (
    EMPTY_HINT,
    NO_INFERENCE,
    PANE,
    DreamingPane,
    _runner_text,
)
from signet_desktop.ui.tasks import TaskRunner
from tests.support.dream_config import dreaming_config
from tests.support.fake_llm import FakeLLM, call, reply, tool_reply
from tests.ui.conftest import RecordingNavigator
from tests.ui.memory_support import settle
from tests.unit.ui.dreaming_values import (
    QUOTE,
    TRANSCRIPT,
    a_call,
    a_pass,
    an_exclusion,
    an_operation,
)

pytestmark = pytest.mark.gui


def a_detail(record: DreamingPass) -> PassDetail:
    return PassDetail(
        record=record,
        tool_calls=(
            a_call(0, "search_evidence", {"query": "billing db"}, {"hits": 1}),
            a_call(1, "apply_ontology_ops", {"operations": [{}, {}]}, {"applied": 1}),
        ),
        operations=(
            an_operation(
                0,
                "set_claim_value",
                "applied",
                {
                    "entityId": "e1",
                    "aspectId": "a1",
                    "claimKey": "database",
                    "value": "Postgres 16",
                },
            ),
            an_operation(
                1,
                "merge_entities",
                "failed",
                {"fromEntityId": "a", "intoEntityId": "b"},
                evidence=(),
                code="attention_required",
                reason="needs attention:<id>",
            ),
        ),
        exclusions=(an_exclusion(),),
    )


@dataclass
class FakeDreaming:
    """`service.dreaming` over fixed passes per agent; records triggers."""

    passes: dict[str, list[DreamingPass]]
    configured: bool = True
    triggered: list[tuple[str, str]] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    running: str | None = None  # a running pass (through Claude Code)
    cancelled: list[tuple[str, str]] = field(default_factory=list)

    def list_passes(
        self, agent_id: str, *, status: str | None = None, limit: int = 50
    ) -> list[DreamingPass]:
        self.asked.append(agent_id)
        rows = self.passes.get(agent_id, [])
        return [p for p in rows if status is None or p.status == status][:limit]

    def get_pass(self, agent_id: str, pass_id: str) -> PassDetail:
        for record in self.passes.get(agent_id, []):
            if record.id == pass_id:
                return a_detail(record)
        raise NotFound(f"no Dreaming pass {pass_id!r} for this agent")

    def status(self, agent_id: str) -> DreamingStatus:
        return (
            DreamingStatus(
                agent_id,
                True,
                self.configured,
                None if self.configured else "inference.workloads unset",
                None,
                None,
                "waiting for evidence",
                None,
                2,
                1_500,
                0,
                100_000,
                DreamingState(agent_id),
                None,
                executor="acpx" if self.configured else None,
                runner="acpx:claude" if self.configured else None,
                harness="/home/me/.local/bin/claude" if self.configured else None,
            )
            if self.running is None
            else replace(self._idle(agent_id), running_pass_id=self.running, idle=None)
        )

    def _idle(self, agent_id: str) -> DreamingStatus:
        kept, self.running = self.running, None
        try:
            return self.status(agent_id)
        finally:
            self.running = kept

    def cancel_pass(self, agent_id: str, pass_id: str) -> None:
        self.cancelled.append((agent_id, pass_id))
        self.running = None

    def trigger(self, agent_id: str, mode: str = "incremental") -> str:
        if not self.configured:
            raise Unavailable("no inference provider", code="inference_not_configured")
        self.triggered.append((agent_id, mode))
        return "p-new"


class FakeSources:
    """`service.cited_sources`: the one transcript the fake pass cites."""

    def source_text(self, agent_id: str, ref: str) -> str | None:
        return TRANSCRIPT if agent_id == "default" and ref == "transcript:8c35aa" else None


@dataclass
class FakeRevert:
    changes: list[Any]
    blockers: list[Any]
    calls: list[tuple[str, str, bool]] = field(default_factory=list)

    def revert_pass(self, agent_id: str, pass_id: str, *, actor: str, dry_run: bool = True) -> Any:
        self.calls.append((agent_id, pass_id, dry_run))
        return self


@dataclass
class Shim:
    """Stands in for the facade's capabilities the pane reads."""

    dreaming: Any
    ontology: Any = None
    memory_md: Any = None
    cited_sources: Any = field(default_factory=FakeSources)


def open_pane(
    qtbot: QtBot, context: PaneContext, loop: asyncio.AbstractEventLoop, shim: Shim
) -> DreamingPane:
    pane = DreamingPane(replace(context, service=shim))  # type: ignore[arg-type]
    qtbot.addWidget(pane)
    pane.resize(1100, 760)
    pane.show()
    pane.activated()
    settle(loop, context)
    return pane


def two_agents() -> dict[str, list[DreamingPass]]:
    failed = a_pass(
        "p0", status="failed", error="provider timed out", started_at="2026-11-29T03:15:00Z"
    )
    other = a_pass("secret", agent_id="other")
    return {"default": [a_pass(), failed], "other": [other]}


def test_the_pane_registers_itself() -> None:
    spec = next(spec for spec in discover_panes() if spec.key == "dreaming")
    assert spec == PANE
    assert (spec.title, spec.icon, spec.order) == ("Dreaming", "dreaming.svg", 50)


def test_a_pass_is_audited_down_to_its_quotes(
    qtbot: QtBot,
    qt_loop: asyncio.AbstractEventLoop,
    pane_context: PaneContext,
    navigator: RecordingNavigator,
) -> None:
    pane = open_pane(qtbot, pane_context, qt_loop, Shim(FakeDreaming(two_agents())))
    settle(qt_loop, pane_context, until=lambda: pane.detail is not None)
    assert pane.pass_ids() == ["p1", "p0"]
    assert pane.count_label.text() == "2 passes · 1 completed · 1 failed"
    assert pane.audit.heading.text().startswith("Pass 2026-11-30 03:12 · incremental · completed")
    assert pane.audit.calls.topLevelItemCount() == 2
    first = pane.audit.calls.topLevelItem(0)
    assert first.text(0) == "1. Search the evidence for “billing db”" and first.childCount() == 0
    assert pane.audit.call_json.isHidden()  # raw JSON only with Details
    pane.audit.calls.setCurrentItem(first)
    assert pane.audit.ops.count() == 2
    assert "1 applied ✔ · 1 failed ✘" in pane.audit.ops_label.text()
    settle(qt_loop, pane_context, until=lambda: "turn 3" in pane.audit.quotes.toPlainText())
    assert QUOTE in pane.audit.quotes.toPlainText()
    assert "background-color" in pane.audit.quotes.toHtml()
    pane.audit.open_anchor(QUrl("transcript:8c35aa#2"))
    assert navigator.panes[-1] == ("transcripts", {"session_key": "8c35aa", "turn": 2})
    pane.audit.ops.setCurrentRow(1)
    assert "refused: needs attention" in pane.audit.quotes.toPlainText()  # the code: Details
    assert "No evidence cited" in pane.audit.quotes.toPlainText()
    assert "48k of 128k tokens" in pane.audit.window_text.toPlainText()
    assert "transcript:8c35aa" not in pane.audit.window_text.toPlainText()  # ids: Details
    assert "Cite exact quotes." in pane.audit.runbook_text.toPlainText()
    assert "blocked by content safety" in pane.audit.exclusions_text.toPlainText()
    assert pane.audit.tabs.tabText(3) == "Exclusions (1)"


def test_details_shows_the_raw_side_and_hides_it_again(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    pane = open_pane(qtbot, pane_context, qt_loop, Shim(FakeDreaming(two_agents())))
    settle(qt_loop, pane_context, until=lambda: pane.detail is not None)
    audit = pane.audit

    def shown() -> str:
        calls = [audit.calls.topLevelItem(i) for i in range(audit.calls.topLevelItemCount())]
        lines = [c.text(0) for c in calls] + [c.child(n).text(0) for c in calls
                                              for n in range(c.childCount())]  # fmt: skip
        items = [audit.ops.itemWidget(audit.ops.item(n)) for n in range(audit.ops.count())]
        words = [w.title.text() + w.outcome.text() for w in items]  # type: ignore[attr-defined]
        return "\n".join([audit.facts.text(), *lines, *words, audit.window_text.toPlainText()])

    plain = shown()
    for raw in ("search_evidence", "merge_entities", "set_claim_value", "{", "p1",
                "attention_required", "transcript:8c35aa"):  # fmt: skip
        assert raw not in plain, raw
    assert "Set e1" not in plain and "Set an entity’s database to “Postgres 16”" in plain
    assert audit.call_json.isHidden()

    audit.details_button.click()
    audit.calls.setCurrentItem(audit.calls.topLevelItem(0))
    raw = shown()
    assert 'search_evidence("billing db")' in raw and "merge_entities" in raw
    assert "pass p1" in raw and "transcript:8c35aa" in raw
    assert "refused (attention_required)" in raw
    assert audit.calls.topLevelItem(0).child(0).text(0).startswith("arguments: ")
    assert audit.call_json.isVisibleTo(audit) and '"query": "billing db"' in (
        audit.call_json.toPlainText()
    )
    assert audit.detail is not None and audit.detail.record.id == "p1"  # still the same pass

    audit.details_button.click()
    assert shown() == plain and audit.call_json.isHidden()


def test_status_filter_and_run_a_pass(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    fake = FakeDreaming(two_agents())
    pane = open_pane(qtbot, pane_context, qt_loop, Shim(fake))
    pane.status_filter.setCurrentIndex(pane.status_filter.findData("failed"))
    settle(qt_loop, pane_context, until=lambda: pane.pass_ids() == ["p0"])
    assert pane.run_button.isEnabled()
    pane.mode.setCurrentIndex(pane.mode.findData("compact"))
    pane.run_button.click()
    settle(qt_loop, pane_context, until=lambda: "started" in pane.notice.text())
    assert fake.triggered == [("default", "compact")]


def test_the_running_pass_says_who_runs_it_and_can_be_cancelled(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    fake = FakeDreaming(two_agents(), running="p-run")
    pane = open_pane(qtbot, pane_context, qt_loop, Shim(fake))
    settle(qt_loop, pane_context, until=lambda: pane.cancel_button.isEnabled())
    assert not pane.run_button.isEnabled() and not pane.cancel_button.isHidden()
    assert pane.state_label.text() == (
        "A pass is running through Claude Code (/home/me/.local/bin/claude)…"
    )
    pane.cancel_button.click()
    settle(qt_loop, pane_context, until=lambda: "being cancelled" in pane.notice.text())
    assert fake.cancelled == [("default", "p-run")]
    settle(qt_loop, pane_context, until=lambda: pane.run_button.isEnabled())
    assert not pane.cancel_button.isEnabled() and pane.cancel_button.isHidden()
    assert pane.state_label.text().endswith("runs through Claude Code (/home/me/.local/bin/claude)")


def test_run_is_disabled_with_the_reason_without_inference(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    pane = open_pane(qtbot, pane_context, qt_loop, Shim(FakeDreaming({}, configured=False)))
    assert pane.stack.currentWidget() is pane.empty
    assert pane.empty.hint_label.text() == EMPTY_HINT
    assert not pane.run_button.isEnabled()
    assert NO_INFERENCE in pane.run_button.toolTip()
    assert pane.state_label.text() == NO_INFERENCE


def test_revert_shows_the_dry_run_and_reverts_only_when_confirmed(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    revert = FakeRevert([{"description": "archive claim database = Postgres 16"}], [])
    pane = open_pane(qtbot, pane_context, qt_loop, Shim(FakeDreaming(two_agents()), revert))
    settle(qt_loop, pane_context, until=lambda: pane.detail is not None)
    asked: list[tuple[str, list[str], bool]] = []
    pane.confirm_revert = lambda head, lines, ok: asked.append((head, lines, ok)) is None and False
    pane.audit.revert_button.click()
    settle(qt_loop, pane_context, until=lambda: bool(asked))
    assert asked == [("Reverting undoes 1 change:", ["archive claim database = Postgres 16"], True)]
    assert revert.calls == [("default", "p1", True)]
    pane.confirm_revert = lambda head, lines, ok: True
    pane.audit.revert_button.click()
    settle(qt_loop, pane_context, until=lambda: "reverted" in pane.notice.text())
    assert revert.calls[-2:] == [("default", "p1", True), ("default", "p1", False)]


def test_a_blocked_revert_says_why_and_changes_nothing(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    revert = FakeRevert([{"x": 1}], [{"reason": "pass p2 merged Postgres into db"}])
    pane = open_pane(qtbot, pane_context, qt_loop, Shim(FakeDreaming(two_agents()), revert))
    settle(qt_loop, pane_context, until=lambda: pane.detail is not None)
    pane.confirm_revert = lambda head, lines, ok: True
    pane.audit.revert_button.click()
    settle(qt_loop, pane_context, until=lambda: bool(pane.banner.text))
    assert "cannot be reverted" in pane.banner.text and "merged Postgres" in pane.banner.text
    assert [dry for _a, _p, dry in revert.calls] == [True]


def test_one_agent_never_sees_another_agents_passes(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    fake = FakeDreaming(two_agents())
    pane = open_pane(qtbot, pane_context, qt_loop, Shim(fake))
    assert "secret" not in pane.pass_ids()
    pane.reveal(pass_id="secret")
    settle(qt_loop, pane_context, until=lambda: bool(pane.banner.text))
    assert "could not be read" in pane.banner.text
    assert set(fake.asked) == {"default"}


# -- over the real facade, a pass run against a scripted OpenAI-compatible server ----------

MEMORY = "Alice moved to Lisbon in May 2026 and now leads the billing team."


@pytest.fixture
def dream_context(
    qapp: QApplication, tmp_path: Path, fake_llm: FakeLLM, navigator: RecordingNavigator
) -> Iterator[PaneContext]:
    """A `PaneContext` over a real facade whose Dreaming talks to `fake_llm`."""
    paths = WorkspacePaths.for_root(tmp_path / "ws")
    paths.ensure()
    service = build_service(
        paths, dreaming_config(fake_llm.base_url), BuildOptions(no_embedder=True)
    )
    bridge, tasks = EventBridge(service.events), TaskRunner()
    yield PaneContext(
        service=service, events=bridge, tasks=tasks, navigator=navigator, workspace=paths.root
    )
    tasks.cancel_all()
    bridge.close()
    service.close()


def remember(service: SignetService, text: str, agent: str = "default") -> str:
    request = RememberRequest(content=text, agent_id=agent)
    return service.memories.remember(request, Actor(changed_by="claude-code")).memory.id


def script_pass(fake_llm: FakeLLM, memory_id: str) -> None:
    """search, then one true and one fabricated create_entity, then the runbook notes."""
    ref = f"memory:{memory_id}"
    ops = [
        {
            "operation": "create_entity",
            "payload": {"name": "Alice", "type": "person"},
            "evidence": [{"quote": "Alice moved to Lisbon", "source_ref": ref}],
            "confidence": 0.9,
        },
        {
            "operation": "create_entity",
            "payload": {"name": "Bob", "type": "person"},
            "evidence": [{"quote": "Bob moved to Porto", "source_ref": ref}],
            "confidence": 0.9,
        },
    ]
    fake_llm.script(
        tool_reply(call("search_evidence", {"query": "Alice Lisbon"})),
        tool_reply(call("apply_ontology_ops", {"operations": ops})),
        tool_reply(call("runbook_write", {"summary": "Alice is in Lisbon", "openQuestions": []})),
        reply("done"),
    )


def finished(pane: DreamingPane) -> bool:
    return pane.detail is not None and pane.detail.record.status != "running"


def test_run_a_pass_then_audit_it_and_revert_it(
    qtbot: QtBot,
    qt_loop: asyncio.AbstractEventLoop,
    dream_context: PaneContext,
    fake_llm: FakeLLM,
    navigator: RecordingNavigator,
) -> None:
    service = dream_context.service
    memory_id = remember(service, MEMORY)
    pane = DreamingPane(dream_context)
    qtbot.addWidget(pane)
    pane.resize(1100, 760)
    pane.show()
    pane.activated()
    settle(qt_loop, dream_context)
    assert pane.stack.currentWidget() is pane.empty and pane.run_button.isEnabled()
    script_pass(fake_llm, memory_id)
    pane.run_button.click()
    settle(qt_loop, dream_context, until=lambda: finished(pane), timeout=20)
    record = pane.detail.record  # type: ignore[union-attr]
    assert record.status == "completed" and record.summary == "Alice is in Lisbon"
    assert pane.pass_ids() == [record.id]
    lines = [
        pane.audit.calls.topLevelItem(i).text(0)
        for i in range(pane.audit.calls.topLevelItemCount())
    ]
    assert lines == [
        "1. Search the evidence for “Alice Lisbon”",
        "2. Apply 2 operations",
        "3. Update the runbook",
    ]
    apply = pane.audit.calls.topLevelItem(1)  # the apply call lists what it did, op by op
    assert apply.isExpanded() and apply.childCount() == 2
    assert apply.child(0).text(0) == "✔ Create entity “Alice” (person)"
    assert apply.child(1).text(0) in (
        "– Create entity “Bob” (person)",
        "✘ Create entity “Bob” (person)",
    )
    pane.audit.calls.setCurrentItem(apply.child(1))  # selects that operation
    assert pane.audit.operation is not None and pane.audit.operation.payload["name"] == "Bob"
    pane.audit.ops.setCurrentRow(0)
    assert pane.audit.ops.count() == 2 and "1 applied ✔" in pane.audit.ops_label.text()
    settle(qt_loop, dream_context, until=lambda: "memory " in pane.audit.quotes.toPlainText())
    assert (
        "Alice moved to Lisbon" in pane.audit.quotes.toHtml()
        and "background-color" in pane.audit.quotes.toHtml()
    )
    pane.audit.open_anchor(QUrl(f"memory:{memory_id}"))
    assert navigator.opened == [memory_id]
    pane.audit.ops.setCurrentRow(1)
    assert (
        "Bob" in pane.audit.quotes.toPlainText()
        and "quote" in pane.audit.quotes.toPlainText().lower()
    )
    pane.audit.details_button.click()  # the raw side: every source by its reference
    assert f"memory:{memory_id}" in pane.audit.window_text.toPlainText()
    assert "Alice is in Lisbon" in pane.audit.runbook_text.toPlainText()
    assert [e.name for e in service.knowledge.list_entities("default").items] == ["Alice"]

    asked: list[tuple[str, list[str], bool]] = []
    pane.confirm_revert = lambda head, lines, ok: asked.append((head, lines, ok)) is None and False
    pane.audit.revert_button.click()
    settle(qt_loop, dream_context, until=lambda: bool(asked))
    head, changes, can_apply = asked[0]
    assert head.startswith("Reverting undoes") and can_apply and changes
    assert [e.name for e in service.knowledge.list_entities("default").items] == ["Alice"]
    pane.confirm_revert = lambda head, lines, ok: True
    pane.audit.revert_button.click()
    settle(qt_loop, dream_context, until=lambda: "reverted" in pane.notice.text())
    assert service.knowledge.list_entities("default").items == ()


def test_another_agents_pass_is_never_shown(
    qtbot: QtBot,
    qt_loop: asyncio.AbstractEventLoop,
    dream_context: PaneContext,
    fake_llm: FakeLLM,
) -> None:
    service = dream_context.service
    script_pass(fake_llm, remember(service, MEMORY, agent="other"))
    theirs = service.dreaming.trigger("other", "incremental")
    assert service.dreaming.wait(theirs)
    pane = DreamingPane(dream_context)
    qtbot.addWidget(pane)
    pane.show()
    pane.activated()
    settle(qt_loop, dream_context)
    assert pane.pass_ids() == [] and pane.stack.currentWidget() is pane.empty
    pane.reveal(pass_id=theirs)
    settle(qt_loop, dream_context, until=lambda: bool(pane.banner.text))
    assert "could not be read" in pane.banner.text and pane.detail is None
    assert (
        dream_context.service.cited_sources.source_text("default", pane_source_ref(service, theirs))
        is None
    )


def pane_source_ref(service: SignetService, pass_id: str) -> str:
    """The memory the other agent's pass cited."""
    detail = service.dreaming.get_pass("other", pass_id)
    return str(detail.operations[0].evidence[0]["source_ref"])


def test_without_inference_run_is_disabled_with_the_reason(
    qtbot: QtBot, qt_loop: asyncio.AbstractEventLoop, pane_context: PaneContext
) -> None:
    pane = DreamingPane(pane_context)
    qtbot.addWidget(pane)
    pane.show()
    pane.activated()
    settle(qt_loop, pane_context)
    assert pane.stack.currentWidget() is pane.empty
    assert not pane.run_button.isEnabled()
    assert pane.state_label.text() == NO_INFERENCE


@pytest.mark.parametrize(
    ("runner", "harness", "shown"),
    [
        ("acpx:claude", "/usr/bin/claude", "Claude Code (/usr/bin/claude)"),
        ("acpx:codex", "/opt/codex", "Codex (/opt/codex)"),
        ("acpx:opencode", "/opt/opencode", "OpenCode (/opt/opencode)"),
    ],
)
def test_each_harness_is_named_as_a_person_knows_it(runner: str, harness: str, shown: str) -> None:
    status = replace(FakeDreaming(two_agents()).status("default"), runner=runner, harness=harness)
    assert _runner_text(status) == shown
