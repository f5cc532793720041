"""recall package."""
