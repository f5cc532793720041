"""Small helpers both wire formats use to read a decoded body defensively."""

from __future__ import annotations

from typing import Any


class ShapeError(ValueError):
    """The body does not have the shape the API documents; the message says where."""


def field(obj: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """`obj[key]`, which must be of `kind`; ShapeError otherwise."""
    if not isinstance(obj, dict) or key not in obj:
        raise ShapeError(f"{where}.{key} is missing")
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ShapeError(f"{where}.{key} has the wrong type ({type(value).__name__})")
    return value


def count(obj: Any, key: str) -> int:
    """A non-negative token count from a usage object; 0 when absent or not a number."""
    if not isinstance(obj, dict):
        return 0
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return 0
    return int(value)
