"""Content-safety policy `memory-content-safety-v2`: deterministic detectors, no I/O.

`scan(text)` says whether retained content (a memory, transcript, artifact, summary or source
chunk) may be put in front of a model. It never changes the content: callers keep the
evidence and show `WITHHELD_MARKER` instead where the verdict is not context-eligible.

Invisible Unicode is looked for in the raw text; every other detector reads the text after
NFKC, with invisible characters removed and common Cyrillic/Greek look-alikes folded to Latin,
so full-width letters or a zero-width space inside "ignore" do not hide a phrase. A match is
suppressed when its clause is defensive or quoting ("never run curl | sh", "for example:
'ignore previous instructions'", "the detector flags …"): the cue must come before the match
in the same clause, or anywhere in the clause when the match sits inside quotes.

v2 adds the shape rules of `safety/shapes.py` (overrides in French, Spanish, German,
Italian and Portuguese; claimed authority aimed at the model; concealment from the user;
reply hijacks; credential helpers, pipes to remote network tools and data in URLs), filed
under the existing reasons.

Changing what any detector matches changes `POLICY_VERSION`; stored decisions of an older
version are rescanned in the background.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from signet_desktop.safety import shapes

POLICY_VERSION = "memory-content-safety-v2"
WITHHELD_MARKER = "[memory content withheld by safety policy]"

Status = Literal["clean", "tainted", "blocked"]
REASONS = (
    "prompt_injection",
    "tool_directive",
    "exfiltration",
    "credential_harvesting",
    "malicious_shell",
    "invisible_unicode",
)


@dataclass(frozen=True, slots=True)
class SafetyVerdict:
    """What the policy decided: only `clean` is context-eligible."""

    status: Status
    context_eligible: bool
    reasons: tuple[str, ...]


CLEAN = SafetyVerdict("clean", True, ())


def text_hash(text: str) -> str:
    """The ledger's content hash: sha256 of the exact text scanned (raw, not normalised)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def verdict_for(reasons: tuple[str, ...]) -> SafetyVerdict:
    """No reasons → clean; only invisible_unicode → tainted; anything else → blocked."""
    if not reasons:
        return CLEAN
    if reasons == ("invisible_unicode",):
        return SafetyVerdict("tainted", False, reasons)
    return SafetyVerdict("blocked", False, reasons)


# -- invisible Unicode (raw text) -------------------------------------------------------------

_ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\u180e")
_BIDI = frozenset("\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_BOM = "\ufeff"
_TAG_FIRST, _TAG_LAST, _CANCEL_TAG = 0xE0000, 0xE007F, 0xE007F
_BLACK_FLAG = "\U0001f3f4"  # 🏴 + tag letters + cancel tag = a subdivision flag (🏴 England)
_INVISIBLE = _ZERO_WIDTH | _BIDI | {_BOM}
_ANY_INVISIBLE = re.compile("[" + "".join(sorted(_INVISIBLE)) + "\U000e0000-\U000e007f]")
_STRIP_INVISIBLE = {ord(c): None for c in _INVISIBLE} | {
    code: None for code in range(_TAG_FIRST, _TAG_LAST + 1)
}


def _joins_script(text: str, index: int) -> bool:
    """ZWJ/ZWNJ between emoji (👩‍💻) or Arabic/Indic letters (Persian ZWNJ) is legitimate."""
    before = text[index - 1] if index > 0 else ""
    after = text[index + 1] if index + 1 < len(text) else ""
    return _joinable(before) and _joinable(after)


def _joinable(char: str) -> bool:
    if not char:
        return False
    code = ord(char)
    return (
        code >= 0x1F000  # emoji planes
        or 0x2600 <= code <= 0x27BF  # misc symbols, dingbats (❤, ✈)
        or code == 0xFE0F  # emoji presentation selector
        or 0x0600 <= code <= 0x06FF  # Arabic, Persian
        or 0x0900 <= code <= 0x0DFF  # Devanagari … Sinhala
    )


def _flag_tags_end(text: str, index: int) -> int:
    """End of a subdivision flag's tag run after 🏴 at `index` (0 when there is none).

    A flag is 🏴, 2-6 tag letters or digits (U+E0061-E007A, U+E0030-E0039) and the cancel tag;
    anything else made of tag characters is hidden text ("ASCII smuggling").
    """
    end = index + 1
    while end < len(text) and end - index <= 7:
        code = ord(text[end])
        if code == _CANCEL_TAG:
            return end + 1 if end - index >= 3 else 0
        if not (0xE0061 <= code <= 0xE007A or 0xE0030 <= code <= 0xE0039):
            return 0
        end += 1
    return 0


def _has_invisible(text: str) -> bool:
    if _ANY_INVISIBLE.search(text) is None:
        return False
    index = 0
    while index < len(text):
        char = text[index]
        if char == _BLACK_FLAG:
            index = _flag_tags_end(text, index) or index + 1
            continue
        code = ord(char)
        if _TAG_FIRST <= code <= _TAG_LAST:
            return True
        if char in _INVISIBLE and not (
            (char == _BOM and index == 0)  # a file's byte-order mark, not a hidden character
            or (char in "\u200c\u200d" and _joins_script(text, index))
        ):
            return True
        index += 1
    return False


# -- normalisation for the phrase detectors --------------------------------------------------

_CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁɡһӏАВЕКМНОРСТХІЈЅαεορτυνκχΑΒΕΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdghlABEKMHOPCTXIJSaeoptuvkxABEHIKMNOPTYX",
)


_SPACES = re.compile(r"[^\S\n]*[^\S\n ][^\S\n]*| {2,}")  # only runs that need a change


def normalise(text: str) -> str:
    """NFKC, invisible characters removed, look-alike letters folded to Latin, runs of
    spaces and tabs made one space (line breaks stay: `system:` lines and clauses need them)."""
    folded = unicodedata.normalize("NFKC", text).translate(_STRIP_INVISIBLE)
    folded = folded.translate(_CONFUSABLES)
    if "  " in folded or not folded.isprintable():  # fast path: nothing to collapse
        folded = _SPACES.sub(" ", folded)
    return folded


# -- phrase detectors (normalised, lower-cased text) -----------------------------------------
#
# Each rule is (triggers, pattern): the pattern only runs when one of its literal triggers
# occurs in the text, which keeps a clean memory at a few substring checks per rule.

_F = re.IGNORECASE | re.MULTILINE
_SECRET_NOUN = (
    r"(?:secrets?|api[\s_-]?keys?|credentials|private\s+keys?|ssh\s+keys?|access\s+tokens?"
    r"|auth(?:entication)?\s+tokens?|tokens|passwords?|\.env\b(?:\s+files?)?"
    r"|environment\s+variables|~/\.ssh\S*|id_(?:rsa|ed25519|ecdsa)\b|/etc/shadow"
    r"|~/\.aws/credentials)"
)
_SECRET_WORDS = (
    "secret", "key", "credential", "token", "password", ".env", "environment", ".ssh", "id_rsa",
    "id_ed25519", "id_ecdsa", "shadow", ".aws",
)  # fmt: skip
_WORDS = r"(?:[\w'-]+\s+){0,3}?"
# A phrase that is the first half of a compound noun ("the system prompt length", "the
# secrets manager", "the system rules cache") is not the thing itself.
_NOT_COMPOUND = (
    r"(?!\s+(?:length|size|count|tokens?|file|files|template|version|hash|format|editor|field"
    r"|cache|caches|engine|table|tables|config|configuration|check|checks|list|page|section"
    r"|folder|directory|docs?|manager|store|vault|rotation|scann(?:er|ing)|polic(?:y|ies)"
    r"|management|schema|handling|provider|service|api|module|class|test|tests)\b)"
)
_Rule = tuple[tuple[str, ...], str]

_PROMPT_INJECTION: tuple[_Rule, ...] = (
    # ignore / override previous instructions
    (
        ("ignore", "disregard", "forget", "override", "bypass"),
        r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|of|the|your|my|these"
        r"|those|every(?:thing)?)\s+){0,3}(?:previous|prior|above|earlier|preceding|foregoing"
        r"|original|initial|system|developer)\s+(?:instructions?|prompts?|rules|directives?"
        r"|guidelines|messages?|guardrails|constraints)\b" + _NOT_COMPOUND,
    ),
    (
        ("ignore", "disregard", "forget"),
        r"\b(?:ignore|disregard|forget)\s+(?:all|everything)\s+(?:you\s+(?:were|have\s+been)"
        r"\s+told|your\s+instructions)\b",
    ),
    # new system instructions
    (("instructions", "directives"), r"^\s*new\s+(?:instructions|directives)\s*:"),
    (("system",), r"\bnew\s+system\s+(?:instructions|directives)\s*:"),
    (("system",), r"\bnew\s+system\s+(?:prompt|instructions?|message)\b"),
    (
        ("system",),
        r"\b(?:updated|revised|real|actual|true)\s+system\s+(?:prompt|instructions?)\s*:",
    ),
    # system: lines addressed to the model, role tokens, <system> tags
    (
        ("system", "developer"),
        r"^\s*(?:#+\s*)?\[?(?:system|developer)\]?\s*:\s*(?:you\b|your\b|ignore\b|disregard\b"
        r"|from\s+now\s+on\b|always\b|never\b|do\s+not\b|don't\b|act\b|respond\b|reply\b"
        r"|the\s+assistant\b|new\s+instructions\b|override\b)",
    ),
    (("sys",), r"<\|?\s*/?\s*(?:system|system[_-]prompt|sys)\s*\|?>"),
    (("im_start",), r"<\|im_start\|>\s*(?:system|developer)\b"),
    (("<<",), r"<<\s*/?SYS\s*>>"),
    (("inst]", "system]"), r"\[/?(?:SYSTEM|INST)\]"),
    # role hijack
    (
        ("are",),
        r"\byou\s+are\s+(?:now|no\s+longer)\s+(?:in\s+)?(?:an?\s+)?(?:dan\b|developer\s+mode"
        r"|jailbroken|unrestricted|unfiltered|uncensored|free\s+(?:of|from)|bound\s+by"
        r"|an?\s+ai\s+without|evil|my\s+(?:assistant|servant))",
    ),
    (
        ("developer mode", "god mode", "jailbreak mode", "dan mode", "unrestricted mode"),
        r"\b(?:enable|enter|activate|switch\s+to)\s+(?:developer|god|jailbreak|dan|unrestricted)"
        r"\s+mode\b",
    ),
    (
        ("unrestricted", "unfiltered", "jailbroken", "uncensored", "evil", "different"),
        r"\b(?:pretend|act|behave)\s+(?:to\s+be|as\s+if\s+you\s+(?:are|were)|as)\s+(?:an?\s+)?"
        r"(?:unrestricted|unfiltered|jailbroken|uncensored|evil|different)\s+(?:ai|assistant"
        r"|model|chatbot)\b",
    ),
)

_TOOL_DIRECTIVE: tuple[_Rule, ...] = (
    (
        ("tool_", "function_call", "invoke"),
        r"<\s*/?\s*(?:tool_call|tool_use|tool_calls|function_call|function_calls|invoke"
        r"|antml:invoke|antml:function_calls|tool_code)\b",
    ),
    (
        ("tool",),
        r"\b(?:call|invoke)\s+(?:the\s+)?(?!(?:build|lint(?:er|ing)?|format(?:ter)?|test(?:ing)?"
        r"|cli|package|deploy(?:ment)?|release|migration|code-?gen)\s+tool)[`'\"]?[a-z][\w.:-]*"
        r"[`'\"]?\s+tool\b",
    ),
    (
        ("tool_calls", "function_call", "tool_use"),
        r"[\"'](?:tool_calls|function_call|tool_use)[\"']\s*:",
    ),
)

_EXFILTRATION: tuple[_Rule, ...] = (
    # the model's own context
    (
        ("system", "instructions", "developer"),
        r"\b(?:reveal|print|output|repeat|dump|leak|disclose|expose|recite|show\s+me|tell\s+me"
        r"|give\s+me|send\s+me)\s+" + _WORDS + r"(?:your|the)\s+(?:(?:full|entire|complete"
        r"|exact|original|initial|hidden|secret)\s+)*(?:system\s+prompt|system\s+message"
        r"|hidden\s+instructions|initial\s+instructions|developer\s+(?:message|prompt)"
        r"|instructions\s+above)\b" + _NOT_COMPOUND,
    ),
    # secrets out of the machine
    (
        ("reveal", "dump", "disclose", "exfiltrate", "expose"),
        r"\b(?:reveal|dump|disclose|exfiltrate|expose)\s+" + _WORDS + r"(?:all\s+)?(?:the\s+"
        r"|your\s+|any\s+)?" + _SECRET_NOUN + r"(?!\w)" + _NOT_COMPOUND,
    ),
    (
        _SECRET_WORDS,
        r"\b(?:send|post|upload|exfiltrate|forward|email|e-mail|transmit|copy|leak)\s+"
        + _WORDS
        + r"(?:all\s+)?(?:the\s+|your\s+|any\s+|my\s+)?"
        + _SECRET_NOUN
        + r"[^.\n]{0,80}?\b(?:to|into)\s+(?:https?://|[\w.+-]+@[\w-]+\.|(?:my|this|an?|the)\s+"
        r"(?:attacker|external|personal)\b|(?:attacker|external)\b|[\w-]+\.(?:com|net|io"
        r"|org|xyz|ru|cn|top|site|me)\b|(?:pastebin|gist|webhook|ngrok|requestbin|discord))",
    ),
    (
        ("shadow", ".aws", "id_rsa", "id_ed25519", "id_ecdsa"),
        r"\b(?:read|print|show|output|open|cat)\s+(?:me\s+)?(?:the\s+)?(?:contents?\s+of\s+)?"
        r"(?:/etc/shadow|~/\.aws/credentials|~/\.ssh/id_(?:rsa|ed25519|ecdsa)(?!\.pub)\b)",
    ),
)

_CREDENTIAL_NOUN = (
    r"(?:passwords?|passphrases?|pass\s*codes?|tokens?|api[\s_-]?keys?|credentials|2fa\s+codes?"
    r"|mfa\s+codes?|otp(?:\s+codes?)?|one-time\s+(?:codes?|passwords?)|seed\s+phrases?"
    r"|recovery\s+phrases?|private\s+keys?|ssh\s+keys?|credit\s+card(?:\s+numbers?)?"
    r"|login\s+details|pins?)"
)
_CREDENTIAL_WORDS = (
    "pass", "token", "key", "credential", "2fa", "mfa", "otp", "one-time", "phrase", "card",
    "login", "pin",
)  # fmt: skip
_CREDENTIAL_HARVESTING: tuple[_Rule, ...] = (
    (
        _CREDENTIAL_WORDS,
        r"\b(?:ask|request)\s+(?:the\s+)?users?\s+(?:for|to\s+(?:paste|provide|share|send|give"
        r"|reveal|hand\s+over))\s+(?:(?:their|his|her|the|your|an?)\s+)?"
        r"(?:\w+\s+)?" + _CREDENTIAL_NOUN + r"\b",
    ),
    (
        _CREDENTIAL_WORDS,
        r"\b(?:paste|provide|enter|type|send|share|give|submit|supply|reply\s+with|confirm)\s+"
        r"(?:me|us)\s+(?:with\s+)?(?:your|the)\s+(?:\w+\s+)?" + _CREDENTIAL_NOUN + r"\b",
    ),
    (
        _CREDENTIAL_WORDS,
        r"\b(?:paste|provide|enter|type|send|share|submit|supply|reply\s+with|include|confirm)\s+"
        r"(?:your|the\s+user's)\s+(?:\w+\s+)?" + _CREDENTIAL_NOUN + r"\s+(?:here|below|in\s+"
        r"(?:the|this|your)\s+(?:chat|reply|response|message|conversation)|to\s+(?:me|us)"
        r"|with\s+(?:me|us)|so\s+(?:i|we)\s+can)\b",
    ),
    (_CREDENTIAL_WORDS, r"\bwhat\s+(?:is|are)\s+your\s+(?:\w+\s+)?" + _CREDENTIAL_NOUN + r"\s*\?"),
)

_ROOTISH = r"(?:/\*?|/\.\*|~/?\*?|\$HOME/?\*?|\$\{HOME\}/?\*?)(?=$|[\s;&|)'\"`])"
_MALICIOUS_SHELL: tuple[_Rule, ...] = (
    (
        ("curl", "wget", "fetch"),
        r"\b(?:curl|wget|fetch)\b[^|\n;]*\|\s*(?:sudo\s+)?(?:-\w+\s+)*(?:ba|z|da|k|fi|c)?sh\b",
    ),
    (
        ("curl", "wget"),
        r"\b(?:curl|wget)\b[^|\n;]*\|\s*(?:sudo\s+)?(?:python\d?|perl|ruby|node)\b"
        r"(?!\s+-m\s+json)",
    ),
    (("curl", "wget"), r"\b(?:ba|z)?sh\s+-c\s+[\"']?\$\(\s*(?:curl|wget)\b"),
    (("curl", "wget"), r"\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b"),
    # recursive rm of /, ~ or $HOME
    (
        ("rm ",),
        r"\brm\s+(?:-{1,2}[\w-]+\s+)*-(?:[a-z]*r[a-z]*|-recursive)\s+(?:-{1,2}[\w-]+\s+)*"
        + _ROOTISH,
    ),
    # private keys and system secrets read out
    (
        (".ssh",),
        r"\b(?:cat|less|more|head|tail|base64|xxd|strings|scp|tar|zip)\b[^\n|;]*(?:~|\$HOME"
        r"|/root|/home/[\w.-]+)/\.ssh/(?:id_(?:rsa|dsa|ecdsa|ed25519)(?!\.pub)\b|\*|(?=\s|$))",
    ),
    (("shadow",), r"\b(?:cat|less|head|tail|base64|scp)\s+[^\n|;]*/etc/shadow\b"),
    # environment or secrets piped / posted to the network
    (
        ("env", "export"),
        r"\b(?:env|printenv|export\s+-p|cat\s+\S*\.env)\b[^\n;|]*\|\s*(?:curl|wget|nc|ncat"
        r"|netcat|socat|telnet)\b",
    ),
    (
        ("curl", "wget"),
        r"\b(?:curl|wget)\b[^\n]*?(?:-d|--data[\w-]*|-F|--form|--upload-file|-T|--post-file|"
        r"--body-file)[\s=]+['\"]?(?:\w+=)?(?:@|\$\(\s*)(?:env\b|printenv\b|cat\s+)?[^\s'\")]*?"
        r"(?:\benv\b|printenv|\.env\b|\.ssh/|id_rsa|/etc/(?:shadow|passwd)|\.aws/credentials)",
    ),
    # reverse shells, disk wipes, fork bombs
    (("/dev/tcp",), r"\b(?:ba)?sh\s+-i\s+>&\s*/dev/tcp/"),
    (("/bin/",), r"\b(?:nc|ncat|netcat)\b[^\n;|]*\s-(?:e|c)\s+/bin/(?:ba)?sh\b"),
    (("mkfs",), r"\bmkfs(?:\.\w+)?\s+/dev/(?:sd|nvme|hd|disk)\w*"),
    (("of=/dev",), r"\bdd\s+[^\n;|]*\bof=/dev/(?:sd[a-z]|nvme\d|hd[a-z]|disk\d)\b"),
    ((":()",), r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:"),
    (("777",), r"\bchmod\s+(?:-R\s+)?0?777\s+/(?=$|\s)"),
)

_Compiled = tuple[tuple[frozenset[str], re.Pattern[str]], ...]
_DETECTORS: tuple[tuple[str, _Compiled], ...] = tuple(
    (reason, tuple((frozenset(triggers), re.compile(pattern, _F)) for triggers, pattern in rules))
    for reason, rules in (
        ("prompt_injection", _PROMPT_INJECTION + shapes.OVERRIDE + shapes.AUTHORITY),
        ("tool_directive", _TOOL_DIRECTIVE + shapes.REPLY_HIJACK),
        ("exfiltration", _EXFILTRATION + shapes.CONCEALMENT + shapes.EXFIL_SHAPES),
        ("credential_harvesting", _CREDENTIAL_HARVESTING),
        ("malicious_shell", _MALICIOUS_SHELL),
    )
)

# -- defensive / quoting context -------------------------------------------------------------

_DEFENSIVE = re.compile(
    r"\b(?:e\.g\.|i\.e\.|for\s+example|for\s+instance|examples?|such\s+as"
    r"|(?:phrases?|strings?|text|messages?|lines?|inputs?|content|commands?)\s+like|detectors?"
    r"|detects?|detection|detected|flags?|flagged"
    # "never", "don't" … warn, but "don't forget to" / "never hesitate to" urge
    r"|(?:never|don't|do\s+not|does\s+not|must\s+not|mustn't|should\s+not|shouldn't|won't)"
    r"(?!\s+(?:forget|hesitate|fail|miss|neglect)\b)"
    r"|avoid|beware|warning|warns?|security\s+guidance"
    r"|security\s+note|red[\s-]team(?:ing)?|test\s+cases?|fixtures?|phishing"
    # naming the category is describing it: prompt_injection (…), malicious shell such as …
    r"|prompt[\s_-]injections?|tool[\s_-]directives?|exfiltration|credential[\s_-]harvesting"
    r"|malicious[\s_-]shell"
    r"|injection\s+attempts?|jailbreak\s+attempts?|attacks?\s+(?:like|such)|refuses?|refused"
    r"|blocks?|blocked|rejects?|rejected|treat\w*\s+\S+\s+as\s+(?:data|untrusted)|untrusted"
    r"|quoted?|the\s+phrase|the\s+string|the\s+pattern|regex(?:es)?)(?!\w)",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)[.!?;]+(?=\s|$)|\n")
_QUOTES = "\"'`“”‘’«»"


def _clause(text: str, start: int, end: int) -> tuple[int, int]:
    """Bounds of the clause around text[start:end] (sentence punctuation or a line break)."""
    left = 0
    for before in _CLAUSE_END.finditer(text, 0, start):
        left = before.end()
    after = _CLAUSE_END.search(text, end)
    return left, len(text) if after is None else after.start()


def _quoted(text: str, start: int, end: int, left: int, right: int) -> bool:
    before = text[left:start]
    after = text[end:right]
    return any(q in before for q in _QUOTES) and any(q in after for q in _QUOTES)


def _suppressed(text: str, start: int, end: int) -> bool:
    """Is this match described, warned about or quoted rather than meant?"""
    left, right = _clause(text, start, end)
    if _DEFENSIVE.search(text, left, start):
        return True
    if _quoted(text, start, end, left, right):
        return bool(_DEFENSIVE.search(text, left, right))
    return False


_TRIGGERS = tuple(sorted({t for _, rules in _DETECTORS for triggers, _ in rules for t in triggers}))


def _detect(rules: _Compiled, text: str, present: set[str]) -> bool:
    for triggers, pattern in rules:
        if not triggers.isdisjoint(present) and any(
            not _suppressed(text, m.start(), m.end()) for m in pattern.finditer(text)
        ):
            return True
    return False


def scan(text: str) -> SafetyVerdict:
    """The policy's verdict on `text` (deterministic; cheap enough for a read path)."""
    reasons = []
    normalised = normalise(text).lower()
    present = {trigger for trigger in _TRIGGERS if trigger in normalised}
    for reason, rules in _DETECTORS:
        if present and _detect(rules, normalised, present):
            reasons.append(reason)
    if _has_invisible(text):
        reasons.append("invisible_unicode")
    return verdict_for(tuple(reasons))
