"""Settings of the agent surfaces and protocols (imported by base): ERC-8004, agent status, the
catalog agents' chat, the managed MCP pack and A2A tasks."""

from __future__ import annotations

from .environment import env
from .payments import CHAIN_ID, CHAIN_RPC_URL

# The Agentverse news agent the news catalog names (its agentverse_news; empty: none).
AGENTVERSE_NEWS_AGENT = env("AGENTVERSE_NEWS_AGENT", default="")
# ERC-8004 (agents/erc8004/): the identity registry `manage.py erc8004_register` registers the
# service's agent in. Empty address on a local anvil chain: the command deploys the project's
# own registry (billing/chain/contracts/AgentIdentityRegistry.sol) there first.
ERC8004_REGISTRY_ADDRESS = env("ERC8004_REGISTRY_ADDRESS", default="")
ERC8004_REGISTRY_CHAIN_ID = env.int("ERC8004_REGISTRY_CHAIN_ID", default=CHAIN_ID)
ERC8004_REGISTRY_RPC_URL = env("ERC8004_REGISTRY_RPC_URL", default=CHAIN_RPC_URL)
# The key that sends register()/setAgentURI() and owns the agent token (needs gas). Empty on
# anvil: its development account #0.
ERC8004_SIGNER_PRIVATE_KEY = env("ERC8004_SIGNER_PRIVATE_KEY", default="")
ERC8004_IMAGE_URL = env("ERC8004_IMAGE_URL", default="")
# Agent status (agents/discovery/status.py), measured from the agents' recorded answers
# (AgentInteraction) in the last AGENT_STATUS_WINDOW_MINUTES: no answer -> idle; an error rate
# (5xx / answers) at or above AGENT_STATUS_DEGRADED_ERROR_RATE or a median latency at or above
# AGENT_STATUS_DEGRADED_LATENCY_MS -> degraded; otherwise online; disabled in the admin -> disabled.
AGENT_STATUS_WINDOW_MINUTES = env.int("AGENT_STATUS_WINDOW_MINUTES", default=60)
AGENT_STATUS_DEGRADED_ERROR_RATE = env.float("AGENT_STATUS_DEGRADED_ERROR_RATE", default=0.2)
AGENT_STATUS_DEGRADED_LATENCY_MS = env.int("AGENT_STATUS_DEGRADED_LATENCY_MS", default=5000)
# The catalog agents' chat may have an OpenAI-compatible model reword its replies (agents/chat/llm.py):
# off while CHAT_LLM_URL is empty; any failure keeps the deterministic reply.
CHAT_LLM_URL = env("CHAT_LLM_URL", default="")
CHAT_LLM_API_KEY = env("CHAT_LLM_API_KEY", default="")
CHAT_LLM_MODEL = env("CHAT_LLM_MODEL", default="")
CHAT_LLM_TIMEOUT_SECONDS = env.float("CHAT_LLM_TIMEOUT_SECONDS", default=5.0)
# The managed MCP pack (agents/mcp/managed.py): how many paid tool calls on /mcp it grants the
# buyer's API key, and for how many days (then calls are paid from credits again).
MCP_MANAGED_CALLS = env.int("MCP_MANAGED_CALLS", default=20)
MCP_MANAGED_DAYS = env.int("MCP_MANAGED_DAYS", default=7)
# What one A2A task stores and answers (agents/a2a/store.py): a message's JSON is at most
# A2A_MESSAGE_MAX_BYTES (larger: -32602), a task's history at most A2A_TASK_MAX_MESSAGES messages
# and A2A_TASK_MAX_BYTES; a message to a task without room for it and its answer is refused
# (-32004), and an unpaid repeat of the task's question is not stored.
A2A_MESSAGE_MAX_BYTES = env.int("A2A_MESSAGE_MAX_BYTES", default=32_768)
A2A_TASK_MAX_MESSAGES = env.int("A2A_TASK_MAX_MESSAGES", default=20)
A2A_TASK_MAX_BYTES = env.int("A2A_TASK_MAX_BYTES", default=262_144)
# How long A2A tasks (GetTask answers from them) and the agent surfaces' answer records (agent
# status reads the last 24 h) are kept before the feeds' pruning pass deletes them; 0 keeps all.
A2A_TASK_RETENTION_DAYS = env.int("A2A_TASK_RETENTION_DAYS", default=7)
AGENT_INTERACTION_RETENTION_DAYS = env.int("AGENT_INTERACTION_RETENTION_DAYS", default=7)
