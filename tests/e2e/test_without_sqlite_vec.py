"""Without sqlite-vec the real daemon still starts, says so, and recalls honestly."""

from __future__ import annotations

import signal

import httpx
import pytest
from support.progress import wait_for_count

from tests.e2e.launcher import Launcher, args_for, clean_env, no_traceback

pytestmark = pytest.mark.slow


def wait_for_vectors(client: httpx.Client, count: int) -> None:
    """Until `count` memories have a vector (they follow the remember from the batcher)."""
    wait_for_count(
        lambda: int(client.get("/api/memories").json()["stats"]["withEmbeddings"]),
        count,
        what="memories with a vector",
    )


def test_daemon_runs_on_the_bounded_fallback_and_reports_it(launcher: Launcher) -> None:
    workspace = launcher.tmp_path / "ws"
    env = clean_env(launcher.home, SIGNET_DISABLE_SQLITE_VEC="1")
    daemon = launcher.start(*args_for(workspace), env=env)
    with httpx.Client(base_url=daemon.wait_listening(), timeout=15) as client:
        vector = client.get("/api/status").json()["vector"]
        assert vector["available"] is False and vector["error"]
        stored = client.post(
            "/api/memory/remember", json={"content": "The staging cluster runs on ARM nodes."}
        )
        assert stored.status_code == 200 and stored.json()["vectorStatus"] == "pending"
        wait_for_vectors(client, 1)
        body = client.post(
            "/api/memory/recall", json={"query": "what hardware does staging use"}
        ).json()
        assert body["vectorCompleteness"] == "recent-window"
        assert body["vectorIndex"] == "recent-window"
        assert body["searchedWindow"] == 10_000
        assert [hit["id"] for hit in body["results"]] == [stored.json()["id"]]
    assert daemon.signal(signal.SIGTERM) == 0
    assert "SIGNET_DISABLE_SQLITE_VEC=1" in daemon.stderr()
    no_traceback(daemon.stderr())
