"""argparse `type=` converters with clear messages: bounded integers, unit floats, tag lists."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """An integer in [low, high]; `--limit 0` or `--limit -3` is an argparse error."""

    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}, got {value}")
        return value

    convert.__name__ = "integer"
    return convert


def unit_float(text: str) -> float:
    """A finite number in [0, 1] (importance, scores)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text}")
    return value


def tag_list(text: str) -> list[str]:
    """Comma-separated tags, trimmed, empties dropped: `-t "infra, db"` -> ["infra", "db"]."""
    tags = [part.strip() for part in text.split(",") if part.strip()]
    if not tags:
        raise argparse.ArgumentTypeError("expected at least one tag, e.g. -t infra,db")
    return tags


def non_empty(text: str) -> str:
    """A string that is not blank (reasons, ids)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text.strip()
