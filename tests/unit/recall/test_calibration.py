"""What a cosine means: the measured model's calibration, semantic support and relevance."""

from __future__ import annotations

import pytest

from signet_desktop.recall.calibration import (
    MINILM,
    RELEVANT_COSINE,
    Calibration,
    calibration_for,
    is_relevant,
)


def test_only_the_measured_model_has_a_calibration() -> None:
    assert calibration_for("all-MiniLM-L6-v2") is MINILM
    assert calibration_for(" all-minilm ") is MINILM  # the same model served by Ollama
    assert calibration_for("hash-64") is None
    assert calibration_for("text-embedding-3-small") is None
    assert calibration_for(None) is None and calibration_for("") is None


@pytest.mark.parametrize(
    ("cosine", "lexical", "support"),
    [(-0.2, 0.0, 0.0), (0.25, 0.3, 0.0), (0.325, 0.3, 0.5), (0.4, 0.0, 1.0), (0.9, 0.2, 1.0),
     (0.1, 0.6, 0.5), (0.1, 0.7, 1.0), (0.325, 0.6, 0.75)],
)  # fmt: skip
def test_support_is_meaning_or_most_of_the_words(
    cosine: float, lexical: float, support: float
) -> None:
    """None at cosine 0.25, full from 0.40; a memory holding most of the words (0.5-0.7) needs
    less, none from 0.7."""
    assert MINILM.support(cosine, lexical) == pytest.approx(support)


def test_support_bounds_are_checked() -> None:
    with pytest.raises(ValueError, match="support bounds"):
        Calibration(support_low=0.4, support_high=0.4)


def test_relevance_is_a_close_meaning_or_most_of_the_words_with_support() -> None:
    assert is_relevant(0.35, 0.0, MINILM)  # a paraphrase: meaning only
    assert not is_relevant(0.29, 0.28, MINILM)  # one common word, meaning at noise level
    assert not is_relevant(0.2, 0.49, MINILM)  # "API keys" of "passwords and API keys"
    assert is_relevant(0.1, 0.8, MINILM)  # most of the rarer words: a long chat turn
    assert is_relevant(0.45, 0.0, MINILM) and is_relevant(None, 0.9, MINILM)
    assert not is_relevant(None, 0.55, MINILM)
    # Another embedder is held to the same cosine; its lexical scores count as they are.
    assert is_relevant(RELEVANT_COSINE, 0.0, None) and not is_relevant(0.2, 0.3, None)
    assert is_relevant(0.0, 0.5, None)
