"""Past results of a query, from the opt-in search telemetry ledger (`search.telemetry`).

`history_rows` (plain Python) says, for each earlier run of the same query, when it ran, how
many hits it had, and how its ranked ids compare with what is on screen now (which are new,
which dropped out); `RecallHistoryDialog` lays that out. The pane fetches records through
`service.recall.telemetry.history` on a worker thread, as a person (the inspector's actor).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from signet_desktop.domain.telemetry import SearchRecord
from signet_desktop.ui.widgets import vbox

DISABLED_TIP = (
    "Past results are kept only when search telemetry is on: set "
    "search.telemetry.enabled: true in agent.yaml (local only; ids and scores, no content)"
)
HISTORY_LIMIT = 20


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """One earlier run: when, how, and how its top results differ from the current ones."""

    when: str
    summary: str  # "12 results · hybrid · 9 ms"
    top: tuple[str, ...]  # "0.82  billing runs on Postgres 16" lines (or the id when unknown)
    change: str  # "same top 10" | "+2 new now, 1 dropped"


def history_rows(
    records: Sequence[SearchRecord],
    current_ids: Sequence[str],
    previews: Mapping[str, str],
    top_n: int = 5,
) -> list[HistoryRow]:
    """Rows for `records` (newest first), compared with the ids shown now."""
    now = list(current_ids)
    rows: list[HistoryRow] = []
    for record in records:
        ids = [entry.memory_id for entry in record.results]
        window = max(len(ids), len(now))
        new = [i for i in now[:window] if i not in ids]
        dropped = [i for i in ids if i not in now]
        if not new and not dropped:
            change = "same results as now" if ids == now else "same results, other order"
        else:
            change = f"+{len(new)} new now, {len(dropped)} no longer found"
        top = tuple(
            f"{entry.score:.2f}  {previews.get(entry.memory_id, entry.memory_id)}"
            for entry in record.results[:top_n]
        )
        plural = "" if record.result_count == 1 else "s"
        summary = (
            f"{record.result_count} result{plural} · {record.method} · {record.total_ms:.0f} ms"
        )
        rows.append(HistoryRow(record.created_at.replace("T", " ")[:19], summary, top, change))
    return rows


class RecallHistoryDialog(QDialog):
    """Earlier runs of one query, newest first, each expandable to its top results."""

    def __init__(self, query: str, rows: Sequence[HistoryRow], parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("recallHistory")
        self.setWindowTitle("Past results")
        self.resize(720, 420)
        title = QLabel(f"Earlier runs of “{query}”")
        title.setProperty("role", "title")
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["When", "Results", "Compared with now"])
        self.tree.setColumnWidth(0, 170)
        self.tree.setColumnWidth(1, 220)
        for row in rows:
            item = QTreeWidgetItem([row.when, row.summary, row.change])
            for line in row.top:
                item.addChild(QTreeWidgetItem(["", line, ""]))
            self.tree.addTopLevelItem(item)
        self.empty = QLabel("No earlier run of this query was recorded.")
        self.empty.setProperty("role", "muted")
        self.empty.setVisible(not rows)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        vbox(title, self.empty, (self.tree, 1), buttons, parent=self)
