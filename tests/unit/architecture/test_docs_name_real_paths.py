"""Every repository path the README and docs/ name exists, and every `path.py: symbol` they
cite is defined there: a doc that names a moved module fails here, not in a reader's hands."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
# `path.ext` or `path.ext: symbol` inside backticks
CITED = re.compile(r"`([A-Za-z0-9_./-]+\.(?:py|md|toml|yaml|json|mjs|sql|sh))(?::\s*(\w+))?[^`]*`")
# Files on the user's machine or in a harness's folder, not in this repository
USER_FILES = {
    "AGENT.yaml",
    "IDENTITY.md",
    "MEMORY.md",
    "agent.yaml",
    "config.json",  # OpenCode's third config name
    "config.toml",
    "config.yaml",
    "credentials.json",
    "opencode.json",
    "package.json",
    "plugins/signet.mjs",
    "report.json",
    "settings.json",
    "migrations/NNNN_name.sql",  # the pattern a new migration's name follows
}


@functools.cache
def repository_files() -> tuple[str, ...]:
    """The repository's files, less hidden folders (.git, .venv) and caches: walked once, on
    the first reference that needs it (walking .venv too cost every test process ~1 s at
    collection)."""
    found = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [d for d in subfolders if not d.startswith(".") and d != "__pycache__"]
        base = Path(folder).relative_to(ROOT)
        found.extend((base / name).as_posix() for name in files)
    return tuple(found)


def cited() -> list[tuple[str, str, str | None]]:
    found = []
    for doc in DOCS:
        for match in CITED.finditer(doc.read_text(encoding="utf-8")):
            ref, symbol = match.group(1), match.group(2)
            if ref.startswith((".", "/")) or ref in USER_FILES:
                continue
            found.append((doc.name, ref, symbol))
    return found


def resolve(ref: str) -> Path | None:
    """The repository file `ref` names: from the root, from the package, or by its tail."""
    for base in (ROOT, ROOT / "signet_desktop", ROOT / "tests", ROOT / "docs"):
        if (base / ref).is_file():
            return base / ref
    tails = [f for f in repository_files() if f == ref or f.endswith("/" + ref)]
    return ROOT / tails[0] if tails else None


@pytest.mark.parametrize(("doc", "ref", "symbol"), cited())
def test_a_cited_path_exists(doc: str, ref: str, symbol: str | None) -> None:
    path = resolve(ref)
    assert path is not None, f"{doc} names {ref}, which is not in the repository"
    if symbol and path.suffix == ".py":
        text = path.read_text(encoding="utf-8")
        defined = re.search(
            rf"^\s*(?:async def|def|class)\s+{symbol}\b|^{symbol}\s*[:=]", text, re.M
        )
        assert defined, f"{doc} cites {ref}: {symbol}, which {ref} does not define"
