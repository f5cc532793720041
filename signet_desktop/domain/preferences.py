"""Stated preferences, habits and decisions in text; questions that ask for them.

"I prefer winding down by 9:30 pm", "I've been listening to a lot of true crime", "my
favourite is the Pimm's Cup", "we decided to use Postgres": what a person likes, usually does
or chose. A recommendation ("can you suggest some activities for the evening?") or a habit
question ("what do I usually order?") is best answered by such a statement, though it rarely
shares the question's words. `stated_preference(text)` returns the first such phrase (or None);
`asks_for_preference(query)` says whether a question is of that kind.

The same goes for what a person says about themselves: "what play did I attend?" is answered
by "I recently went to a play at the community theater", said in the first person, more
often than by a reply addressed to them ("your play"). `speaks_for_self(text)` says whether a
text speaks mostly in the first person (a leading "speaker:" label is skipped);
`asks_about_self(query)` whether a question asks about the asker, not about what someone told
them ("what did you recommend?"). Pure regular expressions, English only.
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


_FIRST = re.compile(r"(?<!\w)(?:i|i'm|i've|i'd|i'll|my|me|mine|myself)(?!\w)", re.IGNORECASE)
_SECOND = re.compile(r"(?<!\w)(?:you|your|you're|you've|you'd|yours|yourself)(?!\w)", re.IGNORECASE)
_LABEL = re.compile(r"^\s*[\w .'-]{1,40}:\s")
# What the other party said or gave: asked in the first person, answered by their words.
_TOLD = re.compile(
    r"(?<!\w)(?:you|your)(?:\s+\w+)?\s+(?:recommended|suggested|told|mentioned|said|gave|provided"
    r"|listed|shared|explained|described|wrote|recommendations?|suggestions?)(?!\w)"
    r"|(?<!\w)(?:did|were|could) you (?:tell|recommend|suggest|mention|say|give|provide)(?!\w)"
    r"|(?<!\w)remind me(?!\w)",
    re.IGNORECASE,
)


def speaks_for_self(text: str) -> bool:
    """Does `text` speak mostly in the first person (after any leading "speaker:" label)?"""
    body = _LABEL.sub("", text, count=1)
    first = len(_FIRST.findall(body))
    return first > 0 and first > len(_SECOND.findall(body))


def asks_about_self(query: str) -> bool:
    """Is `query` asked in the first person about the asker (not about what they were told)?"""
    return _FIRST.search(query) is not None and _TOLD.search(query) is None
