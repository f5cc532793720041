"""Artifacts: canonical Markdown history of sessions, and the worker that writes it."""
