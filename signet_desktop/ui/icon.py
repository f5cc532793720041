"""Icons: the application icon, the tray state icons and the line icons under `resources/icons/`.

Line icons are 24×24 SVGs drawn with `stroke="currentColor"`; `icon(name)` substitutes the
theme's icon colour before rendering, so one file serves light and dark. A missing file gives
a painted stand-in rather than an invisible button.
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPen, QPixmap
from PySide6.QtSvg import QSvgRenderer

from signet_desktop.ui.style import current_theme

ICON_FILE = "signet.svg"
ICONS_DIR = "icons"
TRAY_STATES = ("healthy", "working", "degraded", "paused", "error")
_FALLBACK_SIZE = 64
_ICON_SIZES = (16, 20, 24, 32, 48)


def resources_dir() -> Path | None:
    """Where icons live: frozen bundle, installed wheel, or the source tree."""
    candidates: list[Path] = []
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root:
        candidates.append(Path(frozen_root) / "resources")
    candidates.append(Path(str(resources.files("signet_desktop"))) / "_resources")
    candidates.append(Path(__file__).resolve().parents[2] / "resources")
    return next((c for c in candidates if (c / ICON_FILE).is_file()), None)


def icon_path(name: str) -> Path | None:
    """`resources/icons/<name>.svg` (name with or without `.svg`), if shipped."""
    directory = resources_dir()
    if directory is None:
        return None
    path = directory / ICONS_DIR / (name if name.endswith(".svg") else f"{name}.svg")
    return path if path.is_file() else None


def app_icon() -> QIcon:
    """The Signet icon (needs a QGuiApplication)."""
    directory = resources_dir()
    if directory is not None:
        icon = QIcon(str(directory / ICON_FILE))
        if not icon.isNull() and not icon.pixmap(32, 32).isNull():
            return icon
    return QIcon(_painted())


def icon(name: str, color: str | None = None) -> QIcon:
    """The line icon `name` in `color` (default: the current theme's icon colour)."""
    path = icon_path(name)
    if path is None:
        return QIcon(_painted())
    svg = path.read_text(encoding="utf-8").replace("currentColor", color or current_theme().icon)
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    if not renderer.isValid():
        return QIcon(_painted())
    result = QIcon()
    for size in _ICON_SIZES:
        result.addPixmap(_render(renderer, size))
    return result


def tray_icon(state: str) -> QIcon:
    """The tray icon for a state in `TRAY_STATES` (the app icon with a coloured status dot)."""
    path = icon_path(f"tray-{state}")
    if path is not None:
        icon = QIcon(str(path))
        if not icon.pixmap(32, 32).isNull():
            return icon
    return app_icon()


def _render(renderer: QSvgRenderer, size: int) -> QPixmap:
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter, QRectF(0, 0, size, size))
    finally:
        painter.end()
    return pixmap


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
