"""Stated preferences, habits and decisions; recommendation-style questions."""

from __future__ import annotations

import pytest

from signet_desktop.domain.preferences import (
    asks_about_self,
    asks_for_preference,
    speaks_for_self,
    stated_preference,
)


@pytest.mark.parametrize(
    "text",
    [
        "I prefer winding down by 9:30 pm to prepare for sleep.",
        "I've been listening to a lot of true crime lately",
        "My favourite editor is Helix",
        "We decided to use Postgres for billing",
        "I usually take the train to work",
        "I'm a big fan of jazz",
        "I really love hiking on weekends",
    ],
)
def test_preferences_are_recognised(text: str) -> None:
    assert stated_preference(text) is not None


@pytest.mark.parametrize(
    "text",
    ["billing runs on Postgres 16", "The staging database is reset every Sunday", "Likely so."],
)
def test_plain_facts_state_no_preference(text: str) -> None:
    assert stated_preference(text) is None


def test_recommendation_and_habit_questions() -> None:
    assert asks_for_preference("Can you recommend some podcasts?")
    assert asks_for_preference("Any tips for keeping my kitchen clean?")
    assert asks_for_preference("What do I usually order at the cafe?")
    assert not asks_for_preference("which database does billing use?")
    assert not asks_for_preference("When did Caroline go to the support group?")


def test_first_person_texts_and_questions_about_the_asker() -> None:
    assert speaks_for_self("user: I went to a play at the community theater")
    assert speaks_for_self("Caroline: my painting is done")  # the speaker label is skipped
    assert not speaks_for_self("assistant: I hope your play went well, you did great")
    assert not speaks_for_self("billing runs on Postgres 16")
    assert asks_about_self("What play did I attend?")
    assert not asks_about_self("Can you remind me what you recommended?")
    assert not asks_about_self("What did you suggest for my trip?")
    assert not asks_about_self("which database does billing use?")
