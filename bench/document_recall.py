"""Document retrieval by vector: does chunking by the embedder's window find more? (a benchmark)

    uv run python bench/document_recall.py [--cache /tmp/docrecall.pkl] [--sets locomo,lme]

Real text from the dev sets in ../shared/data (never shipped): each set is turned into
documents, chunked each way below, every chunk embedded with the default embedder (agent.yaml's
native MiniLM graph), and each question ranked against all chunks by cosine (the vector channel
alone: what the gate is about is the vector's coverage, not fusion).

- **locomo**: the five dev conversations as five long documents (a "Session N, <date>" heading,
  then one paragraph per turn, "<speaker>: <text>"), pooled. Every category 1-4 question with
  evidence; a chunk holds an evidence turn when it contains the turn's paragraph. Scores at
  chunk level over the top 10 chunks: evidence recall@10 (share of evidence turns held by a
  top-10 chunk), hit@10, MRR (first chunk holding one).
- **lme**: LongMemEval-S dev72's 111 distinct answer sessions as 111 documents ("<role>:
  <content>" paragraphs), pooled; every question; documents ranked by their best chunk;
  session recall@10 and MRR against `answer_session_ids`.

Ways: `chars-2000` (the old default: 2,000 characters, overlap 200; the model reads each
chunk's first 256 tokens), `tokens-256` / `tokens-128` (chunks sized in the model's tokens,
[CLS]/[SEP] included, overlap an eighth), `windows-max` (2,000-character chunks, each embedded
as consecutive 256-token windows, a chunk scored by its best window: several vectors per
memory), `windows-mean` (the same windows averaged into one vector per chunk). `outside` is
the share of the corpus's tokens no vector reads. Big chunks hand back more text in ten hits,
so the last column scores the best-ranked chunks that fit in ten windows' worth of tokens.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import gzip
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
from locomo import questions, turn_content
from longmemeval import CachedEmbedder, bench_embedder

from signet_desktop.embedding.window import model_window
from signet_desktop.ingest.chunking import chunk_text

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
LIMIT = 10
WINDOW = 256  # tokens, [CLS]/[SEP] included
BUDGET = 10 * WINDOW  # tokens of chunks handed back, for the equal-text column


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    gold: frozenset[str]  # dia_ids (locomo) or session ids (lme)


@dataclass(frozen=True, slots=True)
class Corpus:
    name: str
    documents: dict[str, str]  # id -> text
    paragraphs: dict[str, str]  # gold key -> paragraph text (locomo turns)
    queries: list[Query]
    level: str  # "chunk": gold are paragraphs held by chunks; "document": gold are documents


def locomo_corpus() -> Corpus:
    samples = json.loads((DATA / "locomo-dev.json").read_text())
    documents: dict[str, str] = {}
    paragraphs: dict[str, str] = {}
    asked: list[Query] = []
    for sample in samples:
        conversation = sample["conversation"]
        numbers = sorted(
            int(k.split("_")[1]) for k in conversation if re.fullmatch(r"session_\d+", k)
        )
        parts = []
        for number in numbers:
            parts.append(f"Session {number}, {conversation[f'session_{number}_date_time']}")
            for turn in conversation[f"session_{number}"]:
                text = " ".join(turn_content(turn, captions=False).split())
                paragraphs[f"{sample['sample_id']}/{turn['dia_id']}"] = text
                parts.append(text)
        documents[sample["sample_id"]] = "\n\n".join(parts)
        for question in questions(sample):
            gold = frozenset(f"{sample['sample_id']}/{d}" for d in question.evidence)
            asked.append(Query(question.text, frozenset(g for g in gold if g in paragraphs)))
    return Corpus("locomo", documents, paragraphs, [q for q in asked if q.gold], "chunk")


def lme_corpus() -> Corpus:
    with gzip.open(DATA / "longmemeval-s-dev72.json.gz") as handle:
        items = json.loads(handle.read())
    gold_ids = {sid for item in items for sid in item["answer_session_ids"]}
    documents: dict[str, str] = {}
    for item in items:
        for sid, session in zip(
            item["haystack_session_ids"], item["haystack_sessions"], strict=True
        ):
            if sid in gold_ids:
                documents[sid] = "\n\n".join(f"{t['role']}: {t['content']}" for t in session)
    queries = [Query(i["question"], frozenset(i["answer_session_ids"])) for i in items]
    return Corpus("lme", documents, {}, queries, "document")


@dataclass(frozen=True, slots=True)
class Piece:
    document: str
    text: str  # the chunk
    windows: tuple[str, ...]  # what is embedded for it


Way = Callable[[str], list[tuple[str, tuple[str, ...]]]]


def ways() -> dict[str, Way]:
    counter = model_window()

    def by_chars(text: str) -> list[tuple[str, tuple[str, ...]]]:
        return [(c.text, (c.text,)) for c in chunk_text(text, 2000, 200)]

    def by_tokens(window: int) -> Way:
        def split(text: str) -> list[tuple[str, tuple[str, ...]]]:
            chunks = chunk_text(
                text, 50_000, 0, tokens=window, overlap_tokens=window // 8, counter=counter
            )
            return [(c.text, (c.text,)) for c in chunks]

        return split

    def windows(text: str) -> list[tuple[str, tuple[str, ...]]]:
        out = []
        for chunk in chunk_text(text, 2000, 200):
            parts = chunk_text(chunk.text, 50_000, 0, tokens=WINDOW, counter=counter)
            out.append((chunk.text, tuple(p.text for p in parts)))
        return out

    return {
        "chars-2000": by_chars,
        "tokens-256": by_tokens(256),
        "tokens-128": by_tokens(128),
        "windows-max": windows,
        "windows-mean": windows,
    }


def outside_share(pieces: Sequence[Piece]) -> float:
    """Share of the chunks' tokens beyond what their vectors read (the model's 254)."""
    counter = model_window()
    total = beyond = 0
    for piece in pieces:
        for window in piece.windows:
            n = counter.count(window)
            total += n
            beyond += max(0, n - (WINDOW - 2))
    return beyond / max(1, total)


def score(
    corpus: Corpus, way: str, pieces: list[Piece], vectors: np.ndarray, queries: np.ndarray
) -> dict[str, float]:
    """Rank chunk rows (a chunk's score: its best window, or the mean vector) and score."""
    owner = np.array([i for i, p in enumerate(pieces) for _ in p.windows])
    if way == "windows-mean":
        sums = np.zeros((len(pieces), vectors.shape[1]), dtype=np.float32)
        np.add.at(sums, owner, vectors)
        chunk_vectors = sums / np.linalg.norm(sums, axis=1, keepdims=True)
        sims = queries @ chunk_vectors.T
    else:
        window_sims = queries @ vectors.T
        sims = np.full((len(queries), len(pieces)), -np.inf, dtype=np.float32)
        np.maximum.at(sims.T, owner, window_sims.T)
    sizes = np.array(model_window().counts([p.text for p in pieces])) + 2
    recall = hit = mrr = budget = 0.0
    for q, query in enumerate(corpus.queries):
        order = np.argsort(-sims[q], kind="stable")
        budget += _within_budget(corpus, query, pieces, order, sizes)
        if corpus.level == "document":
            ranked: list[str] = []
            for i in order:
                if pieces[i].document not in ranked:
                    ranked.append(pieces[i].document)
                if len(ranked) == LIMIT:
                    break
            held = [frozenset({d}) & query.gold for d in ranked]
        else:
            held = [
                frozenset(g for g in query.gold if corpus.paragraphs[g] in pieces[i].text)
                for i in order[:LIMIT]
            ]
        found = frozenset().union(*held)
        recall += len(found) / len(query.gold)
        hit += 1.0 if found else 0.0
        first = next((r for r, h in enumerate(held) if h), None)
        mrr += 0.0 if first is None else 1.0 / (first + 1)
    n = len(corpus.queries)
    return {"recall@10": recall / n, "hit@10": hit / n, "mrr": mrr / n, "budget": budget / n}


def _within_budget(
    corpus: Corpus, query: Query, pieces: list[Piece], order: np.ndarray, sizes: np.ndarray
) -> float:
    """Recall of the best-ranked chunks that fit in BUDGET tokens (ten full windows), so ways
    with big chunks are not credited for handing back more text."""
    used = 0
    found: set[str] = set()
    for i in order:
        used += int(sizes[i])
        if used > BUDGET:
            break
        if corpus.level == "document":
            found |= {pieces[i].document} & query.gold
        else:
            found |= {g for g in query.gold if corpus.paragraphs[g] in pieces[i].text}
    return len(found) / len(query.gold)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=None, help="keep vectors between runs")
    parser.add_argument("--sets", default="locomo,lme")
    parser.add_argument("--ways", default=",".join(ways()))
    args = parser.parse_args()
    if not (DATA / "locomo-dev.json").exists():
        print(f"skipped: no dev data in {DATA}")
        return 0
    embedder = CachedEmbedder(bench_embedder(None), args.cache)
    builders = {"locomo": locomo_corpus, "lme": lme_corpus}
    every_way = ways()
    print(f"embedder: {embedder.model}")
    for name in args.sets.split(","):
        corpus = builders[name]()
        queries = np.asarray(embedder.embed([q.text for q in corpus.queries]))
        print(
            f"\n{name}: {len(corpus.documents)} documents, "
            f"{sum(len(t) for t in corpus.documents.values()):,} characters, "
            f"{len(corpus.queries)} questions, scored at {corpus.level} level"
        )
        print(
            "| way | chunks | vectors | tokens/chunk | outside | recall@10 | hit@10 | MRR "
            f"| recall in {BUDGET:,} tokens | s |"
        )
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for way in args.ways.split(","):
            started = time.perf_counter()
            pieces = [
                Piece(doc, text, windows)
                for doc, body in corpus.documents.items()
                for text, windows in every_way[way](body)
            ]
            texts = [w for p in pieces for w in p.windows]
            vectors = np.asarray(embedder.embed(texts))
            embedder.save()
            row = score(corpus, way, pieces, vectors, queries)
            tokens = np.mean(model_window().counts([p.text for p in pieces]))
            print(
                f"| {way} | {len(pieces):,} | {len(texts):,} | {tokens + 2:.0f} | "
                f"{outside_share(pieces):.1%} | {row['recall@10']:.3f} | {row['hit@10']:.3f} | "
                f"{row['mrr']:.3f} | {row['budget']:.3f} | {time.perf_counter() - started:.0f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
