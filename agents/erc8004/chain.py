"""The identity registry on chain: deploy the project's own (AgentIdentityRegistry), register an
agent, update its URI, read it back. Plain web3 with a local signer; every transaction waits for
its receipt and a revert raises."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from eth_account.signers.local import LocalAccount
from web3 import Web3
from web3.contract import Contract
from web3.logs import DISCARD
from web3.types import TxParams, TxReceipt

from billing.chain.localchain import artifact

ARTIFACT = "AgentIdentityRegistry"


class RegistryError(Exception):
    """The registry could not be used (no contract at the address, a reverted transaction)."""


def registry_contract(w3: Web3, address: str) -> Contract:
    return w3.eth.contract(address=Web3.to_checksum_address(address), abi=artifact(ARTIFACT)["abi"])


def _send(w3: Web3, signer: LocalAccount, tx: TxParams) -> TxReceipt:
    tx = {
        **tx,
        "from": signer.address,
        "nonce": w3.eth.get_transaction_count(signer.address, "pending"),
        "chainId": w3.eth.chain_id,
    }
    if "gas" not in tx:
        tx["gas"] = int(w3.eth.estimate_gas(tx) * 1.2)
    signed = signer.sign_transaction(cast(dict[str, Any], tx))
    tx_hash = w3.eth.send_raw_transaction(signed.raw_transaction)
    receipt = w3.eth.wait_for_transaction_receipt(tx_hash, timeout=120)
    if receipt["status"] != 1:
        raise RegistryError(f"transaction {tx_hash.to_0x_hex()} reverted")
    return receipt


def registry_deploy(w3: Web3, signer: LocalAccount) -> str:
    """Deploy AgentIdentityRegistry; its checksummed address."""
    factory = w3.eth.contract(abi=artifact(ARTIFACT)["abi"], bytecode=artifact(ARTIFACT)["bytecode"])
    receipt = _send(w3, signer, factory.constructor().build_transaction({"from": signer.address}))
    address = receipt["contractAddress"]
    if not address:
        raise RegistryError("the deployment created no contract")
    return Web3.to_checksum_address(address)


def registry_exists(w3: Web3, address: str) -> bool:
    return len(w3.eth.get_code(Web3.to_checksum_address(address))) > 0


@dataclass(frozen=True)
class Registered:
    agent_id: int
    tx_hash: str


def agent_register(w3: Web3, signer: LocalAccount, *, registry: str, agent_uri: str) -> Registered:
    """register(agentURI): the agentId comes from the Registered event of the receipt."""
    contract = registry_contract(w3, registry)
    tx = contract.functions.register(agent_uri).build_transaction({"from": signer.address})
    receipt = _send(w3, signer, tx)
    events = contract.events.Registered().process_receipt(receipt, errors=DISCARD)
    if not events:
        raise RegistryError("register() emitted no Registered event")
    return Registered(
        agent_id=int(events[0]["args"]["agentId"]), tx_hash=receipt["transactionHash"].to_0x_hex()
    )


def agent_uri_set(w3: Web3, signer: LocalAccount, *, registry: str, agent_id: int, agent_uri: str) -> str:
    """setAgentURI(agentId, uri); the transaction hash."""
    contract = registry_contract(w3, registry)
    tx = contract.functions.setAgentURI(agent_id, agent_uri).build_transaction({"from": signer.address})
    return _send(w3, signer, tx)["transactionHash"].to_0x_hex()


def agent_read(w3: Web3, *, registry: str, agent_id: int) -> tuple[str, str] | None:
    """(owner, tokenURI) of an agent, or None when the registry does not know it."""
    contract = registry_contract(w3, registry)
    try:
        owner = contract.functions.ownerOf(agent_id).call()
        uri = contract.functions.tokenURI(agent_id).call()
    except Exception:  # a revert ("unknown agent") or no contract: the agent is not there
        return None
    return Web3.to_checksum_address(owner), str(uri)
