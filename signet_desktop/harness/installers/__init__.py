"""Installers that connect a harness to Signet: one module per harness over `files.py`."""
