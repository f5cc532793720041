"""Validation of a remember request's content and fields (pure; no I/O)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.memory import MEMORY_TYPES

MAX_CONTENT_CHARS = 100_000
MAX_TAGS = 50
MAX_TAG_CHARS = 100
MAX_FIELD_CHARS = 512

_CRITICAL_PREFIX = re.compile(r"^\s*critical:\s*", re.IGNORECASE)
_TAGS_PREFIX = re.compile(r"^\s*\[([^\]\n]{1,500})\]:\s*")


def check_content(content: str) -> str:
    """Return stripped content, or raise InvalidInput saying what is wrong with it."""
    stripped = content.strip()
    if not stripped:
        raise InvalidInput("content is empty", code="content_empty")
    if "\x00" in content:
        raise InvalidInput("content contains a NUL byte", code="content_invalid")
    if len(stripped) > MAX_CONTENT_CHARS:
        raise InvalidInput(
            f"content is {len(stripped):,} characters; the limit is {MAX_CONTENT_CHARS:,} "
            "(split it into several memories, one fact or decision each)",
            code="content_too_long",
        )
    return stripped


def parse_prefixes(content: str) -> tuple[str, bool, tuple[str, ...]]:
    """Signet's shorthand: `critical:` pins, `[t1,t2]:` tags. Returns (content, critical, tags)."""
    critical = False
    tags: tuple[str, ...] = ()
    match = _CRITICAL_PREFIX.match(content)
    if match:
        critical = True
        content = content[match.end() :]
    match = _TAGS_PREFIX.match(content)
    if match:
        tags = tuple(t.strip() for t in match[1].split(",") if t.strip())
        content = content[match.end() :]
    return content, critical, tags


def check_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Deduplicated, trimmed tags within the size limits."""
    seen: dict[str, None] = {}
    for tag in tags:
        clean = tag.strip()
        if not clean:
            continue
        if len(clean) > MAX_TAG_CHARS or "\x00" in clean:
            raise InvalidInput(f"tag {clean[:40]!r}... is too long or invalid", code="tags_invalid")
        seen.setdefault(clean, None)
    if len(seen) > MAX_TAGS:
        raise InvalidInput(f"at most {MAX_TAGS} tags are allowed", code="tags_invalid")
    return tuple(seen)


def check_importance(value: float) -> float:
    """Importance must be a finite number in [0, 1]."""
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InvalidInput("importance must be between 0 and 1", code="importance_invalid")
    return value


def check_type(value: str) -> str:
    """One of the known memory types."""
    if value not in MEMORY_TYPES:
        known = ", ".join(sorted(MEMORY_TYPES))
        raise InvalidInput(f"unknown memory type {value!r}; use one of: {known}", code="bad_type")
    return value


def check_text_field(name: str, value: str | None) -> str | None:
    """Short free-text fields (who, project, source ids...): bounded, no NUL."""
    if value is None:
        return None
    if "\x00" in value or len(value) > MAX_FIELD_CHARS:
        raise InvalidInput(f"{name} is too long or contains a NUL byte", code="field_invalid")
    return value.strip() or None
