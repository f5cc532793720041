"""Split a document's text into overlapping chunks on paragraph and sentence boundaries.

Text is normalised first (NFC, `\\n` line ends, control characters dropped, runs of blank
lines and spaces collapsed). Paragraphs are packed into chunks of at most `size` characters;
a paragraph longer than that is split into sentences, a sentence longer than that at the last
space before the limit (or hard, for text without spaces). Each chunk after the first starts
with up to `overlap` characters taken from the end of the previous one, cut at a sentence or
word boundary, so a fact split across two chunks is whole in one of them. Chunks are hashed
with the memory dedupe hash (`domain/content.py`): an identical chunk inside one document
is kept once. The result depends only on the text and the two numbers, so a retried or
resumed ingest makes the same chunks in the same order.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from signet_desktop.domain.content import content_hash

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SPACES = re.compile(r"[ \t\u00a0]+")
_BLANK_LINES = re.compile(r"\n\s*\n+")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])[\"'”’)\]]*\s+")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk: its position among the document's distinct chunks, text and dedupe hash."""

    index: int
    text: str
    content_hash: str


def normalise(text: str) -> str:
    """The text chunking sees: NFC, `\\n` line ends, no control characters, tidy whitespace."""
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text)
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def chunk_text(text: str, size: int, overlap: int) -> list[Chunk]:
    """The document's distinct chunks, in order (see the module docstring)."""
    if size < 1 or not 0 <= overlap < size:
        raise ValueError("need size >= 1 and 0 <= overlap < size")
    seen: set[str] = set()
    chunks: list[Chunk] = []
    for piece in _pack(list(_units(normalise(text), size)), size, overlap):
        digest = content_hash(piece)
        if digest in seen:
            continue
        seen.add(digest)
        chunks.append(Chunk(len(chunks), piece, digest))
    return chunks


def _units(text: str, size: int) -> Iterator[str]:
    """Paragraphs no longer than `size`; longer ones as sentences, then as word runs."""
    for paragraph in text.split("\n\n"):
        if len(paragraph) <= size:
            if paragraph:
                yield paragraph
            continue
        for sentence in _SENTENCE_END.split(paragraph):
            yield from _hard_split(sentence.strip(), size)


def _hard_split(text: str, size: int) -> Iterator[str]:
    while len(text) > size:
        cut = text.rfind(" ", 0, size + 1)
        cut = cut if cut > size // 2 else size
        yield text[:cut].strip()
        text = text[cut:].strip()
    if text:
        yield text


def _pack(units: list[str], size: int, overlap: int) -> Iterator[str]:
    current: list[str] = []
    length = 0
    fresh = False  # the current chunk has a unit beyond its overlap
    for unit in units:
        needed = len(unit) + (2 if current else 0)
        if current and length + needed > size:
            if fresh:
                yield "\n\n".join(current)
            current = _tail(current, overlap)
            length = len("\n\n".join(current))
            if current and length + len(unit) + 2 > size:
                current, length = [], 0
            needed = len(unit) + (2 if current else 0)
        current.append(unit)
        length += needed
        fresh = True
    if current and fresh:
        yield "\n\n".join(current)


def _tail(units: list[str], overlap: int) -> list[str]:
    """The end of a chunk, at most `overlap` characters, cut at a sentence or word boundary."""
    if overlap <= 0:
        return []
    last = units[-1]
    if len(last) <= overlap:
        taken: list[str] = []
        total = 0
        for unit in reversed(units):
            if total + len(unit) + (2 if taken else 0) > overlap:
                break
            taken.insert(0, unit)
            total += len(unit) + (2 if len(taken) > 1 else 0)
        return taken
    window = last[-overlap:]
    sentence = _SENTENCE_END.search(window)
    if sentence is not None and sentence.end() < len(window):
        return [window[sentence.end() :].strip()]
    space = window.find(" ")
    return [window[space + 1 :].strip()] if 0 <= space < len(window) - 1 else []
