"""What the tests share: wallets and payers, the local chain and the live paid stack, webhook
receivers, stand-ins for the feeds' outside servers, generated market data and the servers the
end-to-end tests start. Test modules import from here, never from one another
(tests/test_layout.py checks it); the fixtures defined here reach every test through
tests/conftest.py (`pytest_plugins`)."""

from __future__ import annotations

from pathlib import Path

# The repository's root (manage.py, catalog/feeds/samples/, docs/), wherever a test module sits.
ROOT = Path(__file__).resolve().parents[2]

# The root conftest's leak probe connects under this name; tests that count or end the test
# database's backends leave it out.
LEAK_PROBE_NAME = "a2a-test-leak-probe"
