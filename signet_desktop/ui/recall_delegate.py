"""The Recall pane's result list: a model of hits and the delegate that paints one row.

A row reads (see the Recall sketch in design/INSPECTOR.md):

    ▇▇▇▇▇▇░░  0.82   billing runs on Postgres 16 with logical replication to the …
                     fact · infra, db · alice · 2 days ago
                     [vector] [keyword] [context]

Every string is computed once per result by `ui/hit_format.py` when the model is filled, so
painting only lays text out. Colours come from the widget's palette (light and dark themes):
the score bar and vector badges use `Accent` (not `Highlight`, which is the selected row's
background), keyword `Link`, context `LinkVisited`, any newer channel `Mid`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRect,
    QRectF,
    QSize,
    Qt,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette, QTextLayout
from PySide6.QtWidgets import (
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from signet_desktop.domain.recall import RecallHit, TurnHit
from signet_desktop.ui.hit_format import (
    CONTEXT_BADGE,
    badges,
    explain_hit,
    explain_turn,
    meta_line,
    preview,
    turn_meta_line,
    turn_text,
)

HIT_ROLE = Qt.ItemDataRole.UserRole + 1  # the RecallHit (None on a session turn's row)
ROW_ROLE = Qt.ItemDataRole.UserRole + 2  # the precomputed HitRow
PREVIEW_CHARS = 400  # two wrapped lines never need more
PAD = 8
BAR_WIDTH = 64
BAR_HEIGHT = 6
SCORE_GAP = 6
TEXT_LEFT = PAD + BAR_WIDTH + SCORE_GAP + 40  # bar, gap, "0.82", then the text column
BADGE_PAD = 6
_BADGE_ROLES = {
    "keyword": QPalette.ColorRole.Link,
    "vector": QPalette.ColorRole.Accent,
    CONTEXT_BADGE: QPalette.ColorRole.LinkVisited,
}

Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True, slots=True)
class HitRow:
    """What one row shows, computed once when the results arrive: a memory (`hit`) or a
    session turn the transcript channel found (`turn`)."""

    hit: RecallHit | None
    preview: str
    meta: str
    badges: tuple[str, ...]
    tooltip: str
    turn: TurnHit | None = None

    @property
    def score(self) -> float:
        found = self.hit if self.hit is not None else self.turn
        return found.score if found is not None else 0.0

    @property
    def key(self) -> str:
        """The memory id, or the turn's `transcript:<session>#<turn>`."""
        if self.hit is not None:
            return self.hit.memory.id
        return self.turn.hit_id if self.turn is not None else ""


def hit_rows(
    hits: Sequence[RecallHit], now: datetime | None = None, turns: Sequence[TurnHit] = ()
) -> tuple[HitRow, ...]:
    """Every row's strings (plain Python, no Qt: the pane builds them on its worker thread):
    the memories, then the session turns."""
    moment = now or datetime.now(UTC)
    memories = tuple(
        HitRow(
            h,
            preview(h.memory.content, PREVIEW_CHARS),
            meta_line(h, moment),
            badges(h),
            explain_hit(h),
        )
        for h in hits
    )
    said = tuple(
        HitRow(
            None,
            preview(turn_text(t), PREVIEW_CHARS),
            turn_meta_line(t, moment),
            ("transcript",),
            explain_turn(t),
            turn=t,
        )
        for t in turns
    )
    return memories + said


class HitListModel(QAbstractListModel):
    """The current result list (read-only; replaced whole when a recall returns)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[HitRow] = []

    def set_rows(self, rows: Sequence[HitRow]) -> None:
        """Show `rows` (from `hit_rows`) in place of the current list."""
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def set_hits(self, hits: Sequence[RecallHit], now: datetime | None = None) -> None:
        self.set_rows(hit_rows(hits, now))

    def hits(self) -> list[RecallHit]:
        return [row.hit for row in self._rows if row.hit is not None]

    def ids(self) -> list[str]:
        """The memories' ids (session turns are not memories)."""
        return [row.hit.memory.id for row in self._rows if row.hit is not None]

    def hit(self, row: int) -> RecallHit | None:
        return self._rows[row].hit if 0 <= row < len(self._rows) else None

    def turn(self, row: int) -> TurnHit | None:
        return self._rows[row].turn if 0 <= row < len(self._rows) else None

    def row_of(self, key: str) -> int:
        """The row showing `key` (a memory id or a turn's hit id), or -1."""
        return next((i for i, r in enumerate(self._rows) if r.key == key), -1)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return row.preview
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.tooltip
        if role == HIT_ROLE:
            return row.hit
        if role == ROW_ROLE:
            return row
        return None


class HitDelegate(QStyledItemDelegate):
    """Paints a hit: score bar and score, a two-line preview, the meta line, channel badges."""

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        """Room for two preview lines, the meta line and the badges; the same for every row.

        The view is in uniform-size mode, so this runs once per reset instead of once per row:
        under a busy worker every Python call from the GUI thread may wait for the GIL, and the
        per-row version cost the bench tens of milliseconds per answer (bench/gui_stall.py).
        """
        metrics = QFontMetrics(option.font)
        height = PAD * 2 + metrics.height() * 3 + 2 + _badge_height(metrics) + 3
        return QSize(TEXT_LEFT + 200, height)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        row = index.data(ROW_ROLE)
        if not isinstance(row, HitRow):
            super().paint(painter, option, index)
            return
        widget = option.widget
        style = widget.style() if isinstance(widget, QWidget) else None
        if style is not None:  # the selection/hover background of the current style
            style.drawPrimitive(
                QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter, widget
            )
        rect: QRect = option.rect
        palette: QPalette = option.palette
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        text_role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        text = palette.color(text_role)
        muted = QColor(text)
        muted.setAlphaF(0.65)
        font: QFont = option.font
        metrics = QFontMetrics(font)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        top = rect.top() + PAD
        self._paint_score(painter, rect.left() + PAD, top, metrics, row.score, palette, text)
        left = rect.left() + TEXT_LEFT
        width = _text_width(rect.width())
        painter.setPen(text)
        y = top
        for line in _two_lines(row.preview, font, width):
            painter.drawText(QRect(left, y, width, metrics.height()), 0, line)
            y += metrics.height()
        y += 2
        painter.setPen(muted)
        meta = metrics.elidedText(row.meta, Qt.TextElideMode.ElideRight, width)
        painter.drawText(QRect(left, y, width, metrics.height()), 0, meta)
        y += metrics.height() + 3
        _paint_badges(painter, left, y, row.badges, metrics, palette, text)
        painter.restore()

    @staticmethod
    def _paint_score(
        painter: QPainter,
        x: int,
        top: int,
        metrics: QFontMetrics,
        score: float,
        palette: QPalette,
        text: QColor,
    ) -> None:
        bar_y = top + (metrics.height() - BAR_HEIGHT) // 2
        track = QColor(palette.color(QPalette.ColorRole.Mid))
        track.setAlphaF(0.45)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(track)
        painter.drawRoundedRect(QRectF(x, bar_y, BAR_WIDTH, BAR_HEIGHT), 3, 3)
        filled = BAR_WIDTH * min(1.0, max(0.0, score))
        painter.setBrush(palette.color(QPalette.ColorRole.Accent))
        if filled > 0:
            painter.drawRoundedRect(QRectF(x, bar_y, max(filled, BAR_HEIGHT), BAR_HEIGHT), 3, 3)
        painter.setPen(text)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        score_rect = QRect(x + BAR_WIDTH + SCORE_GAP, top, 40, metrics.height())
        painter.drawText(score_rect, int(Qt.AlignmentFlag.AlignLeft), f"{score:.2f}")


def _text_width(row_width: int) -> int:
    return max(40, row_width - TEXT_LEFT - PAD)


def _two_lines(text: str, font: QFont, width: int) -> list[str]:
    """`text` wrapped to `width`: the first line as laid out, the rest elided onto a second."""
    metrics = QFontMetrics(font)
    if metrics.horizontalAdvance(text) <= width:
        return [text] if text else []
    layout = QTextLayout(text, font)
    layout.beginLayout()
    first = layout.createLine()
    if not first.isValid():
        layout.endLayout()
        return []
    first.setLineWidth(width)
    layout.endLayout()
    cut = first.textLength()
    head, rest = text[:cut].rstrip(), text[cut:].strip()
    if not rest:
        return [head]
    return [head, metrics.elidedText(rest, Qt.TextElideMode.ElideRight, width)]


def _badge_height(metrics: QFontMetrics) -> int:
    return metrics.height() + 2


def badge_color(label: str, palette: QPalette) -> QColor:
    """The colour that carries a badge's meaning, from the palette (light and dark alike)."""
    return palette.color(_BADGE_ROLES.get(label, QPalette.ColorRole.Mid))


def _paint_badges(
    painter: QPainter,
    x: int,
    y: int,
    labels: Sequence[str],
    metrics: QFontMetrics,
    palette: QPalette,
    text: QColor,
) -> None:
    height = _badge_height(metrics)
    for label in labels:
        width = metrics.horizontalAdvance(label) + BADGE_PAD * 2
        box = QRectF(x + 0.5, y + 0.5, width, height)
        edge = badge_color(label, palette)
        fill = QColor(edge)
        fill.setAlphaF(0.18)
        painter.setPen(edge)
        painter.setBrush(fill)
        painter.drawRoundedRect(box, height / 2, height / 2)
        painter.setPen(text)
        painter.drawText(box, int(Qt.AlignmentFlag.AlignCenter), label)
        x += width + 4
