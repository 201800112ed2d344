"""The MCP server at /mcp (streamable HTTP, stateless, JSON responses): every product on sale as a
paid tool, the free catalogs as free tools, paid with X-API-Key credits (or a managed MCP pack's
calls) or with x402 in the tool call's `_meta`. See agents/mcp/server.py for the transport."""

MCP_PATH = "/mcp"
