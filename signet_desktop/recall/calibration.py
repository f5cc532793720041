"""What a cosine of the configured embedder means: relevance, with semantic support.

Recall ranks by the fused score; whether a hit answers the query at all is a separate test
(the `weak` flag on every hit; the hooks inject only relevant hits). The fused score cannot
be that test: a real paraphrase that shares no word with its answer scores 0.03-0.2, a direct
answer in a busy workspace 0.13 and up. The test reads cosines as all-MiniLM-L6-v2 (the native
default) makes them, measured on the sanity set and LoCoMo (docs/RECALL.md, "Relevance: weak
hits and the hooks' threshold").

A hit is **relevant** when its cosine reaches RELEVANT_COSINE (0.33: a real paraphrase of a
stored fact sits at 0.35-0.6 from it, a direct answer at 0.5-0.9; the best match of a prompt
about nothing stored, at most 0.29 on the sanity set), or when its lexical score, weighed by
**semantic support**, reaches RELEVANT_LEXICAL (0.5). Support: a lexical match the semantic
channel scores as noise shares a word with the query, not its meaning ("how often do we
ship?" against "Logs are shipped to Loki"), unless the memory holds most of the query's rarer
words:

    meaning = clip((cos - SUPPORT_LOW) / (SUPPORT_HIGH - SUPPORT_LOW), 0, 1)   0.25 .. 0.40
    own     = clip((lexical - OWN_LOW) / (OWN_HIGH - OWN_LOW), 0, 1)             0.5 .. 0.7
    support = meaning + (1 - meaning) * own

Support only decides relevance; it does not change the ranking. Weighing the blend's lexical
share by it ranked every sanity-set answer first but cost LongMemEval-S recall@10 0.910 ->
0.877 (long chat turns that name what is asked sit at cosine 0.2-0.35), so it was not kept.
Other embedders (a remote model, the test hash embedder) are held to the same cosine; their
lexical scores count unsupported (`calibration_for` is None).
"""

from __future__ import annotations

from dataclasses import dataclass

from signet_desktop.embedding.graphs import base_model_name

SUPPORT_LOW = 0.25
SUPPORT_HIGH = 0.40
# A lexical score from OWN_LOW up needs less support, none from OWN_HIGH: most of the query's
# rarer words in one memory are evidence by themselves (long chat turns: cosine ~0.2-0.35).
OWN_LOW = 0.5
OWN_HIGH = 0.7
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

    def support(self, cosine: float, lexical: float = 0.0) -> float:
        """How much of a lexical match (score `lexical`) counts at this cosine, in [0, 1]."""
        span = self.support_high - self.support_low
        meaning = min(1.0, max(0.0, (cosine - self.support_low) / span))
        own = min(1.0, max(0.0, (lexical - OWN_LOW) / (OWN_HIGH - OWN_LOW)))
        return meaning + (1.0 - meaning) * own


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
    # A quantised graph of a model (`all-MiniLM-L6-v2+int8-dynamic`, embedding/graphs.py) is
    # held to its model's calibration (its vectors are within cosine ~0.99 of the float32
    # graph's, bench/quantized_embedding.py).
    return CALIBRATED_MODELS.get(base_model_name(model).strip().lower())


def is_relevant(cosine: float | None, lexical: float, calibration: Calibration | None) -> bool:
    """The relevance test of one hit: its own cosine (None: the semantic channel did not return
    it) and its lexical score (0: no lexical evidence).

    Under a measured model the lexical score counts as far as the cosine supports it (no
    cosine: only a lexical score of OWN_LOW and up counts, as far as it holds the words); an
    embedder not measured (`calibration` None) is held to the same cosine, as the semantic
    channel's noise floor already assumes of every model, and its lexical scores count as
    they are."""
    threshold = RELEVANT_COSINE if calibration is None else calibration.relevant_cosine
    if cosine is not None and cosine >= threshold:
        return True
    if calibration is not None:
        lexical *= calibration.support(cosine if cosine is not None else -1.0, lexical)
    return lexical >= RELEVANT_LEXICAL
