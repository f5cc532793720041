"""Settings › Embedder: the provider and model, their generation and how complete its vectors
are. Read-only here: another model means re-embedding every memory (edit `embedding:` in
agent.yaml, restart, and the backfill worker fills the new generation)."""

from __future__ import annotations

from signet_desktop.service.embeddings.service import EmbeddingStatus
from signet_desktop.ui.settings_form import Section, muted

LEAD = (
    "Turns memories into vectors for meaning-based recall. Changing it re-embeds every "
    "memory, so it is set in agent.yaml (embedding.provider, embedding.model, "
    "embedding.precision) and applies at the next start; the new generation then fills in "
    "the background."
)


def embedder_lines(status: EmbeddingStatus, saved: str) -> list[str]:
    """What the section says, line by line."""
    if status.provider == "none":
        lines = ["No embedder is running: recall uses keywords only."]
    else:
        dimensions = f", {status.dimensions} dimensions" if status.dimensions else ""
        lines = [f"Running: {status.provider} · {status.model}{dimensions}"]
    coverage = status.coverage
    if coverage is not None:
        percent = 100 * coverage.ratio
        lines.append(
            f"Generation #{coverage.generation_id} ({coverage.status}): "
            f"{coverage.embedded:,} of {coverage.total:,} memories have a vector ({percent:.0f}%)"
            + ("" if coverage.missing == 0 else f"; {coverage.missing:,} still to embed")
        )
    lines.append(f"Vector search: {status.vector_search}")
    running = f"{status.provider} · {status.model}"
    if status.provider != "none" and saved != running:
        lines.append(f"agent.yaml asks for {saved}: it takes over at the next start.")
    return lines


class EmbedderSection(Section):
    """Facts only (see the module docstring for why)."""

    def __init__(self) -> None:
        super().__init__("settingsEmbedder", "Embedder", LEAD)
        self.facts = muted(name="embedderFacts")
        self.facts.setProperty("role", "")
        self.body.addWidget(self.facts)

    def show_status(self, status: EmbeddingStatus, saved: str) -> None:
        self.facts.setText("\n".join(embedder_lines(status, saved)))
