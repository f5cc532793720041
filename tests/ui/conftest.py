"""Qt tests run offscreen; a qasync loop drives the window's coroutines as in the real app."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication

from signet_desktop.config import SignetConfig, WorkspacePaths
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService


@pytest.fixture
def qt_loop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync event loop over the test QApplication (closed after the test)."""
    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    yield loop
    loop.close()
    asyncio.set_event_loop(None)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[SignetService]:
    """A real facade over a fresh workspace database (lexical recall: no model to load)."""
    paths = WorkspacePaths.for_root(tmp_path / "ws")
    paths.ensure()
    built = build_service(paths, SignetConfig(), BuildOptions(no_embedder=True))
    yield built
    built.close()
