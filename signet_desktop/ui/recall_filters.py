"""The Recall pane's filter row: type, tags, who, project, time range and pinned.

`RecallFiltersBar.filters()` turns what is set into the core's `RecallFilters`; `changed` fires
when a choice changes (combo boxes at once, text fields when editing finishes), so the pane
re-runs its query. The time presets and the custom date range map to `since`/`until` through
`time_window`, a plain function.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from PySide6.QtCore import QDate, QSignalBlocker, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDateEdit,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from signet_desktop.domain.memory import MEMORY_TYPES
from signet_desktop.domain.recall import RecallFilters
from signet_desktop.ui.widgets import hbox

ANY_TYPE = "Any type"
CUSTOM = "custom"
# label -> how far back (None: no bound; CUSTOM: the two date fields)
TIME_PRESETS: dict[str, timedelta | str | None] = {
    "Any time": None,
    "Past 24 hours": timedelta(days=1),
    "Past 7 days": timedelta(days=7),
    "Past 30 days": timedelta(days=30),
    "Past year": timedelta(days=365),
    "Custom range…": CUSTOM,
}
PINNED_CHOICES: dict[str, bool | None] = {"Pinned or not": None, "Pinned only": True,
                                          "Not pinned": False}  # fmt: skip


def iso_utc(moment: datetime) -> str:
    """The stored timestamp format (`2026-01-01T00:00:00.000Z`), so string comparison works."""
    utc = moment.astimezone(UTC)
    return utc.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def time_window(
    preset: str, now: datetime, start: date | None = None, end: date | None = None
) -> tuple[str | None, str | None]:
    """`(since, until)` for a preset; a custom range covers whole local days, both inclusive."""
    span = TIME_PRESETS.get(preset)
    if isinstance(span, timedelta):
        return iso_utc(now - span), None
    if span != CUSTOM:
        return None, None
    since = iso_utc(datetime.combine(start, time.min).astimezone()) if start else None
    until = iso_utc(datetime.combine(end, time.max).astimezone()) if end else None
    return since, until


def split_tags(text: str) -> tuple[str, ...]:
    """`infra, db` -> ("infra", "db"): comma separated, trimmed, empty and repeats dropped."""
    return tuple(dict.fromkeys(tag.strip() for tag in text.split(",") if tag.strip()))


class RecallFiltersBar(QWidget):
    """One row of filter controls; hidden until the pane's Filters button shows it."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("recallFilters")
        self.type_box = QComboBox()
        self.type_box.addItems([ANY_TYPE, *sorted(MEMORY_TYPES)])
        self.type_box.setObjectName("recallFilterType")
        self.tags_edit = _field("tags (comma separated)", "recallFilterTags")
        self.who_edit = _field("who", "recallFilterWho")
        self.project_edit = _field("project", "recallFilterProject")
        self.time_box = QComboBox()
        self.time_box.addItems(list(TIME_PRESETS))
        self.time_box.setObjectName("recallFilterTime")
        today = QDate.currentDate()
        self.start_edit = _date_edit(today.addDays(-30), "recallFilterSince")
        self.end_edit = _date_edit(today, "recallFilterUntil")
        self.pinned_box = QComboBox()
        self.pinned_box.addItems(list(PINNED_CHOICES))
        self.pinned_box.setObjectName("recallFilterPinned")
        self.clear_button = QPushButton("Clear")
        self.clear_button.setObjectName("recallFilterClear")
        self.clear_button.setToolTip("Remove every filter")
        self._range_label = QLabel("to")
        self._layout()
        self._show_range(False)
        for box in (self.type_box, self.pinned_box):
            box.currentIndexChanged.connect(self._emit)
        self.time_box.currentIndexChanged.connect(self._time_changed)
        for edit in (self.tags_edit, self.who_edit, self.project_edit):
            edit.editingFinished.connect(self._text_finished)
        for date_edit in (self.start_edit, self.end_edit):
            date_edit.dateChanged.connect(self._emit)
        self.clear_button.clicked.connect(self.clear)
        self._last = self._choice()

    def _layout(self) -> None:
        hbox(
            self.type_box,
            self.tags_edit,
            self.who_edit,
            self.project_edit,
            self.time_box,
            self.start_edit,
            self._range_label,
            self.end_edit,
            self.pinned_box,
            1,
            self.clear_button,
            parent=self,
            margins=(0, 0, 0, 0),
            spacing=6,
        )

    def filters(self, now: datetime | None = None) -> RecallFilters:
        """What the controls say, as the core's filters."""
        kind = self.type_box.currentText()
        since, until = time_window(
            self.time_box.currentText(),
            now or datetime.now(UTC),
            self.start_edit.date().toPython(),  # type: ignore[arg-type]
            self.end_edit.date().toPython(),  # type: ignore[arg-type]
        )
        return RecallFilters(
            type=None if kind == ANY_TYPE else kind,
            tags=split_tags(self.tags_edit.text()),
            who=self.who_edit.text().strip() or None,
            project=self.project_edit.text().strip() or None,
            since=since,
            until=until,
            pinned=PINNED_CHOICES[self.pinned_box.currentText()],
        )

    def active_count(self) -> int:
        """How many filters are set (the pane shows it on its Filters button)."""
        f = self.filters()
        values = (f.type, f.tags or None, f.who, f.project, f.since or f.until, f.pinned)
        return sum(value is not None for value in values)

    def clear(self) -> None:
        """Back to no filters; `changed` fires once if anything was set."""
        controls = (
            self.type_box,
            self.time_box,
            self.pinned_box,
            self.tags_edit,
            self.who_edit,
            self.project_edit,
        )
        blockers = [QSignalBlocker(control) for control in controls]
        self.type_box.setCurrentIndex(0)
        self.time_box.setCurrentIndex(0)
        self.pinned_box.setCurrentIndex(0)
        for edit in (self.tags_edit, self.who_edit, self.project_edit):
            edit.clear()
        del blockers
        self._show_range(False)
        self._emit()

    def _time_changed(self) -> None:
        self._show_range(TIME_PRESETS.get(self.time_box.currentText()) == CUSTOM)
        self._emit()

    def _show_range(self, visible: bool) -> None:
        for widget in (self.start_edit, self._range_label, self.end_edit):
            widget.setVisible(visible)

    def _text_finished(self) -> None:
        self._emit()

    def _emit(self) -> None:
        # Only a real change re-runs the query (editingFinished also fires on focus loss);
        # compare what the person chose, not `since` (a preset's bound moves with the clock).
        current = self._choice()
        if current == self._last:
            return
        self._last = current
        self.changed.emit()

    def _choice(self) -> tuple[object, ...]:
        custom = TIME_PRESETS.get(self.time_box.currentText()) == CUSTOM
        dates = (self.start_edit.date(), self.end_edit.date()) if custom else ()
        texts = (self.who_edit.text().strip(), self.project_edit.text().strip())
        boxes = (
            self.type_box.currentIndex(),
            self.time_box.currentIndex(),
            self.pinned_box.currentIndex(),
        )
        return (*boxes, split_tags(self.tags_edit.text()), *texts, *dates)


def _field(placeholder: str, name: str) -> QLineEdit:
    edit = QLineEdit()
    edit.setPlaceholderText(placeholder)
    edit.setObjectName(name)
    edit.setClearButtonEnabled(True)
    edit.setMaximumWidth(180)
    return edit


def _date_edit(value: QDate, name: str) -> QDateEdit:
    edit = QDateEdit(value)
    edit.setCalendarPopup(True)
    edit.setObjectName(name)
    return edit
