"""Billing's reads, by concern: sales (every sales and revenue figure, over every rail's records),
credits (top-up guides and the credit bundle), pricing (surge and whale tiers) and status
(funnel, monetization, x402 and facilitator state). They return data, never HTTP answers."""
