"""Content normalisation and hashing used for dedupe."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache

_WHITESPACE = re.compile(r"\s+")
_TRAILING_PUNCTUATION = re.compile(r"[\s.!?;:,]+$")


@lru_cache(maxsize=512)  # one remember normalises its text up to four times (dedupe, row, hash)
def normalize_content(content: str) -> str:
    """Lowercased, NFKC, whitespace-collapsed, trailing punctuation stripped."""
    text = unicodedata.normalize("NFKC", content).lower()
    text = _WHITESPACE.sub(" ", text).strip()
    return _TRAILING_PUNCTUATION.sub("", text)


@lru_cache(maxsize=512)
def content_hash(content: str) -> str:
    """sha256 hex of the normalised content: the dedupe key within an agent scope."""
    return hashlib.sha256(normalize_content(content).encode("utf-8")).hexdigest()
