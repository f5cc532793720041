"""A folder source: the initial index of N Markdown files, and a rescan with one changed file.

Run: uv run python bench/folder_source.py [--files 1000] [--embedder hash|native]

The folder holds `files` Markdown notes (~1.5 KB each, 10 per sub-folder) under a temp dir.
Timed, through the real service (`service.connectors`, `service.documents` and the document
worker's handler, run in this thread):

- initial sync: register the folder and sync it (walk, hash, one document submitted per file);
- initial index: the same plus the document worker until every document is `done`
  (extract, chunk, embed with the chosen embedder, write the chunk memories);
- rescan, nothing changed: a sync that finds every file unchanged by (size, mtime);
- rescan, one file changed: the sync (one file read and hashed, its old document deleted, the
  new one submitted) and then the worker until that document is `done`;
- full rescan: every file read and hashed again (content unchanged, nothing re-ingested).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import sentences

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.embedding.provider import EmbeddingProvider
from signet_desktop.queue.worker import WorkerSettings
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.documents.connectors import FolderRequest
from signet_desktop.service.documents.worker import DocumentIngest, IngestSettings, build_worker
from signet_desktop.service.facade import SignetService

T = TypeVar("T")
FAST = WorkerSettings(poll_s=0.01, max_backoff_s=0.05, retry_in_s=lambda attempts: 0.0)


def write_folder(root: Path, files: int) -> None:
    texts = sentences(files * 12)
    for n in range(files):
        folder = root / f"topic-{n // 10:03}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "\n\n".join(" ".join(texts[n * 12 + k * 3 : n * 12 + k * 3 + 3]) for k in range(4))
        (folder / f"note-{n:04}.md").write_text(f"# Note {n}\n\n{body}\n", encoding="utf-8")


def embedder_for(name: str) -> EmbeddingProvider:
    if name == "native":
        from signet_desktop.embedding.native import NativeMiniLM

        return NativeMiniLM()
    return HashEmbedder(384)


def drain(service: SignetService) -> int:
    """Run the document worker here until no job is left; how many ran."""
    from tests.support.db import database_of

    db = database_of(service)
    settings = IngestSettings.from_config(SignetConfig().memory.pipeline_v2.documents)
    worker = build_worker(db, DocumentIngest(db, service.documents, settings), settings=FAST)
    ran = 0
    while worker.run_job() is not None:
        ran += 1
    return ran


def timed(call: Callable[[], T]) -> tuple[float, T]:
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--embedder", choices=("hash", "native"), default="hash")
    args = parser.parse_args()
    rows: list[tuple[str, float, str]] = []
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        root = Path(tmp)
        folder = root / "notes"
        write_folder(folder, args.files)
        size = sum(p.stat().st_size for p in folder.rglob("*.md"))
        options = BuildOptions(embedder=embedder_for(args.embedder))
        service = build_service(WorkspacePaths.for_root(root / "ws"), SignetConfig(), options)
        try:
            connectors = service.connectors
            add_s, connector = timed(
                lambda: connectors.add_folder("default", FolderRequest(str(folder)))
            )
            cid = connector.id
            sync_s, report = timed(lambda: connectors.sync("default", cid))
            rows.append(
                ("initial sync (walk, hash, submit)", add_s + sync_s, f"{report.added} added")
            )
            drain_s, ran = timed(lambda: drain(service))
            done = connectors.health("default", cid).documents.get("done", 0)
            rows.append(
                (
                    f"initial index to done ({args.embedder})",
                    add_s + sync_s + drain_s,
                    f"{done} done, {ran} jobs",
                )
            )
            same_s, same = timed(lambda: connectors.sync("default", cid))
            rows.append(("rescan, nothing changed", same_s, f"{same.unchanged} unchanged"))
            target = folder / "topic-042" / "note-0420.md"
            target.write_text(target.read_text(encoding="utf-8") + "\nEdited.\n", encoding="utf-8")
            one_s, one = timed(lambda: connectors.sync("default", cid))
            rows.append(("rescan, one file changed: sync", one_s, f"{one.changed} changed"))
            redo_s, _ = timed(lambda: drain(service))
            rows.append(("rescan, one file changed: to done", one_s + redo_s, "1 doc"))
            full_s, full = timed(lambda: connectors.sync("default", cid, full=True))
            rows.append(("full rescan (every file hashed)", full_s, f"{full.read_files} read"))
        finally:
            service.close()
    print(f"folder: {args.files:,} Markdown files (~{size // args.files:,} bytes each)")
    print()
    print(f"| {'step':<40} | {'seconds':>8} | {'what':<22} |")
    print(f"| {'-' * 40} | {'-' * 7}: | {'-' * 22} |")
    for name, seconds, what in rows:
        print(f"| {name:<40} | {seconds:>8.3f} | {what:<22} |")


if __name__ == "__main__":
    main()
