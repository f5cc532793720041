"""projection package."""
