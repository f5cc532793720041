"""A relative question whose answer depends on when it is asked (recall's `as_of`)."""

from __future__ import annotations

from typing import Any

# Two memories alike but for the service and the day they were written; each says
# "yesterday", which is resolved against its own createdAt when it is written.
EARLY = ("I deployed the billing service yesterday", "2025-03-05T10:00:00Z")  # -> 4 March 2025
LATE = ("I deployed the search service yesterday", "2026-11-25T10:00:00Z")  # -> 24 Nov 2026
QUESTION = "what did I deploy last week?"
EARLY_AS_OF = "2025-03-12"  # a Wednesday: last week is 3-9 March 2025
LATE_AS_OF = "2026-12-02T09:00:00Z"  # a Wednesday: last week is 23-29 November 2026
# Calibrated lexical scores weigh terms by IDF: a workspace needs other memories too.
BACKGROUND = (
    "The on-call rotation changes every Monday",
    "Logs are shipped to the central collector",
    "Feature flags live in the settings service",
    "Backups run every night at two",
    "Invoices are emailed as PDF files",
    "Design reviews happen in the studio room",
)


def remember_bodies() -> list[dict[str, Any]]:
    """POST /api/memory/remember bodies: the background, then both deploys with their dates."""
    dated = [{"content": text, "createdAt": when} for text, when in (EARLY, LATE)]
    return [{"content": text} for text in BACKGROUND] + dated


def first_content(answer: dict[str, Any]) -> str:
    """The text of a recall answer's first result."""
    results = answer["results"]
    assert results, answer
    return str(results[0]["content"])


def time_stage_raised(hit: dict[str, Any]) -> bool:
    """Did the `time` stage raise this hit (its adjustment names the question's window)?"""
    return any(a["stage"] == "time" for a in hit.get("adjustments", []))
