"""Remember-time mention candidates: the proper-noun phrases of a memory's text.

A candidate is a run of capitalised tokens (a capital anywhere: `Alice`, `PostgreSQL`,
`iPhone`, `AWS`), a number may follow a capitalised token (`Postgres 16`), and every
contiguous sub-phrase of a run counts too (`Alice Smith` offers `Alice` and `Smith`).
Candidates only ever link to entities that already exist (storage/mentions.py); the longest
matching phrase wins where matches overlap, so `Alice Smith` does not also link `Alice`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from signet_desktop.domain.entities import EntityMatch, canonical_entity_name

MAX_PHRASE_TOKENS = 5
MAX_CANDIDATES = 256  # per memory: a list of 10,000 names links nothing past this
_TOKEN = re.compile(r"[^\W_][\w.+#&'-]*[\w+#]|[^\W_]", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A phrase of the text, its canonical name and its token span [start, end)."""

    text: str
    canonical: str
    start: int
    end: int


def _is_proper(token: str) -> bool:
    return token != token.lower()  # a capital letter anywhere


def _runs(tokens: list[re.Match[str]]) -> list[tuple[int, int]]:
    """[start, end) spans of tokens that form proper-noun runs."""
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for index, match in enumerate(tokens):
        token = match.group(0)
        joins = start is not None and _adjacent(tokens[index - 1], match)
        if _is_proper(token) or (joins and token.isdigit()):
            if start is None or not joins:
                if start is not None:
                    runs.append((start, index))
                start = index
            continue
        if start is not None:
            runs.append((start, index))
            start = None
    if start is not None:
        runs.append((start, len(tokens)))
    return runs


def _adjacent(left: re.Match[str], right: re.Match[str]) -> bool:
    """Only spaces between the two tokens (a comma or full stop ends a phrase)."""
    gap = left.string[left.end() : right.start()]
    return gap.strip(" ") == "" and len(gap) <= 2


def candidates(text: str) -> list[Candidate]:
    """Every proper-noun phrase and sub-phrase of `text` (each place it occurs), longest first."""
    tokens = list(_TOKEN.finditer(text))
    found: dict[tuple[str, int], Candidate] = {}
    for run_start, run_end in _runs(tokens):
        for length in range(min(MAX_PHRASE_TOKENS, run_end - run_start), 0, -1):
            for start in range(run_start, run_end - length + 1):
                end = start + length
                phrase = text[tokens[start].start() : tokens[end - 1].end()]
                if length == 1 and phrase.isdigit():
                    continue
                canonical = canonical_entity_name(phrase)
                if canonical and (canonical, start) not in found:
                    found[(canonical, start)] = Candidate(phrase, canonical, start, end)
                if len(found) >= MAX_CANDIDATES:
                    return _longest_first(found)
    return _longest_first(found)


def _longest_first(found: Mapping[tuple[str, int], Candidate]) -> list[Candidate]:
    return sorted(found.values(), key=lambda c: (-(c.end - c.start), c.start))


def resolve(found: list[Candidate], known: Mapping[str, tuple[str, float]]) -> list[EntityMatch]:
    """The matches to link: `known` maps canonical names to (entity id, confidence).

    Longest phrases first; a phrase overlapping one already matched is skipped; one row per
    entity (its first, longest mention).
    """
    taken: list[tuple[int, int]] = []
    linked: dict[str, EntityMatch] = {}
    for candidate in found:
        hit = known.get(candidate.canonical)
        if hit is None:
            continue
        if any(candidate.start < end and start < candidate.end for start, end in taken):
            continue
        entity_id, confidence = hit
        taken.append((candidate.start, candidate.end))
        if entity_id not in linked:
            linked[entity_id] = EntityMatch(entity_id, candidate.text, confidence)
    return list(linked.values())
