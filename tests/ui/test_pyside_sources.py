"""PySide6's import hook answers as before, and no module's source stays in linecache."""

from __future__ import annotations

import importlib
import inspect
import linecache
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from signet_desktop.ui import pyside_sources


@pytest.fixture
def fresh_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "uses_qt_here.py").write_text("from PySide6 import QtCore\nVALUE = 1\n")
    (tmp_path / "plain_module_here.py").write_text("VALUE = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("uses_qt_here", "plain_module_here"):
        sys.modules.pop(name, None)


def test_the_hook_uses_the_light_check() -> None:
    hook = sys.modules[pyside_sources.HOOK_MODULE]
    assert getattr(hook, pyside_sources.CHECK) is pyside_sources.names_pyside


def test_an_import_after_pyside_leaves_no_source_in_linecache(fresh_modules: Path) -> None:
    for name in ("uses_qt_here", "plain_module_here"):
        module = importlib.import_module(name)
        assert str(fresh_modules / f"{name}.py") not in linecache.cache
        # the answer PySide6's own check (inspect.getsource) gives
        assert pyside_sources.names_pyside(module) == ("PySide6" in inspect.getsource(module))
    assert pyside_sources.names_pyside(sys.modules["uses_qt_here"])
    assert not pyside_sources.names_pyside(sys)  # built in: no source
