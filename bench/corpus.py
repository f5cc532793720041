"""Synthetic memory corpora for benchmarks: varied sentences with a Zipf-like vocabulary."""

from __future__ import annotations

import random

SUBJECTS = (
    "the billing service", "our staging cluster", "Ana", "Bo", "the mobile app", "the CI runner",
    "the auth gateway", "the search index", "Kafka", "the Postgres primary", "the design team",
    "the nightly backup", "the payments API", "Redis", "the React frontend", "the data pipeline",
)  # fmt: skip
VERBS = (
    "uses", "depends on", "prefers", "migrated to", "deprecated", "caches", "retries",
    "logs to", "was rewritten in", "times out on", "is deployed with", "reads from",
)  # fmt: skip
OBJECTS = (
    "PostgreSQL 16", "a blue-green rollout", "Rust", "Terraform", "feature flags", "gRPC",
    "Python 3.12", "a 30 second timeout", "S3 buckets", "OpenTelemetry", "SQLite in WAL mode",
    "pnpm workspaces", "the new VPN", "an on-call rotation", "weekly dependency updates",
)  # fmt: skip
QUALIFIERS = (
    "since March", "after the outage", "for compliance reasons", "to cut latency",
    "because of flaky tests", "on Fridays", "in the EU region", "per the architecture review",
    "until the next release", "when traffic spikes", "for the holiday freeze", "by default",
)  # fmt: skip


def sentences(count: int, seed: int = 7) -> list[str]:
    """`count` distinct sentences (a numeric suffix keeps hashes unique)."""
    rng = random.Random(seed)
    out = []
    for index in range(count):
        words = rng.sample(range(1, 5000), 3)
        rare = " ".join(f"w{w}" for w in words)  # a long tail of rare tokens, like real notes
        out.append(
            f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
            f"{rng.choice(QUALIFIERS)} ({rare}, note {index})"
        )
    return out


def queries(count: int, seed: int = 11) -> list[str]:
    """Natural-language questions mixing common and rare terms."""
    rng = random.Random(seed)
    return [
        f"what does {rng.choice(SUBJECTS)} use {rng.choice(QUALIFIERS)}? w{rng.randrange(1, 5000)}"
        for _ in range(count)
    ]


SYLLABLES = (
    "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qui", "dor", "fen", "gal", "hir",
    "jun", "lek", "mor", "nix", "ost", "pry", "rin", "sul", "tam", "ulm", "vex", "wen", "yor",
)  # fmt: skip


def zipf_vocabulary(size: int, seed: int = 3) -> list[str]:
    """`size` distinct pseudo-words; index = frequency rank."""
    rng = random.Random(seed)
    words: dict[str, None] = {}
    while len(words) < size:
        words.setdefault("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))), None)
    return list(words)


def zipf_sentences(count: int, vocab_size: int = 30_000, seed: int = 5) -> list[str]:
    """Natural-text-like documents: 8-30 tokens drawn from a Zipf(1.07) vocabulary."""
    rng = random.Random(seed)
    vocab = zipf_vocabulary(vocab_size)
    weights = [1 / (rank + 1) ** 1.07 for rank in range(vocab_size)]
    out = []
    for index in range(count):
        words = rng.choices(vocab, weights=weights, k=rng.randint(8, 30))
        out.append(" ".join(words) + f" n{index}")
    return out


def zipf_queries(docs: list[str], count: int, seed: int = 13) -> list[str]:
    """Queries about a random document: three of its words plus one unrelated frequent word."""
    rng = random.Random(seed)
    vocab = zipf_vocabulary(2000)
    out = []
    for _ in range(count):
        words = rng.choice(docs).split()[:-1]
        out.append(" ".join([*rng.sample(words, min(3, len(words))), rng.choice(vocab)]))
    return out
