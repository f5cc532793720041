"""What the Settings pane shows, read in one call off the GUI thread (`read_settings`).

The saved agent.yaml (through the project's loader), the config the running daemon loaded
(its status board), the harnesses found on this machine and what Signet wrote into each, the
embedder's coverage, and the API tokens. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from signet_desktop.config import ConfigError, SignetConfig, WorkspacePaths, load_config
from signet_desktop.config.describe import describe_config
from signet_desktop.config.inference import InferenceConfig
from signet_desktop.config.writer import config_path
from signet_desktop.domain.tokens import ApiToken
from signet_desktop.embedding.registry import configured_model
from signet_desktop.harness.installers.catalog import BINARIES, LABELS, connected, status_rows
from signet_desktop.harness.installers.files import Locations
from signet_desktop.inference.harness_discovery import Harness, discover, search_env
from signet_desktop.service.embeddings.service import EmbeddingStatus
from signet_desktop.service.facade import SignetService

SECRET_PREFIX = "$secret:"


@dataclass(frozen=True, slots=True)
class AgentFacts:
    """One harness: found on this machine or not, and what Signet wrote into its files."""

    name: str  # the installer's name: claude-code, codex, opencode
    label: str
    binary: str | None  # where the harness was found (None: not found)
    version: str | None
    config: str  # the file Signet edits for it
    connected: bool
    hooks: str  # "command", "http", "none", …
    mcp: bool
    error: str | None = None  # its config file does not parse


@dataclass(frozen=True, slots=True)
class DreamingFacts:
    """Whether Dreaming is on, and what the saved agent.yaml sends it to."""

    enabled: bool
    kind: str  # "harness", "http", "policy" or "none"
    serving: str  # in words: "Claude Code (harness)", "openai · gpt-4.1-mini", …
    harness: str = ""  # acpx.agent of a harness target
    provider: str = ""  # an HTTP target's executor, endpoint, model and key's secret name
    endpoint: str = ""
    model: str = ""
    secret: str = ""
    found: tuple[Harness, ...] = ()  # harnesses installed here
    secrets: tuple[str, ...] = ()  # the default agent's stored secret names


@dataclass(frozen=True, slots=True)
class NetworkFacts:
    """Where the daemon listens and who may call it."""

    url: str
    host: str | None  # from the running daemon (None: not known here)
    port: int | None
    saved_mode: str
    running_mode: str | None
    tokens: tuple[ApiToken, ...]
    now: str


@dataclass(frozen=True, slots=True)
class SettingsSnapshot:
    """Everything the pane shows."""

    config_path: Path
    config_error: str | None  # the saved file does not load (the pane then writes nothing)
    pending_restart: bool | None  # saved differs from running; None: nothing runs here
    agents: tuple[AgentFacts, ...]
    dreaming: DreamingFacts
    embedding: EmbeddingStatus
    saved_embedding: str  # "native · all-MiniLM-L6-v2" as agent.yaml says
    network: NetworkFacts
    found: tuple[Harness, ...] = ()  # every harness found on this machine


def read_settings(
    service: SignetService,
    workspace: Path,
    env: Mapping[str, str],
    url: str,
    found: tuple[Harness, ...] | None = None,
) -> SettingsSnapshot:
    """One read of everything, off the GUI thread; `found` (the harnesses found by an earlier
    read) spares each harness's `--version` run, which None does afresh."""
    paths = WorkspacePaths.for_root(workspace)
    error = None
    try:
        loaded = load_config(paths)
        config = loaded.config
        saved = describe_config(loaded)["config"]
    except ConfigError as exc:
        error, config, saved = str(exc), SignetConfig(), None
    board = service.status_board.snapshot()
    running = _mapping(board.get("config")).get("config")
    runtime = _mapping(board.get("runtime"))
    auth = _mapping(_mapping(running).get("auth"))
    embedding = config.embedding
    if found is None:
        path_var, home = search_env(env)
        found = discover(path_var=path_var, home=home)  # each binary's bounded `--version`
    return SettingsSnapshot(
        config_path=config_path(paths),
        config_error=error,
        pending_restart=None if running is None or saved is None else running != saved,
        agents=agent_facts(env, found),
        dreaming=dreaming_facts(config, service.secrets.names("default"), found),
        embedding=service.embeddings.status(),
        saved_embedding=(
            f"{embedding.provider} · "
            f"{configured_model(embedding.provider, embedding.model, embedding.precision)}"
        ),
        network=NetworkFacts(
            url=str(runtime.get("url") or url),
            host=runtime.get("host"),
            port=runtime.get("port"),
            saved_mode=config.auth.mode,
            running_mode=auth.get("mode"),
            tokens=tuple(service.tokens.list()),
            now=service.tokens.now(),
        ),
        found=found,
    )


def agent_facts(env: Mapping[str, str], found: tuple[Harness, ...]) -> tuple[AgentFacts, ...]:
    """Every harness Signet installs into: found here (`found`), and connected or not."""
    by_name = {harness.name: harness for harness in found}
    agents = []
    for name, facts in status_rows(Locations.from_env(env)):
        binary = by_name.get(BINARIES[name])
        agents.append(
            AgentFacts(
                name=name,
                label=LABELS[name],
                binary=None if binary is None else str(binary.path),
                version=None if binary is None else binary.version,
                config=str(facts["config"]),
                connected=connected(facts),
                hooks=str(facts.get("hooks", "none")),
                mcp=bool(facts.get("mcp")),
                error=facts.get("error"),
            )
        )
    return tuple(agents)


def dreaming_facts(
    config: SignetConfig, secrets: tuple[str, ...], found: tuple[Harness, ...]
) -> DreamingFacts:
    """What memoryExtraction is bound to in `config`, in the form's terms."""
    supported = tuple(harness for harness in found if harness.supported)
    base = DreamingFacts(
        enabled=config.memory.dreaming.enabled,
        kind="none",
        serving="nothing (no model is set)",
        found=supported,
        secrets=secrets,
    )
    inference = config.inference
    binding = inference.workloads.memory_extraction
    if binding is not None and binding.target and binding.target in inference.targets:
        target = inference.targets[binding.target]
        if target.executor.strip().lower() == "acpx":
            agent = str((target.acpx or {}).get("agent") or "")
            return replace(base, kind="harness", serving=f"{agent} (harness)", harness=agent)
        model = binding.model or _single_model(target.models)
        return replace(
            base,
            kind="http",
            serving=" · ".join(p for p in (target.executor, model) if p),
            provider=target.executor,
            endpoint=target.endpoint or "",
            model=model,
            secret=_secret_name(inference, target.account),
        )
    policy = (binding.policy if binding is not None else None) or inference.default_policy
    if policy:
        return replace(base, kind="policy", serving=f"the policy {policy!r}")
    return base


def _single_model(models: Mapping[str, Any]) -> str:
    return next(iter(models)) if len(models) == 1 else ""


def _secret_name(inference: InferenceConfig, account_name: str | None) -> str:
    account = inference.accounts.get(account_name or "")
    key = account.api_key.get_secret_value() if account and account.api_key else ""
    return key.removeprefix(SECRET_PREFIX) if key.startswith(SECRET_PREFIX) else ""


def _mapping(value: object) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}
