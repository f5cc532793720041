"""redact_secrets: obvious secrets become markers; ordinary text and references stay."""

from __future__ import annotations

import pytest

from signet_desktop.safety.redact import REDACTED, REDACTED_KEY, redact_secrets

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"

SECRETS = [
    ("key sk-proj-abcdefghijklmnopqrstuvwxyz123456 here", f"key {REDACTED} here"),
    ("sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123", REDACTED),
    ("token ghp_" + "a1B2" * 9, f"token {REDACTED}"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", REDACTED),
    ("aws AKIAIOSFODNN7EXAMPLE id", f"aws {REDACTED} id"),
    ("slack xoxb-1234567890-abcdefghij", f"slack {REDACTED}"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", f"stripe {REDACTED}"),
    ("google AIzaSyA1234567890abcdefghijklmnopqrstuv", f"google {REDACTED}"),
    (f"jwt {JWT}", f"jwt {REDACTED}"),
    ("Authorization: Bearer abcdef1234567890abcdef", f"Authorization: Bearer {REDACTED}"),
    ("password=hunter2", f"password={REDACTED}"),
    ("password: hunter2", f"password: {REDACTED}"),
    ("DB_PASSWORD=s3cr3t!", f"DB_PASSWORD={REDACTED}"),
    ('api_key = "abcd1234efgh"', f'api_key = "{REDACTED}"'),
    ("export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx", f"export OPENAI_API_KEY={REDACTED}"),
    ("client_secret: 'x9-long-secret'", f"client_secret: '{REDACTED}'"),
    ("postgres://app:pa55word@db:5432/billing", f"postgres://app:{REDACTED}@db:5432/billing"),
    (
        "before\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n"
        "-----END OPENSSH PRIVATE KEY-----\nafter",
        f"before\n{REDACTED_KEY}\nafter",
    ),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA (cut off)", REDACTED_KEY),
]

KEPT = [
    "use a Bearer token from the keychain",
    "Basic configuration_settings live in config.yaml",
    "token: required",
    "password: see the vault",
    "token = get_token()",
    "token=$GITHUB_TOKEN",
    "api_key = os.environ['OPENAI_API_KEY']",
    "password=None",
    "max_tokens=512",
    "the token_count: 12345678",
    "the sk- prefix marks OpenAI keys",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----",
    "https://example.com/path@v2",
    "we rotate the API key every month",
]


@pytest.mark.parametrize(("text", "expected"), SECRETS)
def test_secrets_are_replaced(text: str, expected: str) -> None:
    assert redact_secrets(text) == expected


@pytest.mark.parametrize("text", KEPT)
def test_ordinary_text_and_references_are_kept(text: str) -> None:
    assert redact_secrets(text) == text


def test_redaction_is_deterministic_and_idempotent() -> None:
    text = "password=hunter22 and sk-proj-abcdefghijklmnopqrstuvwxyz and Bearer abc123def456ghi789"
    once = redact_secrets(text)
    assert once == redact_secrets(text)
    assert redact_secrets(once) == once
    assert "hunter22" not in once and "abcdefghijklmnop" not in once and "abc123" not in once
