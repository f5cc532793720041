"""evidence package."""
