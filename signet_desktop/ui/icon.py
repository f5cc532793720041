"""The application icon: `resources/signet.svg`, or a painted stand-in when it is not shipped."""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPen, QPixmap

ICON_FILE = "signet.svg"
_FALLBACK_SIZE = 64


def resources_dir() -> Path | None:
    """Where icons live: frozen bundle, installed wheel, or the source tree."""
    candidates: list[Path] = []
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root:
        candidates.append(Path(frozen_root) / "resources")
    candidates.append(Path(str(resources.files("signet_desktop"))) / "_resources")
    candidates.append(Path(__file__).resolve().parents[2] / "resources")
    return next((c for c in candidates if (c / ICON_FILE).is_file()), None)


def app_icon() -> QIcon:
    """The Signet icon (needs a QGuiApplication)."""
    directory = resources_dir()
    if directory is not None:
        icon = QIcon(str(directory / ICON_FILE))
        if not icon.isNull() and not icon.pixmap(32, 32).isNull():
            return icon
    return QIcon(_painted())


def _painted() -> QPixmap:
    pixmap = QPixmap(_FALLBACK_SIZE, _FALLBACK_SIZE)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor("#3b3f8f"))
        painter.drawRoundedRect(QRectF(2, 2, 60, 60), 14, 14)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(QPen(QColor("#ffffff"), 5))
        painter.drawEllipse(QRectF(14, 14, 36, 36))
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor("#f2c14e"))
        painter.drawEllipse(QRectF(25, 25, 14, 14))
    finally:
        painter.end()
    return pixmap
