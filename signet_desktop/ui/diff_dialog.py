"""Ask before a change, showing exactly what it would write (a unified diff)."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)


class DiffDialog(QDialog):
    """The lead, the diff (monospace, read-only), and Apply / Cancel (Cancel is the default)."""

    def __init__(self, parent: QWidget | None, title: str, lead: str, details: str) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setObjectName("diffDialog")
        self.resize(760, 480)
        layout = QVBoxLayout(self)
        text = QLabel(lead)
        text.setWordWrap(True)
        layout.addWidget(text)
        self.details = QPlainTextEdit(details)
        self.details.setReadOnly(True)
        self.details.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.details.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        layout.addWidget(self.details, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        apply = buttons.addButton("Apply", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.button(QDialogButtonBox.StandardButton.Cancel).setDefault(True)
        apply.setAutoDefault(False)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)


def ask_with_diff(parent: QWidget | None, title: str, lead: str, details: str) -> bool:
    """Show the dialog modally; True only when the person chose Apply."""
    return DiffDialog(parent, title, lead, details).exec() == QDialog.DialogCode.Accepted
