"""The agents app's admin views (Django's autodiscovery imports this module)."""

from __future__ import annotations

from agents.mcp import admin as mcp_admin  # noqa: F401  (the managed MCP allowances)
