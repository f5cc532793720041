"""describe_config: a JSON-able view with every secret masked."""

from __future__ import annotations

import json

from signet_desktop.config.describe import REDACTED, describe_config
from signet_desktop.config.loader import parse_config_text

SECRET_YAML = """
embedding:
  provider: openai
  api_key: sk-embed-SECRET1
auth:
  mode: team
  token: tok-SECRET2
inference:
  accounts:
    main:
      provider: anthropic
      apiKey: sk-ant-SECRET3
      oauthRefreshToken: rt-SECRET4
  targets:
    t:
      executor: openai-compatible
      headers: {Authorization: Bearer SECRET5, x-api-key: SECRET6}
      password: SECRET7
  policies:
    auto:
      credentials: {clientSecret: SECRET8}
"""


def test_secrets_are_masked_everywhere() -> None:
    loaded = parse_config_text(SECRET_YAML)
    text = json.dumps(describe_config(loaded))
    assert "SECRET" not in text
    config = describe_config(loaded)["config"]
    assert isinstance(config, dict)
    assert config["embedding"]["api_key"] == REDACTED
    assert config["auth"]["token"] == REDACTED
    assert config["inference"]["accounts"]["main"]["apiKey"] == REDACTED
    assert config["inference"]["targets"]["t"]["password"] == REDACTED


def test_unset_secrets_stay_visible_as_null() -> None:
    described = describe_config(parse_config_text(""))
    config = described["config"]
    assert isinstance(config, dict)
    assert config["embedding"]["api_key"] is None
    assert config["auth"]["token"] is None


def test_description_uses_yaml_names_and_carries_doctor_lists() -> None:
    loaded = parse_config_text("git: {}\nsearch:\n  alpah: 1\n")
    described = describe_config(loaded)
    assert described["path"] is None
    assert described["ignoredKeys"] == ["git"]
    assert described["warnings"] == ["unknown key 'search.alpah' (did you mean 'search.alpha'?)"]
    config = described["config"]
    assert isinstance(config, dict)
    assert config["memory"]["pipelineV2"]["embeddingTracker"]["batchSize"] == 8
    assert config["memory"]["dreaming"]["tokenThreshold"] == 100_000
    assert "extraction" not in config["memory"]["pipelineV2"]
    json.dumps(described)  # JSON-able


def test_only_secret_fields_are_masked_in_the_defaults() -> None:
    described = describe_config(parse_config_text("auth:\n  token: t\n"))
    masked: list[str] = []

    def walk(node: object, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{path}.{key}" if path else str(key))
        elif node == REDACTED:
            masked.append(path)

    walk(described["config"], "")
    assert masked == ["auth.token"]
