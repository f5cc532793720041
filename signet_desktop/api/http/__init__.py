"""http package."""
