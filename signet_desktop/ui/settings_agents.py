"""Settings › Agents: each harness found here or not, connected or not; Install, Uninstall and
Check through the installer's own code (`harness/installers/catalog.py`, as `signet install`).

Install and Uninstall build the plan off the GUI thread, show its diff and write only after
the person agrees (one backup per file, atomic, noted in the install ledger so an uninstall
gives back the bytes it found). Check starts each written command, as `install --status`.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QGridLayout, QLabel, QPlainTextEdit, QPushButton, QWidget

from signet_desktop.harness.installers.catalog import (
    STATUS,
    Check,
    check,
    plan_install,
    plan_uninstall,
)
from signet_desktop.harness.installers.files import DEFAULT_URL, Locations, Plan, apply, diff
from signet_desktop.harness.installers.ledger import InstallLedger
from signet_desktop.ui.settings_form import Section, SettingsHost, muted, set_state
from signet_desktop.ui.settings_reads import AgentFacts

LEAD = (
    "Connected agents get the memories that matter at session start and with each prompt, "
    "and keep every session as a transcript. Install edits the agent's own files in place "
    "(one backup each); you see the change before anything is written."
)


def found_text(agent: AgentFacts) -> str:
    """Where the harness is, in words."""
    if agent.binary is None:
        return "not found on this machine"
    version = f"{agent.version} · " if agent.version else ""
    return f"found: {version}{agent.binary}"


def state_text(agent: AgentFacts) -> tuple[str, str]:
    """(words, state) for the connection: ok, warn or error."""
    if agent.error:
        return f"config unreadable: {agent.error}", "error"
    if not agent.connected:
        return "not connected", "warn" if agent.binary is not None else ""
    parts = []
    if agent.hooks != "none":
        parts.append(f"{agent.hooks} hooks")
    if agent.mcp:
        parts.append("MCP server")
    return "connected (" + ", ".join(parts) + ")", "ok"


class AgentsSection(Section):
    """One row per harness with its three actions, and the last check's report."""

    def __init__(self, host: SettingsHost) -> None:
        super().__init__("settingsAgents", "Agents", LEAD)
        self.host = host
        self.grid = QGridLayout()
        self.grid.setHorizontalSpacing(12)
        self.grid.setColumnStretch(1, 1)
        holder = QWidget()
        holder.setLayout(self.grid)
        self.body.addWidget(holder)
        self.report = QPlainTextEdit()
        self.report.setObjectName("agentCheck")
        self.report.setReadOnly(True)
        self.report.setMaximumHeight(150)
        self.report.hide()
        self.body.addWidget(self.report)
        self.rows: dict[str, tuple[QLabel, QLabel, list[QPushButton]]] = {}

    def show_agents(self, agents: tuple[AgentFacts, ...]) -> None:
        for index, agent in enumerate(agents):
            if agent.name not in self.rows:
                self._add_row(index, agent)
            found, state, buttons = self.rows[agent.name]
            found.setText(found_text(agent))
            words, level = state_text(agent)
            state.setText(words)
            set_state(state, level)
            buttons[0].setEnabled(agent.error is None)
            buttons[1].setEnabled(agent.connected)

    def _add_row(self, row: int, agent: AgentFacts) -> None:
        title = QLabel(f"<b>{agent.label}</b>")
        found = muted(name=f"agentFound-{agent.name}")
        state = QLabel()
        state.setObjectName(f"agentState-{agent.name}")
        buttons = []
        for column, (text, slot) in enumerate(
            (("Install…", self.install), ("Uninstall…", self.uninstall), ("Check", self.check))
        ):
            button = QPushButton(text)
            button.setObjectName(f"agent{text.rstrip('…')}-{agent.name}")
            button.clicked.connect(_bound(slot, agent.name, agent.label))
            self.grid.addWidget(button, row, 3 + column)
            buttons.append(button)
        self.grid.addWidget(title, row, 0)
        self.grid.addWidget(found, row, 1)
        self.grid.addWidget(state, row, 2)
        self.rows[agent.name] = (found, state, buttons)

    # -- actions ---------------------------------------------------------------------------

    def _locations(self) -> Locations:
        return Locations.from_env(self.host.env)

    def install(self, name: str, label: str) -> None:
        url = self.host.url or DEFAULT_URL
        locations = self._locations()
        self.host.act(
            lambda: plan_install(name, locations, url),
            lambda plan: self._confirm_and_apply(plan, label, uninstall=False),
        )

    def uninstall(self, name: str, label: str) -> None:
        locations = self._locations()
        ledger = InstallLedger.of(locations)
        self.host.act(
            lambda: ledger.restoring(plan_uninstall(name, locations)),
            lambda plan: self._confirm_and_apply(plan, label, uninstall=True),
        )

    def _confirm_and_apply(self, plan: Plan, label: str, *, uninstall: bool) -> str:
        if not plan.pending:
            return f"{label}: nothing to change."
        verb = "Uninstall from" if uninstall else "Install into"
        files = ", ".join(str(change.path) for change in plan.pending)
        notes = "".join(f"\n{note}" for note in plan.notes)
        lead = f"{verb} {label}: these files change ({files}).{notes}"
        if not self.host.confirm(f"{verb} {label}?", lead, diff(plan)):
            return f"{label}: nothing was changed."
        ledger = InstallLedger.of(self._locations())
        self.host.act(
            lambda: apply(plan, ledger, uninstall=uninstall),
            lambda backups: _applied(label, plan, backups, uninstall),
        )
        return f"{label}: writing…"

    def check(self, name: str, label: str) -> None:
        env, url = self.host.env, self.host.url or DEFAULT_URL
        locations = self._locations()
        self.host.act(lambda: check(name, STATUS[name](locations), env, url), self._checked)

    def _checked(self, result: Check) -> str:
        self.report.setPlainText("\n".join(result.lines))
        self.report.show()
        name = result.lines[0].split(":", 1)[0]
        if result.broken:
            return f"{name}: {result.broken} written command(s) do not start; install again."
        return f"{name}: checked; every written command starts."


def _applied(label: str, plan: Plan, backups: list[object], uninstall: bool) -> str:
    done = "Uninstalled from" if uninstall else "Installed into"
    count = len(plan.pending)
    kept = f"; {len(backups)} backup(s) kept" if backups else ""
    after = "run without Signet" if uninstall else "use Signet"
    return f"{done} {label}: {count} file(s) written{kept}. New {label} sessions {after}."


def _bound(slot: Callable[[str, str], None], name: str, label: str) -> Callable[[], None]:
    return lambda: slot(name, label)
