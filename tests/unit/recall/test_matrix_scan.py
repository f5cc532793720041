"""The in-memory matrix's exact top-k, scanned in float32 alone or screened by its int8 codes."""

from __future__ import annotations

import numpy as np
import pytest

from signet_desktop.recall import matrix
from signet_desktop.recall.matrix import MatrixView
from signet_desktop.recall.screen import code_rows


def unit_rows(rows: int, dims: int = 16, seed: int = 3) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((rows, dims)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def brute_force(view: MatrixView, query: np.ndarray, count: int) -> list[int]:
    sims = view.vectors @ query
    return [int(view.ids[i]) for i in np.lexsort((np.arange(len(sims)), -sims))[:count]]


def coded_view(ids: np.ndarray, vectors: np.ndarray) -> MatrixView:
    return MatrixView(ids, vectors, code_rows(vectors))


@pytest.mark.parametrize("screen_min_rows", [1, 10**9])  # always screened, never
@pytest.mark.parametrize("count", [1, 10, 50, 5000])
def test_top_is_the_exact_best_first_whether_screened_or_not(
    monkeypatch: pytest.MonkeyPatch, screen_min_rows: int, count: int
) -> None:
    monkeypatch.setattr(matrix, "SCREEN_MIN_ROWS", screen_min_rows)
    vectors = unit_rows(3001)
    view = coded_view(np.arange(100, 3101, dtype=np.int64), vectors)
    query = unit_rows(1, seed=8)[0]
    top = view.top(query, count)
    assert [embedding_id for embedding_id, _ in top] == brute_force(view, query, count)
    assert len(top) == min(count, 3001)
    cosines = [cosine for _, cosine in top]
    assert cosines == sorted(cosines, reverse=True)
    assert cosines[0] == pytest.approx(float((vectors @ query).max()), abs=1e-6)


def test_equal_cosines_come_in_row_order_when_screened(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(matrix, "SCREEN_MIN_ROWS", 1)
    row = unit_rows(1)[0]
    others = unit_rows(60, seed=5)
    vectors = np.concatenate([others[:30], np.stack([row] * 6), others[30:]])
    ids = np.arange(len(vectors), 0, -1, dtype=np.int64)  # the ties at rows 30-35: ids 36-31
    view = coded_view(ids, vectors)
    assert [embedding_id for embedding_id, _ in view.top(row, 4)] == [36, 35, 34, 33]


@pytest.mark.parametrize("seed", range(20))
def test_crowded_near_ties_never_change_the_screened_top(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Real-looking crowding: blends of a few directions, so many cosines sit within the
    int8 error of the threshold; the screen must still return the float32 scan's ranking."""
    monkeypatch.setattr(matrix, "SCREEN_MIN_ROWS", 1)
    rng = np.random.default_rng(seed)
    base = unit_rows(8, dims=384, seed=seed)
    mix = rng.dirichlet(np.full(8, 0.3), size=6000).astype(np.float32)
    vectors = mix @ base + rng.normal(0, 0.01, (6000, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    view = coded_view(np.arange(6000, dtype=np.int64), vectors)
    query = vectors[int(rng.integers(6000))] + rng.normal(0, 0.02, 384).astype(np.float32)
    query /= np.linalg.norm(query)
    for count in (10, 60):
        top = view.top(query, count)
        assert [embedding_id for embedding_id, _ in top] == brute_force(view, query, count)


def test_an_empty_view_or_no_count_finds_nothing() -> None:
    view = MatrixView(np.zeros(0, dtype=np.int64), np.zeros((0, 16), dtype=np.float32))
    assert view.top(unit_rows(1)[0], 5) == []
    assert MatrixView(np.arange(3, dtype=np.int64), unit_rows(3)).top(unit_rows(1)[0], 0) == []


def test_cosines_are_those_of_the_held_rows_only() -> None:
    vectors = unit_rows(5)
    view = coded_view(np.array([3, 8, 9, 20, 41], dtype=np.int64), vectors)
    query = unit_rows(1, seed=8)[0]
    found = view.cosines([41, 2, 9, 10, 99, 3], query)
    assert set(found) == {41, 9, 3}  # 2, 10 and 99 are not in the view
    for embedding_id, row in ((41, 4), (9, 2), (3, 0)):
        assert found[embedding_id] == pytest.approx(float(vectors[row] @ query), abs=1e-6)
    assert view.cosines([], query) == {}
    empty = MatrixView(np.zeros(0, dtype=np.int64), np.zeros((0, 16), dtype=np.float32))
    assert empty.cosines([3], query) == {}


def test_a_matrix_of_one_repeated_row_screens_to_the_first_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every screened cosine equal: the sampled cut lets every row through, so the screen
    falls back to a full partition, and the ties still come in row order."""
    monkeypatch.setattr(matrix, "SCREEN_MIN_ROWS", 1)
    row = unit_rows(1, dims=384)[0]
    view = coded_view(np.arange(5000, dtype=np.int64) + 7, np.stack([row] * 5000))
    assert [embedding_id for embedding_id, _ in view.top(row, 10)] == list(range(7, 17))


def test_a_buffer_grown_by_appends_keeps_its_codes_in_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Appends across several growths (each copies the codes) and a snapshot taken halfway:
    every view's codes are those of its own rows, and the screened top is the exact one."""
    monkeypatch.setattr(matrix, "SCREEN_MIN_ROWS", 1)
    vectors = unit_rows(5000, dims=32, seed=11)
    buffer = matrix.VectorBuffer(32)
    halfway = None
    for start in range(0, 5000, 700):  # 1024 -> 1536 -> 2304 -> 3456 -> 5184 rows of room
        block = vectors[start : start + 700]
        buffer.append(list(range(start + 1, start + 1 + len(block))), [r.tobytes() for r in block])
        if start == 2100:
            halfway = buffer.view()
    assert halfway is not None and len(halfway) == 2800
    query = unit_rows(1, dims=32, seed=12)[0]
    for view in (halfway, buffer.view()):
        assert view.coded is not None
        expected = code_rows(view.vectors)
        assert np.array_equal(view.coded.codes, expected.codes)
        assert np.array_equal(view.coded.scales, expected.scales)
        assert np.array_equal(view.coded.errors, expected.errors)
        top = view.top(query, 25)
        assert [embedding_id for embedding_id, _ in top] == brute_force(view, query, 25)
