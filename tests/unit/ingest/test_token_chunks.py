"""Chunks sized in the embedder's tokens: within the window, covering the text, stable.

Property-style over real text (the repository's own docs: prose, tables, code, paths) mixed
with the text that strains a tokenizer: long words, URLs, base64, CJK with and without spaces,
accents and emoji. Counts are the shipped MiniLM tokenizer's, [CLS]/[SEP] included.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from signet_desktop.embedding.window import TokenWindow, model_window
from signet_desktop.ingest.chunking import Chunk, chunk_text, normalise

ROOT = Path(__file__).resolve().parents[3]
WINDOW = model_window()
POOL = sorted(
    {
        p.strip()
        for name in ("ARCHITECTURE.md", "RECALL.md", "HTTP.md", "GLOSSARY.md")
        for p in (ROOT / "docs" / name).read_text(encoding="utf-8").split("\n\n")
        if p.strip()
    }
)
ACCENTED = ("Ünïcödé", "café", "naïve", "😀", "Ωμέγα", "Привет")


def odd_text(seed: int) -> str:
    """Text a tokenizer finds hard, never periodic (identical chunks are kept once, which a
    coverage check by position would count as a gap)."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    cjk = "".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(rng.randint(50, 900)))
    kinds = [
        "".join(rng.choice(letters) for _ in range(rng.randint(30, 3000))),  # one long word
        "https://example.org/"
        + "/".join(f"seg{rng.randint(0, 10**6)}" for _ in range(rng.randint(5, 400)))
        + f"?q={rng.random()}",
        "".join(rng.choice(letters + "0123456789+/=") for _ in range(rng.randint(100, 4000))),
        cjk,  # no spaces, no sentence ends
        "。".join(cjk[i : i + 40] for i in range(0, len(cjk), 40)) + "。",
        " ".join(f"{rng.choice(ACCENTED)}{rng.randint(0, 99)}" for _ in range(rng.randint(1, 600))),
    ]
    return rng.choice(kinds)


def texts() -> st.SearchStrategy[str]:
    real = st.lists(st.sampled_from(POOL), min_size=1, max_size=30, unique=True)
    odd = st.lists(st.integers(0, 10**9), max_size=4, unique=True)
    return st.builds(
        lambda paragraphs, seeds, where: "\n\n".join(
            _interleave(paragraphs, [odd_text(s) for s in seeds], where)
        ),
        real,
        odd,
        st.randoms(use_true_random=False),
    )


def _interleave(real: list[str], odd: list[str], rng: random.Random) -> list[str]:
    out = list(real)
    for piece in odd:
        out.insert(rng.randint(0, len(out)), piece)
    return out


def limits() -> st.SearchStrategy[tuple[int, int, int, int]]:
    """(size, overlap, tokens, overlap_tokens), each pair valid."""
    return st.integers(32, 256).flatmap(
        lambda tokens: st.tuples(
            st.integers(200, 6000).flatmap(
                lambda size: st.tuples(st.just(size), st.integers(0, size // 4))
            ),
            st.just(tokens),
            st.integers(0, (tokens - 3) // 2),
        ).map(lambda t: (t[0][0], t[0][1], t[1], t[2]))
    )


def chunks_of(text: str, bounds: tuple[int, int, int, int]) -> list[Chunk]:
    size, overlap, tokens, overlap_tokens = bounds
    return chunk_text(
        text, size, overlap, tokens=tokens, overlap_tokens=overlap_tokens, counter=WINDOW
    )


def covered(text: str, chunks: list[Chunk]) -> int:
    """How far, in the text's non-space characters, the chunks cover it without a gap.

    A document's identical chunks are kept once (the docs repeat a table header, say): a gap
    whose text lies whole inside an earlier chunk is that chunk's repeat, not a loss.
    """
    whole = "".join(normalise(text).split())
    pieces = ["".join(chunk.text.split()) for chunk in chunks]
    reach = 0
    for number, piece in enumerate(pieces):
        best, start = -1, whole.find(piece)
        while 0 <= start <= reach:
            best = max(best, start + len(piece))
            start = whole.find(piece, start + 1)
        if best < 0 < start and any(whole[reach:start] in p for p in pieces[:number]):
            best = start + len(piece)  # after a repeat kept once
        reach = max(reach, best)  # an identical chunk kept once adds nothing
    return reach if reach == len(whole) else -reach


FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(texts(), limits())
def test_a_chunk_never_exceeds_the_window_or_the_size(
    text: str, bounds: tuple[int, int, int, int]
) -> None:
    size, _, tokens, _ = bounds
    chunks = chunks_of(text, bounds)
    assert chunks
    for chunk in chunks:
        assert WINDOW.count(chunk.text) + 2 <= tokens, chunk.text[:80]
        assert len(chunk.text) <= size


@FAST
@given(texts(), limits())
def test_every_character_of_the_source_lands_in_a_chunk(
    text: str, bounds: tuple[int, int, int, int]
) -> None:
    chunks = chunks_of(text, bounds)
    assert covered(text, chunks) == len("".join(normalise(text).split()))


@settings(FAST, max_examples=20)
@given(texts(), texts(), limits())
def test_boundaries_are_stable_when_text_is_added_after(
    head: str, tail: str, bounds: tuple[int, int, int, int]
) -> None:
    before = chunks_of(head, bounds)
    after = chunks_of(head + "\n\n" + tail, bounds)
    assert after[: len(before) - 1] == before[:-1]
    assert chunks_of(head, bounds) == before  # and the same text chunks the same way


def test_the_default_window_fills_chunks_and_overlaps_them() -> None:
    text = "\n\n".join(POOL[:200])
    chunks = chunks_of(text, (2000, 200, 256, 32))
    counts = [WINDOW.count(c.text) + 2 for c in chunks]
    assert max(counts) <= 256 and sum(counts) / len(counts) > 160  # packed, not one per line
    shared = sum(1 for a, b in itertools.pairwise(chunks) if b.text[:30] in a.text)
    assert shared > len(chunks) // 2  # most chunks start with the end of the one before


def test_a_token_limit_needs_its_counter() -> None:
    with pytest.raises(ValueError):
        chunk_text("text", 2000, 200, tokens=256)
    with pytest.raises(ValueError):
        chunk_text("text", 2000, 200, counter=WINDOW)
    with pytest.raises(ValueError):
        chunk_text("text", 2000, 200, tokens=64, overlap_tokens=62, counter=WINDOW)


def test_the_counter_cuts_on_token_boundaries() -> None:
    window: TokenWindow = WINDOW
    text = "supercalifragilistic https://example.com/a 東京"
    assert window.count(text) == window.counts([text, "x"])[0] > 3
    head = text[: window.head_end(text, 3)]
    assert window.count(head) == 3
    tail = text[window.tail_start(text, 2) :]
    assert tail == "東京" and window.count(tail) == 2
    assert window.head_end(text, 1000) == len(text) and window.tail_start(text, 1000) == 0
