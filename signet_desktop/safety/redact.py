"""Obvious secrets replaced by markers in prompt-facing text (deterministic, no I/O).

`redact_secrets` never touches stored evidence: callers apply it to the text they are about
to put in a prompt. It looks for shapes that are secrets by construction (provider key
prefixes, JWTs, PEM private key blocks, bearer credentials, URL passwords) and for
`password=` / `token: …` style assignments whose value looks like a literal, not a
reference (`$TOKEN`, `os.environ[...]`, `get_token()` are left alone).
"""

from __future__ import annotations

import re

REDACTED = "[redacted secret]"
REDACTED_KEY = "[redacted private key]"

_PEM = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
    re.DOTALL,
)
_TOKENS = re.compile(
    "|".join(
        (
            r"\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",  # OpenAI, Anthropic
            r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe
            r"\bgh[pousr]_[A-Za-z0-9]{30,}",  # GitHub
            r"\bgithub_pat_[A-Za-z0-9_]{22,}",
            r"\bglpat-[A-Za-z0-9_-]{20,}",  # GitLab
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key id
            r"\bxox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
            r"\bAIza[0-9A-Za-z_-]{35}\b",  # Google
            r"\bnpm_[A-Za-z0-9]{36}\b",
            r"\bhf_[A-Za-z0-9]{30,}\b",  # Hugging Face
            r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # JWT
        )
    )
)
_BEARER = re.compile(r"\b(Bearer|Basic|Token)(\s+)([A-Za-z0-9._~+/-]{16,}=*)")
_URL_PASSWORD = re.compile(r"\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)([^\s@/]+)(@)", re.IGNORECASE)
_ASSIGNMENT = re.compile(
    r"(?i)(?<![a-z0-9])((?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|apikey"
    r"|access[_-]?key|secret[_-]?key|client[_-]?secret|private[_-]?key))"
    r"([\"']?\s*(?:=|:)\s*)(?:([\"'])([^\"'\n]{4,}?)\3|([^\s\"',;`]+))"
)
_REFERENCE = re.compile(
    r"^(?:\$|%|\{|<|\[|os\.|env\.|process\.env|getenv|none$|null$|true$|false$)"
)


def _assignment(match: re.Match[str]) -> str:
    name, sep, quote, quoted, bare = match.groups()
    value = quoted if quote else bare
    if _REFERENCE.match(value.lower()) or "(" in value or value.strip("*x.") == "":
        return match.group(0)
    if not quote and ":" in sep and not _looks_literal(value):
        return match.group(0)  # "token: required", "password: see the vault"
    if not quote and len(value) < 4:
        return match.group(0)
    q = quote or ""
    return f"{name}{sep}{q}{REDACTED}{q}"


def _bearer(match: re.Match[str]) -> str:
    scheme, space, value = match.groups()
    if not any(c.isdigit() for c in value):
        return match.group(0)  # "Basic authentication_settings": a word, not a credential
    return f"{scheme}{space}{REDACTED}"


def _looks_literal(value: str) -> bool:
    """After a colon only a value that looks generated counts (digits or symbols, 6+ chars)."""
    return len(value) >= 6 and any(not c.isalpha() for c in value)


# Literal triggers: a pattern runs only when one occurs (most text has none of them).
_TOKEN_TRIGGERS = ("sk-", "sk_", "rk_", "gh", "github_pat_", "glpat-", "AKIA", "ASIA", "xox",
                   "AIza", "npm_", "hf_", "eyJ")  # fmt: skip
_ASSIGNMENT_TRIGGERS = ("pass", "pwd", "secret", "token", "key")


def redact_secrets(text: str) -> str:
    """`text` with obvious secrets replaced by `[redacted secret]` / `[redacted private key]`."""
    if "-----BEGIN" in text:
        text = _PEM.sub(REDACTED_KEY, text)
    if any(trigger in text for trigger in _TOKEN_TRIGGERS):
        text = _TOKENS.sub(REDACTED, text)
    if "Bearer" in text or "Basic" in text or "Token" in text:
        text = _BEARER.sub(_bearer, text)
    if "://" in text:
        text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{REDACTED}{m.group(3)}", text)
    if ("=" in text or ":" in text) and any(t in text.lower() for t in _ASSIGNMENT_TRIGGERS):
        text = _ASSIGNMENT.sub(_assignment, text)
    return text
