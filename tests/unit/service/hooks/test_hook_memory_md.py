"""Hooks and the projections: session start carries MEMORY.md's head; compaction leaves an
artifact."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.db import database_of
from support.safety_fakes import INJECTION, FakeSafety

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.sections import HooksConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.memory import Actor
from signet_desktop.service.artifacts.service import ArtifactService
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from signet_desktop.service.hooks.service import HookContext, HookService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.service.memory_md.service import MemoryMdService
from signet_desktop.storage import hook_sessions


def remember(service: SignetService, content: str, **fields: object) -> str:
    request = RememberRequest(content=content, **fields)  # type: ignore[arg-type]
    return service.memories.remember(request, Actor()).memory.id


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    svc = build_service(
        WorkspacePaths.for_root(tmp_path), SignetConfig(), BuildOptions(no_embedder=True)
    )
    yield svc
    svc.close()


def hooks_over(
    service: SignetService, root: Path, config: HooksConfig | None = None
) -> HookService:
    db = database_of(service)
    return HookService(
        db,
        config or HooksConfig(),
        memories_=service.memories,
        recall=service.recall,
        transcripts=service.transcripts,
        workspace=root,
        artifacts=ArtifactService(db, root, service.transcripts),
        memory_md=MemoryMdService(db, root, safety=FakeSafety()),  # head cache: 30 s TTL
    )


def test_session_start_injects_the_head_before_recalled_memories(
    service: SignetService, tmp_path: Path
) -> None:
    head_id = remember(service, "critical: never force-push main", pinned=True, type="rule")
    remember(service, INJECTION, pinned=True)
    remember(service, "Billing runs on Postgres 16", project="/work/billing")
    remember(service, "agent b: pinned secret plan", agent_id="b", pinned=True)
    hooks = hooks_over(service, tmp_path)
    ctx = HookContext(
        agent_id="default", harness="claude-code", session_key="s1", project="/work/billing"
    )
    result = hooks.session_start(ctx)
    text = result.inject
    assert text.index("## Global Head (Tier 1)") < text.index("never force-push main")
    assert text.index("never force-push main") < text.index("Postgres 16")
    assert text.count("never force-push main") == 1  # not repeated among the recalled ones
    assert "evil.example" not in text and "agent b" not in text
    assert result.memories[0].id == head_id
    injected = hook_sessions.injected_ids(database_of(service).reader(), "default", "s1", 0)
    assert head_id in injected  # prompt-submit will not repeat it


def test_the_head_stays_within_the_session_start_budget(
    service: SignetService, tmp_path: Path
) -> None:
    for n in range(40):
        remember(service, f"pinned rule number {n}: " + "words " * 30, pinned=True, type="rule")
    config = HooksConfig.model_validate({"sessionStart": {"maxInjectTokens": 300}})
    hooks = hooks_over(service, tmp_path, config)
    ctx = HookContext(agent_id="default", harness="claude-code", session_key="s2")
    text = hooks.session_start(ctx).inject
    assert "## Global Head (Tier 1)" in text and len(text) <= 1200


def test_the_head_alone_is_injected_when_nothing_else_is_recalled(
    service: SignetService, tmp_path: Path
) -> None:
    remember(service, "critical: only the head", pinned=True)
    hooks = hooks_over(service, tmp_path)
    ctx = HookContext(agent_id="default", harness="claude-code", session_key="s3")
    text = hooks.session_start(ctx).inject
    assert text.startswith("## Signet memory") and "only the head" in text


def test_compaction_complete_writes_a_compaction_artifact(
    service: SignetService, tmp_path: Path
) -> None:
    hooks = hooks_over(service, tmp_path)
    ctx = HookContext(agent_id="default", harness="claude-code", session_key="s4", project="/p")
    result = hooks.compaction_complete(ctx, "We settled on Postgres 16. Backups next week.")
    assert result.memory_id is not None and result.context_epoch == 1
    [path] = (tmp_path / "memory").glob("*--compaction.md")
    text = path.read_text()
    assert '"session_key": ' not in text and 'session_key: "s4"' in text
    assert "We settled on Postgres 16." in text
    artifacts = ArtifactService(database_of(service), tmp_path, service.transcripts)
    [indexed] = artifacts.indexed("default")
    assert indexed.meta.kind == "compaction" and indexed.meta.project == "/p"
