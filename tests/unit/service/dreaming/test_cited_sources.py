"""service.cited_sources renders a cited source in one agent's scope, never another's."""

from __future__ import annotations

from pathlib import Path

from signet_desktop.config import SignetConfig, WorkspacePaths
from signet_desktop.domain.memory import Actor
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.memories.service import RememberRequest


def test_a_source_renders_for_its_agent_only(tmp_path: Path) -> None:
    paths = WorkspacePaths.for_root(tmp_path / "ws")
    paths.ensure()
    service = build_service(paths, SignetConfig(), BuildOptions(no_embedder=True))
    try:
        text = "billing runs on Postgres 16"
        request = RememberRequest(content=text, agent_id="alpha")
        memory = service.memories.remember(request, Actor(changed_by="test")).memory
        ref = f"memory:{memory.id}"
        sources = service.cited_sources
        assert sources.source_text("alpha", ref) == text
        assert sources.source_text("beta", ref) is None  # another agent's memory
        assert sources.source_text("alpha", "memory:nope") is None
        assert sources.source_text("alpha", "not a ref") is None
        assert sources.source_text("alpha", "x" * 5000) is None
        assert sources.source_texts("beta", [ref, "memory:nope"]) == {
            ref: None,
            "memory:nope": None,
        }
        assert sources.source_texts("alpha", [ref]) == {ref: text}
    finally:
        service.close()
