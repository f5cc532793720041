"""dreaming package."""
