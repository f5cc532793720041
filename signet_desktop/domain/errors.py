"""Errors the core raises; each edge (HTTP, MCP, CLI) maps them to its own status."""

from __future__ import annotations


class SignetError(Exception):
    """Base of the errors a caller can act on. `code` is a stable machine-readable tag."""

    code = "error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class InvalidInput(SignetError):
    """The request itself is wrong; nothing was written."""

    code = "invalid_input"


class NotFound(SignetError):
    """No such object in this agent's scope."""

    code = "not_found"


class Conflict(SignetError):
    """The object is in a state that forbids the change (version, pinned, immutable...)."""

    code = "conflict"


class Unavailable(SignetError):
    """A needed subsystem is down; retrying later may succeed."""

    code = "unavailable"
