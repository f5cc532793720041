"""Find what a window cuts off: widgets outside their parent, text squeezed under its size.

`clipped(root)` walks every visible widget under `root` and reports, in words:
- a widget whose geometry reaches outside its parent's rectangle (the parent paints over or
  cuts it); in a scroll area's viewport (a list's row widget, a scroll area's content) only a
  widget wider than a viewport that never scrolls sideways;
- a label, button, combo box or line edit given less room than its minimum size hint (its text
  is cut: Qt clips, it never elides these on its own); a word-wrapped label shorter than the
  height its text needs at its width.
A widget of zero width or height (a collapsed splitter side) and what it holds are skipped.
Used by tests/ui/test_laptop_size.py (offscreen) and scripts/screenshots.py (on a real
display, whose fonts differ), which print what each pane cuts off.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QComboBox,
    QLabel,
    QLineEdit,
    QWidget,
)

TEXT_WIDGETS = (QLabel, QAbstractButton, QComboBox, QLineEdit)
_DIRECT = Qt.FindChildOption.FindDirectChildrenOnly


def clipped(root: QWidget) -> list[str]:
    """What is cut off under `root` (empty: nothing)."""
    problems: list[str] = []
    _walk(root, problems)
    return problems


def _walk(widget: QWidget, problems: list[str]) -> None:
    for child in widget.findChildren(QWidget, options=_DIRECT):
        if child.isWindow() or not child.isVisible():
            continue
        if child.width() <= 0 or child.height() <= 0:
            continue  # collapsed: nothing of it shows
        if isinstance(widget, QLineEdit):
            continue  # its clear button: placed and sized by the line edit itself
        problem = _problem(child, widget)
        if problem:
            problems.append(f"{describe(child)} {problem}")
        _walk(child, problems)


def _problem(child: QWidget, parent: QWidget) -> str:
    area = parent.parentWidget()
    scrolled = isinstance(area, QAbstractScrollArea) and parent is area.viewport()
    if scrolled and isinstance(area, QAbstractScrollArea):
        # a row widget of a list (or a scroll area's content) may extend past the viewport
        # only where the area can scroll to the rest
        sideways = area.horizontalScrollBarPolicy() != Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        if not sideways and child.geometry().right() > parent.rect().right():
            return (
                f"is {child.width()} wide in {describe(area)}'s {parent.width()} px that "
                "never scroll sideways"
            )
        return ""
    if not parent.rect().contains(child.geometry()):
        box = child.geometry()
        return (
            f"reaches outside {describe(parent)}: {box.x()},{box.y()} {box.width()}×"
            f"{box.height()} in {parent.width()}×{parent.height()}"
        )
    if isinstance(child, QLabel) and child.wordWrap() and child.text():
        need = child.heightForWidth(child.width())
        if need > child.height():
            return f"is {child.height()} high; its wrapped text needs {need}"
        return ""
    if isinstance(child, TEXT_WIDGETS):
        hint = child.minimumSizeHint()
        if child.width() < hint.width() or child.height() < hint.height():
            return (
                f"is squeezed to {child.width()}×{child.height()} under its minimum "
                f"{hint.width()}×{hint.height()}"
            )
    return ""


def describe(widget: QWidget) -> str:
    """`QLabel#name "text…"`: enough to find the widget in the code."""
    name = f"#{widget.objectName()}" if widget.objectName() else ""
    text = ""
    if isinstance(widget, (QLabel, QAbstractButton)):
        text = widget.text()
    elif isinstance(widget, QComboBox):
        text = widget.currentText()
    shown = f' "{text[:40]}"' if text else ""
    return f"{type(widget).__name__}{name}{shown}"
