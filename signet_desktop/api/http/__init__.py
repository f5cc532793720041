"""The HTTP API: Signet-compatible JSON routes over the service facade (FastAPI + uvicorn)."""
