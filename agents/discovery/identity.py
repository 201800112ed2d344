"""Who this service says it is, in every discovery document."""

from __future__ import annotations

SERVICE_NAME = "Agent-to-Agent Market Intelligence"


SERVICE_VERSION = "16.5.0"


POSITIONING = (
    "Market intelligence for machines: news, signals, sentiment, prediction catalogs, trading and risk "
    "desks and digests, paid per call in USDC on Base (x402), from prepaid credits or by session."
)
