"""Bind Dreaming (the memory_extraction workload) to an agent harness in agent.yaml.

`signet dream setup` writes an `executor: acpx` target and `inference.workloads.memoryExtraction`
pointing at it. A file without an `inference:` key gets the block appended as text, so its
comments stay; a file with one is merged through YAML, which drops comments, so the old file
is first copied to `<name>.bak`. A memoryExtraction binding to something else, or a target of
the same name with another executor, is refused unless `replace`. Every result is loaded with
the config loader before anything is written, and is written atomically (same mode).
"""

from __future__ import annotations

import copy
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from signet_desktop.config.loader import ConfigError, load_config, parse_config_text
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.source import parse_yaml
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.config.writer import ConfigWriteError, write_atomic

DEFAULT_TARGET = "claude-code"
HTTP_TARGET = "dreaming-http"  # the target (and account) an HTTP provider is written as
WORKLOAD_KEY = "memoryExtraction"
_WORKLOAD_KEYS = (WORKLOAD_KEY, "memory_extraction")  # the loader accepts either spelling
_HEADER = "# Dreaming runs through an agent harness (written by `signet dream setup`).\n"


class BindingError(Exception):
    """The binding was not written (the file is untouched); `str()` says why."""


class BindingRefused(BindingError):
    """Writing would replace a binding or target the user set; `replace=True` allows it."""


@dataclass(frozen=True, slots=True)
class BindingResult:
    """What was done: `action` is created, appended, merged or unchanged."""

    path: Path
    action: str
    target: str
    backup: Path | None = None
    previous: str | None = None  # what served memoryExtraction before, when something did


def acpx_target(agent: str) -> dict[str, Any]:
    """`inference.targets.<name>` for a harness: a name (`claude`) or a binary's path."""
    return {"executor": "acpx", "acpx": {"agent": agent}}


def bind_memory_extraction(
    paths: WorkspacePaths, agent: str, *, target: str = DEFAULT_TARGET, replace: bool = False
) -> BindingResult:
    """Point memoryExtraction at an acpx target running `agent`; BindingError if not done."""
    try:
        load_config(paths)  # a file that does not load now is the user's to fix first
    except ConfigError as exc:
        raise BindingError(f"agent.yaml does not load; fix it first: {exc}") from None
    file = paths.config_file()
    if file is None:
        file = paths.root / "agent.yaml"
        text = _block(target, agent)
        _checked(text, file, target, agent)
        _write(file, text)
        return BindingResult(file, "created", target)
    text = _read(file)
    data = parse_yaml(text).data
    if not isinstance(data, Mapping) or "inference" not in data:
        separator = "" if not text.strip() else ("\n" if text.endswith("\n") else "\n\n")
        new_text = text + separator + _block(target, agent)
        _checked(new_text, file, target, agent)
        _write(file, new_text)
        return BindingResult(file, "appended", target)
    return _merge(file, dict(data), target, agent, replace)


def _merge(
    file: Path, data: dict[str, Any], target: str, agent: str, replace: bool
) -> BindingResult:
    inference = _section(data.get("inference"), "inference")
    targets = _section(inference.get("targets"), "inference.targets")
    workloads = _section(inference.get("workloads"), "inference.workloads")
    policies = _section(inference.get("policies"), "inference.policies")
    key, bound = next(((k, workloads[k]) for k in _WORKLOAD_KEYS if k in workloads), (None, None))
    ours = bound is not None and _points_at(bound, target, policies)
    previous = None if bound is None else _describe(bound)
    if bound is None and inference.get("defaultPolicy"):
        previous = f"the default policy '{inference['defaultPolicy']}'"
    if bound is not None and not ours and not replace:
        raise BindingRefused(
            f"inference.workloads.{key} already sends Dreaming to {previous}; "
            "run again with --replace to send it to the agent harness instead"
        )
    existing = targets.get(target)
    if isinstance(existing, Mapping) and existing.get("executor") == "acpx":
        acpx = _section(existing.get("acpx"), f"inference.targets.{target}.acpx")
        if ours and acpx.get("agent") == agent:
            return BindingResult(file, "unchanged", target)
        wanted: dict[str, Any] = {**existing, "acpx": {**acpx, "agent": agent}}
    elif existing is not None and not replace:
        raise BindingRefused(
            f"inference.targets.{target} already exists and is not an acpx target; "
            "run again with --replace to overwrite it"
        )
    else:
        wanted = acpx_target(agent)
    merged = copy.deepcopy(data)
    merged["inference"] = {
        **inference,
        "targets": {**targets, target: wanted},
        "workloads": {
            **{k: v for k, v in workloads.items() if k not in _WORKLOAD_KEYS},
            WORKLOAD_KEY: {"target": target},
        },
    }
    new_text = yaml.safe_dump(merged, sort_keys=False, allow_unicode=True, width=100)
    _checked(new_text, file, target, agent)
    backup = file.with_name(file.name + ".bak")
    try:
        shutil.copy2(file, backup)
    except OSError as exc:
        raise BindingError(f"cannot back up {file} to {backup}: {exc}") from None
    _write(file, new_text)
    return BindingResult(file, "merged", target, backup=backup, previous=previous)


def _section(value: object, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise BindingError(f"{where} is not a mapping; fix it by hand first")
    return dict(value)


def _points_at(bound: object, target: str, policies: Mapping[str, Any]) -> bool:
    # The loader reads a bare string as a policy name, used as a target when no policy has it.
    if isinstance(bound, str):
        return bound == target and target not in policies
    return isinstance(bound, Mapping) and bound.get("target") == target and not bound.get("policy")


def _describe(bound: object) -> str:
    if isinstance(bound, Mapping):
        parts = [f"{k} '{bound[k]}'" for k in ("target", "policy", "model") if bound.get(k)]
        return ", ".join(parts) or "an empty binding"
    return f"'{bound}'"


def _block(target: str, agent: str) -> str:
    block = {
        "inference": {
            "targets": {target: acpx_target(agent)},
            "workloads": {WORKLOAD_KEY: {"target": target}},
        }
    }
    return _HEADER + yaml.safe_dump(block, sort_keys=False, allow_unicode=True, width=100)


def _checked(text: str, file: Path, target: str, agent: str) -> SignetConfig:
    """The new text loads with the project's loader and binds memoryExtraction as meant."""
    try:
        config = parse_config_text(text, str(file)).config
    except ConfigError as exc:
        raise BindingError(f"the result would not load, nothing written: {exc}") from None
    binding = config.inference.workloads.memory_extraction
    written = config.inference.targets.get(target)
    if (
        binding is None
        or binding.target != target
        or written is None
        or written.executor != "acpx"
        or (written.acpx or {}).get("agent") != agent
    ):
        raise BindingError(f"the result would not bind memoryExtraction to {target}")
    return config


def _read(file: Path) -> str:
    try:
        return file.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise BindingError(f"cannot read {file}: {exc}") from None


def _write(file: Path, text: str) -> None:
    try:
        write_atomic(file, text)
    except ConfigWriteError as exc:
        raise BindingError(str(exc)) from None


def http_binding(
    provider: str,
    model: str,
    *,
    endpoint: str | None = None,
    secret: str | None = None,
    target: str = HTTP_TARGET,
) -> dict[str, object]:
    """The agent.yaml changes (dotted key -> value, None removes) that send Dreaming to an
    HTTP provider: an account whose key is `$secret:NAME` (the secret store holds the value),
    a target with the one model, and memoryExtraction bound to it."""
    executor: dict[str, object] = {"executor": provider, "models": {model: {}}}
    if endpoint:
        executor["endpoint"] = endpoint
    account: dict[str, object] | None = None
    if secret:
        account = {"provider": provider, "apiKey": f"$secret:{secret}"}
        executor["account"] = target
    return {
        f"inference.accounts.{target}": account,
        f"inference.targets.{target}": executor,
        f"inference.workloads.{WORKLOAD_KEY}": {"target": target},
        "inference.workloads.memory_extraction": None,
    }
