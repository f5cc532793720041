"""Why the hints worker is idle reaches /api/status `workers`, `signet status` and the doctor."""

from __future__ import annotations

from signet_desktop.cli.status_commands import status_lines
from signet_desktop.domain.events import WorkerStateChanged
from signet_desktop.service.diagnostics import worker_checks
from signet_desktop.service.hints.service import DISABLED
from signet_desktop.service.status import StatusBoard


def test_the_detail_survives_state_changes_and_is_shown() -> None:
    board = StatusBoard()
    board.note_worker("hints", DISABLED)
    assert board.snapshot()["workers"]["hints"] == {
        "state": "pending",
        "error": None,
        "detail": DISABLED,
    }
    board.apply(WorkerStateChanged(worker="hints", state="running"))
    board.apply(WorkerStateChanged(worker="documents", state="running"))
    workers = board.snapshot()["workers"]
    assert workers["hints"] == {"state": "running", "error": None, "detail": DISABLED}
    assert workers["documents"] == {"state": "running", "error": None}
    status = {"workers": workers}
    lines = status_lines("http://127.0.0.1:3850", {"status": "ok"}, status, {})
    assert any(line.startswith("worker hints") and DISABLED in line for line in lines)
    assert not any(line.startswith("worker documents") for line in lines)
    texts = [check.text for check in worker_checks(status)]
    assert f"worker hints running ({DISABLED})" in texts
    assert "worker documents running" in texts
