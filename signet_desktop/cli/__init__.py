"""The `signet` command line: a thin HTTP client of the running daemon."""
