"""Settings of webhooks (imported by base): delivery, its limits and queue, the push packs,
execution delegation and the coordination pool."""

from __future__ import annotations

from .environment import DEBUG, env

WEBHOOKS_REQUIRE_HTTPS = env.bool("WEBHOOKS_REQUIRE_HTTPS", default=not DEBUG)
# Webhook targets must resolve to public addresses (checked again at every connection, and
# the connection goes to the checked address); true only for local receivers.
WEBHOOKS_ALLOW_PRIVATE_TARGETS = env.bool("WEBHOOKS_ALLOW_PRIVATE_TARGETS", default=False)
# How often beat's sweeper queues the webhook deliveries that are due (a lost queue message, a
# claim whose worker died).
WEBHOOK_SWEEP_SECONDS = env.float("WEBHOOK_SWEEP_SECONDS", default=10.0)
# Per connect and per read of a delivery: a receiver that drips bytes resets it each time...
WEBHOOK_TIMEOUT_SECONDS = env.float("WEBHOOK_TIMEOUT_SECONDS", default=5.0)
# ...so a whole attempt (resolve, connect, send, headers, body) is also cut at this deadline.
# A claim's lease is 2 x this + 5 s: an attempt ends (and records itself) before anyone may
# claim its delivery again.
WEBHOOK_ATTEMPT_DEADLINE_SECONDS = env.float("WEBHOOK_ATTEMPT_DEADLINE_SECONDS", default=10.0)
WEBHOOK_RETRY_SCALE = env.float("WEBHOOK_RETRY_SCALE", default=1.0)
# Deliveries run on workers of their own (`celery worker --queues webhooks`; `make run` starts
# one), so slow receivers never hold the workers that credit deposits.
WEBHOOK_DELIVERY_QUEUE = env("WEBHOOK_DELIVERY_QUEUE", default="webhooks")
# At most this many attempts to one subscription at a time; a delivery over the cap waits
# (deferred by WEBHOOK_DEFER_SECONDS, not lost), so one slow receiver cannot take every worker.
WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION = env.int("WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION", default=2)
WEBHOOK_DEFER_SECONDS = env.float("WEBHOOK_DEFER_SECONDS", default=5.0)
# Free test events: at most this many per subscription per WEBHOOK_TEST_EVENTS_WINDOW_SECONDS...
WEBHOOK_TEST_EVENTS_PER_WINDOW = env.int("WEBHOOK_TEST_EVENTS_PER_WINDOW", default=5)
# ...and this many per account (all its subscriptions together) in the same window.
WEBHOOK_TEST_EVENTS_PER_ACCOUNT = env.int("WEBHOOK_TEST_EVENTS_PER_ACCOUNT", default=10)
# Active webhook subscriptions per account (delegations' and pools' own included; those of an
# expired delegation not): each can hold deliveries in flight. Beyond it, 409.
WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT = env.int("WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT", default=10)
WEBHOOK_TEST_EVENTS_WINDOW_SECONDS = env.int("WEBHOOK_TEST_EVENTS_WINDOW_SECONDS", default=600)
# Signs regime_attestation events (EIP-191); its address is published in the manifests.
ATTESTATION_PRIVATE_KEY = env("ATTESTATION_PRIVATE_KEY", default="")
SIGNAL_DESK_PACK_DAYS = env.int("SIGNAL_DESK_PACK_DAYS", default=30)
# How long a prediction alert subscription pack turns prediction_alert push on.
PREDICTION_ALERT_PACK_DAYS = env.int("PREDICTION_ALERT_PACK_DAYS", default=30)
# How long buying the pro morning brief turns morning_brief push on for the buyer's webhooks.
MORNING_BRIEF_PRO_DAYS = env.int("MORNING_BRIEF_PRO_DAYS", default=30)
# Execution delegation (webhooks/delegation/): a reported fill may exceed its order's notional (or
# the delegation's total) by this fraction of it (price moves between the order and the fill, fee
# rounding); beyond it the fill is refused (422) and not recorded.
DELEGATION_FILL_TOLERANCE = env.float("DELEGATION_FILL_TOLERANCE", default=0.01)
# Fills are self-reported: a fill's price must lie within this percentage of what the market
# traded at its time (the ingested 1m bars, else 1h bars, and tickers, within
# DELEGATION_FILL_PRICE_WINDOW_SECONDS of filled_at, any venue); beyond it, or with no ingested
# price for that time, it is refused (422) and never reaches the scorecard's live_fills.
DELEGATION_FILL_PRICE_TOLERANCE_PCT = env.float("DELEGATION_FILL_PRICE_TOLERANCE_PCT", default=3.0)
DELEGATION_FILL_PRICE_WINDOW_SECONDS = env.int("DELEGATION_FILL_PRICE_WINDOW_SECONDS", default=300)
# Signals published while the publishing process could not hand them over (it died after the
# commit) are turned into orders and pooled deliveries by this sweep (also the pool's).
DELEGATION_SWEEP_SECONDS = env.float("DELEGATION_SWEEP_SECONDS", default=60.0)
# Coordination pool (webhooks/pool/): member i (by join order) receives each copy signal
# i x POOL_SLOT_SECONDS after it was published; the size the desk publishes to its pool for one
# signal is POOL_SIGNAL_SIZE_USDC times the signal's size fraction (its risk-based sizing), and the
# members' allocations are scaled down pro rata to fit it.
POOL_SLOT_SECONDS = env.float("POOL_SLOT_SECONDS", default=2.0)
POOL_SIGNAL_SIZE_USDC = env.float("POOL_SIGNAL_SIZE_USDC", default=10_000.0)
