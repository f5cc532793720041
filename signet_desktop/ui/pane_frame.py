"""The frame the list-and-detail panes share: the title row with its count, the banner and
notice, the content or its designed empty state, and the read lifecycle.

A `FramedPane` is described by a `Frame` value. It reads nothing until it is first shown, then
reads off the GUI thread one read at a time (`SingleFlight`: the pane says what to read in
`reader()` and shows the answer in `show_snapshot`), reads again once, coalesced, when an
event of its agent matches `Frame.refresh_on`, and stops its timers and disconnects on
`shutdown`. A pane keeps only what is its own: its widgets, its read and its actions.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import QVBoxLayout, QWidget

from signet_desktop.domain.events import Event
from signet_desktop.ui.empty_state import Banner, EmptyState
from signet_desktop.ui.pane import PaneContext, PaneWidget
from signet_desktop.ui.tasks import SingleFlight
from signet_desktop.ui.widgets import BoxItem, single_shot, stack_of, text_label, title_row, vbox

REFRESH_DELAY_MS = 250  # events arriving together become one re-read
PANE_MARGINS = (16, 12, 16, 12)


@dataclass(frozen=True, slots=True)
class Frame:
    """What one framed pane says about its frame. The object names, the icon and the read
    error follow from `title` and `name` unless a pane gives its own."""

    title: str  # the heading: "Documents" (icon documents.svg, "The documents could not be read")
    name: str  # the object names' stem: `<name>Count` beside the title, `<name>Notice` under it
    empty_title: str
    empty_hint: str
    refresh_on: tuple[str, ...] = ()  # event kinds; one ending in "." names a whole family
    hint_width: int = 580  # the empty hint's measure
    refresh_ms: int = REFRESH_DELAY_MS
    count_name: str = ""  # the count label's object name when not `<name>Count`
    icon: str = ""  # the empty state's icon when not `<title in lower case>.svg`
    read_error: str = ""  # the banner's lead when a read fails, when not the title's

    def __post_init__(self) -> None:
        lower = self.title.lower()
        for field_name, default in (
            ("count_name", f"{self.name}Count"),
            ("icon", f"{lower}.svg"),
            ("read_error", f"The {lower} could not be read"),
        ):
            if not getattr(self, field_name):
                object.__setattr__(self, field_name, default)

    @property
    def notice_name(self) -> str:
        """The muted notice line under the banner (hidden until `say`)."""
        return f"{self.name}Notice"


def pane_column(pane: QWidget, *rows: BoxItem, content: QWidget) -> QVBoxLayout:
    """A pane's column at the panes' margins: `rows` at the top, then `content` taking the
    room left (the frame's; the panes over a paging model use it too)."""
    return vbox(*rows, (content, 1), parent=pane, margins=PANE_MARGINS, spacing=8)


def error_text(exc: BaseException) -> str:
    """What a failure says to a person (a `SignetError`'s message, else the exception)."""
    return str(getattr(exc, "message", None) or exc)


def names_event(kinds: Sequence[str], kind: str) -> bool:
    """Whether `kind` is one of `kinds`, or of a family among them (`"job."`)."""
    return any(kind == k or (k.endswith(".") and kind.startswith(k)) for k in kinds)


class LivePane(PaneWidget):
    """The lifecycle every reading pane shares: it follows its agent's events once started
    (`on_event`), re-reads at most once per `refresh_ms` (`schedule_refresh` runs `reread`),
    and stops its timer and disconnects on `shutdown`. `FramedPane` builds on it; so do the
    panes over a paging model (Memories, Transcripts), whose model does the reading."""

    def __init__(
        self,
        context: PaneContext,
        refresh_ms: int,
        reread: Callable[[], None],
        first_read: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(context)
        self.agent_id = context.agent_id  # the agent shown (a pane may offer others)
        self._started = False
        self._first_read = first_read
        self._refresh_timer = single_shot(self, refresh_ms, reread)
        context.events.event_published.connect(self._on_event)

    def activated(self) -> None:
        self.start()

    def start(self) -> None:
        """Follow events from now on; the first call reads for the first time (`first_read`)."""
        if not self._started:
            self._started = True
            if self._first_read is not None:
                self._first_read()

    def shutdown(self) -> None:
        self._refresh_timer.stop()
        with contextlib.suppress(RuntimeError, TypeError):  # already disconnected
            self.context.events.event_published.disconnect(self._on_event)

    def _on_event(self, event: Event) -> None:
        if self._started and event.agent_id == self.agent_id:
            self.on_event(event)

    def on_event(self, event: Event) -> None:
        """An event of the shown agent, once the pane has started."""

    def schedule_refresh(self) -> None:
        """Re-read soon; events arriving meanwhile add nothing (a throttle, not a debounce)."""
        if not self._refresh_timer.isActive():
            self._refresh_timer.start()


class FramedPane(LivePane):
    """A pane inside the shared frame; subclasses call `frame_layout` once their widgets exist
    and implement `reader` and `show_snapshot`."""

    def __init__(self, context: PaneContext, frame: Frame) -> None:
        super().__init__(context, frame.refresh_ms, self.refresh)
        self.frame = frame
        self._missed = False  # a read asked for while hidden: run it once shown
        self._flight = SingleFlight(self._read)

    def frame_layout(self, content: QWidget, header: Sequence[QWidget] = ()) -> None:
        """The column: title, count and `header` widgets; banner; notice; `content` or the
        empty state."""
        frame = self.frame
        row, self.count_label = title_row(frame.title, frame.count_name)
        if header:
            row.addSpacing(12)
        for widget in header:
            row.addWidget(widget)
        self.banner = Banner()
        self.notice = text_label("", name=frame.notice_name, role="muted")
        self.notice.hide()
        self.content = content
        self.empty = EmptyState(frame.icon, frame.empty_title, frame.empty_hint)
        self.empty.set_hint_width(frame.hint_width)
        self.stack = stack_of(content, self.empty)
        pane_column(self, row, self.banner, self.notice, content=self.stack)

    # -- the PaneWidget hooks --------------------------------------------------------------

    def activated(self) -> None:
        self._started = True
        self.refresh()

    def open_revealed(self, item_id: object, open_item: Callable[[str], None]) -> None:
        """`reveal`'s id: start reading, open that item, and re-read the list around it."""
        if isinstance(item_id, str) and item_id:
            self._started = True
            open_item(item_id)
            self.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        """A pane activated before its window was shown (the first pane at launch, or one the
        window restored) reads now, once the show has settled."""
        super().showEvent(event)
        if self._missed:
            QTimer.singleShot(0, self._catch_up)

    def _catch_up(self) -> None:
        if self._missed:
            self.refresh()

    def hideEvent(self, event: QHideEvent) -> None:
        self._refresh_timer.stop()
        super().hideEvent(event)

    # -- reading ---------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read again (one read at a time; an ask during a read runs once more after it)."""
        if not self._started:
            return
        if not self.isVisible():
            self._missed = True  # read again when shown (`activated`, or `showEvent`)
            return
        self._missed = False
        missing = self.unavailable()
        if missing is not None:
            self.empty.set_text(*missing)
            self.stack.setCurrentWidget(self.empty)
            self.count_label.setText("")
            return
        self._flight.ask()

    def unavailable(self) -> tuple[str, str] | None:
        """The empty state's (title, hint) when this build lacks the service the pane reads."""
        return None

    def reader(self) -> Callable[[], Any]:
        """The read to run off the GUI thread, its arguments taken from the widgets now."""
        raise NotImplementedError

    def show_snapshot(self, snapshot: Any) -> None:
        """Show what `reader()` returned (on the GUI thread)."""
        raise NotImplementedError

    def show_listing(self, nothing: bool, count: str | None = None) -> None:
        """The content with `count` beside the title, or the designed empty state (and no
        count) when there is `nothing` to list; a `count` of None leaves the label alone."""
        self.empty.set_text(self.frame.empty_title, self.frame.empty_hint)
        self.stack.setCurrentWidget(self.empty if nothing else self.content)
        if count is not None:
            self.count_label.setText("" if nothing else count)

    def say(self, text: str) -> None:
        """Show `text` in the notice line."""
        self.notice.setText(text)
        self.notice.show()

    def show_outcome(self, text: str, ok: bool) -> None:
        """An action's outcome (a Retry): the notice when it went well, else a warning
        banner; then read again."""
        if ok:
            self.say(text)
        else:
            self.banner.show_message(text, "warn")
        self.refresh()

    def _read(self) -> None:
        self.context.tasks.call(self.reader(), done=self._read_done, failed=self._read_failed)

    def _read_done(self, snapshot: Any) -> None:
        try:
            self.show_snapshot(snapshot)
        finally:
            self._flight.done()

    def _read_failed(self, exc: BaseException) -> None:
        self._flight.done()
        self.banner.show_message(f"{self.frame.read_error}: {error_text(exc)}")

    # -- events ----------------------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        """An event of the shown agent: a coalesced re-read when `refresh_on` names it."""
        if names_event(self.frame.refresh_on, event.kind):
            self.schedule_refresh()
