"""Cited quotes highlighted in their sources, shared by the Dreaming and Proposals panes.

`QuoteView.show(header_html, quotes, agent_id)` draws the quotes at once (sources "loading"),
reads the sources they cite through `service.cited_sources` off the GUI thread, then draws
them again highlighted in context. A link opens the source: a transcript in the Transcripts
pane at the quote's turn (`show_pane("transcripts", session_key=…, turn=…)`), a memory in
its detail.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QTextBrowser, QWidget

from signet_desktop.ui import quote_format as quote_fmt
from signet_desktop.ui.pane import PaneContext
from signet_desktop.ui.style import current_theme

HIGHLIGHT = {"light": "#fde68a", "dark": "#6b5416"}  # a cited quote in its source


def colours() -> quote_fmt.QuoteColours:
    theme = current_theme()
    return quote_fmt.QuoteColours(
        HIGHLIGHT.get(theme.name, HIGHLIGHT["light"]),
        theme.text,
        theme.muted,
        theme.accent,
        theme.error,
    )


class QuoteView(QTextBrowser):
    """A read-only rich text view of quotes in context, with links to their sources."""

    def __init__(self, context: PaneContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.setOpenLinks(False)
        self.anchorClicked.connect(self.open_source)
        self.sources: dict[str, str | None] = {}
        self._shown: tuple[str, tuple[quote_fmt.Quote, ...]] = ("", ())
        self._token = 0

    def show_quotes(
        self, header_html: str, quotes: Sequence[quote_fmt.Quote], agent_id: str
    ) -> None:
        """Draw the header and quotes, then again once their sources are read."""
        self._token += 1
        token = self._token
        self._shown = (header_html, tuple(quotes))
        self._draw()
        refs = sorted({q.source_ref for q in quotes if q.source_ref} - set(self.sources))
        reader = getattr(getattr(self.context.service, "cited_sources", None), "source_text", None)
        if not refs or not callable(reader):
            if refs:  # this build cannot render sources: say so instead of "loading"
                self.sources.update(dict.fromkeys(refs))
                self._draw()
            return

        def load() -> dict[str, str | None]:
            found: dict[str, str | None] = {}
            for ref in refs:
                try:
                    found[ref] = reader(agent_id, ref)
                except Exception:  # a refused source shows as unavailable
                    found[ref] = None
            return found

        def loaded(found: dict[str, str | None]) -> None:
            self.sources.update(found)
            if token == self._token:
                self._draw()

        self.context.tasks.call(load, done=loaded, failed=lambda _exc: None)

    def forget_sources(self) -> None:
        """Drop the cached texts (another agent is shown, or the sources may have changed)."""
        self.sources.clear()

    def _draw(self) -> None:
        header, quotes = self._shown
        self.setHtml(header + quote_fmt.quotes_html(quotes, self.sources, colours()))

    def open_source(self, url: QUrl) -> None:
        """A quote's link: the transcript at its turn, or the memory."""
        ref, _, turn = url.toString().partition("#")
        kind, _, source_id = ref.partition(":")
        if kind == "transcript" and source_id:
            reveal: dict[str, Any] = {"session_key": source_id}
            if turn.isdigit():
                reveal["turn"] = int(turn)
            self.context.navigator.show_pane("transcripts", **reveal)
        elif kind == "memory" and source_id:
            self.context.navigator.open_memory(source_id)
