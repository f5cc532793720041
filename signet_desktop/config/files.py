"""`files.*` of agent.yaml: the server directories callers other than the local user may read."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator

from signet_desktop.config.base import CamelConfigModel

MAX_ROOTS = 64


class FilesConfig(CamelConfigModel):
    """`files`: `roots` are the directories a token holder may name (file documents, folder
    sources, imports, transcript paths). None configured: only the local user reads server
    paths, under its defaults. Credential stores are never read, even under a root."""

    roots: tuple[Path, ...] = Field(default=(), max_length=MAX_ROOTS)

    @field_validator("roots")
    @classmethod
    def _absolute(cls, roots: tuple[Path, ...]) -> tuple[Path, ...]:
        for root in roots:
            if "\x00" in str(root) or not root.expanduser().is_absolute():
                raise ValueError(f"{root} must be an absolute path (or start with ~)")
        return tuple(root.expanduser() for root in roots)
