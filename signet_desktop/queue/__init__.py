"""queue package."""
