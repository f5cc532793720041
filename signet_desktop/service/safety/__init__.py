"""Content safety: the gate every prompt-facing text passes, and its worker."""
