"""argparse `type=` converters with clear messages: integers, unit floats, tags, time bounds."""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta


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


RELATIVE_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
TIME_FORMATS = (
    "an ISO date or time (2025-01-31, 2025-01-31T12:00), today, yesterday, "
    "or an age such as 30m, 2h, 7d, 4w"
)


def time_bound(text: str, *, now: datetime | None = None) -> str:
    """`--since` / `--until`: ISO dates and times as given, or relative ones made absolute (UTC)."""
    value = text.strip().lower()
    moment = now or datetime.now(UTC)
    if value in ("today", "yesterday"):
        midnight = moment.replace(hour=0, minute=0, second=0, microsecond=0)
        day = midnight - timedelta(days=1 if value == "yesterday" else 0)
        return day.isoformat(timespec="seconds").replace("+00:00", "Z")
    match = re.fullmatch(r"(\d{1,6})\s*([mhdw])", value)
    if match:
        amount, unit = int(match.group(1)), RELATIVE_UNITS[match.group(2)]
        since = moment - timedelta(**{unit: amount})
        return since.isoformat(timespec="seconds").replace("+00:00", "Z")
    return iso_time(text, TIME_FORMATS)


def iso_time(text: str, formats: str = "an ISO date or time (2025-01-31, 2025-01-31T12:00)") -> str:
    """An ISO-8601 date or time, as given (stripped); else an argparse error naming `formats`."""
    try:
        datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time; use {formats}") from None
    return text.strip()
