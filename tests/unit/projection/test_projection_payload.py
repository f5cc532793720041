"""The cached projection's payload: round trip, and every kind of corrupt row refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

from signet_desktop.projection import payload

IDS = ["a", "b", "c"]
COORDS = np.array([[1.0, 2.0], [3.0, 4.5], [-1.25, 0.0]])


def good() -> dict[str, object]:
    return json.loads(payload.encode(method="umap", ids=IDS, coords=COORDS, edges=[(0, 1)]))


def test_round_trip() -> None:
    text = payload.encode(method="umap", ids=IDS, coords=COORDS, edges=[(0, 1), (1, 2)])
    layout = payload.decode(text, embedding_count=3, dimensions=2)
    assert layout is not None and layout.ids == tuple(IDS) and layout.method == "umap"
    assert np.array_equal(layout.coords, COORDS) and layout.edges == ((0, 1), (1, 2))


def test_encode_refuses_mismatched_rows() -> None:
    with pytest.raises(ValueError):
        payload.encode(method="umap", ids=IDS[:2], coords=COORDS)


@pytest.mark.parametrize(
    "change",
    [
        lambda b: b.update(version=99),
        lambda b: b.update(ids=["a", "b"]),
        lambda b: b.update(ids=["a", "a", "c"]),
        lambda b: b.update(ids=["a", "", "c"]),
        lambda b: b.update(ids=["a", 2, "c"]),
        lambda b: b.update(coords=[[1, 2], [3, 4]]),
        lambda b: b.update(coords=[[1, 2], [3], [5, 6]]),
        lambda b: b.update(coords=[[1, 2], [3, "x"], [5, 6]]),
        lambda b: b.update(coords=[[1, 2], [3, True], [5, 6]]),
        lambda b: b.update(edges=[[0, 3]]),
        lambda b: b.update(edges=[[0]]),
        lambda b: b.update(edges="none"),
        lambda b: b.pop("ids"),
    ],
)
def test_corrupt_payloads_are_refused(change: object) -> None:
    body = good()
    change(body)  # type: ignore[operator]
    assert payload.decode(json.dumps(body), embedding_count=3, dimensions=2) is None


@pytest.mark.parametrize("text", ["", "{", "[]", "null", '"umap"', '{"coords": NaN}'])
def test_unparseable_text_is_refused(text: str) -> None:
    assert payload.decode(text, embedding_count=3, dimensions=2) is None


def test_the_key_must_match_the_payload() -> None:
    text = json.dumps(good())
    assert payload.decode(text, embedding_count=4, dimensions=2) is None
    assert payload.decode(text, embedding_count=3, dimensions=3) is None
