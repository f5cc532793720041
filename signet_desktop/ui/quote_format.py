"""Cited quotes found in their source: the context around a quote, its turn, the highlight.

A Dreaming operation cites `{quote, source_ref}`; the pane finds the quote in its source's
canonical text (`quote_context`), knows the transcript turn it sits in (`turn_of`) and draws
it highlighted (`highlight_html`, `quotes_html`). No Qt here; unit-tested without widgets.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CONTEXT_CHARS = 280  # characters of source text shown either side of a quote
TURN_ROLE = re.compile(r"^(user|assistant|system|tool|developer)\s*:", re.MULTILINE)


def short_ref(value: object, keep: int = 8) -> str:
    """An id or reference cut to `keep` characters and `…`."""
    text = str(value or "")
    return text if len(text) <= keep else text[:keep] + "…"


@dataclass(frozen=True, slots=True)
class Quote:
    """One cited quote and the source it names."""

    quote: str
    source_ref: str

    @property
    def kind(self) -> str:
        return self.source_ref.partition(":")[0].strip().lower()

    @property
    def source_id(self) -> str:
        return self.source_ref.partition(":")[2].strip()


def quotes_of(evidence: Iterable[Mapping[str, Any]]) -> tuple[Quote, ...]:
    """`[{quote, source_ref}]` as `Quote`s (items without a quote left out)."""
    found = []
    for item in evidence:
        quote = item.get("quote")
        ref = item.get("source_ref", item.get("sourceRef"))
        if isinstance(quote, str) and quote.strip():
            found.append(Quote(quote, ref if isinstance(ref, str) else ""))
    return tuple(found)


def find_quote(text: str, quote: str) -> tuple[int, int] | None:
    """Where the trimmed quote occurs verbatim in `text` (as the apply seam checked it)."""
    needle = quote.strip()
    if not needle:
        return None
    at = text.find(needle)
    return (at, at + len(needle)) if at >= 0 else None


def turn_of(text: str, offset: int) -> int | None:
    """The 0-based turn of a transcript's canonical text (`role: text` per turn) that holds
    `offset`; None when the text has no role lines."""
    starts = [m.start() for m in TURN_ROLE.finditer(text)]
    if not starts:
        return None
    return max(0, sum(1 for s in starts if s <= offset) - 1)


@dataclass(frozen=True, slots=True)
class QuoteContext:
    """A quote located in its source: the text around it and, for a transcript, its turn."""

    before: str
    match: str
    after: str
    found: bool
    turn: int | None


def quote_context(text: str, quote: str, chars: int = CONTEXT_CHARS) -> QuoteContext:
    """The quote with up to `chars` characters either side (cut at whitespace, `…` marked)."""
    span = find_quote(text, quote)
    if span is None:
        return QuoteContext("", quote.strip(), "", False, None)
    start, end = span
    lo, hi = max(0, start - chars), min(len(text), end + chars)
    if lo > 0:
        space = text.find(" ", lo, start)
        lo = space + 1 if space >= 0 else lo
    if hi < len(text):
        space = text.rfind(" ", end, hi)
        hi = space if space >= 0 else hi
    before = ("…" if lo > 0 else "") + text[lo:start]
    after = text[end:hi] + ("…" if hi < len(text) else "")
    return QuoteContext(before, text[start:end], after, True, turn_of(text, start))


def highlight_html(context: QuoteContext, mark: str, mark_text: str) -> str:
    """The context as HTML with the quote highlighted (`mark`: background colour); line
    breaks kept, everything escaped."""

    def esc(part: str) -> str:
        return html.escape(part).replace("\n", "<br>")

    if not context.found:
        return f"<i>{esc(context.match)}</i>"
    style = f"background-color: {mark}; color: {mark_text};"
    return f"{esc(context.before)}<span style='{style}'>{esc(context.match)}</span>" + esc(
        context.after
    )


@dataclass(frozen=True, slots=True)
class QuoteColours:
    """The colours quotes are drawn in (from the theme)."""

    mark: str  # the highlight behind a quote
    text: str
    muted: str
    link: str
    error: str


def source_anchor(quote: Quote, turn: int | None) -> str | None:
    """The link target of a quote's source: `transcript:<key>#<turn>`, `memory:<id>`."""
    if quote.kind not in ("transcript", "memory") or not quote.source_id:
        return None
    return f"{quote.kind}:{quote.source_id}" + (f"#{turn}" if turn is not None else "")


def quotes_html(
    quotes: Sequence[Quote], sources: Mapping[str, str | None], colours: QuoteColours
) -> str:
    """Each quote under a link to its source, highlighted in its context. A source not in
    `sources` is still loading; one mapped to None could not be rendered for this agent."""
    if not quotes:
        return f"<p style='color:{colours.muted}'>No evidence cited.</p>"
    parts = []
    for quote in quotes:
        text = sources.get(quote.source_ref)
        if text is None:
            context = QuoteContext("", quote.quote.strip(), "", False, None)
            note = (
                "loading the source…"
                if quote.source_ref not in sources
                else ("source text unavailable")
            )
        else:
            context = quote_context(text, quote.quote)
            note = "" if context.found else "not found verbatim in the source"
        label = html.escape(source_label(quote, context.turn))
        anchor = source_anchor(quote, context.turn)
        link = (
            f"<a style='color:{colours.link}' href='{html.escape(anchor)}'>→ {label}</a>"
            if anchor
            else f"<span style='color:{colours.muted}'>{label}</span>"
        )
        extra = f" · <span style='color:{colours.error}'>{html.escape(note)}</span>" if note else ""
        body = highlight_html(context, colours.mark, colours.text)
        parts.append(
            f"<p style='margin-top:8px'>{link}{extra}</p><p style='margin-left:10px'>{body}</p>"
        )
    return "".join(parts)


def source_label(quote: Quote, turn: int | None = None) -> str:
    """`transcript 8c35… · turn 41`, `memory 1f2e…`."""
    label = f"{quote.kind or 'source'} {short_ref(quote.source_id, 28)}".strip()
    return label + (f" · turn {turn + 1}" if turn is not None else "")
