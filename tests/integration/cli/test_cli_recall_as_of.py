"""`signet recall --as-of`: a relative question answered as of that day, against the daemon."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.daemon import Capture, CliDaemon, run_daemon
from support.relative_time import EARLY, EARLY_AS_OF, LATE, LATE_AS_OF, QUESTION, remember_bodies

from signet_desktop.cli.main import main
from signet_desktop.embedding.hashing import HashEmbedder

TELEMETRY_ON = {"search": {"telemetry": {"enabled": True}}}


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[CliDaemon]:
    with run_daemon(tmp_path / "ws", HashEmbedder(), config=TELEMETRY_ON) as served:
        with httpx.Client(base_url=served.url, timeout=10) as http:
            for body in remember_bodies():  # dated: `signet remember` takes no createdAt
                assert http.post("/api/memory/remember", json=body).status_code == 200
        yield served


def recorded(daemon: CliDaemon) -> int:
    """Recalls the ledger holds (flushed first: it is written behind the answer)."""
    telemetry = daemon.service.recall.telemetry
    assert telemetry is not None
    telemetry.flush()
    return daemon.scalar("SELECT COUNT(*) FROM memory_search_telemetry")


def test_as_of_decides_which_week_is_last_week(daemon: CliDaemon, capsys: Capture) -> None:
    for as_of, expected, other in ((EARLY_AS_OF, EARLY, LATE), (LATE_AS_OF, LATE, EARLY)):
        code, out, err = daemon.cli(capsys, "recall", QUESTION, "--as-of", as_of)
        assert (code, err) == (0, ""), err
        lines = out.splitlines()
        assert lines[0].startswith(" 1. ") and expected[0] in lines[0], out
        assert other[0] not in lines[0]


@pytest.mark.parametrize("bad", ["last week", "2025-13-01", "7d", ""])
def test_bad_as_of_is_a_usage_error_and_asks_nothing(
    daemon: CliDaemon, capsys: Capture, bad: str
) -> None:
    before = (daemon.count_rows(), recorded(daemon))
    code, out, err = daemon.cli(capsys, "recall", QUESTION, "--as-of", bad)
    assert code == 2 and out == ""
    assert "--as-of" in err and "is not a time" in err
    assert (daemon.count_rows(), recorded(daemon)) == before


def test_help_explains_as_of(capsys: Capture) -> None:
    assert main(["recall", "--help"], env={}) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--as-of WHEN" in text and "last week" in text and "ISO-8601" in text
