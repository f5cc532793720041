"""Themes follow the system palette; icons are one consistent, recolourable line family."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from signet_desktop.ui.icon import TRAY_STATES, icon, icon_path, resources_dir
from signet_desktop.ui.style import DARK, LIGHT, Theme, apply_style, is_dark, stylesheet, theme_for

pytestmark = pytest.mark.gui

PANE_ICONS = (
    "recall",
    "memories",
    "transcripts",
    "entities",
    "dreaming",
    "proposals",
    "queue",
    "documents",
    "map",
    "health",
)
ACTION_ICONS = ("search", "pin", "forget", "recover", "edit", "palette")
SVG = "{http://www.w3.org/2000/svg}"


def palette_with_window(colour: str) -> QPalette:
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Window, QColor(colour))
    return palette


def test_the_theme_follows_the_window_lightness(qtbot: QtBot) -> None:
    assert (
        is_dark(palette_with_window("#202228"))
        and theme_for(palette_with_window("#202228")) is DARK
    )
    assert not is_dark(palette_with_window("#efefef"))
    assert theme_for(palette_with_window("#efefef")) is LIGHT


@pytest.mark.parametrize("theme", [LIGHT, DARK], ids=lambda t: t.name)
def test_text_is_readable_on_its_backgrounds(theme: Theme) -> None:
    for background in (theme.window, theme.surface, theme.rail, theme.selection, theme.hover):
        assert contrast(theme.text, background) >= 7.0, background  # WCAG AAA body text
    for background in (theme.window, theme.surface, theme.rail):
        assert contrast(theme.muted, background) >= 4.5, background  # AA secondary text
    assert contrast(theme.accent_text, theme.accent) >= 4.5


def test_apply_style_sets_a_stylesheet_for_the_palette(qapp: QApplication) -> None:
    before = qapp.styleSheet()
    try:
        theme = apply_style(qapp)
        assert theme is theme_for(qapp.palette())
        assert qapp.styleSheet() == stylesheet(theme, icon_path("combo-arrow"))
        assert theme.window in qapp.styleSheet() and "QListWidget#rail" in qapp.styleSheet()
        assert qapp.font().pointSize() >= 10
    finally:
        qapp.setStyleSheet(before)


@pytest.mark.parametrize("name", PANE_ICONS + ACTION_ICONS)
def test_line_icons_share_one_grid_and_stroke(name: str) -> None:
    path = icon_path(name)
    assert path is not None, f"resources/icons/{name}.svg is missing"
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    assert root.get("viewBox") == "0 0 24 24"
    assert root.get("stroke") == "currentColor" and root.get("fill") == "none"
    assert 1.5 <= float(root.get("stroke-width", "0")) <= 2.0
    assert root.get("stroke-linecap") == "round" and root.get("stroke-linejoin") == "round"
    colours = {el.get(attr) for el in root.iter() for attr in ("stroke", "fill") if el.get(attr)}
    assert colours <= {"currentColor", "none"}  # one colour, set at load


def test_icons_are_recoloured_at_load(qtbot: QtBot) -> None:
    light = icon("memories", "#ff0000").pixmap(48, 48).toImage()
    dark = icon("memories", "#00ff00").pixmap(48, 48).toImage()
    reds = greens = 0
    for y in range(light.height()):
        for x in range(light.width()):
            if light.pixelColor(x, y).alpha() > 200:
                reds += light.pixelColor(x, y).red() > 200
            if dark.pixelColor(x, y).alpha() > 200:
                greens += dark.pixelColor(x, y).green() > 200
    assert reds > 20 and greens > 20


def test_a_missing_icon_still_draws_something(qtbot: QtBot) -> None:
    assert icon_path("no-such-icon") is None
    assert not icon("no-such-icon").pixmap(24, 24).isNull()


def test_tray_state_icons_ship_for_every_state() -> None:
    directory = resources_dir()
    assert directory is not None
    for state in TRAY_STATES:
        assert (directory / "icons" / f"tray-{state}.svg").is_file()
    assert all(isinstance(p, Path) for p in (directory / "icons").glob("*.svg"))


def contrast(foreground: str, background: str) -> float:
    """WCAG contrast ratio of two sRGB colours."""

    def luminance(colour: str) -> float:
        qcolour = QColor(colour)
        channels = []
        for value in (qcolour.redF(), qcolour.greenF(), qcolour.blueF()):
            channels.append(value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4)
        red, green, blue = channels
        return 0.2126 * red + 0.7152 * green + 0.0722 * blue

    high, low = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (high + 0.05) / (low + 0.05)
