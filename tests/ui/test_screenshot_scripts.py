"""The demo workspace script fills a store through the facade; the screenshot script renders it."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import demo_workspace  # noqa: E402

pytestmark = pytest.mark.gui


def test_demo_workspace_has_topics_people_and_a_history(tmp_path: Path) -> None:
    demo = demo_workspace.build(tmp_path / "demo", count=150, embedder="hash")
    service = demo.service
    try:
        assert service.memories.count("default") == len(demo.ids) - 1  # one forgotten
        memories = service.memories.list_page("default", limit=500, offset=0).memories
        types = Counter(m.type for m in memories)
        assert {"fact", "decision", "episodic", "preference"} <= set(types)
        assert sum(m.pinned for m in memories) == 4
        assert len({m.who for m in memories if m.who}) >= 5
        assert len({m.project for m in memories if m.project}) >= 4
        billing = demo.ids["billing runs on Postgres 16"]
        events = [e.event for e in service.memories.history("default", billing)]
        assert events[0] == "created" and events.count("modified") == 2
        kafka = demo.ids["Kafka topics keep 7 days of retention; S3 keeps the raw events forever"]
        assert [e.event for e in service.memories.history("default", kafka)][-2:] == [
            "deleted",
            "recovered",
        ]
        retained = list((demo.root / "memory").glob("*/transcripts/transcript.jsonl"))
        assert retained and all(path.stat().st_size > 0 for path in retained)
        coverage = service.embeddings.status().coverage
        assert coverage is not None and coverage.embedded == coverage.total
    finally:
        service.close()


@pytest.mark.slow
def test_screenshots_script_writes_a_png_per_pane_and_theme(tmp_path: Path) -> None:
    out = tmp_path / "shots"
    result = subprocess.run(
        [
            sys.executable,
            str(SCRIPTS / "screenshots.py"),
            "--out",
            str(out),
            "--embedder",
            "hash",
            "--count",
            "80",
            "--panes",
            "health",
            "--size",
            "1280x800",
        ],
        capture_output=True,
        text=True,
        timeout=110,
        env={"QT_QPA_PLATFORM": "offscreen", "PATH": "", "HOME": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for name in ("health.png", "health-dark.png"):
        image = QImage(str(out / name))
        assert (image.width(), image.height()) == (1280, 800)
    light, dark = QImage(str(out / "health.png")), QImage(str(out / "health-dark.png"))
    assert light.pixelColor(640, 400).lightness() > dark.pixelColor(640, 400).lightness()
