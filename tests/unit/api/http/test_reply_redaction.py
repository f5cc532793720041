"""api/http/redaction.py: secrets out of JSON, event-stream and text replies, shapes kept."""

from __future__ import annotations

import json

from signet_desktop.api.http.redaction import redact_json, redact_stream, redact_value

SECRET = "ghp_" + "a1B2" * 9


def test_json_strings_are_redacted_and_the_shape_kept() -> None:
    body = {"id": "mem_1", "content": f"token {SECRET}", "tags": [f"x {SECRET}"], "n": 3}
    out = json.loads(redact_json(json.dumps(body).encode()))
    assert out["id"] == "mem_1" and out["n"] == 3
    assert SECRET not in json.dumps(out) and "[redacted secret]" in out["content"]
    assert redact_value({SECRET: 1}) == {SECRET: 1}  # keys are structure, not stored text


def test_each_event_stream_data_line_is_redacted_as_json() -> None:
    chunk = f'event: message\ndata: {{"text": "use {SECRET}"}}\n\n'.encode()
    out = redact_stream(chunk).decode()
    assert out.startswith("event: message\ndata: ") and SECRET not in out
    payload = out.split("data: ", 1)[1].split("\n", 1)[0]
    assert json.loads(payload)["text"] == "use [redacted secret]"


def test_a_body_that_is_not_json_is_redacted_as_text() -> None:
    assert SECRET not in redact_json(f"not json {SECRET}".encode()).decode()
