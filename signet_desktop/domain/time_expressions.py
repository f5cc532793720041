"""Time expressions in text, resolved to day ranges against the text's own date.

"I went to the support group yesterday" said on 8 May 2023 is about 7 May 2023; "last week"
said on 16 November 2023 is about 9-15 November. `resolve(text, anchor)` finds such
expressions (relative ones: today, yesterday, N days/weeks/months/years ago, last/next
week/month/year/weekend/<weekday>; absolute ones: "8 May 2023", "May 8th", "in May", "May
2023", "2023-05-08") and returns each as a `TimeSpan` of whole days (inclusive). A month or a
year without its year is the most recent one not after the anchor (a memory says "in May" of a
May that has been). Pure: no clock, no database; the anchor is the memory's `created_at`
(its turn's or session's date) or, for a question, the moment it is asked.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
MONTHS["sept"] = 9
WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "a couple": 2, "couple of": 2, "a few": 3, "few": 3, "several": 3,
}  # fmt: skip
MAX_SPANS = 8

_MONTH = (
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d{2})"
_NUM = (
    r"(\d{1,2}|a couple of|a couple|couple of|a few|few|several|an?|one|two|three|four|five"
    r"|six|seven|eight|nine|ten|eleven|twelve)"
)
_UNIT = r"(day|week|month|year)s?"
_WEEKDAY = r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)"

# Longest patterns first; each match consumes its text so a shorter one cannot re-read it.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(rf"(?<![\w-]){pattern}(?![\w-])", re.IGNORECASE))
    for kind, pattern in (
        ("iso", r"(\d{4})-(\d{2})-(\d{2})"),
        (
            "week_before",
            rf"(?:the\s+)?(week|weekend|day)\s+(before|after)\s+(?:the\s+)?"
            rf"{_DAY}\s*(?:of\s+)?{_MONTH},?\s*{_YEAR}",
        ),
        ("day_month_year", rf"{_DAY}\s*(?:of\s+)?{_MONTH},?\s*{_YEAR}"),
        ("month_day_year", rf"{_MONTH}\s+{_DAY},?\s*{_YEAR}"),
        (
            "month_year",
            r"(?:(early|beginning of|start of|mid|middle of|late|end of)\s+)?"
            rf"{_MONTH},?\s+{_YEAR}",
        ),
        ("day_month", rf"(?:the\s+)?{_DAY}\s+(?:of\s+)?{_MONTH}"),
        ("month_day", rf"{_MONTH}\s+{_DAY}(?!\s*(?:\d|:))"),
        ("ago", rf"{_NUM}\s+{_UNIT}\s+ago"),
        ("relative_unit", r"(last|past|previous|this|next|coming)\s+(week|weekend|month|year)"),
        ("relative_weekday", rf"(last|this|next|on|past)\s+{_WEEKDAY}"),
        ("day_before", r"the\s+day\s+before\s+yesterday"),
        ("yesterday", r"yesterday|last\s+night"),
        ("today", r"today|tonight|this\s+(?:morning|afternoon|evening)"),
        ("tomorrow", r"tomorrow"),
        ("in_month", rf"(?:in|during|since|early|late|mid)\s+{_MONTH}(?!\s*\d)"),
        ("year", rf"(?:in|since|during)\s+{_YEAR}"),
    )
)


@dataclass(frozen=True, slots=True)
class TimeSpan:
    """A resolved time expression: the words as written and the days they mean (inclusive)."""

    expression: str
    start: date
    end: date

    def overlaps(self, other: TimeSpan) -> bool:
        return self.start <= other.end and other.start <= self.end

    def share_within(self, other: TimeSpan) -> float:
        """The share of this span's days that lie within `other` (1: all of them, 0: none).

        "yesterday" inside "last week" is 1; "this month" against one week is about 0.25:
        a wide span says little about a narrow window."""
        first, last = max(self.start, other.start), min(self.end, other.end)
        if first > last:
            return 0.0
        return ((last - first).days + 1) / ((self.end - self.start).days + 1)

    def label(self) -> str:
        """ "2023-05-07" for one day, else "2023-05-01..2023-05-31"."""
        if self.start == self.end:
            return self.start.isoformat()
        return f"{self.start.isoformat()}..{self.end.isoformat()}"


def anchor_date(timestamp: str) -> date | None:
    """The day of an ISO-8601 timestamp ("2023-05-08T13:56:00.000Z"), or None."""
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).date()
    except ValueError:
        return None


def resolve(text: str, anchor: date) -> list[TimeSpan]:
    """The time expressions of `text` as day spans, in the order written (at most MAX_SPANS)."""
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, TimeSpan]] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            span = _span(kind, match, anchor)
            if span is not None:
                taken.append((match.start(), match.end()))
                found.append((match.start(), TimeSpan(match.group(0).strip(), *span)))
    found.sort(key=lambda item: item[0])
    return [span for _, span in found[:MAX_SPANS]]


def _span(kind: str, m: re.Match[str], anchor: date) -> tuple[date, date] | None:
    try:
        return _RESOLVERS[kind](m, anchor)
    except (ValueError, OverflowError):  # 31 February, year 10000: not a date
        return None


def _month(name: str) -> int:
    return MONTHS[name.lower()[:3] if name.lower()[:3] != "sep" else "sep"]


def _month_span(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def _past_year(month: int, anchor: date) -> int:
    """The year of the most recent `month` not after the anchor's month."""
    return anchor.year if month <= anchor.month else anchor.year - 1


def _count(word: str) -> int:
    word = " ".join(word.lower().split())
    return int(word) if word.isdigit() else NUMBERS[word]


def _shift(anchor: date, unit: str, amount: int) -> tuple[date, date]:
    """The unit `amount` units from the anchor (negative: back), as a day span."""
    if unit == "day":
        day = anchor + timedelta(days=amount)
        return day, day
    if unit == "week":
        start = anchor + timedelta(weeks=amount) - timedelta(days=anchor.weekday())
        return start, start + timedelta(days=6)
    if unit == "month":
        index = anchor.year * 12 + anchor.month - 1 + amount
        return _month_span(index // 12, index % 12 + 1)
    return date(anchor.year + amount, 1, 1), date(anchor.year + amount, 12, 31)


def _iso(m: re.Match[str], anchor: date) -> tuple[date, date]:
    day = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    return day, day


def _day_month_year(m: re.Match[str], anchor: date) -> tuple[date, date]:
    day = date(int(m.group(3)), _month(m.group(2)), int(m.group(1)))
    return day, day


def _month_day_year(m: re.Match[str], anchor: date) -> tuple[date, date]:
    day = date(int(m.group(3)), _month(m.group(1)), int(m.group(2)))
    return day, day


def _week_before(m: re.Match[str], anchor: date) -> tuple[date, date]:
    unit, side = m.group(1).lower(), m.group(2).lower()
    day = date(int(m.group(5)), _month(m.group(4)), int(m.group(3)))
    length = {"day": 1, "week": 7, "weekend": 7}[unit]
    if side == "before":
        return day - timedelta(days=length), day - timedelta(days=1)
    return day + timedelta(days=1), day + timedelta(days=length)


def _month_year(m: re.Match[str], anchor: date) -> tuple[date, date]:
    start, end = _month_span(int(m.group(3)), _month(m.group(2)))
    part = (m.group(1) or "").lower()
    if part in {"early", "beginning of", "start of"}:
        return start, start + timedelta(days=10)
    if part in {"mid", "middle of"}:
        return start + timedelta(days=9), start + timedelta(days=20)
    if part in {"late", "end of"}:
        return end - timedelta(days=10), end
    return start, end


def _day_month(m: re.Match[str], anchor: date) -> tuple[date, date]:
    month, day = _month(m.group(2)), int(m.group(1))
    resolved = date(_past_year(month, anchor), month, day)
    return resolved, resolved


def _month_day(m: re.Match[str], anchor: date) -> tuple[date, date]:
    month, day = _month(m.group(1)), int(m.group(2))
    resolved = date(_past_year(month, anchor), month, day)
    return resolved, resolved


def _ago(m: re.Match[str], anchor: date) -> tuple[date, date]:
    """N days ago is that day; N weeks ago that day +-3 days; months and years their unit.

    "a few"/"several" days ago is 2-5 days back."""
    word, unit, count = m.group(1).lower(), m.group(2).lower(), _count(m.group(1))
    if unit == "day" and word in {"a few", "few", "several"}:
        return anchor - timedelta(days=5), anchor - timedelta(days=2)
    if unit == "week":
        center = anchor - timedelta(weeks=count)
        return center - timedelta(days=3), center + timedelta(days=3)
    return _shift(anchor, unit, -count)


def _relative_unit(m: re.Match[str], anchor: date) -> tuple[date, date]:
    which, unit = m.group(1).lower(), m.group(2).lower()
    step = {"last": -1, "past": -1, "previous": -1, "this": 0, "next": 1, "coming": 1}[which]
    if unit == "weekend":
        saturday = anchor + timedelta(days=5 - anchor.weekday()) + timedelta(weeks=step)
        if step == 0 and anchor.weekday() == 6:  # "this weekend" said on a Sunday
            saturday -= timedelta(weeks=1)
        return saturday, saturday + timedelta(days=1)
    if which == "past":  # "the past week/month/year": the days up to now
        days = {"week": 7, "month": 30, "year": 365}[unit]
        return anchor - timedelta(days=days), anchor
    if step == -1 and unit == "week":  # from the previous week's Monday to yesterday
        return anchor - timedelta(days=anchor.weekday() + 7), anchor - timedelta(days=1)
    return _shift(anchor, unit, step)


def _relative_weekday(m: re.Match[str], anchor: date) -> tuple[date, date]:
    which, weekday = m.group(1).lower(), WEEKDAYS[m.group(2).lower()]
    back = (anchor.weekday() - weekday) % 7
    if which in {"last", "past", "on"}:
        day = anchor - timedelta(days=back or 7)
    elif which == "next":
        day = anchor + timedelta(days=(weekday - anchor.weekday()) % 7 or 7)
    else:  # "this <weekday>": the one of this week
        day = anchor + timedelta(days=weekday - anchor.weekday())
    return day, day


def _fixed(offset: int) -> Callable[[re.Match[str], date], tuple[date, date]]:
    def resolver(m: re.Match[str], anchor: date) -> tuple[date, date]:
        day = anchor + timedelta(days=offset)
        return day, day

    return resolver


def _in_month(m: re.Match[str], anchor: date) -> tuple[date, date]:
    month = _month(m.group(1))
    return _month_span(_past_year(month, anchor), month)


def _year(m: re.Match[str], anchor: date) -> tuple[date, date]:
    year = int(m.group(1))
    return date(year, 1, 1), date(year, 12, 31)


_RESOLVERS: dict[str, Callable[[re.Match[str], date], tuple[date, date]]] = {
    "iso": _iso,
    "day_month_year": _day_month_year,
    "month_day_year": _month_day_year,
    "week_before": _week_before,
    "month_year": _month_year,
    "day_month": _day_month,
    "month_day": _month_day,
    "ago": _ago,
    "relative_unit": _relative_unit,
    "relative_weekday": _relative_weekday,
    "day_before": _fixed(-2),
    "yesterday": _fixed(-1),
    "today": _fixed(0),
    "tomorrow": _fixed(1),
    "in_month": _in_month,
    "year": _year,
}
