"""Development defaults: the embedded local stack of `make run` (SQLite, a filesystem
broker, a local chain). Nothing here is a secret: these keys only guard a laptop."""

from __future__ import annotations

from .base import *  # noqa: F403
from .base import env

DEBUG = env.bool("DJANGO_DEBUG", default=True)
SECRET_KEY = env("SECRET_KEY", default="local-development-only-not-a-secret")
# anvil's well-known development account #9 receives payments on the local chain.
TREASURY_ADDRESS = env("TREASURY_ADDRESS", default="0xa0Ee7A142d267C1f36714E4a8F75612F20a79720")
INGEST_TOKEN = env("INGEST_TOKEN", default="local-ingest-token")
# anvil's development account #1 pays the self-hosted facilitator's gas on the local chain.
FACILITATOR_PRIVATE_KEY = env(
    "FACILITATOR_PRIVATE_KEY", default="0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"
)
# anvil's development account #7 signs channel claim batches and refunds (x402 batch-settlement).
RECEIVER_AUTHORIZER_PRIVATE_KEY = env(
    "RECEIVER_AUTHORIZER_PRIVATE_KEY", default="0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356"
)
X402_CHANNELS_ENABLED = env.bool("X402_CHANNELS_ENABLED", default=True)
# Local receivers (the demo's, a laptop's) are plain http on loopback.
WEBHOOKS_REQUIRE_HTTPS = env.bool("WEBHOOKS_REQUIRE_HTTPS", default=False)
WEBHOOKS_ALLOW_PRIVATE_TARGETS = env.bool("WEBHOOKS_ALLOW_PRIVATE_TARGETS", default=True)
# anvil's development account #8 signs regime attestations on the local stack.
ATTESTATION_PRIVATE_KEY = env(
    "ATTESTATION_PRIVATE_KEY", default="0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97"
)
# anvil's `safe` block trails its head by 32 blocks (32 s at a block a second): the local stack
# credits after DEPOSIT_CONFIRMATIONS instead, so a demo deposit shows within seconds.
DEPOSIT_FINALITY_TAG = env("DEPOSIT_FINALITY_TAG", default="")
# Live feeds, and the local replay server's samples for a source that cannot be reached.
FEEDS_MODE = env("FEEDS_MODE", default="auto")
