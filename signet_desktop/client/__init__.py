"""The daemon HTTP client shared by the CLI, harness hooks and the MCP stdio shim."""
