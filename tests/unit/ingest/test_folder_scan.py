"""The folder scan: which files count, what changed since the cursor, and a bounded walk."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from signet_desktop.ingest import folder_scan
from signet_desktop.ingest.folder_scan import FileState, ScanRules


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    return {
        str(p.relative_to(root)): (p.lstat().st_mtime_ns, p.read_bytes() if p.is_file() else b"")
        for p in sorted(root.rglob("*"))
        if not p.is_symlink()
    }


@pytest.mark.parametrize(
    ("path", "wanted"),
    [
        ("a.md", True),
        ("notes/b.markdown", True),
        ("deep/er/c.txt", True),
        ("image.png", False),
        (".git/HEAD.md", False),
        ("x/node_modules/y.md", False),
        ("node_modules/y.md", False),
    ],
)
def test_default_rules(path: str, wanted: bool) -> None:
    rules = ScanRules(excludes=(*folder_scan.DEFAULT_EXCLUDES, "**/node_modules/**"))
    assert rules.wants(path) is wanted


def test_globs_and_excludes_are_checked() -> None:
    assert folder_scan.check_patterns([" *.md "], "glob") == ("*.md",)
    for bad in ("/etc/*.md", "../*.md", "", "x" * 300):
        with pytest.raises(ValueError):
            folder_scan.check_patterns([bad], "glob")


def test_first_scan_adds_a_rescan_reads_only_what_changed(tmp_path: Path) -> None:
    for n in range(5):
        write(tmp_path, f"n{n}.md", f"note {n}")
    write(tmp_path, "skip.bin", "x")
    rules = ScanRules()
    first = folder_scan.scan(tmp_path, rules, {})
    assert sorted(first.added) == [f"n{n}.md" for n in range(5)]
    assert first.read_files == 5
    cursor = {
        p: FileState(s.size, s.mtime_ns, s.sha256, f"doc-{p}") for p, s in first.states.items()
    }

    time.sleep(0.01)
    write(tmp_path, "n1.md", "note 1, edited")
    (tmp_path / "n2.md").unlink()
    write(tmp_path, "n9.md", "new note")
    touched = tmp_path / "n3.md"  # same bytes, new mtime: read, hash equal, unchanged
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 10_000))
    again = folder_scan.scan(tmp_path, rules, cursor)
    assert again.changed == ("n1.md",)
    assert again.added == ("n9.md",)
    assert again.removed == ("n2.md",)
    assert again.unchanged == 3
    assert again.read_files == 3  # n1, n3 (mtime only), n9
    assert again.states["n3.md"].document_id == "doc-n3.md"
    assert again.states["n1.md"].document_id is None


def test_binary_and_oversized_files_are_skipped_and_keep_their_old_state(tmp_path: Path) -> None:
    (tmp_path / "bin.md").write_bytes(b"abc\x00def")
    write(tmp_path, "big.md", "x" * 2048)
    rules = ScanRules(max_bytes=1024)
    result = folder_scan.scan(tmp_path, rules, {"big.md": FileState(1, 1, "old", "doc-big")})
    assert {(s.path, s.reason) for s in result.skipped} == {
        ("bin.md", "binary"),
        ("big.md", "too_large"),
    }
    assert result.removed == ()
    assert result.states["big.md"].document_id == "doc-big"


def test_a_symlink_loop_and_links_outside_the_root_are_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write(root, "a/one.md", "one")
    (root / "a" / "loop").symlink_to(root, target_is_directory=True)
    (root / "self").symlink_to(root / "self")
    outside = write(tmp_path, "outside/secret.md", "secret")
    (root / "leak.md").symlink_to(outside)
    (root / "inside.md").symlink_to(root / "a" / "one.md")
    found = sorted(path for path, _ in folder_scan.walk(root, ScanRules()))
    assert found == ["a/one.md", "inside.md"]


def test_the_walk_is_capped_and_a_capped_scan_removes_nothing(tmp_path: Path) -> None:
    for n in range(10):
        write(tmp_path, f"f{n:02}.md", str(n))
    rules = ScanRules(max_files=4)
    cursor = {f"f{n:02}.md": FileState(0, 0, "x", f"d{n}") for n in range(10)}
    result = folder_scan.scan(tmp_path, rules, cursor)
    assert result.truncated and len(result.states) == 4 and result.removed == ()


def test_ten_thousand_files_with_a_loop_scan_quickly_and_read_only(tmp_path: Path) -> None:
    for d in range(100):
        folder = tmp_path / f"d{d:03}"
        folder.mkdir()
        for n in range(100):
            (folder / f"n{n:03}.md").write_text(f"note {d}/{n}", encoding="utf-8")
    (tmp_path / "d000" / "up").symlink_to(tmp_path, target_is_directory=True)
    before = snapshot(tmp_path)
    started = time.perf_counter()
    result = folder_scan.scan(tmp_path, ScanRules(), {})
    assert len(result.added) == 10_000
    rescan = folder_scan.scan(tmp_path, ScanRules(), result.states)
    assert rescan.unchanged == 10_000 and rescan.read_files == 0
    assert time.perf_counter() - started < 60
    assert snapshot(tmp_path) == before


def test_the_cursor_round_trips_and_a_damaged_one_is_empty() -> None:
    states = {"a.md": FileState(3, 4, "h", "doc-a", True), "b.md": FileState(1, 2, "g")}
    assert folder_scan.cursor_from_json(folder_scan.cursor_json(states)) == states
    assert folder_scan.cursor_from_json({"version": 9}) == {}
    assert folder_scan.cursor_from_json({"version": 1, "files": {"x": [1]}}) == {}


def test_credential_stores_are_skipped_counted_and_dropped_from_the_cursor(tmp_path: Path) -> None:
    write(tmp_path, "notes.md", "a note")
    write(tmp_path, ".ssh/id_ed25519", "key")
    write(tmp_path, "deep/.aws/credentials", "key")
    write(tmp_path, "app/.env.local", "TOKEN=x")
    write(tmp_path, ".netrc", "machine x password y")
    rules = ScanRules(globs=("**/*",), excludes=())
    # A cursor from before the rule still lists a credential file: it is removed now.
    old = {".netrc": FileState(1, 1, "0" * 64, "doc_old")}
    result = folder_scan.scan(tmp_path, rules, old)
    assert list(result.states) == ["notes.md"]
    assert sorted(s.path for s in result.skipped) == [".netrc", ".ssh/", "app/.env.local",
                                                      "deep/.aws/"]  # fmt: skip
    assert {s.reason for s in result.skipped} == {"credential_store"}
    assert result.removed == (".netrc",)


def test_with_roots_a_file_swapped_for_a_link_out_of_the_root_is_not_read(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    write(root, "a.md", "alpha")
    write(outside, "secret.md", "secret")
    rules = ScanRules(roots=(root.resolve(),))
    assert folder_scan.file_digest(root / "a.md", rules.max_bytes, rules.roots)[1] is None
    (root / "a.md").unlink()
    (root / "a.md").symlink_to(outside / "secret.md")  # after the walk, before the read
    assert folder_scan.file_digest(root / "a.md", rules.max_bytes, rules.roots) == (
        None,
        "outside_root",
    )
