"""Shared fixtures: a fresh migrated database and service in a temp workspace."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from signet_desktop.storage.database import Database, open_database
from tests.support.fake_llm import fake_llm  # noqa: F401  (the scripted LLM server)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    """A migrated database in a temp directory, closed after the test."""
    database = open_database(tmp_path / "memory" / "memories.db")
    yield database
    database.close()
