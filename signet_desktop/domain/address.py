"""Where a daemon listens unless told otherwise: shared by the server, the CLI and every client.

In `domain` (an empty package init) so the hook and MCP clients import it without pydantic.
"""

from __future__ import annotations

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 3850
