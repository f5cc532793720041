"""Stated preferences, habits and decisions in text; questions that ask for them.

"I prefer winding down by 9:30 pm", "I've been listening to a lot of true crime", "my
favourite is the Pimm's Cup", "we decided to use Postgres": what a person likes, usually does
or chose. A recommendation ("can you suggest some activities for the evening?") or a habit
question ("what do I usually order?") is best answered by such a statement, though it rarely
shares the question's words. `stated_preference(text)` returns the first such phrase (or None);
`asks_for_preference(query)` says whether a question is of that kind. Pure regular
expressions, English only.
"""

from __future__ import annotations

import re

_I = r"(?:i|we)(?:\s+(?:really|truly|absolutely|also|still|do|generally|usually|always|just))*"

_STATEMENT = re.compile(
    r"(?<!\w)(?:"
    rf"{_I}\s+(?:love|like|enjoy|prefer|adore|hate|dislike|detest|fancy)(?!\w)"
    rf"|{_I}\s+(?:can't|cannot)\s+stand"
    rf"|{_I}(?:'m| am)\s+(?:(?:a\s+)?(?:big|huge)\s+)?"
    r"(?:fan of|into|passionate about|fond of|obsessed with|interested in)"
    r"|(?:my|our)\s+(?:favou?rite|go-to|preferred)"
    rf"|{_I}\s+(?:usually|always|often|normally|typically|tend to|regularly)\s+\w+"
    rf"|{_I}(?:'ve| have)\s+been\s+(?:\w+ing|really into|trying|using|working on)"
    rf"|{_I}(?:'ve| have)?\s+(?:decided|chose|chosen|settled on|switched to|started)"
    rf"|{_I}(?:'d| would)\s+(?:rather|prefer|love|like)"
    r")(?!\w)",
    re.IGNORECASE,
)

_ASKS = re.compile(
    r"(?<!\w)(?:"
    r"recommend\w*|suggest\w*|ideas?|tips?|advice|advise|inspiration"
    r"|what (?:should|could|can) (?:i|we)|any (?:good|thoughts)"
    r"|(?:do|would) you think|what (?:do|did) (?:i|we) (?:usually|normally|typically|often)"
    r"|how (?:do|did) (?:i|we) (?:usually|normally|typically)"
    r"|(?:i|we) (?:usually|normally|typically)|favou?rite|prefer\w*|like to"
    r")(?!\w)",
    re.IGNORECASE,
)


def stated_preference(text: str) -> str | None:
    """The first phrase of `text` stating a preference, habit or decision, or None."""
    match = _STATEMENT.search(text)
    return match.group(0) if match else None


def asks_for_preference(query: str) -> bool:
    """Is `query` a recommendation, suggestion or "what do I usually ..." question?"""
    return _ASKS.search(query) is not None
