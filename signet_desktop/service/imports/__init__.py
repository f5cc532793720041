"""Imports: sources of existing history (Claude Code, Codex, Signet) and runs over them."""
