"""The memory detail's dialogs: forget (a reason; force for a pinned memory), tags, importance,
recover. Each opens window-modal without a nested event loop (`open()`, not `exec()`) and
hands its values to a callback when accepted; the detail does the facade call.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from signet_desktop.domain.memory import Memory
from signet_desktop.ui.hit_format import preview
from signet_desktop.ui.widgets import text_label, vbox


class ReasonDialog(QDialog):
    """A titled form with a reason field; OK only while the reason (and any check) is given."""

    def __init__(
        self, parent: QWidget | None, title: str, memory: Memory, reason: str = ""
    ) -> None:
        super().__init__(parent)
        self.setObjectName("memoryActionDialog")
        self.setWindowTitle(title)
        self.setMinimumWidth(420)
        quote = text_label(f"“{preview(memory.content, 90)}”", role="muted", wrap=True)
        self.form = QFormLayout()
        self.reason = QLineEdit(reason)
        self.reason.setObjectName("reasonField")
        self.reason.setPlaceholderText("why (kept in the history)")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        vbox(quote, self.form, self.buttons, parent=self)
        self.reason.textChanged.connect(self.update_ok)

    def add_row(self, label: str, widget: QWidget) -> None:
        self.form.addRow(label, widget)

    def finish(self) -> None:
        self.form.addRow("Reason", self.reason)
        self.update_ok()

    @property
    def ok_button(self) -> QPushButton:
        return self.buttons.button(QDialogButtonBox.StandardButton.Ok)

    def ready(self) -> bool:
        return bool(self.reason.text().strip())

    def update_ok(self) -> None:
        self.ok_button.setEnabled(self.ready())


class ForgetDialog(ReasonDialog):
    """Forget: a reason is required; a pinned memory also needs "forget it anyway" checked."""

    def __init__(self, parent: QWidget | None, memory: Memory) -> None:
        super().__init__(parent, "Forget memory", memory)
        self.force = QCheckBox("It is pinned — forget it anyway")
        self.force.setObjectName("forceCheck")
        self.force.setVisible(memory.pinned)
        self.force.toggled.connect(self.update_ok)
        self.pinned = memory.pinned
        note = QLabel("It can be recovered for 30 days.")
        note.setProperty("role", "muted")
        self.add_row("", note)
        if memory.pinned:
            self.add_row("", self.force)
        self.finish()
        self.ok_button.setText("Forget")

    def ready(self) -> bool:
        return super().ready() and (not self.pinned or self.force.isChecked())


class TagsDialog(ReasonDialog):
    """Tags as a comma-separated line."""

    def __init__(self, parent: QWidget | None, memory: Memory) -> None:
        super().__init__(parent, "Edit tags", memory, reason="edited tags in the inspector")
        self.tags = QLineEdit(", ".join(memory.tags))
        self.tags.setObjectName("tagsField")
        self.tags.setPlaceholderText("infra, db")
        self.add_row("Tags", self.tags)
        self.finish()

    def values(self) -> tuple[str, ...]:
        return tuple(tag.strip() for tag in self.tags.text().split(",") if tag.strip())


class ImportanceDialog(ReasonDialog):
    """Importance 0–1."""

    def __init__(self, parent: QWidget | None, memory: Memory) -> None:
        super().__init__(
            parent, "Edit importance", memory, reason="importance set in the inspector"
        )
        self.importance = QDoubleSpinBox()
        self.importance.setObjectName("importanceField")
        self.importance.setRange(0.0, 1.0)
        self.importance.setSingleStep(0.05)
        self.importance.setDecimals(2)
        self.importance.setValue(memory.importance)
        self.add_row("Importance", self.importance)
        self.finish()


def ask_forget(
    parent: QWidget, memory: Memory, accepted: Callable[[str, bool], None]
) -> ForgetDialog:
    dialog = ForgetDialog(parent, memory)
    dialog.accepted.connect(
        lambda: accepted(dialog.reason.text().strip(), dialog.pinned and dialog.force.isChecked())
    )
    dialog.open()
    return dialog


def ask_tags(
    parent: QWidget, memory: Memory, accepted: Callable[[tuple[str, ...], str], None]
) -> TagsDialog:
    dialog = TagsDialog(parent, memory)
    dialog.accepted.connect(lambda: accepted(dialog.values(), dialog.reason.text().strip()))
    dialog.open()
    return dialog


def ask_importance(
    parent: QWidget, memory: Memory, accepted: Callable[[float, str], None]
) -> ImportanceDialog:
    dialog = ImportanceDialog(parent, memory)
    dialog.accepted.connect(
        lambda: accepted(round(dialog.importance.value(), 2), dialog.reason.text().strip())
    )
    dialog.open()
    return dialog


def ask_recover(parent: QWidget, memory: Memory, accepted: Callable[[str], None]) -> ReasonDialog:
    dialog = ReasonDialog(parent, "Recover memory", memory, reason="recovered in the inspector")
    dialog.finish()
    dialog.ok_button.setText("Recover")
    dialog.accepted.connect(lambda: accepted(dialog.reason.text().strip()))
    dialog.open()
    return dialog
