"""Folder connectors over a real service: register, sync (incremental, by content hash),
edits and deletions, watch mode, scope, and disconnect purging only what the folder brought."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from signet_desktop.domain.documents import DocumentRequest
from signet_desktop.domain.errors import Conflict, Forbidden, InvalidInput, NotFound
from signet_desktop.service.documents.connectors import ConnectorWatcher, FolderRequest
from signet_desktop.service.facade import SignetService
from tests.support.documents import count, drain, make_service, make_worker


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    svc = make_service(tmp_path / "ws")
    yield svc
    svc.close()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    for name, text in {
        "alpha.md": "# Alpha\n\nThe staging database listens on port 5433.",
        "beta.md": "# Beta\n\nDeploys go out on Tuesdays after the freeze.",
        "sub/gamma.txt": "Gamma: the cache is warmed at start.",
        "ignored.png": "not text",
    }.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def tree(root: Path) -> dict[str, tuple[int, bytes]]:
    return {
        str(p.relative_to(root)): (p.stat().st_mtime_ns, p.read_bytes())
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def live_docs(service: SignetService) -> dict[str, str]:
    return {d.title or "": d.id for d in service.documents.list("default", limit=500)}


def test_add_sync_and_rescan_ingests_each_file_once(service: SignetService, folder: Path) -> None:
    before = tree(folder)
    connector = service.connectors.add_folder("default", FolderRequest(str(folder)))
    assert connector.provider == "filesystem" and connector.status == "idle"
    report = service.connectors.sync("default", connector.id)
    assert (report.added, report.changed, report.removed) == (3, 0, 0)
    assert drain(make_worker(service)) == 3
    docs = live_docs(service)
    assert set(docs) == {"alpha.md", "beta.md", "sub/gamma.txt"}
    assert all(
        service.documents.get("default", d).connector_id == connector.id for d in docs.values()
    )
    again = service.connectors.sync("default", connector.id)
    assert (again.added, again.changed, again.removed, again.unchanged) == (0, 0, 0, 3)
    assert again.read_files == 0
    full = service.connectors.sync("default", connector.id, full=True)
    assert (full.added, full.changed, full.unchanged, full.read_files) == (0, 0, 3, 3)
    assert live_docs(service) == docs
    assert tree(folder) == before  # never writes to the source folder
    stored = service.connectors.get("default", connector.id)
    assert stored.last_sync_at is not None and stored.status == "idle"


def test_an_edit_reingests_only_that_file_and_a_deletion_propagates(
    service: SignetService, folder: Path
) -> None:
    connector = service.connectors.add_folder("default", FolderRequest(str(folder)))
    service.connectors.sync("default", connector.id)
    drain(make_worker(service))
    docs = live_docs(service)
    old_alpha = service.documents.chunks("default", docs["alpha.md"])[0].memory_id
    time.sleep(0.01)
    (folder / "alpha.md").write_text("# Alpha\n\nStaging moved to port 6543.", encoding="utf-8")
    (folder / "beta.md").unlink()
    report = service.connectors.sync("default", connector.id)
    assert (report.added, report.changed, report.removed, report.unchanged) == (0, 1, 1, 1)
    drain(make_worker(service))
    now = live_docs(service)
    assert set(now) == {"alpha.md", "sub/gamma.txt"}
    assert now["sub/gamma.txt"] == docs["sub/gamma.txt"]
    assert now["alpha.md"] != docs["alpha.md"]
    assert service.memories.inspect("default", old_alpha).is_deleted
    hits = service.documents.chunks("default", now["alpha.md"])
    assert "6543" in hits[0].content


def test_disconnect_deletes_its_documents_and_nothing_else(
    service: SignetService, folder: Path
) -> None:
    manual = service.documents.submit("default", DocumentRequest("text", content="by hand"))
    connector = service.connectors.add_folder("default", FolderRequest(str(folder)))
    service.connectors.sync("default", connector.id)
    drain(make_worker(service))
    live_before = count(service, "SELECT COUNT(*) FROM memories WHERE is_deleted = 0")
    report = service.connectors.remove("default", connector.id)
    assert report.documents_deleted == 3 and report.chunks_forgotten >= 3
    remaining = [d.id for d in service.documents.list("default", limit=500)]
    assert remaining == [manual.id]
    live_after = count(service, "SELECT COUNT(*) FROM memories WHERE is_deleted = 0")
    assert live_before - live_after == report.chunks_forgotten
    assert service.connectors.get("default", connector.id).status == "disabled"
    assert service.connectors.list("default") == []
    with pytest.raises(NotFound):
        service.connectors.remove("default", connector.id)
    with pytest.raises(Conflict):
        service.connectors.sync("default", connector.id)
    assert (folder / "alpha.md").exists()
    # The folder can be connected again afterwards.
    assert service.connectors.add_folder("default", FolderRequest(str(folder))).id != connector.id


def test_bad_folders_and_patterns_write_nothing(service: SignetService, tmp_path: Path) -> None:
    (tmp_path / "file.md").write_text("x", encoding="utf-8")
    cases = [
        FolderRequest("relative/path"),
        FolderRequest(str(tmp_path / "missing")),
        FolderRequest(str(tmp_path / "file.md")),
        FolderRequest("/etc"),
        FolderRequest(str(tmp_path), globs=("../*.md",)),
        FolderRequest(str(tmp_path), excludes=("/abs/**",)),
    ]
    for request in cases:
        with pytest.raises((InvalidInput, Forbidden)):  # /etc: outside the roots, 403
            service.connectors.add_folder("default", request)
    assert count(service, "SELECT COUNT(*) FROM connectors") == 0


def test_one_live_connector_per_folder_and_agent_scope(
    service: SignetService, folder: Path
) -> None:
    connector = service.connectors.add_folder("default", FolderRequest(str(folder)))
    with pytest.raises(Conflict):
        service.connectors.add_folder("default", FolderRequest(str(folder) + "/"))
    with pytest.raises(NotFound):
        service.connectors.get("other", connector.id)
    with pytest.raises(NotFound):
        service.connectors.remove("other", connector.id)
    assert service.connectors.list("other") == []


def test_globs_and_excludes_choose_the_files(service: SignetService, folder: Path) -> None:
    request = FolderRequest(str(folder), globs=("**/*.md",), excludes=("sub/**",))
    connector = service.connectors.add_folder("default", request)
    report = service.connectors.sync("default", connector.id)
    assert report.added == 2
    health = service.connectors.health("default", connector.id)
    assert health.files == 2 and health.root_readable
    assert health.documents == {"queued": 2}


def test_a_file_another_source_already_holds_is_shared_not_owned(
    service: SignetService, folder: Path
) -> None:
    by_hand = service.documents.submit(
        "default", DocumentRequest("file", path=str(folder / "beta.md"))
    )
    connector = service.connectors.add_folder("default", FolderRequest(str(folder)))
    service.connectors.sync("default", connector.id)
    (folder / "beta.md").unlink()
    service.connectors.sync("default", connector.id)
    assert service.documents.get("default", by_hand.id).status != "deleted"
    service.connectors.remove("default", connector.id)
    assert service.documents.get("default", by_hand.id).status != "deleted"


def test_watch_mode_polls_connectors_that_ask_for_it(
    service: SignetService, folder: Path, tmp_path: Path
) -> None:
    watched = service.connectors.add_folder("default", FolderRequest(str(folder), watch=True))
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.md").write_text("unwatched", encoding="utf-8")
    plain = service.connectors.add_folder("default", FolderRequest(str(other)))
    watcher = ConnectorWatcher(service.connectors, interval_s=0.01)
    assert watcher.run_once()
    assert service.connectors.health("default", watched.id).files == 3
    assert service.connectors.health("default", plain.id).files == 0
    stop = threading.Event()
    thread = threading.Thread(target=watcher.run_forever, args=(stop,))
    thread.start()
    (folder / "delta.md").write_text("a new note appears", encoding="utf-8")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if service.connectors.health("default", watched.id).files == 4:
            break
        time.sleep(0.02)
    stop.set()
    thread.join(5)
    assert service.connectors.health("default", watched.id).files == 4
    assert watcher.release_leases() == 0


def test_a_missing_folder_puts_the_connector_in_error(service: SignetService, folder: Path) -> None:
    connector = service.connectors.add_folder("default", FolderRequest(str(folder)))
    for path in sorted(folder.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    folder.rmdir()
    with pytest.raises(InvalidInput):
        service.connectors.sync("default", connector.id)
    stored = service.connectors.get("default", connector.id)
    assert stored.status == "error" and stored.last_error
    assert service.connectors.health("default", connector.id).root_readable is False


def test_a_sync_stopped_midway_is_completed_by_the_next_one(
    service: SignetService, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from signet_desktop.service.documents import connectors as module

    connector = service.connectors.add_folder("default", FolderRequest(str(folder)))
    service.connectors.sync("default", connector.id)
    before = live_docs(service)
    time.sleep(0.01)
    (folder / "alpha.md").write_text("# Alpha\n\nmoved to 6543", encoding="utf-8")
    (folder / "beta.md").unlink()
    (folder / "new1.md").write_text("new one", encoding="utf-8")
    (folder / "new2.md").write_text("new two", encoding="utf-8")
    monkeypatch.setattr(module, "CURSOR_EVERY", 1)
    real_submit = service.documents.submit
    calls = {"n": 0}

    def dying_submit(agent_id: str, request: DocumentRequest, *, local: bool = True) -> object:
        calls["n"] += 1
        if calls["n"] == 1:  # the changed file: its old document is gone, the new not in
            raise RuntimeError("killed")
        return real_submit(agent_id, request, local=local)

    monkeypatch.setattr(service.documents, "submit", dying_submit)
    with pytest.raises(RuntimeError):
        service.connectors.sync("default", connector.id)
    assert service.connectors.get("default", connector.id).status == "error"
    monkeypatch.setattr(service.documents, "submit", real_submit)
    service.connectors.sync("default", connector.id)
    after = live_docs(service)
    assert set(after) == {"alpha.md", "sub/gamma.txt", "new1.md", "new2.md"}
    assert after["alpha.md"] != before["alpha.md"]
    assert after["sub/gamma.txt"] == before["sub/gamma.txt"]
    health = service.connectors.health("default", connector.id)
    assert health.files == 4
    assert sum(n for s, n in health.documents.items() if s != "deleted") == 4
    again = service.connectors.sync("default", connector.id)
    assert (again.added, again.changed, again.removed, again.failed) == (0, 0, 0, 0)


def test_the_row_says_idle_only_once_this_syncs_report_is_the_last(
    service: SignetService, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from signet_desktop.service.documents import connectors as module

    connector = service.connectors.add_folder("default", FolderRequest(str(folder)))
    service.connectors.sync("default", connector.id)
    (folder / "alpha.md").write_text("# Alpha\n\nport 5434 now", encoding="utf-8")
    seen_at_idle: list[int | None] = []
    real = module.rows.set_status

    def watched(conn: object, agent_id: str, connector_id: str, status: str, **kw: object) -> None:
        if status == "idle":  # what a poller (the CLI) reads the moment it sees idle
            last = service.connectors.last_report(connector_id)
            seen_at_idle.append(None if last is None else last.changed)
        real(conn, agent_id, connector_id, status, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(module.rows, "set_status", watched)
    service.connectors.sync("default", connector.id)
    assert seen_at_idle == [1]  # this sync's report (1 changed), not the previous one's
