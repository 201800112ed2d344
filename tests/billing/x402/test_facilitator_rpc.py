"""The facilitator's RPC session: the environment's proxy and CA settings are read once, when
the provider is made, not scanned from os.environ on every request to the chain."""

from __future__ import annotations

import requests

from billing.facilitator.service import RpcHealth, WatchedHTTPProvider


def session_of(provider: WatchedHTTPProvider) -> requests.Session:
    session = provider._request_session_manager._explicit_session
    assert isinstance(session, requests.Session)
    return session


def test_the_rpc_session_takes_the_environments_proxy_once(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "rpc.local")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/etc/ssl/certs/ca-certificates.crt")
    via_proxy = session_of(WatchedHTTPProvider("https://mainnet.base.example/v1", health=RpcHealth()))
    assert via_proxy.proxies.get("https") == "http://proxy.internal:3128"
    assert via_proxy.verify == "/etc/ssl/certs/ca-certificates.crt"
    # requests no longer reads the environment per request: what the provider took is what it uses.
    assert via_proxy.trust_env is False
    direct = session_of(WatchedHTTPProvider("https://rpc.local:8545", health=RpcHealth()))
    assert "https" not in direct.proxies
    monkeypatch.delenv("REQUESTS_CA_BUNDLE")
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    assert session_of(WatchedHTTPProvider("https://rpc.local:8545", health=RpcHealth())).verify is True


def test_the_rpc_session_answers_a_chain_request(chain):
    from web3 import Web3

    health = RpcHealth()
    w3 = Web3(WatchedHTTPProvider(chain.url, health=health))
    assert w3.eth.chain_id == chain.w3.eth.chain_id
    assert w3.eth.block_number >= 0 and health.failures == 0
