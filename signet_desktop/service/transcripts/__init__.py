"""Transcripts: harness sessions as evidence, their TTL worker and their recall channel."""
