"""Time expressions resolved against the text's own date."""

from __future__ import annotations

from datetime import date

import pytest

from signet_desktop.domain.time_expressions import anchor_date, resolve

MONDAY = date(2023, 5, 8)


def spans(text: str, anchor: date = MONDAY) -> list[tuple[str, str]]:
    return [(s.expression, s.label()) for s in resolve(text, anchor)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went to a support group yesterday", [("yesterday", "2023-05-07")]),
        ("we painted it today", [("today", "2023-05-08")]),
        ("the day before yesterday", [("the day before yesterday", "2023-05-06")]),
        ("3 days ago", [("3 days ago", "2023-05-05")]),
        ("two weeks ago", [("two weeks ago", "2023-04-21..2023-04-27")]),
        ("a few days ago", [("a few days ago", "2023-05-03..2023-05-06")]),
        ("last week I was in the UK", [("last week", "2023-05-01..2023-05-07")]),
        ("next month", [("next month", "2023-06-01..2023-06-30")]),
        ("last weekend", [("last weekend", "2023-05-06..2023-05-07")]),
        ("last Friday", [("last Friday", "2023-05-05")]),
        ("on 1 May, 2022", [("1 May, 2022", "2022-05-01")]),
        ("May 8th, 2023", [("May 8th, 2023", "2023-05-08")]),
        ("in May 2023", [("May 2023", "2023-05-01..2023-05-31")]),
        (
            "the beginning of November 2022",
            [("beginning of November 2022", "2022-11-01..2022-11-11")],
        ),
        (
            "the week before 16 November 2023",
            [("the week before 16 November 2023", "2023-11-09..2023-11-15")],
        ),
        ("in July", [("in July", "2022-07-01..2022-07-31")]),  # the last July that has been
        ("June 3rd", [("June 3rd", "2022-06-03")]),
        ("started on 2023-04-01", [("2023-04-01", "2023-04-01")]),
        ("since 2019", [("since 2019", "2019-01-01..2019-12-31")]),
    ],
)
def test_expressions_resolve_to_days(text: str, expected: list[tuple[str, str]]) -> None:
    assert spans(text) == expected


def test_text_without_time_gives_nothing_and_an_impossible_day_its_month() -> None:
    assert spans("Caroline likes painting sunsets") == []
    assert spans("on 31 February, 2023") == [("February, 2023", "2023-02-01..2023-02-28")]


def test_several_expressions_come_in_reading_order() -> None:
    found = spans("yesterday we planned it for next week")
    assert [e for e, _ in found] == ["yesterday", "next week"]


def test_anchor_date_reads_iso_timestamps() -> None:
    assert anchor_date("2023-05-08T13:56:00.000Z") == MONDAY
    assert anchor_date("not a date") is None
