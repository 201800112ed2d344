"""`erc8004_register`: the service's agent in an ERC-8004 identity registry, once per
(chain, registry). Running it again updates the agent's URI (setAgentURI) instead of minting a
second agent."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import transaction
from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3

from agents.erc8004.chain import agent_read, agent_register, agent_uri_set, registry_deploy, registry_exists
from agents.models import Erc8004Registration
from billing.chain.localchain import DEPLOYER, dev_account

logger = logging.getLogger(__name__)


class RegistrationError(Exception):
    """The registration cannot be done as configured (wrong chain, no registry, no key)."""


@dataclass(frozen=True)
class RegistrationResult:
    registration: Erc8004Registration
    # "registered" (a new agent), "updated" (setAgentURI), "unchanged", plus "deployed+" when
    # the project's registry was deployed first.
    action: str


def is_anvil(w3: Web3) -> bool:
    return str(w3.client_version).lower().startswith("anvil")


def signer_for(w3: Web3, private_key: str) -> LocalAccount:
    if private_key:
        account: LocalAccount = Account.from_key(private_key)
        return account
    if is_anvil(w3):
        # Local chains only: anvil's development account #0 (a public key) owns the agent.
        return dev_account(DEPLOYER)
    raise RegistrationError("set ERC8004_SIGNER_PRIVATE_KEY: the key that registers and owns the agent")


def erc8004_register(
    *, agent_uri: str, rpc_url: str, chain_id: int, registry_address: str = "", signer_key: str = ""
) -> RegistrationResult:
    w3 = Web3(Web3.HTTPProvider(rpc_url, request_kwargs={"timeout": 30}))
    actual = w3.eth.chain_id
    if actual != chain_id:
        raise RegistrationError(f"{rpc_url} is chain {actual}, not ERC8004_REGISTRY_CHAIN_ID {chain_id}")
    signer = signer_for(w3, signer_key)
    deployed = False
    if registry_address:
        registry: str = Web3.to_checksum_address(registry_address)
        if not registry_exists(w3, registry):
            raise RegistrationError(f"no contract at ERC8004_REGISTRY_ADDRESS {registry} on chain {chain_id}")
    else:
        # The registry this command deployed on an earlier run, while the chain still has it.
        registry = next(
            (
                r.registry_address
                for r in Erc8004Registration.objects.filter(chain_id=chain_id)
                if registry_exists(w3, r.registry_address)
            ),
            "",
        )
        if not registry:
            if not is_anvil(w3):
                raise RegistrationError(
                    "set ERC8004_REGISTRY_ADDRESS (only a local anvil chain gets our own)"
                )
            registry = registry_deploy(w3, signer)
            deployed = True
            logger.info("erc8004: deployed the identity registry at %s on chain %s", registry, chain_id)
    row = Erc8004Registration.objects.filter(chain_id=chain_id, registry_address=registry).first()
    on_chain = agent_read(w3, registry=registry, agent_id=int(row.agent_id)) if row else None
    if row is not None and on_chain is not None and on_chain[0] == signer.address:
        if on_chain[1] == agent_uri:
            return RegistrationResult(registration=row, action="unchanged")
        tx_hash = agent_uri_set(
            w3, signer, registry=registry, agent_id=int(row.agent_id), agent_uri=agent_uri
        )
        with transaction.atomic():
            row.agent_uri = agent_uri
            row.last_tx_hash = tx_hash
            row.save(update_fields=["agent_uri", "last_tx_hash", "updated_at"])
        return RegistrationResult(registration=row, action="updated")
    # Not registered here yet (or the recorded agent is gone / owned by another key): register.
    done = agent_register(w3, signer, registry=registry, agent_uri=agent_uri)
    with transaction.atomic():
        row, _ = Erc8004Registration.objects.update_or_create(
            chain_id=chain_id,
            registry_address=registry,
            defaults={
                "agent_id": done.agent_id,
                "agent_uri": agent_uri,
                "owner_address": signer.address,
                "tx_hash": done.tx_hash,
                "last_tx_hash": "",
            },
        )
    return RegistrationResult(registration=row, action=("deployed+" if deployed else "") + "registered")
