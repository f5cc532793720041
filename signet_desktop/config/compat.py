"""Values Signet writes that we read differently, each with a warning that says so.

Signet's native embedder runs nomic-embed-text-v1.5 (768-d) in process; its setup writes that
model into `embedding`. We ship all-MiniLM-L6-v2 only (no model download), so a Signet
workspace that names Signet's native default runs our native model instead, rather than
refusing to start. Vectors are kept per (model, dimensions) generation, so nothing is mixed.
Any other model name under `native` is still an error: it is a choice we cannot honour.
"""

from __future__ import annotations

from signet_desktop.config.models import EmbeddingConfig, SignetConfig

SIGNET_NATIVE_MODELS = frozenset({"nomic-embed-text-v1.5", "nomic-ai/nomic-embed-text-v1.5"})


def adopt_signet_defaults(config: SignetConfig) -> tuple[SignetConfig, tuple[str, ...]]:
    """`config` with Signet's native default model replaced by ours, and what was replaced."""
    embedding = config.embedding
    if embedding.provider != "native" or embedding.model.lower() not in SIGNET_NATIVE_MODELS:
        return config, ()
    ours = EmbeddingConfig()
    replaced = embedding.model_copy(update={"model": ours.model, "dimensions": ours.dimensions})
    warning = (
        f"embedding.model '{embedding.model}' is Signet's native default, which Signet Desktop "
        f"does not ship; the native embedder runs {ours.model} ({ours.dimensions} dimensions) "
        "instead (vectors are kept per model, so none are mixed)"
    )
    return config.model_copy(update={"embedding": replaced}), (warning,)
