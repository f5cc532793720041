"""Split a document's text into overlapping chunks on paragraph and sentence boundaries.

Text is normalised first (NFC, `\\n` line ends, control characters dropped, runs of blank
lines and spaces collapsed). Paragraphs are packed into chunks within the `Limits`: at most
`size` characters and, when a token counter is given, at most `tokens` tokens of the
embedder's window including its [CLS]/[SEP] (so the vector covers every character of the
chunk). A paragraph over the limits is split into sentences, a sentence over them at the last
space before the limit (or at a token boundary, for text without spaces). Each chunk after
the first starts with the end of the previous one (at most `overlap` characters and
`overlap_tokens` tokens), cut at a sentence or word boundary, so a fact split across two
chunks is whole in one of them. Chunks are hashed with the memory dedupe hash
(`domain/content.py`): an identical chunk inside one document is kept once. The result
depends only on the text, the limits and the tokenizer, so a retried or resumed ingest makes
the same chunks in the same order.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from signet_desktop.domain.content import content_hash

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SPACES = re.compile(r"[ \t\u00a0]+")
_BLANK_LINES = re.compile(r"\n\s*\n+")
# a sentence's end: its mark, any closing quotes or brackets (kept), then the space (group 1)
_SENTENCE_END = re.compile(r"[.!?。！？][\"'”’)\]]*(\s+)")
_JOIN = "\n\n"
SPECIAL_TOKENS = 2  # [CLS] and [SEP] take two places of the window


class TokenCounter(Protocol):
    """The embedder's tokenizer as chunking needs it (`embedding/window.py: TokenWindow`)."""

    def counts(self, texts: Sequence[str]) -> list[int]: ...

    def count(self, text: str) -> int: ...

    def head_end(self, text: str, tokens: int) -> int: ...

    def tail_start(self, text: str, tokens: int) -> int: ...


@dataclass(frozen=True, slots=True)
class Limits:
    """A chunk's bounds: characters always; tokens (the window, [CLS]/[SEP] included) when a
    counter is given. The overlap has both bounds too; the tighter one wins."""

    size: int
    overlap: int
    tokens: int | None = None
    overlap_tokens: int = 0

    def __post_init__(self) -> None:
        if self.size < 1 or not 0 <= self.overlap < self.size:
            raise ValueError("need size >= 1 and 0 <= overlap < size")
        if self.tokens is not None and not (
            self.tokens > SPECIAL_TOKENS and 0 <= self.overlap_tokens < self.tokens - SPECIAL_TOKENS
        ):
            raise ValueError("need tokens > 2 and 0 <= overlap_tokens < tokens - 2")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk: its position among the document's distinct chunks, text and dedupe hash."""

    index: int
    text: str
    content_hash: str
    tokens: int = 0  # without [CLS]/[SEP]; 0 when chunks are sized in characters only


@dataclass(frozen=True, slots=True)
class _Unit:
    text: str
    tokens: int  # 0 when chunks are sized in characters only


def normalise(text: str) -> str:
    """The text chunking sees: NFC, `\\n` line ends, no control characters, tidy whitespace."""
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text)
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def chunk_text(
    text: str,
    size: int,
    overlap: int,
    *,
    tokens: int | None = None,
    overlap_tokens: int = 0,
    counter: TokenCounter | None = None,
) -> list[Chunk]:
    """The document's distinct chunks, in order (see the module docstring); `tokens` needs
    the `counter` that measures them."""
    if (tokens is None) != (counter is None):
        raise ValueError("a token limit needs a token counter and the other way round")
    sizer = _Sizer(Limits(size, overlap, tokens, overlap_tokens), counter)
    seen: set[str] = set()
    chunks: list[Chunk] = []
    for piece, count in sizer.pack(list(sizer.units(normalise(text)))):
        digest = content_hash(piece)
        if digest in seen:
            continue
        seen.add(digest)
        chunks.append(Chunk(len(chunks), piece, digest, count))
    return chunks


class _Sizer:
    """The limits and the counter together: what fits, how units split, pack and overlap."""

    def __init__(self, limits: Limits, counter: TokenCounter | None) -> None:
        self.limits = limits
        self.counter = counter
        # content tokens a chunk may hold (the window less [CLS]/[SEP])
        self.room = (limits.tokens - SPECIAL_TOKENS) if limits.tokens is not None else 0

    def fits(self, chars: int, tokens: int) -> bool:
        return chars <= self.limits.size and (self.counter is None or tokens <= self.room)

    def counts(self, texts: Sequence[str]) -> list[int]:
        return self.counter.counts(texts) if self.counter is not None else [0] * len(texts)

    def units(self, text: str) -> Iterator[_Unit]:
        """Paragraphs within the limits; others as sentences, then as word runs."""
        paragraphs = [p for p in text.split(_JOIN) if p]
        for paragraph, count in zip(paragraphs, self.counts(paragraphs), strict=True):
            if self.fits(len(paragraph), count):
                yield _Unit(paragraph, count)
                continue
            sentences = [s for s in _sentences(paragraph) if s]
            for sentence, n in zip(sentences, self.counts(sentences), strict=True):
                yield from self._hard_split(sentence, n)

    def _hard_split(self, text: str, count: int) -> Iterator[_Unit]:
        while text and not self.fits(len(text), count):
            cut = self._cut(text)
            piece = text[:cut].strip()
            if piece:
                yield _Unit(piece, self.counts([piece])[0])
            text = text[cut:].strip()
            # a text longer than `size` cannot fit: count only what may
            count = self.counts([text])[0] if len(text) <= self.limits.size else 0
        if text:
            yield _Unit(text, count)

    def _cut(self, text: str) -> int:
        """Where the head of `text` that fits ends: the last space before the limit when it
        is past half of it, else the limit itself (a token boundary when counting tokens)."""
        limit = min(len(text), self.limits.size)
        if self.counter is not None:
            room = self.room
            while True:  # WordPiece counts of a cut word may not add up: check the head
                limit = max(1, self.counter.head_end(text[:limit], room))
                if self.counter.count(text[:limit]) <= self.room or room <= 1:
                    break
                room -= 1
        space = text.rfind(" ", 0, limit + 1)
        return space if space > limit // 2 else limit

    def pack(self, units: list[_Unit]) -> Iterator[tuple[str, int]]:
        """(chunk text, its tokens) in order."""
        current: list[_Unit] = []
        chars = tokens = 0
        fresh = False  # the current chunk has a unit beyond its overlap
        for unit in units:
            if current and not self.fits(chars + len(_JOIN) + len(unit.text), tokens + unit.tokens):
                if fresh:
                    yield _JOIN.join(u.text for u in current), tokens
                current = self._tail(current)
                chars, tokens = _measure(current)
                if current and not self.fits(
                    chars + len(_JOIN) + len(unit.text), tokens + unit.tokens
                ):
                    current, chars, tokens = [], 0, 0
            chars += len(unit.text) + (len(_JOIN) if current else 0)
            tokens += unit.tokens
            current.append(unit)
            fresh = True
        if current and fresh:
            yield _JOIN.join(u.text for u in current), tokens

    def _tail(self, units: list[_Unit]) -> list[_Unit]:
        """The end of a chunk within the overlap limits, cut at a sentence or word boundary."""
        overlap, overlap_tokens = self.limits.overlap, self.limits.overlap_tokens
        counting = self.counter is not None
        if overlap <= 0 or (counting and overlap_tokens <= 0):
            return []
        taken: list[_Unit] = []
        for unit in reversed(units):
            chars, tokens = _measure([unit, *taken])
            if chars > overlap or (counting and tokens > overlap_tokens):
                break
            taken.insert(0, unit)
        if taken:
            return taken
        last = units[-1].text
        start = max(0, len(last) - overlap)
        if self.counter is not None:
            start = max(start, self.counter.tail_start(last, overlap_tokens))
        window = last[start:]
        sentence = _SENTENCE_END.search(window)
        if sentence is not None and sentence.end() < len(window):
            kept = window[sentence.end() :].strip()
        else:
            space = window.find(" ")
            kept = window[space + 1 :].strip() if 0 <= space < len(window) - 1 else ""
        return [_Unit(kept, self.counts([kept])[0])] if kept else []


def _sentences(paragraph: str) -> Iterator[str]:
    """The paragraph cut at the spaces after sentence ends (closing quotes stay with theirs)."""
    start = 0
    for end in _SENTENCE_END.finditer(paragraph):
        yield paragraph[start : end.start(1)].strip()
        start = end.end(1)
    yield paragraph[start:].strip()


def _measure(units: Sequence[_Unit]) -> tuple[int, int]:
    """(characters, tokens) of units joined into one chunk."""
    if not units:
        return 0, 0
    chars = sum(len(u.text) for u in units) + len(_JOIN) * (len(units) - 1)
    return chars, sum(u.tokens for u in units)
