"""Feedback values: an agent's ratings of recalled memories, and the checks a rating passes."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from signet_desktop.domain.control_text import first_control
from signet_desktop.domain.errors import InvalidInput

MAX_RATINGS = 200  # per call, as Signet's batch caps
MAX_MEMORY_ID_CHARS = 256
MIN_SCORE, MAX_SCORE = -1.0, 1.0


@dataclass(frozen=True, slots=True)
class MemoryRating:
    """One memory's feedback in one session: the running mean and how many ratings made it."""

    memory_id: str
    score: float
    ratings: int
    injected: bool  # the hooks had put it into that session's context


@dataclass(frozen=True, slots=True)
class FeedbackOutcome:
    """What one call recorded."""

    session_key: str
    rated: tuple[MemoryRating, ...]


def check_ratings(ratings: object) -> dict[str, float]:
    """`{memory id: score}` with 1..200 entries, each score a number in -1..1."""
    if not isinstance(ratings, Mapping) or not ratings:
        raise InvalidInput(
            "ratings must be a non-empty object of memory id to score (-1..1)",
            code="ratings_invalid",
        )
    if len(ratings) > MAX_RATINGS:
        raise InvalidInput(
            f"at most {MAX_RATINGS} ratings per call (got {len(ratings)})", code="ratings_invalid"
        )
    checked: dict[str, float] = {}
    for memory_id, score in ratings.items():
        _check_id(memory_id)
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise InvalidInput(f"rating of {memory_id} must be a number", code="ratings_invalid")
        if not math.isfinite(score) or not MIN_SCORE <= score <= MAX_SCORE:
            raise InvalidInput(
                f"rating of {memory_id} must be between -1 and 1", code="ratings_invalid"
            )
        checked[memory_id] = float(score)
    return checked


def _check_id(memory_id: object) -> None:
    if (
        not isinstance(memory_id, str)
        or not memory_id
        or len(memory_id) > MAX_MEMORY_ID_CHARS
        or first_control(memory_id, identifier=True) is not None
    ):
        raise InvalidInput(
            f"a rated memory id must be 1-{MAX_MEMORY_ID_CHARS} printable characters",
            code="ratings_invalid",
        )
