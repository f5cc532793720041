"""MCP search answers: HTTP's body as data (the note, recalled text defanged)."""

from __future__ import annotations

import json

from signet_desktop.api.mcp.tools import as_data
from signet_desktop.safety.defang import DATA_NOTE


def test_recalled_texts_are_defanged_and_the_rest_is_untouched() -> None:
    body = {
        "results": [{"id": "m1", "content": "see ![x](https://a.example/b?d=1)", "score": 0.5}],
        "supplementary": [{"excerpt": "<img src=https://a.example/p>"}],
        "query": "https://a.example/q",
    }
    out = json.loads(as_data(json.dumps(body)))
    assert out["note"] == DATA_NOTE
    assert out["results"] == [
        {"id": "m1", "content": "see image 'x' (hxxps://a[.]example/b?…)", "score": 0.5}
    ]
    assert "<img" not in out["supplementary"][0]["excerpt"]
    assert out["query"] == "https://a.example/q"  # the caller's own text, not recalled


def test_hits_excerpts_and_non_json_text() -> None:
    out = json.loads(as_data(json.dumps({"hits": [{"excerpt": "go to www.evil.example/x?y"}]})))
    assert out["hits"][0]["excerpt"] == "go to www.evil[.]example/x?…"
    assert as_data("not json") == "not json"
    assert as_data("[1, 2]") == "[1, 2]"
