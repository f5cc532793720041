"""UMAP progress: the bar moves on umap's own signals (imports, its log lines, its epochs).

The pieces are fed what umap 0.5 prints (`umap_.py`'s verbose lines, tqdm's `n/total`), and
`test_umap_real.py` runs the real UMAP once in its worker process and reads the progress it
sent.
"""

from __future__ import annotations

import pytest

from signet_desktop.projection import phases

# What umap 0.5.12 prints with verbose=True, in order (timestamps as it writes them).
UMAP_LINES = (
    "UMAP(angular_rp_forest=True, metric='cosine', n_jobs=1, random_state=42, verbose=True)\n",
    "Sun Dec  6 22:10:01 2026 Construct fuzzy simplicial set\n",
    "Sun Dec  6 22:10:01 2026 Finding Nearest Neighbors\n",
    "Sun Dec  6 22:10:19 2026 Finished Nearest Neighbor Search\n",
    "Sun Dec  6 22:10:24 2026 Construct embedding\n",
)


def recorder() -> tuple[phases.Bar, list[tuple[str, float]]]:
    seen: list[tuple[str, float]] = []
    return phases.Bar(lambda phase, fraction: seen.append((phase, fraction))), seen


def test_each_finished_import_is_a_loading_step() -> None:
    bar, seen = recorder()
    phases.load(bar, ("json", "csv", "decimal"))
    assert [p for p, _ in seen] == ["loading"] * 4
    assert [round(f, 3) for _, f in seen] == [0.0, 0.1, 0.2, 0.3]


def test_umaps_lines_and_epochs_move_the_bar_through_its_phases_in_order() -> None:
    bar, seen = recorder()
    messages, epochs = phases.Messages(bar), phases.Epochs(bar)
    for line in UMAP_LINES:
        messages.write(line)
    for n in (0, 50, 100, 200):
        epochs.write(f"{n}/200\n")
    messages.write("Sun Dec  6 22:10:30 2026 Finished embedding\n")
    names = [p for p, _ in seen]
    assert names[:3] == ["neighbours", "neighbours", "graph"]
    assert names[3:] == ["layout"] * 5 + ["writing"]
    fractions = [f for _, f in seen]
    assert fractions == sorted(fractions)
    assert fractions[2] == phases.GRAPH and fractions[-1] == phases.WRITING
    assert fractions[6] == pytest.approx((phases.LAYOUT + phases.WRITING) / 2, abs=0.01)


def test_the_bar_never_goes_back_and_unrelated_text_moves_nothing() -> None:
    bar, seen = recorder()
    phases.Epochs(bar).write("150/200\n")
    phases.Messages(bar).write("Finding Nearest Neighbors\n")  # late, lower: held where it is
    phases.Messages(bar).write("disconnected vertices: 0\n")
    phases.Epochs(bar).write("no counts here\n")
    assert len(seen) == 2
    assert seen[1] == ("neighbours", seen[0][1])
