"""Turn a document's bytes into text and a title: plain text and Markdown, HTML, PDF.

HTML goes through trafilatura (the page's main text without navigation, scripts or styles;
its whole visible text when trafilatura finds no main content) and keeps the page's
`<title>`. PDF goes through pypdf, page by page, with the file's title from its metadata.
Anything else must be text: bytes with NULs, or that decode to mostly replacement
characters, are refused as binary. An empty result is refused too: a document with no text
would be done with no chunks, which no one asked for.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass
from pathlib import PurePath

from signet_desktop.ingest.errors import SourceRejected

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
PDF_TYPE = "application/pdf"
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdx"})
HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml"})
SNIFF_BYTES = 8192
MAX_REPLACEMENT_SHARE = 0.01

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Extracted:
    """A document's text, the media type it was read as, and a title when it has one."""

    text: str
    content_type: str
    title: str | None


def media_type_of(body: bytes, declared: str | None, name: str | None = None) -> str:
    """The type to read `body` as: the declared one, else from the name's suffix or a sniff."""
    if declared:
        return declared.split(";", 1)[0].strip().lower()
    if body.startswith(b"%PDF-"):
        return PDF_TYPE
    suffix = PurePath(name).suffix.lower() if name else ""
    if suffix == ".pdf":
        return PDF_TYPE
    if suffix in HTML_SUFFIXES:
        return "text/html"
    if suffix in MARKDOWN_SUFFIXES:
        return "text/markdown"
    return "text/plain"


def extract(body: bytes, media_type: str, *, charset: str | None = None) -> Extracted:
    """The text of `body` read as `media_type`; SourceRejected when there is none to read."""
    if media_type == PDF_TYPE:
        text, title = _pdf(body)
    elif media_type in HTML_TYPES:
        text, title = _html(decode_text(body, charset))
    else:
        text = decode_text(body, charset)
        title = _markdown_title(text) if media_type == "text/markdown" else None
    if not text.strip():
        raise SourceRejected("the document has no text")
    return Extracted(text, media_type, title)


def decode_text(body: bytes, charset: str | None = None) -> str:
    """Bytes as text (declared charset, else UTF-8); binary data is refused, not mangled."""
    if b"\x00" in body[:SNIFF_BYTES] or (len(body) > SNIFF_BYTES and b"\x00" in body):
        raise SourceRejected("the document is binary data, not text (it contains NUL bytes)")
    encoding = charset or "utf-8"
    try:
        text = body.decode(encoding, errors="replace")
    except LookupError:
        text = body.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    bad = text.count("\ufffd")
    if bad and bad > MAX_REPLACEMENT_SHARE * len(text):
        raise SourceRejected(f"the document is not {encoding} text ({bad:,} undecodable bytes)")
    return text


def _html(html: str) -> tuple[str, str | None]:
    import trafilatura
    from trafilatura.utils import load_html

    tree = load_html(html) if html.strip() else None
    if tree is None:
        return "", None
    # The page's own <title> first (Signet stores that); trafilatura's guess (often the h1)
    # only when the page has none.
    title = tree.findtext(".//title") or tree.findtext(".//head/title")
    text = trafilatura.extract(html, include_comments=False, include_tables=True)
    if not text:
        text = trafilatura.html2txt(html)
    if not _clean_title(title):
        metadata = trafilatura.extract_metadata(html)
        title = metadata.title if metadata is not None else None
    return text or "", _clean_title(title)


def _pdf(body: bytes) -> tuple[str, str | None]:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    # pypdf logs every repairable oddity as a warning; the outcome is what matters here.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(body))
        pages = [page.extract_text() or "" for page in reader.pages]
        info = reader.metadata
        title = info.title if info is not None else None
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        raise SourceRejected(f"the PDF cannot be read: {exc}") from None
    return "\n\n".join(p.strip() for p in pages if p.strip()), _clean_title(title)


def _markdown_title(text: str) -> str | None:
    for line in text.splitlines()[:50]:
        if line.startswith("# "):
            return _clean_title(line[2:])
    return None


def _clean_title(title: object) -> str | None:
    if not isinstance(title, str):
        return None
    cleaned = " ".join(title.split())[:500]
    return cleaned or None
