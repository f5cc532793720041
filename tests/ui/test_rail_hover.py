"""A rail row under the mouse looks different from the selected row (and from a plain one)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, QSize, Qt
from PySide6.QtGui import QColor, QHoverEvent, QImage
from PySide6.QtWidgets import QApplication, QListWidget, QListWidgetItem
from pytestqt.qtbot import QtBot

from signet_desktop.ui.style import DARK, LIGHT, Theme, stylesheet

pytestmark = pytest.mark.gui


def background(image: QImage, rail: QListWidget, row: int) -> QColor:
    """The colour near the right end of the row (clear of its text)."""
    rect = rail.visualItemRect(rail.item(row))
    at = rail.viewport().mapTo(rail, QPoint(rect.right() - 6, rect.center().y()))
    return image.pixelColor(at)


@pytest.mark.parametrize("theme", [LIGHT, DARK], ids=lambda t: t.name)
def test_hover_is_not_selection(qtbot: QtBot, theme: Theme) -> None:
    rail = QListWidget()
    rail.setObjectName("rail")
    rail.setStyleSheet(stylesheet(theme))
    qtbot.addWidget(rail)
    for title in ("Recall", "Memories", "Transcripts"):
        item = QListWidgetItem(title)
        item.setSizeHint(QSize(0, 36))
        rail.addItem(item)
    rail.resize(196, 160)
    rail.show()
    qtbot.waitExposed(rail)
    rail.setCurrentRow(0)
    hovered = rail.visualItemRect(rail.item(1)).center()
    move = QHoverEvent(QEvent.Type.HoverMove, QPointF(hovered), QPointF(hovered), QPointF(-1, -1))
    QApplication.sendEvent(rail.viewport(), move)
    image = rail.grab().toImage()
    selected, hover, plain = (background(image, rail, row) for row in range(3))
    assert selected == QColor(theme.selection)
    assert plain == QColor(theme.rail)
    assert hover not in (selected, plain)  # visible, and not the selection's colour
    assert rail.item(0).isSelected() and not rail.item(1).isSelected()
    assert Qt.ItemFlag.ItemIsSelectable in rail.item(1).flags()
