"""What production refuses to run with. Its own module (production.py raises at import when
its environment is incomplete), so the refusals can be tested one by one in-process."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

# anvil's development accounts (mnemonic "test test ... junk", billing/chain/localchain.py),
# index -> (address, private key). Published in every Foundry tutorial: anyone can spend from
# them, so none may hold or receive production money. tests/a2a_service/settings/test_settings.py checks this table
# against the derivation, so it cannot drift from localchain.py.
ANVIL_DEV_ACCOUNTS: dict[int, tuple[str, str]] = {
    0: (
        "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
        "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
    ),
    1: (
        "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
    ),
    2: (
        "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
        "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
    ),
    3: (
        "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
        "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
    ),
    4: (
        "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65",
        "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
    ),
    5: (
        "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc",
        "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
    ),
    6: (
        "0x976EA74026E726554dB657fA54763abd0C3a0aa9",
        "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
    ),
    7: (
        "0x14dC79964da2C08b23698B3D3cc7Ca32193d9955",
        "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
    ),
    8: (
        "0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f",
        "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
    ),
    9: (
        "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720",
        "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
    ),
}
# Every other value this repository sets as a default outside production.
DEVELOPMENT_SECRET_KEYS = {"local-development-only-not-a-secret", "test-only-not-a-secret"}
DEVELOPMENT_INGEST_TOKENS = {"local-ingest-token", "test-ingest-token"}


def _hex(value: str) -> str:
    value = value.strip().lower()
    return value if value.startswith("0x") else "0x" + value


_DEV_ADDRESSES = {_hex(address) for address, _ in ANVIL_DEV_ACCOUNTS.values()}
_DEV_KEYS = {_hex(key) for _, key in ANVIL_DEV_ACCOUNTS.values()}


def production_refusals(
    *,
    secret_key: str,
    treasury_address: str,
    redis_url: str,
    database_engine: str,
    allowed_hosts: list[str],
    facilitator_private_key: str,
    attestation_private_key: str,
    ingest_token: str,
    facilitator_url: str = "",
    public_base_url: str = "",
    feeds_mode: str = "live",
    channels_enabled: bool = False,
    receiver_authorizer_private_key: str = "",
) -> list[str]:
    """Why these values cannot run production (empty: they can)."""
    missing = [
        name
        for name, value in {
            "SECRET_KEY": secret_key,
            "TREASURY_ADDRESS": treasury_address,
            "REDIS_URL": redis_url,
            "ALLOWED_HOSTS": allowed_hosts,
        }.items()
        if not value
    ]
    if missing:
        return [f"production settings need these environment variables: {', '.join(missing)}"]
    problems = []
    # Django's own deploy check (security.W009): long, varied, not a generated placeholder.
    if (
        secret_key in DEVELOPMENT_SECRET_KEYS
        or len(secret_key) < 50
        or len(set(secret_key)) < 5
        or secret_key.startswith("django-insecure-")
    ):
        problems.append(
            "SECRET_KEY must be a random value of at least 50 characters, not a development key "
            "(python -c 'import secrets; print(secrets.token_urlsafe(50))')"
        )
    if not re.fullmatch(r"0x[0-9a-fA-F]{40}", treasury_address.strip()) or int(treasury_address, 16) == 0:
        problems.append("TREASURY_ADDRESS must be a 0x-prefixed 20-byte address")
    elif _hex(treasury_address) in _DEV_ADDRESSES:
        problems.append("TREASURY_ADDRESS is an anvil development account, whose private key is public")
    for name, key in {
        "FACILITATOR_PRIVATE_KEY": facilitator_private_key,
        "ATTESTATION_PRIVATE_KEY": attestation_private_key,
        "RECEIVER_AUTHORIZER_PRIVATE_KEY": receiver_authorizer_private_key,
    }.items():
        if key and _hex(key) in _DEV_KEYS:
            problems.append(f"{name} is an anvil development key, known to everyone")
    if ingest_token in DEVELOPMENT_INGEST_TOKENS:
        problems.append("INGEST_TOKEN is a development default; set a random token or leave it empty")
    if database_engine != "django.db.backends.postgresql":
        problems.append("production needs DATABASE_URL pointing to PostgreSQL")
    if "testserver" in allowed_hosts:
        problems.append("ALLOWED_HOSTS must not contain 'testserver' (Django's test client host)")
    if feeds_mode != "live":
        # Replayed samples are recorded data, not the market: production never sells them, and
        # auto would fall back to them whenever a source is unreachable.
        problems.append(f"FEEDS_MODE={feeds_mode} is not for production: use live")
    if channels_enabled and not receiver_authorizer_private_key:
        # Without the authorizer nobody can sign a claim: vouchers would be sold, never collected.
        problems.append(
            "X402_CHANNELS_ENABLED needs RECEIVER_AUTHORIZER_PRIVATE_KEY (the key that signs channel claims)"
        )
    problems += _facilitator_refusals(
        facilitator_url, facilitator_private_key, public_base_url, allowed_hosts
    )
    return problems


def _facilitator_refusals(
    url: str, private_key: str, public_base_url: str, allowed_hosts: list[str]
) -> list[str]:
    """A paid call asks the facilitator while it holds a worker of this service: a facilitator
    reached through this service's own public address waits for a worker of the same pool
    (one worker: a deadlock; N: queued behind the calls it is part of)."""
    if not url:
        if not private_key:
            return [
                "x402 needs a facilitator: set FACILITATOR_PRIVATE_KEY (settled in process) or FACILITATOR_URL"
            ]
        return []
    target = urlsplit(url)
    host = (target.hostname or "").lower()
    own_hosts = {h.lower().lstrip(".") for h in allowed_hosts if h and h != "*"}
    public = urlsplit(public_base_url) if public_base_url else None
    # The service is served on its hosts' default port (behind its proxy); a facilitator on
    # one of those hosts at another port is a separate process, and allowed.
    same_public_origin = (
        public is not None and (public.hostname or "").lower() == host and public.port == target.port
    )
    if same_public_origin or (host in own_hosts and target.port is None):
        return [
            f"FACILITATOR_URL points back at this service ({host}): leave it empty to settle in process, "
            "or run the facilitator as a separate process on its own internal address"
        ]
    return []
