"""What the Dreaming pane shows, computed without Qt: the timeline, a pass's detail, quotes.

A pass reads `2026-11-30 03:12 · incremental · completed · 4m 12s · 61k in / 3.2k out ·
$0.04`; its tool calls `1. Search the evidence for “billing db”  0.2s`; its operations `✔ Set
billing’s database to “Postgres 16”` (the words: `dreaming_words`; the raw names, payloads and
ids are kept for the Details view); a cited quote is found in its source's
canonical text and highlighted there (`highlight_html`), and a transcript quote knows the
turn it sits in (`turn_of`). Everything is unit-tested without widgets.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from signet_desktop.domain.dreaming import DreamingPass, EvidenceExclusion, ToolCallRecord
from signet_desktop.domain.memory import parse_utc
from signet_desktop.domain.ontology import OperationRecord
from signet_desktop.ui.dreaming_words import operation_words, tool_call_words
from signet_desktop.ui.hit_format import preview
from signet_desktop.ui.quote_format import Quote, quotes_of, short_ref

STATUS_CHOICES = (
    ("All passes", None),
    ("Completed", "completed"),
    ("Running", "running"),
    ("Failed", "failed"),
    ("Cancelled", "cancelled"),
)
MODE_CHOICES = ("incremental", "compact", "incremental-hygiene", "incremental-content")
# The tone (a theme colour name) of each pass and operation status.
PASS_TONES = {
    "completed": "ok",
    "running": "accent",
    "failed": "error",
    "cancelled": "muted",
    "interrupted": "error",
}
# ‖ stands for ⏸ (pause), which the common UI fonts lack.
OPERATION_MARKS = {"applied": "✔", "proposed": "‖", "skipped": "–", "failed": "✘"}
OPERATION_TONES = {"applied": "ok", "proposed": "accent", "skipped": "muted", "failed": "error"}
ARGUMENT_CHARS = 48


# -- numbers -------------------------------------------------------------------------------


def stamp(value: str | None) -> str:
    """`2026-11-30 03:12` in UTC (the text itself when unreadable)."""
    when = parse_utc(value)
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if when else (value or "")


def duration_text(seconds: float) -> str:
    """`0.4s`, `12s`, `4m 12s`, `1h 3m`."""
    if seconds < 10:
        return f"{max(seconds, 0):.1f}s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m {whole % 60}s"
    return f"{whole // 3600}h {whole % 3600 // 60}m"


def pass_duration(item: DreamingPass, now: datetime | None = None) -> str:
    """How long the pass took (a running one: how long so far, `running 1m 3s`)."""
    start = parse_utc(item.started_at)
    end = parse_utc(item.completed_at)
    if start is None:
        return ""
    if end is None:
        if item.status != "running":
            return ""
        return "running " + duration_text(((now or datetime.now(UTC)) - start).total_seconds())
    return duration_text((end - start).total_seconds())


def compact(count: int) -> str:
    """`950`, `3.2k`, `61k`, `1.2M` tokens."""
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}k".replace(".0k", "k")
    if count < 1_000_000:
        return f"{count // 1000}k"
    return f"{count / 1_000_000:.1f}M"


def tokens_text(item: DreamingPass) -> str:
    """`61k in / 3.2k out` ("" when the provider was never called)."""
    usage = item.usage
    if not usage.input_tokens and not usage.output_tokens:
        return ""
    return f"{compact(usage.input_tokens)} in / {compact(usage.output_tokens)} out"


def cost_text(cost: float | None) -> str:
    """`$0.04`, `<$0.01`, `$0.00` for a free local model; "" when unknown."""
    if cost is None:
        return ""
    if 0 < cost < 0.01:
        return "<$0.01"
    return f"${cost:.2f}"


def mutations_text(item: DreamingPass) -> str:
    """`3 applied · 1 skipped · 1 failed` (zero counts left out; `no changes`)."""
    counts = item.mutations
    parts = [
        f"{n} {label}"
        for n, label in (
            (counts.applied, "applied"),
            (counts.skipped, "skipped"),
            (counts.failed, "failed"),
        )
        if n
    ]
    return " · ".join(parts) if parts else "no changes"


# -- the timeline --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PassRow:
    """One pass of the timeline."""

    pass_id: str
    title: str  # `2026-11-30 03:12 · incremental`
    status: str
    tone: str
    facts: str  # `4m 12s · 61k in / 3.2k out · $0.04`
    mutations: str
    note: str  # the error or the summary, one line
    took: str = ""  # `4m 12s · $0.04`
    usage: str = ""  # `61k in / 3.2k out`


def pass_status(item: DreamingPass) -> str:
    """The status, with an interrupted pass (a killed daemon) called that."""
    if item.status == "failed" and (item.error or "").startswith("interrupted"):
        return "interrupted"
    return item.status


def pass_row(item: DreamingPass, now: datetime | None = None) -> PassRow:
    status = pass_status(item)
    facts = [pass_duration(item, now), tokens_text(item), cost_text(item.usage.cost_usd)]
    note = item.error if item.status in ("failed", "cancelled") and item.error else item.summary
    return PassRow(
        pass_id=item.id,
        title=f"{stamp(item.started_at)} · {item.mode}",
        status=status,
        tone=PASS_TONES.get(status, "muted"),
        facts=" · ".join(f for f in facts if f),
        mutations=mutations_text(item),
        note=preview(note or "", 140),
        took=" · ".join(f for f in (facts[0], facts[2]) if f),
        usage=facts[1],
    )


def pass_heading(item: DreamingPass) -> str:
    """`Pass 2026-11-30 03:12 · incremental · completed`."""
    return f"Pass {stamp(item.started_at)} · {item.mode} · {pass_status(item)}"


def pass_subline(item: DreamingPass, now: datetime | None = None) -> str:
    """`4m 12s · 61k in / 3.2k out tokens · $0.04 · token-threshold · openai-compatible qwen2.5`."""
    tokens = tokens_text(item)
    parts = [
        pass_duration(item, now),
        f"{tokens} tokens" if tokens else "",
        cost_text(item.usage.cost_usd),
    ]
    if item.trigger_reason:
        parts.append(f"trigger {item.trigger_reason}")
    parts.append(" ".join(p for p in (item.provider, item.model) if p))
    return " · ".join(p for p in parts if p)


def pass_facts(item: DreamingPass) -> list[tuple[str, str]]:
    """The detail's form: trigger, provider and model, id, summary or error."""
    rows: list[tuple[str, str]] = [("Trigger", str(item.trigger_reason or "—"))]
    if item.provider or item.model:
        rows.append(("Model", " · ".join(p for p in (item.provider, item.model) if p)))
    rows.append(("Changes", mutations_text(item)))
    if item.summary:
        rows.append(("Summary", item.summary))
    if item.error:
        rows.append(("Error", item.error))
    rows.append(("Pass id", item.id))
    return rows


def timeline_counts(passes: Sequence[DreamingPass]) -> str:
    """`12 passes · 9 completed · 2 failed · 1 running` (zero counts left out)."""
    counts: dict[str, int] = {}
    for item in passes:
        status = pass_status(item)
        counts[status] = counts.get(status, 0) + 1
    parts = [f"{len(passes)} pass{'' if len(passes) == 1 else 'es'}"]
    for status in ("completed", "running", "failed", "interrupted", "cancelled"):
        if counts.get(status):
            parts.append(f"{counts[status]} {status}")
    return " · ".join(parts)


# -- tool calls ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolCallRow:
    """One tool call: its line and, expanded, its arguments and result as JSON."""

    seq: int
    line: str  # `1. Search the evidence for “billing db”`
    took: str  # `0.2s`
    status: str
    arguments: str
    result: str
    raw: str = ""  # `search_evidence("billing db")` (the Details view)


def argument_preview(arguments: Any, chars: int = ARGUMENT_CHARS) -> str:
    """The call's arguments on one line: a lone string value as itself, else compact JSON."""
    if arguments in (None, {}, []):
        return ""
    if isinstance(arguments, Mapping):
        strings = [v for v in arguments.values() if isinstance(v, str)]
        if len(arguments) == 1 and strings:
            return json.dumps(preview(strings[0], chars), ensure_ascii=False)
        if isinstance(arguments.get("operations"), list):
            count = len(arguments["operations"])
            return f"{count} op{'' if count == 1 else 's'}"
    text = json.dumps(arguments, ensure_ascii=False, separators=(", ", ": "), default=str)
    return preview(text, chars)


def pretty_json(value: Any) -> str:
    """Indented JSON (a string that holds JSON is parsed first); plain text stays text."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return str(value)
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False, default=str)


def tool_call_row(call: ToolCallRecord, names: Names | None = None) -> ToolCallRow:
    line = f"{call.seq + 1}. {tool_call_words(call.tool_name, call.input, names)}"
    result = pretty_json(call.output) if call.output is not None else ""
    if call.error:
        result = f"{call.status}: {call.error}" + (f"\n\n{result}" if result else "")
    return ToolCallRow(
        call.seq,
        line,
        duration_text(call.duration_ms / 1000),
        call.status,
        pretty_json(call.input) if call.input is not None else "",
        result,
        f"{call.tool_name}({argument_preview(call.input)})",
    )


def operations_of_calls(
    calls: Sequence[ToolCallRecord], records: Sequence[OperationRecord]
) -> dict[int, list[OperationRecord]]:
    """The operations each apply call sent, by the call's `seq` (its result names the seam's
    `requestId`, which every operation record of that request carries)."""
    by_request: dict[str, list[OperationRecord]] = {}
    for record in records:
        by_request.setdefault(record.request_id, []).append(record)
    found: dict[int, list[OperationRecord]] = {}
    for call in calls:
        output = call.output
        request = output.get("requestId") if isinstance(output, Mapping) else None
        if isinstance(request, str) and request in by_request:
            found[call.seq] = sorted(by_request[request], key=lambda r: r.seq)
    return found


# -- operations ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OperationRow:
    """One operation the apply seam saw, in order."""

    record_id: str
    seq: int
    mark: str  # ✔ ‖ – ✘
    status: str
    tone: str
    title: str  # `✔ Set billing’s database to “Postgres 16”` (dreaming_words)
    subject: str  # `billing · database = "Postgres 16"`
    outcome: str  # `refused (quote_not_found): …`, `proposal 3f2a…`, `created entity 9c1…`
    quotes: tuple[Quote, ...]
    provenance: str
    operation: str = ""  # `set_claim_value` (the Details view)
    plain: str = ""  # the outcome without codes or ids: `applied`, `refused: …`


_SUBJECT_KEYS = (
    "name",
    "entityName",
    "newName",
    "aspectName",
    "claimKey",
    "value",
    "type",
    "linkType",
    "dependencyType",
    "reason",
)


ENTITY_KEYS = (
    "entityId",
    "fromEntityId",
    "toEntityId",
    "sourceEntityId",
    "targetEntityId",
    "intoEntityId",
    "survivor",
)
Names = Mapping[str, str]


def entity_ids(payload: Mapping[str, Any]) -> set[str]:
    """The entity ids an operation's payload names (to look their names up)."""
    found = {v for k in ENTITY_KEYS if isinstance(v := payload.get(k), str)}
    targets = payload.get("targets")
    if isinstance(targets, list):
        found.update(t for t in targets if isinstance(t, str))
    return found


def operation_subject(
    operation: str, payload: Mapping[str, Any], names: Names | None = None
) -> str:
    """What the operation is about, from its payload: names, `key = "value"`, `a → b`.
    `names` maps entity ids to names (an id without one is shown cut short)."""
    known = names or {}

    def named(value: object) -> str:
        return known.get(str(value)) or short_ref(value)

    parts: list[str] = []
    if operation == "rename_entity" and payload.get("newName"):
        old = payload.get("oldName") or payload.get("name") or named(payload.get("entityId"))
        return f"“{old}” → “{payload['newName']}”"
    if operation.startswith("merge_") and isinstance(payload.get("targets"), list):
        survivor = payload.get("survivor")
        merged = [named(t) for t in payload["targets"] if t != survivor]
        return f"{' + '.join(merged)} → {named(survivor)}"
    if payload.get("entityId") and operation not in ("create_entity",):
        parts.append(named(payload["entityId"]))
    for key in ("name", "entityName", "aspectName"):
        if isinstance(payload.get(key), str):
            parts.append(str(payload[key]))
    if isinstance(payload.get("claimKey"), str):
        value = payload.get("value")
        parts.append(
            f"{payload['claimKey']} = {json.dumps(value, ensure_ascii=False)}"
            if isinstance(value, str)
            else str(payload["claimKey"])
        )
    ends = [payload.get(k) for k in ENTITY_KEYS[1:6]]
    ends = [named(e) for e in ends if isinstance(e, str)]
    if len(ends) >= 2:
        kind = payload.get("linkType") or payload.get("dependencyType") or payload.get("type")
        parts.append(f"{ends[0]} → {ends[1]}" + (f" ({kind})" if isinstance(kind, str) else ""))
    elif not parts:
        for key in ("aspectId", "attributeId", "linkId", "attentionId", "target"):
            if isinstance(payload.get(key), str):
                parts.append(f"{key.removesuffix('Id')} {short_ref(payload[key])}")
                break
    if operation == "create_entity" and isinstance(payload.get("type"), str):
        parts.append(str(payload["type"]))
    return " · ".join(parts)


def operation_outcome(record: OperationRecord, ids: bool = True) -> str:
    """Why it was refused, or what it created; `ids=False`: in words only (no codes, no ids)."""
    result = record.result or {}
    if record.status in ("failed", "skipped"):
        verb = "refused" if record.status == "failed" else "skipped"
        code = f" ({record.code})" if record.code and ids else ""
        return f"{verb}{code}: {record.reason or 'no reason recorded'}"
    if record.status == "proposed":
        proposal = result.get("proposal_id") or result.get("proposalId")
        tail = f" · proposal {short_ref(proposal)}" if proposal and ids else ""
        return f"waiting for review{tail}" + (f": {record.reason}" if record.reason else "")
    if not ids:
        return "applied"
    created = [
        f"{k.removesuffix('_id').removesuffix('Id')} {short_ref(v)}"
        for k, v in result.items()
        if isinstance(v, str) and k.lower().endswith("id")
    ]
    return "applied" + (": " + ", ".join(created[:3]) if created else "")


def operation_row(record: OperationRecord, names: Names | None = None) -> OperationRow:
    mark = OPERATION_MARKS.get(record.status, "·")
    return OperationRow(
        record_id=record.id,
        seq=record.seq,
        mark=mark,
        status=record.status,
        tone=OPERATION_TONES.get(record.status, "muted"),
        title=f"{mark} {operation_words(record.operation, record.payload, names)}",
        subject=operation_subject(record.operation, record.payload, names),
        outcome=operation_outcome(record),
        quotes=quotes_of(record.evidence),
        provenance=record.provenance or "",
        operation=record.operation,
        plain=operation_outcome(record, ids=False),
    )


def operation_counts(records: Sequence[OperationRecord]) -> str:
    """`4 applied ✔ · 1 proposed ‖ · 1 failed ✘`."""
    counts: dict[str, int] = {}
    for record in records:
        counts[record.status] = counts.get(record.status, 0) + 1
    return (
        " · ".join(
            f"{counts[s]} {s} {OPERATION_MARKS[s]}" for s in OPERATION_MARKS if counts.get(s)
        )
        or "no operations"
    )


# -- the evidence window, runbook and exclusions --------------------------------------------


def window_lines(window: Mapping[str, Any] | None) -> tuple[str, list[str]]:
    """The evidence window's heading (`12 sources · 48k of 128k tokens`) and one line per
    source (`transcript:8c35… · 3.1k tokens · truncated`), then what was left out."""
    if not window:
        return "No evidence window recorded", []
    items = [i for i in window.get("items", []) if isinstance(i, Mapping)]
    tokens, budget = int(window.get("tokens", 0) or 0), int(window.get("budgetTokens", 0) or 0)
    kinds: dict[str, int] = {}
    for item in items:
        kind = str(item.get("ref", "?")).partition(":")[0]
        kinds[kind] = kinds.get(kind, 0) + 1
    by_kind = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
    head = f"{len(items)} source{'' if len(items) == 1 else 's'}"
    head += f" ({by_kind})" if len(kinds) > 1 else ""
    head += f" · {compact(tokens)}"
    head += f" of {compact(budget)} tokens" if budget else " tokens"
    if window.get("truncated"):
        head += " · budget reached"
    lines = []
    for item in items:
        extra = " · truncated" if item.get("truncated") else ""
        lines.append(
            f"{item.get('ref', '?')} · {compact(int(item.get('tokens', 0) or 0))} tokens{extra}"
        )
    for left in window.get("leftOut", []) or []:
        if isinstance(left, Mapping):
            lines.append(f"left out: {left.get('ref', '?')} ({left.get('reason', '?')})")
    attention = window.get("attention") or []
    if attention:
        lines.append(f"pending attention: {len(attention)}")
    return head, lines


def runbook_text(runbook: Mapping[str, Any] | None) -> str:
    """The runbook as a person reads it: mode and focus, caps, instructions, the notes."""
    if not runbook:
        return "No runbook recorded."
    lines = [f"Mode {runbook.get('mode', '?')} · focus {runbook.get('focus', '?')}"]
    caps = runbook.get("caps") or {}
    if isinstance(caps, Mapping) and caps:
        lines.append("Caps: " + ", ".join(f"{k} {v}" for k, v in caps.items()))
    instructions = runbook.get("instructions") or []
    if instructions:
        lines.append("")
        lines += [f"• {text}" for text in instructions]
    summary = runbook.get("summary")
    if summary:
        lines += ["", f"Summary written by the pass: {summary}"]
    questions = runbook.get("openQuestions") or []
    if questions:
        lines += ["", "Open questions:"] + [f"  – {q}" for q in questions]
    return "\n".join(lines)


def exclusion_line(exclusion: EvidenceExclusion) -> str:
    """`transcript 8c35… — blocked by content safety (2 attempts)`."""
    attempts = f" ({exclusion.attempts} attempts)" if exclusion.attempts > 1 else ""
    return (
        f"{exclusion.source_kind} {short_ref(exclusion.source_id, 12)} — "
        f"{exclusion.reason}{attempts}"
    )
