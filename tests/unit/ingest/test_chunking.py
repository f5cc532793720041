"""Chunking: sizes, boundaries, overlap, normalisation, dedupe and determinism."""

from __future__ import annotations

import itertools

import pytest

from signet_desktop.ingest.chunking import chunk_text, normalise

SENTENCE = "The quick brown fox jumps over the lazy dog near the river bank."


def paragraphs(n: int, sentences: int = 4) -> str:
    return "\n\n".join(f"P{i}. " + " ".join([SENTENCE] * sentences) for i in range(n))


def test_chunks_respect_the_size_and_end_on_boundaries() -> None:
    chunks = chunk_text(paragraphs(60), 2000, 200)
    assert len(chunks) > 5
    assert all(len(c.text) <= 2000 for c in chunks)
    for chunk in chunks:
        assert chunk.text.endswith(".")  # whole sentences, never a cut word
    assert [c.index for c in chunks] == list(range(len(chunks)))


def test_each_chunk_starts_with_the_end_of_the_previous_one() -> None:
    chunks = chunk_text(paragraphs(40), 1000, 300)
    for before, after in itertools.pairwise(chunks):
        head = after.text[:60]
        assert head in before.text, (head, before.text[-300:])


def test_a_paragraph_longer_than_a_chunk_is_split_by_sentences_then_words() -> None:
    sentences = " ".join(f"Sentence {n} is about the fox." for n in range(100))
    token = "".join(str(n) for n in range(1500))  # no spaces: split hard at the limit
    chunks = chunk_text(sentences + " " + token, 500, 50)
    assert all(len(c.text) <= 500 for c in chunks)
    joined = "".join(c.text for c in chunks)
    assert all(f"Sentence {n} is about the fox." in joined for n in range(100))
    assert token in "".join(c.text for c in chunks if " " not in c.text)


def test_normalisation_and_identical_chunks() -> None:
    assert normalise("a\r\nb\x07  c\n\n\n\nd\t e") == "a\nb c\n\nd e"
    repeated = "\n\n".join(["Same footer on every page. " * 30] * 5)
    assert len(chunk_text(repeated, 900, 0)) == 1


def test_chunking_is_deterministic_and_checks_its_numbers() -> None:
    text = paragraphs(30)
    assert chunk_text(text, 700, 100) == chunk_text(text, 700, 100)
    assert chunk_text("", 700, 100) == []
    with pytest.raises(ValueError):
        chunk_text(text, 100, 100)


def test_closing_quotes_and_brackets_after_a_sentence_end_are_kept() -> None:
    # A paragraph split into sentences used to lose what closed them: `")` after `?` went
    # with the space the split removed.
    text = " ".join(
        f'Sentence {n} asks ("how often do we ship?") and says "yes."' for n in range(40)
    )
    chunks = chunk_text(text, 300, 0)
    assert "".join("".join(c.text for c in chunks).split()) == "".join(text.split())
