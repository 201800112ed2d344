"""The local chain (anvil) and the service on a live server paying through it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest


@pytest.fixture(scope="session")
def chain():
    """anvil (npm @foundry-rs/anvil) with the USDC stand-in at the Base USDC address."""
    from django.conf import settings

    from billing.chain.localchain import anvil_start, free_port, rpc_wait, stack_install, usdc_contract

    port = free_port()
    proc = anvil_start(port=port)
    url = f"http://127.0.0.1:{port}"
    try:
        w3 = rpc_wait(url)
        stack_install(w3, usdc_address=settings.USDC_ADDRESS)
        yield SimpleNamespace(url=url, w3=w3, token=usdc_contract(w3, settings.USDC_ADDRESS), proc=proc)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def paid_stack(chain, live_server, settings, transactional_db):
    """The service on a live server, its self-hosted facilitator settling on anvil."""
    from billing.chain.localchain import FACILITATOR, dev_account
    from catalog.services import catalog_seed

    catalog_seed()  # on SQLite, a transactional test after another starts from empty tables
    settings.CHAIN_RPC_URL = chain.url
    # The self-hosted facilitator settles in process (the default): a paid call never waits
    # for a worker of its own server.
    settings.FACILITATOR_URL = ""
    settings.FACILITATOR_PRIVATE_KEY = "0x" + dev_account(FACILITATOR).key.hex().removeprefix("0x")
    yield SimpleNamespace(url=live_server.url, chain=chain, treasury=settings.TREASURY_ADDRESS)
    # The service's facilitator client keeps connections alive to the live server; close them
    # so no server thread is left waiting on one when the live server stops.
    from billing.x402.facilitator_client import _client, facilitator_client

    facilitator_client().close()
    _client.cache_clear()
    import a2a_service.core.http

    a2a_service.core.http._session.close()
