"""Session turns as prompt text: quoted, attributed, within the budget, never cut mid-line."""

from __future__ import annotations

from signet_desktop.domain.recall import ChannelEvidence, TurnHit
from signet_desktop.service.hooks.injection import TURN_HEADING, TURN_QUOTE_CHARS, render_turns


def hit(n: int, text: str, timestamp: str | None = "2026-11-29T09:00:00Z") -> TurnHit:
    return TurnHit(
        session_key=f"s{n}",
        turn_index=n,
        turn_count=10,
        role="assistant",
        excerpt=text,
        timestamp=timestamp,
        harness="claude-code",
        project=None,
        source_id=None,
        score=0.5,
        evidence=ChannelEvidence(0.5, n + 1, -3.0),
    )


def test_each_turn_is_a_quoted_attributed_line() -> None:
    out = render_turns([hit(0, 'we said "use Postgres 16"'), hit(1, "x", None)], max_chars=500)
    assert out.text.splitlines() == [
        f"## {TURN_HEADING}",
        "- \"we said 'use Postgres 16'\" (assistant, session s0 on 2026-11-29)",
        '- "x" (assistant, session s1)',
    ]
    assert out.memory_ids == ("transcript:s0#0", "transcript:s1#1")


def test_the_budget_holds_whole_lines_only_and_long_quotes_are_cut() -> None:
    turns = [hit(i, "word " * 200) for i in range(5)]
    out = render_turns(turns, max_chars=700)
    assert len(out.text) <= 700
    lines = out.text.splitlines()[1:]
    assert len(lines) == len(out.memory_ids) == 2
    assert all(line.endswith("on 2026-11-29)") for line in lines)
    assert all(len(line) < TURN_QUOTE_CHARS + 60 for line in lines)
    assert render_turns(turns, max_chars=60).text == ""  # not even one line fits


def test_a_questions_reply_follows_it_and_is_shortened_first() -> None:
    from dataclasses import replace

    from signet_desktop.domain.recall import TurnText

    asked = replace(
        hit(0, "which database should billing use?"),
        role="user",
        reply=TurnText(1, "assistant", "billing runs on Postgres 16 " + "detail " * 100),
    )
    out = render_turns([asked], max_chars=500)
    assert out.memory_ids == ("transcript:s0#0", "transcript:s0#1")  # the reply is shown too
    line = out.text.splitlines()[1]
    assert line.startswith('- "which database should billing use?" (user, session s0 on')
    assert ' — assistant: "billing runs on Postgres 16' in line and line.endswith('…"')
    tight = render_turns([asked], max_chars=150)
    assert len(tight.text) <= 150 and "assistant:" not in tight.text  # the question alone
    assert tight.memory_ids == ("transcript:s0#0",)
