"""Documents: ingest of text, URLs and files, their worker, and folder connectors."""
