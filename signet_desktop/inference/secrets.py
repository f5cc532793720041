"""Resolve an API key written as a reference: `$secret:NAME`, `${VAR}` or `$VAR`.

`$secret:NAME` (Signet's form) is looked up as the environment variable `SIGNET_SECRET_NAME`,
then `NAME`, then the file `<secrets_dir>/NAME` (first line): the default agent's secret as
`signet secret put` / `POST /api/secrets/NAME` store it (inference/secret_store.py).
`${VAR}` / `$VAR` read the environment. Any other value is the key itself. Values stay
`SecretStr` throughout; errors name the reference and where to set it, never a value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from pydantic import SecretStr

from signet_desktop.inference.errors import ProviderNotConfigured

_SECRET_REF = re.compile(r"^\$secret:([A-Za-z0-9_.\-]+)$")
_ENV_REF = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$|^\$([A-Za-z_][A-Za-z0-9_]*)$")


def env_name(secret: str) -> str:
    """`SIGNET_SECRET_<NAME>` for a secret name (non-alphanumerics become `_`)."""
    return "SIGNET_SECRET_" + re.sub(r"[^A-Za-z0-9]", "_", secret).upper()


def resolve_secret(
    value: SecretStr,
    *,
    key_path: str,
    env: Mapping[str, str],
    secrets_dir: Path | None = None,
) -> SecretStr:
    """The key `value` stands for; ProviderNotConfigured when a reference is not set."""
    text = value.get_secret_value().strip()
    match = _SECRET_REF.match(text)
    if match:
        name = match.group(1)
        for candidate in (env_name(name), name):
            found = env.get(candidate, "").strip()
            if found:
                return SecretStr(found)
        from_file = _read_secret_file(secrets_dir, name)
        if from_file:
            return SecretStr(from_file)
        where = (
            f", or store it with `signet secret put {name}` (the file {secrets_dir / name})"
            if secrets_dir is not None
            else ""
        )
        raise ProviderNotConfigured(
            f"{key_path} refers to $secret:{name}, which is not set; "
            f"export {env_name(name)} (or {name}){where}"
        )
    match = _ENV_REF.match(text)
    if match:
        name = match.group(1) or match.group(2)
        found = env.get(name, "").strip()
        if not found:
            raise ProviderNotConfigured(
                f"{key_path} refers to the environment variable {name}, which is not set"
            )
        return SecretStr(found)
    return SecretStr(text)


def _read_secret_file(secrets_dir: Path | None, name: str) -> str:
    if secrets_dir is None or name.startswith("."):
        return ""
    try:
        lines = (secrets_dir / name).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return ""
    return lines[0].strip() if lines else ""
