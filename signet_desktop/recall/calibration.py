"""What a cosine of the configured embedder means: semantic support and relevance.

Both rules read cosines as all-MiniLM-L6-v2 (the native default) makes them, measured on the
LoCoMo dev split and the sanity set (docs/RECALL.md, "Calibrated scores"). Semantic support
changes the ranking, so it applies only to models whose cosines were measured
(`calibration_for`); any other embedder (a remote model, the test hash embedder) ranks as
before it.

1. **Semantic support** (fusion, `recall.fusion`). A lexical match the semantic channel
   scores as noise shares a word with the query, not its meaning ("how often do we ship?"
   against "Logs are shipped to Loki"). Lexical evidence is weighed by

       support(cos) = clip((cos - SUPPORT_LOW) / (SUPPORT_HIGH - SUPPORT_LOW), 0, 1)

   of the memory's cosine: none at or below 0.25, in full from 0.40 (a direct question's
   answer sits at 0.5-0.9). Without it a paraphrase that shares no word with its answer lost
   to any memory sharing one common word with the question.
2. **Relevance** (the `weak` flag on every hit; the hooks inject only relevant hits). A hit is
   relevant when its cosine reaches RELEVANT_COSINE (a real paraphrase of a stored fact sits
   at 0.35-0.6; the best match of a prompt about nothing stored, at most 0.29 on the sanity
   set), or when its supported lexical score reaches RELEVANT_LEXICAL (most of the query's
   terms, weighted by rarity, in a memory whose meaning does not contradict it). Other
   embedders are held to the same cosine (the semantic channel's noise floor, 0.3, already
   assumes MiniLM's scale of every model), their lexical scores unsupported.
"""

from __future__ import annotations

from dataclasses import dataclass

SUPPORT_LOW = 0.25
SUPPORT_HIGH = 0.40
RELEVANT_COSINE = 0.33
RELEVANT_LEXICAL = 0.5


@dataclass(frozen=True, slots=True)
class Calibration:
    """The measured meaning of one embedder's cosines (see the module docstring)."""

    support_low: float = SUPPORT_LOW
    support_high: float = SUPPORT_HIGH
    relevant_cosine: float = RELEVANT_COSINE

    def __post_init__(self) -> None:
        if not -1.0 <= self.support_low < self.support_high <= 1.0:
            raise ValueError("support bounds must satisfy -1 <= low < high <= 1")

    def support(self, cosine: float) -> float:
        """How much of a lexical match counts at this cosine, in [0, 1]."""
        span = self.support_high - self.support_low
        return min(1.0, max(0.0, (cosine - self.support_low) / span))


MINILM = Calibration()
# Model names the measured calibration holds for (lowercase): the native model, and the same
# model served by Ollama.
CALIBRATED_MODELS = {
    "all-minilm-l6-v2": MINILM,
    "sentence-transformers/all-minilm-l6-v2": MINILM,
    "all-minilm": MINILM,
    "all-minilm:l6-v2": MINILM,
    "all-minilm:22m": MINILM,
}


def calibration_for(model: str | None) -> Calibration | None:
    """The calibration measured for `model`, or None (nothing is assumed of its cosines)."""
    if not model:
        return None
    return CALIBRATED_MODELS.get(model.strip().lower())


def is_relevant(
    cosine: float | None, supported_lexical: float, calibration: Calibration | None
) -> bool:
    """The relevance test of one hit: its own cosine (None: the semantic channel did not return
    it) and its lexical score times the support fusion gave it (0: no lexical evidence).

    An embedder not measured (`calibration` None) is held to the measured model's cosine, as
    the semantic channel's noise floor already assumes of every model."""
    threshold = RELEVANT_COSINE if calibration is None else calibration.relevant_cosine
    if cosine is not None and cosine >= threshold:
        return True
    return supported_lexical >= RELEVANT_LEXICAL
