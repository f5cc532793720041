"""The Dreaming pane's words, computed without Qt: timeline, tool calls, operations, quotes."""

from __future__ import annotations

from datetime import UTC, datetime

from signet_desktop.domain.dreaming import MutationCounts, PassUsage
from signet_desktop.ui import dreaming_format as fmt
from signet_desktop.ui import quote_format as quote_fmt
from signet_desktop.ui.dreaming_revert import describe, revert_preview
from tests.unit.ui.dreaming_values import (
    QUOTE,
    TRANSCRIPT,
    a_call,
    a_pass,
    an_exclusion,
    an_operation,
)


def test_numbers_read_briefly() -> None:
    assert [fmt.compact(n) for n in (950, 3_210, 3_000, 61_234, 1_234_567)] == [
        "950", "3.2k", "3k", "61k", "1.2M"]  # fmt: skip
    assert [fmt.duration_text(s) for s in (0.24, 12, 252, 3_780)] == [
        "0.2s", "12s", "4m 12s", "1h 3m"]  # fmt: skip
    assert [fmt.cost_text(c) for c in (None, 0.0, 0.004, 0.0412)] == ["", "$0.00", "<$0.01",
                                                                      "$0.04"]  # fmt: skip


def test_a_pass_row_and_heading() -> None:
    row = fmt.pass_row(a_pass())
    assert row.title == "2026-11-30 03:12 · incremental"
    assert (row.status, row.tone) == ("completed", "ok")
    assert row.facts == "4m 12s · 61k in / 3.2k out · $0.04"
    assert row.mutations == "2 applied · 1 failed"
    assert (row.took, row.usage) == ("4m 12s · $0.04", "61k in / 3.2k out")
    assert fmt.pass_heading(a_pass()) == "Pass 2026-11-30 03:12 · incremental · completed"
    assert fmt.pass_subline(a_pass()) == (
        "4m 12s · 61k in / 3.2k out tokens · $0.04 · trigger token-threshold"
        " · openai-compatible qwen2.5"
    )


def test_running_failed_interrupted_and_idle_passes() -> None:
    now = datetime(2026, 11, 30, 3, 13, 3, tzinfo=UTC)
    running = a_pass(status="running", completed_at=None, usage=PassUsage())
    assert fmt.pass_row(running, now).facts == "running 1m 3s"
    killed = a_pass(status="failed", error="interrupted: the daemon stopped mid-pass")
    row = fmt.pass_row(killed)
    assert (row.status, row.tone) == ("interrupted", "error")
    assert row.note.startswith("interrupted")
    idle = a_pass(mutations=MutationCounts(), usage=PassUsage())
    assert fmt.pass_row(idle).mutations == "no changes"
    assert fmt.tokens_text(idle) == ""
    assert fmt.timeline_counts([a_pass(), running, killed]) == (
        "3 passes · 1 completed · 1 running · 1 interrupted"
    )


def test_tool_call_rows_show_arguments_briefly_and_in_full() -> None:
    row = fmt.tool_call_row(a_call(0, "search_evidence", {"query": "billing db"},
                                   {"hits": [{"ref": "memory:m1"}]}))  # fmt: skip
    assert (row.line, row.took) == ("1. Search the evidence for “billing db”", "0.2s")
    assert row.raw == 'search_evidence("billing db")'  # the Details view
    assert '"ref": "memory:m1"' in row.result and "\n" in row.result
    ops = fmt.tool_call_row(a_call(2, "apply_ontology_ops", {"operations": [{}, {}, {}, {}]}))
    assert (ops.line, ops.raw) == ("3. Apply 4 operations", "apply_ontology_ops(4 ops)")
    failed = fmt.tool_call_row(a_call(3, "get_entity", '{"id": ', status="error",
                                      error="malformed JSON arguments"))  # fmt: skip
    assert failed.result.startswith("error: malformed JSON arguments")
    assert failed.arguments == '{"id": '  # not JSON: shown as it came


def test_operation_rows_mark_status_subject_and_outcome() -> None:
    applied = fmt.operation_row(an_operation(0, "set_claim_value", "applied",
        {"entityId": "e1", "aspectId": "a1", "claimKey": "database", "value": "Postgres 16"},
        result={"attribute_id": "c2abcdef99"}), {"e1": "billing"})  # fmt: skip
    assert applied.title == "✔ Set billing’s database to “Postgres 16”" and applied.tone == "ok"
    assert applied.subject == 'billing · database = "Postgres 16"'
    assert applied.outcome == "applied: attribute c2abcdef…"
    assert applied.quotes == (quote_fmt.Quote(QUOTE, "transcript:8c35aa"),)
    refused = fmt.operation_row(an_operation(1, "merge_entities", "failed",
        {"targets": ["e-old-123456", "e-new-123456"], "survivor": "e-new-123456"}, evidence=(),
        code="attention_required", reason="hygiene op needs attention:<id>"),
        {"e-old-123456": "ledger-svc"})  # fmt: skip
    assert refused.title == "✘ Merge ledger-svc into an entity" and refused.tone == "error"
    assert refused.subject == "ledger-svc → e-new-12…"
    link = fmt.operation_subject(
        "create_link",
        {"fromEntityId": "a", "toEntityId": "b", "linkType": "follows"},
        {"a": "replica"},
    )
    assert link == "replica → b (follows)"
    assert fmt.entity_ids(
        {"entityId": "x", "targets": ["y", "z"], "survivor": "z", "name": "n"}
    ) == {"x", "y", "z"}
    assert refused.outcome == "refused (attention_required): hygiene op needs attention:<id>"
    proposed = fmt.operation_row(an_operation(2, "rename_entity", "proposed",
        {"entityId": "e9", "oldName": "ledger-svc", "newName": "ledger"},
        result={"proposal_id": "prop123456789"}))  # fmt: skip
    assert proposed.title == "‖ Rename ledger-svc to “ledger”"
    assert fmt.operation_outcome(an_operation(2, "rename_entity", "proposed", {},
        result={"proposal_id": "prop123456789"}), ids=False) == "waiting for review"  # fmt: skip
    assert proposed.subject == "“ledger-svc” → “ledger”"
    assert proposed.outcome == "waiting for review · proposal prop1234…"
    created = fmt.operation_row(an_operation(3, "create_entity", "applied",
                                             {"name": "Postgres", "type": "tool"}))  # fmt: skip
    assert created.subject == "Postgres · tool"
    assert fmt.operation_counts([an_operation(0, "x", "applied", {}),
                                 an_operation(1, "y", "failed", {})]) == (
        "1 applied ✔ · 1 failed ✘")  # fmt: skip


def test_a_quote_is_found_in_its_transcript_with_its_turn() -> None:
    context = quote_fmt.quote_context(TRANSCRIPT, f"  {QUOTE} ", chars=20)
    assert context.found and context.match == QUOTE
    assert context.turn == 2  # the third turn
    assert context.before.startswith("…") and context.before.endswith("user: ")
    assert context.after.startswith(", the replica")
    html = quote_fmt.highlight_html(context, "#fde68a", "#000")
    assert f"<span style='background-color: #fde68a; color: #000;'>{QUOTE}</span>" in html
    assert "<br>" in html
    missing = quote_fmt.quote_context(TRANSCRIPT, "Postgres 17")
    assert (
        not missing.found
        and quote_fmt.highlight_html(missing, "#ff0", "#000") == "<i>Postgres 17</i>"
    )
    assert quote_fmt.turn_of("no roles here", 3) is None
    assert (
        quote_fmt.source_label(quote_fmt.Quote(QUOTE, "transcript:8c35aa"), 2)
        == "transcript 8c35aa · turn 3"
    )


def test_highlighting_escapes_the_source() -> None:
    context = quote_fmt.quote_context("a <b>bold</b> & claim", "<b>bold</b>")
    assert quote_fmt.highlight_html(context, "y", "k") == (
        "a <span style='background-color: y; color: k;'>&lt;b&gt;bold&lt;/b&gt;</span> &amp; claim"
    )


def test_window_runbook_and_exclusions() -> None:
    head, lines = fmt.window_lines(a_pass().evidence_window)
    assert head == "1 source · 48k of 128k tokens · budget reached"
    assert lines == ["transcript:8c35aa · 3.1k tokens", "left out: memory:m9 (budget)"]
    assert fmt.window_lines(None) == ("No evidence window recorded", [])
    text = fmt.runbook_text(a_pass().runbook)
    assert text.startswith("Mode incremental · focus content\nCaps: perPass 100")
    assert "• Cite exact quotes." in text and "  – Is the replica in us-east?" in text
    assert fmt.exclusion_line(an_exclusion()) == (
        "transcript 9f00bb11cc22… — blocked by content safety (2 attempts)"
    )


def test_revert_preview_lists_changes_or_blockers() -> None:
    head, lines = revert_preview([{"description": "archive entity Postgres"}], [])
    assert head == "Reverting undoes 1 change:" and lines == ["archive entity Postgres"]
    head, lines = revert_preview([{"x": 1}], [{"reason": "pass p2 merged Postgres"}])
    assert head.startswith("This pass cannot be reverted: 1 later change")
    assert lines == ["pass p2 merged Postgres"]
    assert revert_preview([], [])[1] == []
    change = {
        "action": "archive",
        "target_table": "entities",
        "target_id": "e1",
        "before": None,
        "after": {"name": "logical replication"},
    }
    assert describe(change) == "archive entity “logical replication”"
    bare = {"action": "restore", "target_table": "entity_attributes", "target_id": "c" * 20}
    assert describe(bare) == "restore claim cccccccccccc…"


def test_quotes_html_links_sources_and_says_what_is_missing() -> None:
    colours = quote_fmt.QuoteColours("#ff0", "#000", "#777", "#00f", "#f00")
    quotes = (quote_fmt.Quote(QUOTE, "transcript:8c35aa"), quote_fmt.Quote("gone", "memory:m1"),
              quote_fmt.Quote("odd", "summary:s1"))  # fmt: skip
    loading = quote_fmt.quotes_html(quotes, {}, colours)
    assert loading.count("loading the source…") == 3
    done = quote_fmt.quotes_html(quotes, {"transcript:8c35aa": TRANSCRIPT, "memory:m1": None,
                                    "summary:s1": "nothing odd here? no"}, colours)  # fmt: skip
    assert "href='transcript:8c35aa#2'" in done and "→ transcript 8c35aa · turn 3" in done
    assert "href='memory:m1'" in done and "source text unavailable" in done
    assert "not found verbatim" not in done  # "odd" is in the summary
    assert "<span style='color:#777'>summary s1</span>" in done  # no pane to link to
    assert quote_fmt.quotes_html((), {}, colours) == "<p style='color:#777'>No evidence cited.</p>"


def test_each_apply_call_knows_the_operations_it_sent() -> None:
    calls = [
        a_call(0, "search_evidence", {"query": "x"}, {"results": []}),
        a_call(1, "apply_ontology_ops", {"operations": [{}, {}]}, {"requestId": "r1"}),
        a_call(2, "apply_ontology_ops", {"operations": [{}]}, '{"requestId": "r2"}'),
    ]
    records = [
        an_operation(1, "b", "failed", {}),
        an_operation(0, "a", "applied", {}),
        an_operation(2, "c", "applied", {}, request_id="r9"),
    ]
    found = fmt.operations_of_calls(calls, records)
    assert {seq: [r.operation for r in rs] for seq, rs in found.items()} == {1: ["a", "b"]}


def test_the_window_heading_counts_sources_by_kind() -> None:
    window = {
        "tokens": 900,
        "budgetTokens": 0,
        "items": [{"ref": "memory:a"}, {"ref": "memory:b"}, {"ref": "transcript:s"}],
    }
    assert fmt.window_lines(window)[0] == "3 sources (2 memory, 1 transcript) · 900 tokens"
