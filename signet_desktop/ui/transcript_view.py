"""One session's transcript, readable: a header, the turns in order, and find-in-session.

`show_session(key)` reads the row and its turns through the facade off the GUI thread (the
HTML is laid out there too) and sets it into a read-only, selectable `QTextBrowser`.
`reload()` reads the same session again keeping the reader's place (or the end, when they
were following it). Find highlights every match and steps through them (Enter / Shift+Enter,
F3); a phrase that is not there falls back to any of its words, so an excerpt from the global
search lands on its words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtCore import QRegularExpression, Qt, Signal
from PySide6.QtGui import QColor, QKeySequence, QShortcut, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QLabel,
    QLineEdit,
    QPushButton,
    QStackedLayout,
    QTextBrowser,
    QTextEdit,
    QWidget,
)

from signet_desktop.domain.errors import InvalidInput, NotFound
from signet_desktop.domain.sessions import SessionTranscript, Turn
from signet_desktop.ui.empty_state import Banner
from signet_desktop.ui.pane import PaneContext
from signet_desktop.ui.style import current_theme
from signet_desktop.ui.transcript_format import (
    header_line,
    highlight_colour,
    transcript_html,
    turn_anchor,
    view_title,
)
from signet_desktop.ui.widgets import hbox, text_label, vbox

PLACEHOLDER_TEXT = "Select a session to read its transcript."
MAX_MATCHES = 2000  # highlighting more than this helps nobody and costs a frame


@dataclass(frozen=True, slots=True)
class _Loaded:
    session: SessionTranscript
    turns: list[Turn]
    html: str


class TranscriptView(QWidget):
    """The transcript of one session of `context.agent_id`."""

    session_shown = Signal(object)  # the SessionTranscript now shown
    session_missing = Signal(str)  # the key asked for is not a session of this agent

    def __init__(self, context: PaneContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transcriptView")
        self._context = context
        self._key: str | None = None
        self._session: SessionTranscript | None = None
        self._turns: list[Turn] = []
        self._loads = 0
        self._matches: list[QTextCursor] = []
        self._current = -1
        self._build()

    @property
    def session_key(self) -> str | None:
        return self._key

    @property
    def session(self) -> SessionTranscript | None:
        return self._session

    @property
    def turns(self) -> list[Turn]:
        return list(self._turns)

    @property
    def matches(self) -> int:
        return len(self._matches)

    @property
    def current_match(self) -> int:
        return self._current

    # -- layout ----------------------------------------------------------------------------

    def _build(self) -> None:
        self.placeholder = text_label(PLACEHOLDER_TEXT, name="transcriptPlaceholder", role="muted")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.title = QLabel()
        self.title.setProperty("role", "heading")
        self.title.setWordWrap(True)  # a long session title must not widen the window
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.meta = text_label(name="transcriptMeta", role="muted", wrap=True)
        self.meta.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.banner = Banner(dismissible=False)
        self.find_box = QLineEdit()
        self.find_box.setObjectName("transcriptFind")
        self.find_box.setPlaceholderText("Find in this session…")
        self.find_box.setClearButtonEnabled(True)
        self.find_box.textChanged.connect(self.find_text)
        self.find_box.returnPressed.connect(self.next_match)
        self.find_count = text_label(name="transcriptFindCount", role="muted")
        self.prev_button = QPushButton("Previous")
        self.prev_button.clicked.connect(self.previous_match)
        self.next_button = QPushButton("Next")
        self.next_button.clicked.connect(self.next_match)
        find_row = hbox((self.find_box, 1), self.find_count, self.prev_button, self.next_button)
        self.reader = QTextBrowser()
        self.reader.setObjectName("transcriptText")
        self.reader.setOpenLinks(False)
        self.reader.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        font = self.reader.font()
        font.setPointSizeF(font.pointSizeF() * 1.05)
        self.reader.setFont(font)
        self.reader.document().setDocumentMargin(12)

        body = QWidget()
        vbox(
            self.title,
            self.meta,
            find_row,
            self.banner,
            (self.reader, 1),
            parent=body,
            margins=(12, 0, 0, 0),
            spacing=6,
        )
        self._stack = QStackedLayout(self)
        self._stack.addWidget(self.placeholder)
        self._stack.addWidget(body)
        QShortcut(QKeySequence.StandardKey.FindNext, self, self.next_match)
        QShortcut(QKeySequence.StandardKey.FindPrevious, self, self.previous_match)
        back = QShortcut(QKeySequence("Shift+Return"), self.find_box, self.previous_match)
        back.setContext(Qt.ShortcutContext.WidgetShortcut)

    # -- loading ---------------------------------------------------------------------------

    def show_session(
        self, session_key: str, find: str | None = None, turn: int | None = None
    ) -> None:
        """Read and show `session_key`; `find` fills the find box once it is shown, `turn`
        (0-based) scrolls to that turn."""
        if session_key != self._key:
            self.banner.clear()
        self._key = session_key
        self._load(find=find, keep_place=False, turn=turn)

    def reload(self) -> None:
        """Read the shown session again, keeping the reader's place."""
        if self._key is not None:
            self._load(find=None, keep_place=True)

    def clear(self) -> None:
        self._key = None
        self._session = None
        self._turns = []
        self._loads += 1
        self.placeholder.setText(PLACEHOLDER_TEXT)
        self._stack.setCurrentIndex(0)

    def _load(self, *, find: str | None, keep_place: bool, turn: int | None = None) -> None:
        key, agent_id = self._key, self._context.agent_id
        if key is None:
            return
        self._loads += 1
        load = self._loads
        transcripts, theme = self._context.service.transcripts, current_theme()

        def read() -> _Loaded:
            session = transcripts.get(agent_id, key)
            turns = transcripts.turns(agent_id, key)
            return _Loaded(session, turns, transcript_html(turns, theme))

        def shown(loaded: _Loaded) -> None:
            if load == self._loads:
                self._render(loaded, keep_place)
                if find is not None:
                    self.find_box.setText(find)
                if turn is not None and 0 <= turn < len(loaded.turns):
                    self.reader.scrollToAnchor(turn_anchor(turn))

        def refused(exc: BaseException) -> None:
            if load != self._loads:
                return
            if isinstance(exc, (NotFound, InvalidInput)):
                self._missing(key)
            else:
                self.banner.show_message(f"The transcript could not be read: {exc}")

        self._context.tasks.call(read, done=shown, failed=refused)

    def _missing(self, session_key: str) -> None:
        self._session = None
        self._turns = []
        self.placeholder.setText(
            f"Session {session_key} was not found — no transcript was captured for it, or it "
            "belongs to another agent."
        )
        self._stack.setCurrentIndex(0)
        self.session_missing.emit(session_key)

    def _render(self, loaded: _Loaded, keep_place: bool) -> None:
        bar = self.reader.verticalScrollBar()
        following = bar.value() >= bar.maximum() - 4
        place = bar.value()
        self._session, self._turns = loaded.session, loaded.turns
        title, place_line = view_title(loaded.session, loaded.turns)
        self.title.setText(title)
        self.meta.setText(
            f"{place_line}{header_line(loaded.session, loaded.turns)}\n"
            f"session {loaded.session.session_key}"
        )
        self.reader.setHtml(loaded.html)
        self._stack.setCurrentIndex(1)
        if keep_place:
            bar.setValue(bar.maximum() if following else place)
        self._highlight(self.find_box.text(), move=not keep_place)
        self.session_shown.emit(loaded.session)

    # -- find ------------------------------------------------------------------------------

    def find_text(self, text: str) -> None:
        """Highlight every match of `text` (else of any of its words) and go to the first."""
        self._highlight(text, move=True)

    def _highlight(self, text: str, *, move: bool) -> None:
        self._matches = self._find_all(text.strip())
        theme = current_theme()
        selections = []
        for cursor in self._matches:
            selection = QTextEdit.ExtraSelection()
            selection.cursor = cursor
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(highlight_colour(theme)))
            fmt.setForeground(QColor(theme.text))
            selection.format = fmt
            selections.append(selection)
        self.reader.setExtraSelections(selections)
        if not self._matches:
            self._current = -1
        elif move or self._current >= len(self._matches):
            self._current = 0
        if move and self._matches:
            self._go(self._current)
        self._update_count(text.strip())

    def _find_all(self, text: str) -> list[QTextCursor]:
        if not text:
            return []
        found = self._all(QRegularExpression.escape(text))
        words = [w for w in re.split(r"\W+", text) if len(w) > 1]
        if not found and len(words) > 1:
            found = self._all("|".join(QRegularExpression.escape(w) for w in words))
        return found

    def _all(self, pattern: str) -> list[QTextCursor]:
        expression = QRegularExpression(
            pattern, QRegularExpression.PatternOption.CaseInsensitiveOption
        )
        document = self.reader.document()
        found: list[QTextCursor] = []
        cursor = QTextCursor(document)
        while len(found) < MAX_MATCHES:
            cursor = document.find(expression, cursor)
            if cursor.isNull() or not cursor.hasSelection():
                break
            found.append(QTextCursor(cursor))
        return found

    def next_match(self) -> None:
        if self._matches:
            self._go((self._current + 1) % len(self._matches))

    def previous_match(self) -> None:
        if self._matches:
            self._go((self._current - 1) % len(self._matches))

    def _go(self, number: int) -> None:
        self._current = number
        self.reader.setTextCursor(QTextCursor(self._matches[number]))
        self.reader.ensureCursorVisible()
        self._update_count(self.find_box.text().strip())

    def _update_count(self, text: str) -> None:
        if not text:
            self.find_count.setText("")
        elif not self._matches:
            self.find_count.setText("no match")
        else:
            self.find_count.setText(f"{self._current + 1} of {len(self._matches):,}")
        for button in (self.prev_button, self.next_button):
            button.setEnabled(bool(self._matches))

    def focus_find(self) -> None:
        self.find_box.setFocus()
        self.find_box.selectAll()
