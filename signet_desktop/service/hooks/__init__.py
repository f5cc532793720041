"""Hooks: what a harness asks at session start, on each prompt and at the end."""
