"""Settings › Network and auth: where the daemon listens, who may call it (`auth.mode`), and
the scoped API tokens, listed, created and revoked through the token service.

The address is chosen when the daemon starts (flags and environment), so it is shown, not
edited. A mode change is written to agent.yaml and applies at the next start; tokens apply
at once (the request gate reads them on every call).
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
)

from signet_desktop.config import WorkspacePaths
from signet_desktop.config.writer import update_config
from signet_desktop.domain.tokens import PERMISSIONS, ApiToken
from signet_desktop.service.tokens import IssuedToken
from signet_desktop.ui.settings_form import RESTART_NOTE, Section, SettingsHost, muted, row_of
from signet_desktop.ui.settings_reads import NetworkFacts

LEAD = "Who may call the memory daemon, and with which credentials."
MODES = {
    "local": "local — callers on this machine need no token",
    "team": "team — every caller needs a token",
    "hybrid": "hybrid — this machine needs none, others need a token",
}
COLUMNS = ("Name", "Kind", "Permissions", "Agents", "Expires", "State")
BIND_NOTE = (
    "The address is chosen when the daemon starts: --host/--port, or SIGNET_BIND and "
    "SIGNET_PORT. A non-loopback address needs auth.token set in agent.yaml."
)


def token_row(token: ApiToken, now: str) -> tuple[str, ...]:
    """The table's cells for one token (never a secret: the service has none to give)."""
    return (
        token.name,
        token.kind,
        ", ".join(p for p in PERMISSIONS if p in token.permissions),
        ", ".join(sorted(token.agents)),
        token.expires_at[:16].replace("T", " "),
        token.state(now),
    )


class NetworkSection(Section):
    """Address, mode, and the token table with create and revoke."""

    def __init__(self, host: SettingsHost) -> None:
        super().__init__("settingsNetwork", "Network and auth", LEAD)
        self.host = host
        self.address = QLineEdit()
        self.address.setObjectName("networkAddress")
        self.address.setReadOnly(True)
        self.body.addWidget(row_of(self.address))
        self.body.addWidget(muted(BIND_NOTE))
        self.mode = QComboBox()
        self.mode.setObjectName("authMode")
        for mode, text in MODES.items():
            self.mode.addItem(text, mode)
        self.save_mode = QPushButton("Save mode")
        self.save_mode.setObjectName("authModeSave")
        self.save_mode.clicked.connect(self.save)
        self.mode_note = muted(name="authModeNote")
        self.body.addWidget(row_of(self.mode, self.save_mode))
        self.body.addWidget(self.mode_note)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("tokenTable")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setMinimumHeight(120)
        self.body.addWidget(self.table)
        self.name = QLineEdit()
        self.name.setObjectName("tokenName")
        self.name.setPlaceholderText("new token name, e.g. laptop-ci")
        self.permissions = {p: QCheckBox(p) for p in PERMISSIONS}
        self.permissions["read"].setChecked(True)
        self.create_button = QPushButton("Create token")
        self.create_button.setObjectName("tokenCreate")
        self.create_button.clicked.connect(self.create_token)
        self.revoke = QPushButton("Revoke selected…")
        self.revoke.setObjectName("tokenRevoke")
        self.revoke.clicked.connect(self.revoke_token)
        self.body.addWidget(
            row_of(self.name, *self.permissions.values(), self.create_button, self.revoke)
        )
        self.secret = QLineEdit()
        self.secret.setObjectName("tokenSecret")
        self.secret.setReadOnly(True)
        self.secret.hide()
        self.secret_note = muted("Copy it now: the secret is not shown again.")
        self.secret_note.hide()
        self.body.addWidget(self.secret)
        self.body.addWidget(self.secret_note)
        self.tokens: tuple[ApiToken, ...] = ()

    def show_facts(self, facts: NetworkFacts) -> None:
        self.address.setText(facts.url)
        self.address.setMinimumWidth(self.address.fontMetrics().horizontalAdvance(facts.url) + 24)
        self.mode.setCurrentIndex(max(self.mode.findData(facts.saved_mode), 0))
        running = facts.running_mode
        if running is not None and running != facts.saved_mode:
            self.mode_note.setText(
                f"The daemon runs in {running} mode; {facts.saved_mode} is saved. {RESTART_NOTE}"
            )
        else:
            self.mode_note.setText(f"Now: {facts.saved_mode}.")
        self.tokens = facts.tokens
        self.table.setRowCount(len(facts.tokens))
        for row, token in enumerate(facts.tokens):
            for column, text in enumerate(token_row(token, facts.now)):
                self.table.setItem(row, column, QTableWidgetItem(text))

    def save(self) -> None:
        mode = str(self.mode.currentData())
        paths = WorkspacePaths.for_root(self.host.workspace)
        self.host.act(
            lambda: update_config(paths, {"auth.mode": mode}),
            lambda result: (
                f"auth.mode is {mode} in agent.yaml. {RESTART_NOTE}"
                if result.changed
                else f"auth.mode was already {mode}."
            ),
        )

    def create_token(self) -> None:
        tokens, agent_id = self.host.service.tokens, self.host.agent_id
        name = self.name.text().strip()
        chosen = [p for p, box in self.permissions.items() if box.isChecked()]
        self.host.act(lambda: tokens.create(tokens.spec(name, chosen, [agent_id])), self._created)

    def _created(self, issued: IssuedToken) -> str:
        self.name.clear()
        self.secret.setText(issued.secret)
        self.secret.show()
        self.secret_note.show()
        return f"Token {issued.token.name} created (expires {issued.token.expires_at[:10]})."

    def revoke_token(self) -> None:
        rows = sorted({index.row() for index in self.table.selectedIndexes()})
        if not rows:
            self.mode_note.setText("Select a token to revoke.")
            return
        token = self.tokens[rows[0]]
        lead = f"Revoke {token.name}? Every caller using it is refused from now on."
        if not self.host.confirm(f"Revoke {token.name}?", lead, ""):
            return
        tokens = self.host.service.tokens
        self.host.act(lambda: tokens.revoke(token.id), lambda t: f"Token {t.name} revoked.")
