"""The Overview's words: each card's value and detail from an `OverviewReport` (no Qt).

Kept apart from the widgets so every sentence is unit-tested with plain values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from signet_desktop.domain.memory import parse_utc
from signet_desktop.service.verdict import Verdict
from signet_desktop.ui.overview_report import AgentFact, Counted, OverviewReport

IDLE_WORDS = {
    "disabled": "scheduled passes off",
    "no-inference": "no model set",
    "backing-off": "backing off after a failure",
    "deferred": "waiting for the machine to be idle",
}


@dataclass(frozen=True, slots=True)
class CardText:
    """What one card says: a big value and a line or two under it."""

    value: str
    detail: str


def parse(stamp: object) -> datetime | None:
    """A status field's timestamp (`parse_utc` of its text); None when absent or unreadable."""
    return parse_utc(str(stamp)) if stamp else None


def since(stamp: str | None, now: datetime) -> str:
    """`just now`, `5 min ago`, `3 h ago`, `2 days ago`; "never" without a time."""
    moment = parse(stamp)
    if moment is None:
        return "never"
    seconds = max(0, int((now - moment).total_seconds()))
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    if seconds < 86_400:
        return f"{seconds // 3600} h ago"
    days = seconds // 86_400
    return "yesterday" if days == 1 else f"{days} days ago"


def duration(seconds: float) -> str:
    """`42 s`, `5 min`, `3 h 12 min`, `2 days 4 h`."""
    s = int(max(0, seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min"
    if s < 86_400:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 86_400} days {s % 86_400 // 3600} h"


def daemon_card(runtime: Mapping[str, Any], url: str, now: datetime, verdict: Verdict) -> CardText:
    """`Running` · `127.0.0.1:3850 · up 2 h 5 min` (the verdict's words when it is down)."""
    address = str(runtime.get("url") or url or "").removeprefix("http://")
    started = parse(runtime.get("startedAt"))
    parts = [address] if address else []
    if started is not None:
        parts.append("up " + duration((now - started).total_seconds()))
    else:
        parts.append("serving in this process")
    if verdict.state == "error":
        return CardText(verdict.words, verdict.reason)
    return CardText("Running", " · ".join(parts))


def agents_card(agents: tuple[AgentFact, ...], now: datetime) -> CardText:
    """`2 of 3 connected`, then one line per harness with its last session."""
    connected = sum(a.connected for a in agents)
    lines = []
    for agent in agents:
        if agent.connected:
            state = "connected"
        elif agent.found:
            state = "installed, not connected"
        else:
            state = "not installed"
        last = f"last session {since(agent.last_session, now)}" if agent.last_session else ""
        lines.append(f"{'●' if agent.connected else '○'} {agent.label}: {state}" + (
            f" · {last}" if last else ""))  # fmt: skip
    return CardText(f"{connected} of {len(agents)} connected", "\n".join(lines))


def counted_card(counted: Counted, noun: str, plural: str) -> CardText:
    """`1,204 memories` · `12 today`."""
    total = f"{counted.total:,} {noun if counted.total == 1 else plural}"
    today = f"{counted.today:,}{'+' if counted.capped else ''} today"
    return CardText(total, today)


def dreaming_card(report: OverviewReport, now: datetime) -> CardText:
    """The last pass (when, how it ended, what it applied) and why Dreaming is idle."""
    status = report.dreaming
    if status is None:
        return CardText("Unavailable", "")
    last = status.last_pass
    if status.running_pass_id:
        value = "A pass is running"
    elif last is None:
        value = "No pass yet"
    else:
        value = f"Last pass {since(last.completed_at or last.started_at, now)}"
    details = []
    if last is not None and not status.running_pass_id:
        applied = last.mutations.applied
        details.append(f"{last.status} · {applied:,} change{'' if applied == 1 else 's'}")
    if status.idle:
        details.append(IDLE_WORDS.get(status.idle, status.detail))
    return CardText(value, " · ".join(details))


def queue_card(report: OverviewReport) -> CardText:
    """`Ready` / `Working` … with `2 waiting · 1 failed` under it."""
    counts = report.queue
    waiting = int(counts.get("pending", 0)) + int(counts.get("leased", 0))
    parts = [f"{waiting:,} waiting" if waiting else "nothing waiting"]
    if report.verdict.failed:
        parts.append(report.verdict.failed_text)
    done = int(counts.get("completed", 0))
    parts.append(f"{done:,} done")
    return CardText(report.verdict.words, " · ".join(parts))
