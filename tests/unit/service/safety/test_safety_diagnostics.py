"""The doctor's content-safety line, from the /api/diagnostics/memory-safety shape."""

from __future__ import annotations

from signet_desktop.service.diagnostics import Level, render, safety_check


def test_the_line_counts_statuses_and_lists_reasons() -> None:
    check = safety_check(
        {
            "policyVersion": "memory-content-safety-v1",
            "counts": {"clean": 10, "tainted": 1, "blocked": 2},
            "reasons": {"prompt_injection": 2, "invisible_unicode": 1},
            "pending": 3,
        }
    )
    assert check is not None and check.level is Level.OK
    assert render([check]) == [
        "✓ content safety memory-content-safety-v1: 10 clean, 1 tainted, 2 blocked, "
        "3 awaiting a scan (gated in memory meanwhile)",
        "    withheld from prompts: invisible_unicode 1, prompt_injection 2",
    ]


def test_no_counts_no_line() -> None:
    assert safety_check({}) is None
    quiet = safety_check({"policyVersion": "v", "counts": {}, "reasons": {}, "pending": 0})
    assert quiet is not None and quiet.details == ()
    assert quiet.text == "content safety v: 0 clean, 0 tainted, 0 blocked"
