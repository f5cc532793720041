"""Settings › Dreaming: on or off, and what runs it — an agent harness (as `signet dream
setup` binds it) or an HTTP provider whose API key goes to the secret store — with "Test",
one real call through the path Dreaming uses (`inference/trial.py`).

Saving writes agent.yaml through the validating writer (nothing is written when the result
would not load); the running daemon picks it up at its next start, which the pane says.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import SecretStr
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QWidget,
)

from signet_desktop.config import ConfigError, WorkspacePaths, load_config
from signet_desktop.config.inference_binding import bind_memory_extraction, http_binding
from signet_desktop.config.writer import update_config
from signet_desktop.domain.errors import InvalidInput
from signet_desktop.inference.trial import TrialOutcome, try_workload
from signet_desktop.inference.workloads import secrets_dir_for
from signet_desktop.service.secrets import check_name, check_value
from signet_desktop.ui.memory_format import INSPECTOR_ACTOR
from signet_desktop.ui.settings_form import (
    RESTART_NOTE,
    Section,
    SettingsHost,
    muted,
    row_of,
    set_state,
)
from signet_desktop.ui.settings_reads import DreamingFacts

LEAD = (
    "Dreaming reads completed sessions and memories and consolidates them into the knowledge "
    "graph, in audited passes you can revert. It needs a model: your own agent harness, or "
    "an HTTP provider."
)
# executor -> (label, the key's usual secret name, needs a key)
PROVIDERS = {
    "anthropic": ("Anthropic", "ANTHROPIC_API_KEY", True),
    "openai": ("OpenAI", "OPENAI_API_KEY", True),
    "openrouter": ("OpenRouter", "OPENROUTER_API_KEY", True),
    "ollama": ("Ollama (local)", "", False),
    "lmstudio": ("LM Studio (local)", "", False),
    "llama-cpp": ("llama.cpp server (local)", "", False),
    "vllm": ("vLLM", "", False),
    "openai-compatible": ("Another OpenAI-compatible server", "LLM_API_KEY", False),
}


class DreamingSection(Section):
    """The switch, the executor form, Save and Test."""

    def __init__(self, host: SettingsHost) -> None:
        super().__init__("settingsDreaming", "Dreaming", LEAD)
        self.host = host
        self.facts: DreamingFacts | None = None
        self.enabled = QCheckBox("Run Dreaming passes (memory.dreaming.enabled)")
        self.enabled.setObjectName("dreamingEnabled")
        self.enabled.clicked.connect(self.save_enabled)
        self.now = muted(name="dreamingNow")
        self.use_harness = QRadioButton("An agent harness")
        self.use_http = QRadioButton("An HTTP provider")
        choice = QButtonGroup(self)
        choice.addButton(self.use_harness)
        choice.addButton(self.use_http)
        self.use_harness.toggled.connect(self._choice_changed)
        self.harness = QComboBox()
        self.harness.setObjectName("dreamingHarness")
        self.provider = QComboBox()
        self.provider.setObjectName("dreamingProvider")
        for executor, (label, _, _) in PROVIDERS.items():
            self.provider.addItem(label, executor)
        self.provider.currentIndexChanged.connect(self._provider_changed)
        self.endpoint = _line("dreamingEndpoint", "the provider's usual address")
        self.model = _line("dreamingModel", "e.g. claude-sonnet-4-5, gpt-4.1-mini, qwen3:8b")
        self.key = _line("dreamingKey", "leave empty to keep the stored key")
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.secret = _line("dreamingSecret", "secret name, e.g. OPENAI_API_KEY")
        self.save = QPushButton("Save")
        self.save.setObjectName("dreamingSave")
        self.save.setProperty("primary", True)
        self.save.clicked.connect(self.save_executor)
        self.test = QPushButton("Test")
        self.test.setObjectName("dreamingTest")
        self.test.setToolTip("One real call to what agent.yaml now sends Dreaming to")
        self.test.clicked.connect(self.run_test)
        self.outcome = muted(name="dreamingOutcome")
        self.outcome.hide()  # until there is something to say
        form = QFormLayout()
        form.addRow("Runs on", row_of(self.use_harness, self.use_http))
        form.addRow("Harness", self.harness)
        form.addRow("Provider", self.provider)
        form.addRow("Endpoint", self.endpoint)
        form.addRow("Model", self.model)
        self.key_row = row_of(self.key, self.secret, stretch=False)
        form.addRow("API key", self.key_row)
        self.form = form
        holder = QWidget()
        holder.setLayout(form)
        for widget in (self.enabled, self.now, holder, row_of(self.save, self.test)):
            self.body.addWidget(widget)
        self.body.addWidget(self.outcome)

    def show_facts(self, facts: DreamingFacts) -> None:
        self.facts = facts
        self.enabled.setChecked(facts.enabled)
        state = "on" if facts.enabled else "off"
        self.now.setText(f"Saved in agent.yaml: Dreaming is {state}, runs on {facts.serving}.")
        self.harness.clear()
        for harness in facts.found:
            version = f" {harness.version}" if harness.version else ""
            self.harness.addItem(f"{harness.label}{version} — {harness.path}", str(harness.path))
        if facts.kind == "harness" and self.harness.findData(facts.harness) < 0:
            self.harness.addItem(facts.harness, facts.harness)
        if facts.harness:
            self.harness.setCurrentIndex(max(self.harness.findData(facts.harness), 0))
        if not facts.found and facts.kind != "harness":
            self.harness.addItem("none found (install Claude Code, Codex or OpenCode)", "")
        if facts.kind == "http":
            index = self.provider.findData(facts.provider)
            self.provider.setCurrentIndex(max(index, 0))
            self.endpoint.setText(facts.endpoint)
            self.model.setText(facts.model)
            self.secret.setText(facts.secret)
        else:
            self._provider_changed()  # the usual secret name of the first provider
        (self.use_http if facts.kind == "http" else self.use_harness).setChecked(True)
        self._choice_changed()
        self._key_hint()

    # -- form ------------------------------------------------------------------------------

    def _choice_changed(self) -> None:
        harness = self.use_harness.isChecked()
        self.form.setRowVisible(self.harness, harness)
        for widget in (self.provider, self.endpoint, self.model, self.key_row):
            self.form.setRowVisible(widget, not harness)

    def _provider_changed(self) -> None:
        executor = str(self.provider.currentData())
        usual = PROVIDERS[executor][1]
        if usual and not self.secret.text():
            self.secret.setText(usual)
        self._key_hint()

    def _key_hint(self) -> None:
        stored = self.facts is not None and self.secret.text() in self.facts.secrets
        needs = PROVIDERS.get(str(self.provider.currentData()), ("", "", False))[2]
        if stored:
            self.key.setPlaceholderText("stored — type a new key to replace it")
        else:
            self.key.setPlaceholderText("needed" if needs else "optional for a local server")

    # -- actions ---------------------------------------------------------------------------

    def _paths(self) -> WorkspacePaths:
        return WorkspacePaths.for_root(self.host.workspace)

    def save_enabled(self, on: bool) -> None:
        paths = self._paths()
        self.host.act(
            lambda: update_config(paths, {"memory.dreaming.enabled": on}),
            lambda _: f"Dreaming turned {'on' if on else 'off'} in agent.yaml. {RESTART_NOTE}",
        )

    def save_executor(self) -> None:
        paths = self._paths()
        if self.use_harness.isChecked():
            agent = str(self.harness.currentData() or "")
            if not agent:
                self._tell("No harness to use: install one, or choose a provider.")
                return
            self.host.act(
                lambda: bind_memory_extraction(paths, agent, replace=True),
                lambda result: (
                    f"Dreaming runs on {agent} ({result.action}"
                    + (f"; it ran on {result.previous} before" if result.previous else "")
                    + f"). {RESTART_NOTE}"
                ),
            )
            return
        try:
            work = self._http_save(paths)
        except ValueError as exc:
            self._tell(str(exc))
            return
        self.host.act(work, self._saved)

    def _saved(self, text: str) -> str:
        self.key.clear()  # the key is in the secret store now, and nowhere else
        return f"{text} {RESTART_NOTE}"

    def _http_save(self, paths: WorkspacePaths) -> Callable[[], str]:
        """The save to run off the GUI thread; ValueError (in words) for a bad form."""
        executor = str(self.provider.currentData())
        model = self.model.text().strip()
        endpoint = self.endpoint.text().strip() or None
        if not model:
            raise ValueError("Name the model Dreaming should use.")
        name = self.secret.text().strip()
        key = self.key.text()
        stored = self.facts is not None and name in self.facts.secrets
        secret = None
        if key or name:
            secret = _checked_secret(name, key, stored)
        elif PROVIDERS[executor][2]:
            raise ValueError(f"{PROVIDERS[executor][0]} needs an API key.")
        changes = http_binding(executor, model, endpoint=endpoint, secret=secret)
        service, agent_id = self.host.service, "default"  # $secret: reads the default agent's

        def save() -> str:
            update_config(paths, changes)  # validated first: a refusal stores no key either
            if key:
                service.secrets.put(agent_id, name, SecretStr(key), actor=INSPECTOR_ACTOR)
            stored_as = f", key stored as secret {name}" if key else ""
            return f"Dreaming runs on {executor} · {model}{stored_as}."

        return save

    def run_test(self) -> None:
        paths, env = self._paths(), self.host.env
        self._tell("Testing… (one real call; up to 30 s)")
        self.test.setEnabled(False)

        def trial() -> TrialOutcome:
            try:
                inference = load_config(paths).config.inference
            except ConfigError as exc:
                return TrialOutcome(False, f"agent.yaml does not load: {exc}")
            secrets = secrets_dir_for(paths.root)
            return try_workload(inference, "memory_extraction", env=env, secrets_dir=secrets)

        self.host.act(trial, self._tested)

    def _tell(self, text: str, state: str = "") -> None:
        self.outcome.setText(text)
        set_state(self.outcome, state)
        self.outcome.show()

    def _tested(self, outcome: TrialOutcome) -> str:
        self.test.setEnabled(True)
        mark = "✔" if outcome.ok else "✘"
        self._tell(f"{mark} {outcome.text}", "ok" if outcome.ok else "error")
        return "Test passed." if outcome.ok else "Test failed: see Dreaming."


def _checked_secret(name: str, key: str, stored: bool) -> str:
    """The secret name to reference; ValueError when the name or the key is not usable."""
    try:
        check_name(name)
        if key:
            check_value(SecretStr(key))
    except InvalidInput as exc:
        raise ValueError(f"API key: {exc.message}") from None
    if not key and not stored:
        raise ValueError(f"No secret named {name} is stored yet: type the key to store it.")
    return name


def _line(name: str, placeholder: str) -> QLineEdit:
    edit = QLineEdit()
    edit.setObjectName(name)
    edit.setPlaceholderText(placeholder)
    return edit
