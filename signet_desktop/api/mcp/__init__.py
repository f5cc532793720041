"""The MCP server: Signet's memory tools over stdio (`signet-mcp`) and Streamable HTTP (`/mcp`)."""
