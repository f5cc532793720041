"""Request models: Signet names and aliases, strict types, timestamps, tags, text checks."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from signet_desktop.api.http.schemas import (
    ForgetParams,
    PatchBody,
    RecallBody,
    RememberBody,
    SearchParams,
    check_json_text,
    normalise_timestamp,
    split_tags,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("2025-01-31", "2025-01-31T00:00:00.000Z"),
     ("2025-01-31T12:00:00Z", "2025-01-31T12:00:00.000Z"),
     ("2025-01-31T12:00:00+02:00", "2025-01-31T10:00:00.000Z"),
     ("2025-01-31T12:00:00.123456", "2025-01-31T12:00:00.123Z")],
)  # fmt: skip
def test_normalise_timestamp(text: str, expected: str) -> None:
    assert normalise_timestamp(text) == expected


@pytest.mark.parametrize("text", ["yesterday", "", "2025-13-01", "31/01/2025"])
def test_bad_timestamps(text: str) -> None:
    with pytest.raises(ValueError, match="ISO-8601"):
        normalise_timestamp(text)


def test_split_tags() -> None:
    assert split_tags("a, b,,c ") == ("a", "b", "c")
    assert split_tags(["x", " ", "y "]) == ("x", "y")
    assert split_tags(None) == ()


def test_check_json_text() -> None:
    check_json_text({"a": ["ok", {"b": "fine"}], "c": 1})
    with pytest.raises(ValueError, match="surrogate"):
        check_json_text({"a": ["\ud800"]})
    with pytest.raises(ValueError, match="surrogate"):
        check_json_text({"\udc00": 1})
    deep: Any = "leaf"
    for _ in range(40):
        deep = [deep]
    with pytest.raises(ValueError, match="nested"):
        check_json_text(deep)


def test_remember_body_maps_to_the_core_request() -> None:
    body = RememberBody.model_validate(
        {"content": "x", "tags": "a,b", "sourceId": "s", "source_type": "t",
         "runtimePath": "plugin", "metadata": {"runtime_path": "mine"}, "agentId": "ignored"}
    )  # fmt: skip
    request = body.to_request("agent-1")
    assert request.agent_id == "agent-1" and request.tags == ("a", "b")
    assert request.source_id == "s" and request.source_type == "t"
    assert request.metadata == {"runtime_path": "mine"}  # the caller's metadata wins
    assert request.visibility == "global"


@pytest.mark.parametrize(
    "fields",
    [{"pinned": 1}, {"pinned": "true"}, {"importance": "0.5"}, {"importance": True},
     {"tags": 5}, {"content": 5}, {"importance": float("inf")}],
)  # fmt: skip
def test_remember_body_is_strict(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        RememberBody.model_validate({"content": "x", **fields})


def test_unknown_fields_are_ignored_as_signet_does() -> None:
    body = RememberBody.model_validate({"content": "x", "mode": "sync", "harness": "codex"})
    assert body.content == "x" and not hasattr(body, "harness")


def test_recall_body_aliases_and_time_window() -> None:
    query = RecallBody.model_validate(
        {"query": "q", "keywordQuery": "k", "importance_min": 0.2, "minScore": 0.3,
         "agent_id": "a", "time": {"start": "2025-01-01", "end": "2025-02-01"},
         "until": "2025-01-15"}
    ).to_query("a")  # fmt: skip
    assert query.keyword_query == "k" and query.min_score == 0.3
    assert query.filters.importance_min == 0.2
    assert query.filters.since == "2025-01-01T00:00:00.000Z"
    assert query.filters.until == "2025-01-15T00:00:00.000Z"  # explicit until beats time.end


def test_search_params_read_strings() -> None:
    query = SearchParams.model_validate(
        {"q": "x", "limit": "7", "pinned": "false", "tags": "a,b", "agentId": "z"}
    ).to_query("z")
    assert query.limit == 7 and query.filters.pinned is False
    assert query.filters.tags == ("a", "b")
    with pytest.raises(ValidationError):
        SearchParams.model_validate({"q": "x", "limit": "101"})


def test_patch_and_forget_models() -> None:
    patch = PatchBody.model_validate({"tags": [], "reason": "r", "ifVersion": 3}).to_patch()
    assert patch.tags == () and patch.content is None
    assert PatchBody.model_validate({"reason": "r"}).to_patch().tags is None
    params = ForgetParams.model_validate({"reason": "r", "force": "true", "if_version": "2"})
    assert params.force is True and params.if_version == 2
