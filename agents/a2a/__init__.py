"""A2A for agents: the agent cards (1.0 at /.well-known/agent-card.json, 0.3 at
/.well-known/agent.json), the JSON-RPC endpoints of the hub and of each catalog agent
(SendMessage / GetTask, and 0.3's message/send / tasks/get), and paid skills by the a2a-x402
extension v0.2 or an X-API-Key header (credits)."""
