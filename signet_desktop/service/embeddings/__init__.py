"""Embeddings: the remember path's vectors, the backfill worker, the facade's operations."""
