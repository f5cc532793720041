"""Ingest batches: sized by tokens for the embedder's two threads, by characters for the
remember batcher, in order, every chunk once."""

from __future__ import annotations

from signet_desktop.ingest.chunking import Chunk
from signet_desktop.service.documents.worker import (
    BATCH_CHARS,
    BATCH_CHUNKS,
    BATCH_TOKENS,
    batches,
)


def chunks(tokens: list[int], chars: int = 1000) -> list[Chunk]:
    return [Chunk(i, f"{i:06d}" + "x" * (chars - 6), f"h{i}", n) for i, n in enumerate(tokens)]


def test_full_window_chunks_fill_two_embedder_batches_per_call() -> None:
    made = batches(chunks([254] * 100, chars=900))
    assert [len(b) for b in made[:-1]] == [BATCH_TOKENS // 256] * (len(made) - 1)
    assert [c.index for b in made for c in b] == list(range(100))


def test_characters_and_count_bound_a_batch_too() -> None:
    long = batches(chunks([100] * 40, chars=BATCH_CHARS // 4))
    assert {len(b) for b in long} == {4}
    tiny = batches(chunks([1] * 200, chars=10))
    assert max(len(b) for b in tiny) == BATCH_CHUNKS


def test_a_chunk_over_the_limits_is_a_batch_of_its_own() -> None:
    made = batches(chunks([10, BATCH_TOKENS, 10]))
    assert [[c.index for c in b] for b in made] == [[0], [1], [2]]
    assert batches([]) == []
