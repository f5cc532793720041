"""The inspector's look: one light and one dark theme, chosen from the system palette.

The theme follows the system palette unless the user chose light or dark (Settings, kept in
`ShellSettings`). The stylesheet is generated from a `Theme` (a handful of named colours and a
type scale) so panes style themselves with object names and properties (`role="muted"`,
`banner="error"`) instead of colours of their own. Icons take `Theme.icon` as their line colour.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

BASE_POINT_SIZE = 10  # body text; titles scale from it


@dataclass(frozen=True, slots=True)
class Theme:
    """The colours every widget draws with."""

    name: str
    window: str  # the pane background
    surface: str  # inputs, lists, cards
    rail: str  # the navigation rail
    text: str
    muted: str  # secondary text (metadata, hints)
    border: str
    accent: str  # selection, focus, primary buttons
    accent_text: str
    selection: str  # the selected rail row / list item
    hover: str  # a rail row under the mouse: neutral, so it never reads as selected
    icon: str  # line icons
    ok: str
    warn: str
    error: str
    warn_surface: str
    error_surface: str


LIGHT = Theme(
    name="light",
    window="#f7f7f9",
    surface="#ffffff",
    rail="#eceef3",
    text="#1d2030",
    muted="#5f6478",
    border="#d6d9e2",
    accent="#3b3f8f",
    accent_text="#ffffff",
    selection="#dcdff5",
    hover="#e1e3e9",
    icon="#3c4052",
    ok="#2e9d5b",
    warn="#9a6b00",
    error="#b73737",
    warn_surface="#fff4d6",
    error_surface="#fde4e4",
)

DARK = Theme(
    name="dark",
    window="#1c1e26",
    surface="#24262f",
    rail="#16171d",
    text="#e6e7ee",
    muted="#9a9eb2",
    border="#363945",
    accent="#8b90e8",
    accent_text="#11121a",
    selection="#30335a",
    hover="#22242c",
    icon="#c9cbd8",
    ok="#5cc98a",
    warn="#f0c35a",
    error="#f07c7c",
    warn_surface="#3a3220",
    error_surface="#3d2326",
)


def is_dark(palette: QPalette) -> bool:
    """A dark system palette: the window colour is darker than mid-grey."""
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def theme_for(palette: QPalette) -> Theme:
    return DARK if is_dark(palette) else LIGHT


def current_theme() -> Theme:
    """The theme of the running application's palette (LIGHT without an application)."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return LIGHT
    return theme_for(app.palette())


def stylesheet(theme: Theme, combo_arrow: Path | None = None) -> str:
    """The application stylesheet for `theme` (`combo_arrow`: the drop-down arrow image)."""
    t = theme
    arrow = f'image: url("{combo_arrow.as_posix()}");' if combo_arrow is not None else ""
    return f"""
QMainWindow, QDialog {{ background: {t.window}; color: {t.text}; }}
QWidget {{ color: {t.text}; }}
QToolTip {{ background: {t.surface}; color: {t.text}; border: 1px solid {t.border};
    padding: 4px 6px; }}
QWidget#railBox {{ background: {t.rail}; border-right: 1px solid {t.border}; }}
QListWidget#rail {{ background: {t.rail}; border: none; padding: 4px 8px; outline: none; }}
QListWidget#rail::item {{ padding: 0 8px; margin: 1px 0; border-radius: 6px; color: {t.text}; }}
QListWidget#rail::item:hover {{ background: {t.hover}; }}
QListWidget#rail::item:selected, QListWidget#rail::item:selected:hover {{
    background: {t.selection}; color: {t.text}; font-weight: 600; }}
QLabel#railTitle {{ color: {t.muted}; font-weight: 600; letter-spacing: 1px;
    padding: 14px 16px 6px 18px; }}
QPushButton#railSearch {{ text-align: left; padding: 6px 10px; color: {t.muted}; }}
QLineEdit, QPlainTextEdit, QTextEdit, QComboBox, QSpinBox, QDoubleSpinBox {{
    background: {t.surface}; border: 1px solid {t.border}; border-radius: 6px;
    padding: 5px 8px; selection-background-color: {t.accent};
    selection-color: {t.accent_text}; }}
QLineEdit:focus, QPlainTextEdit:focus, QTextEdit:focus, QComboBox:focus {{
    border: 1px solid {t.accent}; }}
QListView, QTreeView, QTableView, QListWidget {{ background: {t.surface};
    border: 1px solid {t.border}; border-radius: 6px; alternate-background-color: {t.window};
    selection-background-color: {t.selection}; selection-color: {t.text}; }}
QHeaderView::section {{ background: {t.window}; color: {t.muted}; border: none;
    border-bottom: 1px solid {t.border}; padding: 5px 8px; font-weight: 600; }}
QPushButton {{ background: {t.surface}; border: 1px solid {t.border}; border-radius: 6px;
    padding: 5px 14px; }}
QPushButton:hover {{ border-color: {t.accent}; }}
QPushButton:focus {{ border-color: {t.accent}; }}
QPushButton:disabled {{ color: {t.muted}; }}
QPushButton[primary="true"] {{ background: {t.accent}; color: {t.accent_text};
    border-color: {t.accent}; }}
QStatusBar {{ background: {t.rail}; color: {t.muted}; border-top: 1px solid {t.border}; }}
QStatusBar QLabel {{ color: {t.muted}; padding: 0 4px; }}
QStatusBar::item {{ border: none; }}
QStatusBar QLabel#statusDot {{ padding: 0 0 0 8px; }}
QStatusBar QLabel#statusDot[state="ok"] {{ color: {t.ok}; }}
QStatusBar QLabel#statusDot[state="warn"] {{ color: {t.warn}; }}
QStatusBar QLabel#statusDot[state="error"] {{ color: {t.error}; }}
QLabel[role="muted"] {{ color: {t.muted}; }}
QLabel[role="title"] {{ font-size: {BASE_POINT_SIZE + 6}pt; font-weight: 600; }}
QLabel[role="heading"] {{ font-size: {BASE_POINT_SIZE + 2}pt; font-weight: 600; }}
QFrame#banner[banner="error"] {{ background: {t.error_surface}; border: 1px solid {t.error};
    border-radius: 6px; }}
QFrame#banner[banner="warn"] {{ background: {t.warn_surface}; border: 1px solid {t.warn};
    border-radius: 6px; }}
QFrame#banner QLabel {{ color: {t.text}; }}
QFrame[card="true"] {{ background: {t.surface}; border: 1px solid {t.border};
    border-radius: 8px; }}
QFrame[card="true"] QLabel {{ background: transparent; }}
QLabel[state="ok"] {{ color: {t.ok}; }}
QLabel[state="warn"] {{ color: {t.warn}; }}
QLabel[state="error"] {{ color: {t.error}; }}
QFrame#emptyState QLabel#emptyTitle {{ font-size: {BASE_POINT_SIZE + 4}pt; font-weight: 600; }}
QFrame#emptyState QLabel#emptyHint {{ color: {t.muted}; }}
QDialog#commandPalette {{ background: {t.surface}; border: 1px solid {t.border};
    border-radius: 10px; }}
QDialog#commandPalette QLineEdit {{ font-size: {BASE_POINT_SIZE + 3}pt; padding: 8px 10px; }}
QDialog#commandPalette QListWidget {{ border: none; }}
QDialog#commandPalette QListWidget::item {{ padding: 6px 8px; border-radius: 6px; }}
QDialog#commandPalette QListWidget::item:selected {{ background: {t.selection}; }}
QProgressBar {{ background: {t.window}; border: 1px solid {t.border}; border-radius: 4px;
    text-align: center; height: 10px; }}
QProgressBar::chunk {{ background: {t.accent}; border-radius: 3px; }}
QComboBox::drop-down {{ border: none; width: 22px; }}
QComboBox::down-arrow {{ {arrow} width: 12px; height: 12px; }}
QSplitter::handle {{ background: transparent; }}
QSplitter::handle:hover {{ background: {t.selection}; }}
QScrollBar:vertical {{ background: transparent; width: 10px; margin: 2px; }}
QScrollBar::handle:vertical {{ background: {t.border}; border-radius: 4px; min-height: 24px; }}
QScrollBar:horizontal {{ background: transparent; height: 10px; margin: 2px; }}
QScrollBar::handle:horizontal {{ background: {t.border}; border-radius: 4px; min-width: 24px; }}
QScrollBar::add-line, QScrollBar::sub-line {{ width: 0; height: 0; }}
"""


def palette_of(theme: Theme) -> QPalette:
    """A palette of the theme's colours (what a light or dark desktop hands Qt)."""
    palette = QPalette()
    roles = {
        QPalette.ColorRole.Window: theme.window,
        QPalette.ColorRole.WindowText: theme.text,
        QPalette.ColorRole.Base: theme.surface,
        QPalette.ColorRole.AlternateBase: theme.window,
        QPalette.ColorRole.Text: theme.text,
        QPalette.ColorRole.Button: theme.surface,
        QPalette.ColorRole.ButtonText: theme.text,
        QPalette.ColorRole.Highlight: theme.accent,
        QPalette.ColorRole.HighlightedText: theme.accent_text,
        QPalette.ColorRole.ToolTipBase: theme.surface,
        QPalette.ColorRole.ToolTipText: theme.text,
        QPalette.ColorRole.PlaceholderText: theme.muted,
    }
    for role, colour in roles.items():
        palette.setColor(role, QColor(colour))
    return palette


class _Desktop:
    """The system palette, kept while a chosen theme replaces it (so "system" restores it)."""

    palette: QPalette | None = None


def apply_style(app: QApplication, choice: str = "system") -> Theme:
    """Style `app`: "light" or "dark" sets that theme's palette, "system" follows the
    desktop's (restoring it after a chosen one); returns the theme used."""
    forced = {"light": LIGHT, "dark": DARK}.get(choice)
    if forced is not None:
        if _Desktop.palette is None:
            _Desktop.palette = QPalette(app.palette())
        app.setPalette(palette_of(forced))
    elif _Desktop.palette is not None:
        app.setPalette(_Desktop.palette)
        _Desktop.palette = None
    theme = theme_for(app.palette())
    font = app.font()
    if font.pointSize() < BASE_POINT_SIZE:
        font.setPointSize(BASE_POINT_SIZE)
        app.setFont(font)
    from signet_desktop.ui.icon import icon_path  # icon.py imports this module

    app.setStyleSheet(stylesheet(theme, icon_path("combo-arrow")))
    return theme
