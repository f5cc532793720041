"""Turning free text into safe FTS5 tokens: no syntax passes through, stop words dropped."""

from __future__ import annotations

import re
from collections.abc import Sequence

_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
_WORD_PART = re.compile(r"[^\W_]+", re.UNICODE)
MAX_QUERY_TOKENS = 32

STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    done get got s t d ll m o re ve y""".split()
)


def query_tokens(text: str) -> list[str]:
    """Lowercased word tokens of `text`, stop words and 1-letter tokens dropped, deduplicated."""
    seen: dict[str, None] = {}
    for raw in _TOKEN.findall(text.lower()):
        token = raw.replace("’", "'").split("'")[0]
        if len(token) < 2 or token in STOP_WORDS:
            continue
        seen.setdefault(token, None)
        if len(seen) >= MAX_QUERY_TOKENS:
            break
    return list(seen)


def words(text: str) -> set[str]:
    """Every lowercased word of `text` (split at apostrophes too), nothing dropped.

    Every token `query_tokens` makes is among them (it keeps a word's part before an
    apostrophe); a few more may be (the parts after one).
    """
    return set(_WORD_PART.findall(text.lower()))


def match_expression(tokens: Sequence[str]) -> str | None:
    """An FTS5 MATCH string OR-combining quoted tokens, or None when there are none."""
    if not tokens:
        return None
    return " OR ".join('"' + token.replace('"', '""') + '"' for token in tokens)


def fts_match_expression(text: str) -> str | None:
    """The MATCH string for free text (every searchable token, OR-combined)."""
    return match_expression(query_tokens(text))
