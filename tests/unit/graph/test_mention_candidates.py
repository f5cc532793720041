"""Mention candidates: proper-noun phrases, their sub-phrases, longest match first."""

from __future__ import annotations

from signet_desktop.domain.entities import canonical_entity_name
from signet_desktop.graph.mentions import candidates, resolve


def names(text: str) -> list[str]:
    return list(dict.fromkeys(c.canonical for c in candidates(text)))


def test_canonical_names_fold_case_space_and_edge_punctuation() -> None:
    assert canonical_entity_name("  POSTGRES   16. ") == "postgres 16"
    assert canonical_entity_name("Ｐｏｓｔｇｒｅｓ") == "postgres"  # NFKC full-width
    assert canonical_entity_name('"Alice"') == "alice"


def test_runs_of_capitalised_tokens_and_a_trailing_number_are_candidates() -> None:
    found = names("billing runs on Postgres 16 and Alice Smith owns it with the iPhone app")
    assert found[:2] == ["postgres 16", "alice smith"]
    assert {"postgres", "alice", "smith", "iphone"} <= set(found)
    assert "billing" not in found and "16" not in found and "it" not in found


def test_punctuation_ends_a_phrase() -> None:
    assert "alice bob" not in names("Ask Alice, Bob knows.")
    assert {"ask alice", "alice", "bob"} <= set(names("Ask Alice, Bob knows."))


def test_lower_case_text_has_no_candidates() -> None:
    assert names("we ignore the previous build's cache") == []


def test_the_longest_match_wins_and_each_entity_links_once() -> None:
    found = candidates("Alice Smith met Alice again; Smith left")
    known = {"alice smith": ("e-as", 1.0), "alice": ("e-a", 1.0), "smith": ("e-s", 0.9)}
    matches = resolve(found, known)
    by_entity = {m.entity_id: m for m in matches}
    assert by_entity["e-as"].mention_text == "Alice Smith"
    # the second "Alice" and "Smith" stand alone, so they link too
    assert set(by_entity) == {"e-as", "e-a", "e-s"}
    assert by_entity["e-s"].confidence == 0.9
    assert resolve(candidates("Alice Smith"), known) == [matches[0]]
