"""Shared fixtures: a fresh migrated database and service in a temp workspace.

Every test that opens a new database (`db`, `build_service`, a daemon in-process) starts from
a copy of one database migrated once per test process (`migrated_template`), instead of
running every migration again: a copy is ~1 ms, a migration run ~30 ms. Tests of migrations
themselves are marked `migrates` and open their databases as production does.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# numba's compiled code (the real UMAP worker's) outlives the virtualenv: a CI run that
# creates .venv anew loads it instead of compiling for tens of seconds again.
os.environ.setdefault("NUMBA_CACHE_DIR", str(Path.home() / ".cache" / "signet-desktop" / "numba"))

from signet_desktop.storage import database as database_module
from signet_desktop.storage.connect import create_private_file
from signet_desktop.storage.database import Database, open_database
from tests.support.fake_llm import fake_llm  # noqa: F401  (the scripted LLM server)
from tests.support.postgres import (  # noqa: F401  (the embedded PostgreSQL fixtures)
    pg_conn,
    pg_empty_url,
    pg_template,
    pg_url,
    postgres_server,
)

_DATABASE_INIT = Database.__init__


def _allowed_seconds(item: pytest.Item) -> float:
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0])
    return float(item.config.getini("timeout") or 0)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: four workers per core (at most 16). Much of the suite waits on processes it
    started (daemons, the real harness binaries, Xvfb), so a core per worker left them idle:
    the whole suite on this 2-core machine took 532 s with 2 workers, 444 s with 4; later, on
    a quiet machine, 389 s with 4 and 371 s with 8 (555 s of CPU in all)."""
    return min(16, 4 * (os.cpu_count() or 1))


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With `-n`, the long tests sorted first are dealt round the workers, one at a time
    (tests/support/scheduling.py), unless another `--dist` was asked for."""
    if config.getvalue("dist") != "load":
        return None
    from tests.support.scheduling import LongestFirstScheduling

    return LongestFirstScheduling(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `slow` run first, those allowed the longest time (their `timeout`) first
    of all, the rest in file order: with `-n auto` the long ones start first, dealt round the
    workers (tests/support/scheduling.py), while the thousands of quick ones fill in around
    them, instead of one of them running alone at the end. Every worker sorts the same
    collection the same way (xdist compares them)."""

    def key(item: pytest.Item) -> tuple[bool, float]:
        slow = item.get_closest_marker("slow") is not None
        return (not slow, -_allowed_seconds(item) if slow else 0.0)

    items.sort(key=key)


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Path]:
    """One migrated, checkpointed database file per vec setting, for this test process."""
    templates: dict[bool, Path] = {}
    for with_vec in (True, False):
        path = tmp_path_factory.mktemp("template") / "memories.db"
        open_database(path, with_vec=with_vec).close()  # the last close checkpoints the WAL
        assert not path.with_name(path.name + "-wal").exists()
        templates[with_vec] = path
    return templates


@pytest.fixture(autouse=True)
def databases_from_template(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new database file starts as a copy of the migrated template (not for `migrates`)."""
    if request.node.get_closest_marker("migrates") is not None:
        return
    templates: dict[bool, Path] = request.getfixturevalue("migrated_template")

    def init(self: Database, path: Path, *, with_vec: bool = True) -> None:
        if not path.exists() and path.parent.name != "":
            create_private_file(path)  # the modes production gives a new database
            with templates[with_vec].open("rb") as source, path.open("r+b") as target:
                shutil.copyfileobj(source, target)
        _DATABASE_INIT(self, path, with_vec=with_vec)

    monkeypatch.setattr(database_module.Database, "__init__", init)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    """A migrated database in a temp directory, closed after the test."""
    database = open_database(tmp_path / "memory" / "memories.db")
    yield database
    database.close()
