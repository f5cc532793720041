"""A JSON-able, secret-free view of the loaded config (for `/api/status` and `signet doctor`)."""

from __future__ import annotations

from collections.abc import Mapping

from signet_desktop.config.keys import is_secret_name
from signet_desktop.config.loader import LoadedConfig

REDACTED = "**********"
LOCAL_RATE_LIMITS = "auth.rateLimits (applied only in auth.mode team or hybrid)"


def ignored_keys(loaded: LoadedConfig) -> list[str]:
    """Settings in agent.yaml that this daemon does not apply (for status and `doctor`)."""
    ignored = list(loaded.ignored_keys)
    auth = loaded.config.auth
    # Signet applies no rate limit in local mode, and neither do we: say so when set.
    if auth.mode == "local" and "rate_limits" in auth.model_fields_set:
        ignored.append(LOCAL_RATE_LIMITS)
    return ignored


def describe_config(loaded: LoadedConfig) -> dict[str, object]:
    """The config as YAML names, with every secret replaced by a fixed mask."""
    dumped = loaded.config.model_dump(mode="json", by_alias=True)
    if loaded.config.auth.mode == "local":
        dumped["auth"].pop("rateLimits", None)  # none apply: show none
    ignored = ignored_keys(loaded)
    return {
        "path": None if loaded.path is None else str(loaded.path),
        "config": _redact(dumped),
        "ignoredKeys": ignored,
        "warnings": list(loaded.warnings),
    }


def _redact(value: object) -> object:
    # SecretStr fields already dump masked; this also covers free-form inference entries.
    if isinstance(value, Mapping):
        return {
            key: REDACTED
            if is_secret_name(str(key)) and item is not None and not isinstance(item, Mapping)
            else _redact(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_redact(item) for item in value]
    return value
