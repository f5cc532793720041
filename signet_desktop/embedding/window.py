"""The embedder's window in its own tokens: counts and cut points for document chunking.

all-MiniLM-L6-v2 reads at most `MAX_SEQ_LENGTH` (256) tokens including [CLS] and [SEP]; the
rest of a longer text is truncated away from its vector. Chunking sizes chunks with the same
WordPiece tokenizer (the `tokenizer.json` shipped with the weights, read once, without
truncation or padding), so a chunk fits the window by construction. BERT's pre-tokenizer
splits on whitespace and punctuation, so the count of texts joined by whitespace is the sum of
their counts; `count` is still what a caller checks a finished chunk with.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from signet_desktop.embedding.native import MAX_SEQ_LENGTH, default_model_dir
from signet_desktop.embedding.provider import EmbeddingError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

SPECIAL_TOKENS = 2  # [CLS] and [SEP]
WINDOW = MAX_SEQ_LENGTH

_lock = threading.Lock()
_shared: dict[Path, TokenWindow] = {}


class TokenWindow:
    """Token counts and token-boundary cut points in the model's own tokenizer; thread-safe."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self._tokenizer = tokenizer

    def counts(self, texts: Sequence[str]) -> list[int]:
        """Each text's token count, without [CLS]/[SEP]."""
        if not texts:
            return []
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    def count(self, text: str) -> int:
        """One text's token count, without [CLS]/[SEP]."""
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def head_end(self, text: str, tokens: int) -> int:
        """The end (a character index) of the first `tokens` tokens of `text`; len(text) when
        it has no more than that. A word is only cut where one of its pieces ends."""
        offsets = self._tokenizer.encode(text, add_special_tokens=False).offsets
        if len(offsets) <= tokens:
            return len(text)
        return offsets[tokens - 1][1] if tokens > 0 else 0

    def tail_start(self, text: str, tokens: int) -> int:
        """The start (a character index) of the last `tokens` tokens of `text`; 0 when it has
        no more than that."""
        offsets = self._tokenizer.encode(text, add_special_tokens=False).offsets
        if len(offsets) <= tokens:
            return 0
        return offsets[len(offsets) - tokens][0] if tokens > 0 else len(text)


def model_window(model_dir: Path | None = None) -> TokenWindow:
    """The shipped MiniLM tokenizer as a `TokenWindow`, read once per process (~0.1 s)."""
    path = model_dir or default_model_dir()
    with _lock:
        found = _shared.get(path)
        if found is None:
            from tokenizers import Tokenizer

            try:
                tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
            except Exception as exc:  # tokenizers raises a bare Exception for a bad file
                raise EmbeddingError(f"cannot read the tokenizer in {path}: {exc}") from exc
            found = _shared[path] = TokenWindow(tokenizer)
        return found
