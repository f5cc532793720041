"""Workspace layout and agent.yaml: models, loader, retired-key rejection.

The names below are loaded on first use, so `import signet_desktop.config.workspace` (which the
hook CLI needs on every prompt) does not pay for pydantic and PyYAML.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from signet_desktop.config.describe import describe_config
    from signet_desktop.config.loader import (
        ConfigError,
        LoadedConfig,
        load_config,
        parse_config_text,
    )
    from signet_desktop.config.models import SignetConfig
    from signet_desktop.config.workspace import WorkspacePaths, resolve_workspace

_HOMES = {
    "ConfigError": "loader",
    "LoadedConfig": "loader",
    "load_config": "loader",
    "parse_config_text": "loader",
    "SignetConfig": "models",
    "describe_config": "describe",
    "WorkspacePaths": "workspace",
    "resolve_workspace": "workspace",
}

__all__ = [
    "ConfigError",
    "LoadedConfig",
    "SignetConfig",
    "WorkspacePaths",
    "describe_config",
    "load_config",
    "parse_config_text",
    "resolve_workspace",
]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
