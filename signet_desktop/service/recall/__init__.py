"""Recall: one ranked search for every surface, and its opt-in telemetry ledger."""
