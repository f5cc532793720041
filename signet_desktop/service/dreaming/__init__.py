"""Dreaming: passes triggered, scheduled and inspected, and the sources they cite."""
