"""A document's pipeline as one line: queued ▸ extracting ▸ chunking ▸ [embedding] ▸ … ▸ done.

Finished stages in the theme's ok colour, the current one bold in the accent, the rest muted;
a failed (or deleted) document ends in the error colour.
"""

from __future__ import annotations

import html

from PySide6.QtWidgets import QLabel, QWidget

from signet_desktop.ui.document_format import Progress, Stage, stages
from signet_desktop.ui.style import current_theme

SEPARATOR = " ▸ "


class PipelineStrip(QLabel):
    """The strip of one document; `set_progress` redraws it."""

    def __init__(self, progress: Progress | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("documentStrip")
        self.setWordWrap(True)  # a narrow list or detail breaks it at a stage
        self._stages: list[Stage] = []
        if progress is not None:
            self.set_progress(progress)

    def set_progress(self, progress: Progress) -> None:
        theme = current_theme()
        colours = {"done": theme.ok, "current": theme.accent, "todo": theme.muted,
                   "failed": theme.error}  # fmt: skip
        self._stages = stages(progress)
        parts = []
        for stage in self._stages:
            text = html.escape(stage.label)
            if stage.state in ("current", "failed"):
                text = f"<b>[{text}]</b>" if stage.state == "current" else f"<b>{text}</b>"
            parts.append(f"<span style='color:{colours[stage.state]}'>{text}</span>")
        muted = f"<span style='color:{theme.muted}'>{SEPARATOR}</span>"
        self.setText(muted.join(parts))
        self.setAccessibleName(self.plain_text())

    def plain_text(self) -> str:
        """The strip as words (`queued ▸ [extracting] ▸ …`), for tests and screen readers."""
        return SEPARATOR.join(
            f"[{s.label}]" if s.state == "current" else s.label for s in self._stages
        )
