"""`signet ingest` and `signet documents` against the real app on loopback, with a worker."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.daemon import Capture, CliDaemon, run_daemon

from signet_desktop.embedding.hashing import HashEmbedder
from tests.support.documents import make_worker

BODY = "\n\n".join(
    f"Chapter {n}. The deploy script tags releases and pushes them." for n in range(40)
)


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[CliDaemon]:
    with run_daemon(tmp_path / "ws", HashEmbedder()) as served:
        worker = make_worker(served.service)
        stop = threading.Event()
        thread = threading.Thread(target=worker.run_forever, args=(stop,), daemon=True)
        thread.start()
        try:
            yield served
        finally:
            stop.set()
            thread.join(10)


def test_ingest_a_file_follows_it_to_done(
    daemon: CliDaemon, capsys: Capture, tmp_path: Path
) -> None:
    path = tmp_path / "deploy.md"
    path.write_text("# Deploy guide\n\n" + BODY, encoding="utf-8")
    code, out, err = daemon.cli(capsys, "ingest", str(path))
    assert code == 0, err
    assert out.startswith("done: ") and '"Deploy guide"' in out
    assert "queued" in err or "extracting" in err or "done" in err  # a line per state
    document_id = out.strip().rsplit("(", 1)[1].rstrip(")")
    code, out, _ = daemon.cli(capsys, "documents", "list")
    assert code == 0 and document_id in out and "done" in out
    code, out, _ = daemon.cli(capsys, "documents", "show", document_id)
    assert code == 0 and "title: Deploy guide" in out and "#0 " in out
    code, out, err = daemon.cli(capsys, "ingest", str(path))
    assert code == 0 and "already ingested as " + document_id in err
    code, out, _ = daemon.cli(capsys, "documents", "delete", document_id, "--reason", "old")
    assert code == 0 and out.startswith(f"deleted {document_id} (")
    code, out, _ = daemon.cli(capsys, "documents", "list", "--json")
    assert json.loads(out)["documents"] == []


def test_no_wait_prints_the_id_and_failures_exit_1(
    daemon: CliDaemon, capsys: Capture, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    code, out, _ = daemon.cli(capsys, "ingest", str(empty), "--no-wait")
    assert code == 0 and out.strip().startswith("doc_")
    code, out, _ = daemon.cli(capsys, "ingest", str(tmp_path / "other.txt"))
    assert code == 2  # no such file: refused before anything is written
    blob = tmp_path / "blob.txt"
    blob.write_bytes(b"\x00\x01binary" * 50)
    code, out, _ = daemon.cli(capsys, "ingest", str(blob))
    assert code == 1 and out.startswith("failed: the document is binary data")
    assert "attempt" in out  # retried at once here (the test worker has no backoff)
