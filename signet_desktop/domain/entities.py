"""Entity names: the one canonical form every graph lookup and write compares."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_SPACE = re.compile(r"\s+")
_EDGE_PUNCTUATION = ".,;:!?\"'()[]{}<>«»“”‘’"


def canonical_entity_name(name: str) -> str:
    """NFKC, case-folded, whitespace collapsed, punctuation trimmed from both ends.

    `"Postgres 16"`, `" postgres  16. "` and `"POSTGRES 16"` are one name.
    """
    text = unicodedata.normalize("NFKC", name).casefold()
    return _SPACE.sub(" ", text).strip().strip(_EDGE_PUNCTUATION).strip()


@dataclass(frozen=True, slots=True)
class EntityMatch:
    """An existing entity a memory mentions, by which words, and how sure."""

    entity_id: str
    mention_text: str
    confidence: float


@dataclass(frozen=True, slots=True)
class Mention:
    """A stored link from a memory to an entity: through which words, how sure, since when."""

    memory_id: str
    entity_id: str
    entity_name: str
    mention_text: str | None
    confidence: float
    created_at: str
