"""`make demo`: agents that buy from the running local stack (`make run`), one module a route,
each run as `python -m a2a_service.scripts.demos.<name>`: agent (x402 with the official client),
credits (a deposit, then calls paid from prepaid credits), sessions (a prepaid session and a
webhook push), signals, delegation, a2a (an a2a-sdk agent), mcp (an MCP client) and channels (100 calls paid by
vouchers on one x402 payment channel, collected by one claim transaction)."""
