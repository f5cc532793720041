"""Why a document could not be ingested: a source that will not work, or a failure that may pass."""

from __future__ import annotations


class IngestError(Exception):
    """A document's ingest failed; the message is recorded on the document."""


class SourceRejected(IngestError):
    """The source itself is unusable (empty, binary, too large, refused address, HTTP 404...)."""


class FetchFailed(IngestError):
    """Fetching failed in a way that may pass (timeout, connection refused, HTTP 5xx)."""
