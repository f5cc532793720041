"""Errors the core raises; each edge (HTTP, MCP, CLI) maps them to its own status."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any


class SignetError(Exception):
    """Base of the errors a caller can act on. `code` is a stable machine-readable tag.

    `details` carries small facts a client can act on (snake_case names, plain JSON values),
    e.g. the memory's `current_version` beside a version conflict; the edges render them.
    """

    code = "error"

    def __init__(
        self, message: str, *, code: str | None = None, details: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details: Mapping[str, Any] = MappingProxyType(dict(details or {}))


class InvalidInput(SignetError):
    """The request itself is wrong; nothing was written."""

    code = "invalid_input"


def check_match(value: object, pattern: re.Pattern[str], message: str, code: str) -> str:
    """`value` when it is a string `pattern` matches whole; else InvalidInput(message, code)."""
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise InvalidInput(message, code=code)
    return value


class NotFound(SignetError):
    """No such object in this agent's scope."""

    code = "not_found"


class Forbidden(SignetError):
    """The caller may not do this (e.g. read analytics as an agent); nothing was read or written."""

    code = "forbidden"


class Conflict(SignetError):
    """The object is in a state that forbids the change (version, pinned, immutable...)."""

    code = "conflict"


class Unavailable(SignetError):
    """A needed subsystem is down; retrying later may succeed."""

    code = "unavailable"
