"""The pipeline: declared workers and the queue, its diagnostics and repair."""
