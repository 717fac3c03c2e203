"""The one MCP 2026-07-28 Streamable HTTP transport and tool registry, shared by both MCP endpoints."""
