"""Real text for the ANN bench, embedded once with the project's own embedder and cached.

    nice -n 5 uv run python bench/ann_corpus.py --out /tmp/ann-corpus [--limit 60000]

Texts, in this order (all real, none generated): the LoCoMo dev split's turns
("<speaker>: <text>"), windows of two consecutive sentences of the unique turns of the 72
LongMemEval-S questions' haystacks (more points from the same real text, short, so cheap to
embed), then those unique turns whole ("<role>: <content>"). Queries: the LoCoMo dev
questions and the 72 LongMemEval questions. The data stays in ../shared/data (never copied).

Vectors are written in blocks (`corpus-NNNN.npy`, float32, unit norm) as they are made, so
a run stopped early keeps what it embedded; a later run resumes after the last block.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
BLOCK = 2048
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _locomo() -> tuple[list[str], list[str]]:
    conversations = json.loads((DATA / "locomo-dev.json").read_text())
    turns, questions = [], []
    for sample in conversations:
        talk = sample["conversation"]
        for key, value in talk.items():
            if key.startswith("session_") and isinstance(value, list):
                turns.extend(f"{t['speaker']}: {t['text']}" for t in value)
        questions.extend(q["question"] for q in sample["qa"] if q.get("category") != 5)
    return turns, questions


def _longmemeval() -> tuple[list[str], list[str]]:
    with gzip.open(DATA / "longmemeval-s-dev72.json.gz", "rt") as handle:
        items = json.load(handle)
    seen: set[str] = set()
    turns: list[str] = []
    for item in items:
        for session in item["haystack_sessions"]:
            for turn in session:
                text = f"{turn['role']}: {turn['content']}"
                if text not in seen:
                    seen.add(text)
                    turns.append(text)
    return turns, [str(item["question"]) for item in items]


def _windows(turns: list[str]) -> Iterator[str]:
    """Two consecutive sentences of each turn with three or more (real text, new points)."""
    for turn in turns:
        sentences = [s for s in _SENTENCE_END.split(turn) if len(s) > 20]
        if len(sentences) < 3:
            continue
        for i in range(len(sentences) - 1):
            yield f"{sentences[i]} {sentences[i + 1]}"[:1000]


def texts() -> tuple[list[tuple[str, str]], list[str]]:
    """(source, text) of the corpus in order, and the queries."""
    locomo_turns, locomo_questions = _locomo()
    lme_turns, lme_questions = _longmemeval()
    corpus = [("locomo-turn", t) for t in locomo_turns]
    corpus += [("longmemeval-window", t) for t in _windows(lme_turns)]
    corpus += [("longmemeval-turn", t) for t in lme_turns]
    return corpus, locomo_questions + lme_questions


def load(out: Path) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], list[str]]:
    """(corpus vectors embedded so far, query vectors, source of each corpus row)."""
    blocks = sorted(out.glob("corpus-*.npy"))
    vectors = np.concatenate([np.load(b) for b in blocks]) if blocks else np.zeros((0, 384))
    sources = json.loads((out / "sources.json").read_text())[: len(vectors)]
    return vectors.astype(np.float32), np.load(out / "queries.npy"), sources


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/ann-corpus"))
    parser.add_argument("--limit", type=int, default=60_000, help="corpus texts at most")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from signet_desktop.config.models import SignetConfig
    from signet_desktop.service.container import configured_embedder

    embedder = configured_embedder(SignetConfig())
    if embedder is None:
        raise SystemExit("the bench needs the native embedder")
    corpus, queries = texts()
    corpus = corpus[: args.limit]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sources.json").write_text(json.dumps([s for s, _ in corpus]))
    (args.out / "model.txt").write_text(f"{embedder.model}\n")
    if not (args.out / "queries.npy").exists():
        np.save(args.out / "queries.npy", np.asarray(embedder.embed(queries), np.float32))
    done = len(list(args.out.glob("corpus-*.npy")))
    started, made = time.perf_counter(), 0
    for block in range(done, (len(corpus) + BLOCK - 1) // BLOCK):
        chunk = [t for _, t in corpus[block * BLOCK : (block + 1) * BLOCK]]
        vectors = np.asarray(embedder.embed(chunk), dtype=np.float32)
        np.save(args.out / f"corpus-{block:04d}.npy", vectors)
        made += len(chunk)
        rate = made / (time.perf_counter() - started)
        print(f"block {block}: {(block + 1) * BLOCK} texts, {rate:.0f}/s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
