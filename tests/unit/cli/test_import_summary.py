"""The summary `signet import` prints from a finished run and its account."""

from __future__ import annotations

from signet_desktop.cli.import_commands import files_line, run_summary_lines

RUN = {
    "id": "run_1",
    "status": "completed",
    "counts": {
        "filesSeen": 24,
        "filesChanged": 20,
        "recordsImported": 14,
        "recordsDuplicate": 1,
        "recordsSkipped": 1,
        "recordsFailed": 0,
        "turnsImported": 523,
    },
    "account": {
        "files": {"imported": 14, "skipped": 4, "inProgress": 1, "pending": 1},
        "fileReasons": {
            "compaction agent (a summary of its parent session's own turns)": 2,
            "warm-up agent (Claude Code's cache warm-up, no task)": 1,
            "duplicate: captured live": 1,
            "open in live capture; next run": 1,
        },
        "sessionReasons": {"duplicate: captured live": 1, "skipped: open in live capture": 1},
        "subagents": 5,
        "keptOut": {"meta": 12, "event-copy": 40, "instructions": 3},
    },
}


def test_the_summary_says_what_became_of_every_file_and_why() -> None:
    lines = run_summary_lines("src_1", RUN)
    assert lines[0] == (
        "import completed: 14 sessions imported (5 of them subagent transcripts), 523 turns; "
        "1 duplicate, 1 skipped, 0 failed"
    )
    assert lines[1] == (
        "files: 24 seen — 14 imported, 4 unchanged, 4 skipped, 1 in progress (read again next "
        "run), 1 to retry, 0 failed"
    )
    assert lines[2].startswith("  files left: 2 compaction agent")
    assert "1 open in live capture; next run" in lines[2]
    assert lines[3] == (
        "  sessions left: 1 duplicate: captured live; 1 skipped: open in live capture"
    )
    assert lines[4] == (
        "  messages kept out of turns (still in the staged copies): 40 event-copy; 12 meta; "
        "3 instructions"
    )
    assert lines[-1] == "source src_1 · run run_1"


def test_a_run_without_an_account_still_summarises_its_counts() -> None:
    counts = {"filesSeen": 3, "filesChanged": 3, "recordsImported": 3, "turnsImported": 12}
    lines = run_summary_lines("src_2", {"id": "run_2", "status": "completed", "counts": counts})
    assert lines[0].startswith("import completed: 3 sessions imported, 12 turns;")
    assert lines[1] == files_line(counts, {}) and len(lines) == 3
