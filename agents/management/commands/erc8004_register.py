"""`manage.py erc8004_register`: register the service's agent in the ERC-8004 identity registry
(ERC8004_REGISTRY_ADDRESS on ERC8004_REGISTRY_CHAIN_ID via ERC8004_REGISTRY_RPC_URL, signed with
ERC8004_SIGNER_PRIVATE_KEY); on a local anvil chain with no registry address it deploys the
project's own registry first. Idempotent: a second run updates the agent's URI."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents.erc8004.documents import registration_url
from agents.erc8004.services import RegistrationError, erc8004_register


class Command(BaseCommand):
    help = "Register (or update) the service's agent in the ERC-8004 identity registry."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--base-url",
            default="",
            help="the service's public base URL (default PUBLIC_BASE_URL); the agent URI is "
            "<base>/.well-known/agent-registration.json",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        base = (options["base_url"] or settings.PUBLIC_BASE_URL).rstrip("/")
        if not base:
            raise CommandError("give --base-url or set PUBLIC_BASE_URL: the agent URI must be reachable")
        try:
            result = erc8004_register(
                agent_uri=registration_url(base),
                rpc_url=settings.ERC8004_REGISTRY_RPC_URL,
                chain_id=settings.ERC8004_REGISTRY_CHAIN_ID,
                registry_address=settings.ERC8004_REGISTRY_ADDRESS,
                signer_key=settings.ERC8004_SIGNER_PRIVATE_KEY,
            )
        except RegistrationError as exc:
            raise CommandError(str(exc)) from exc
        r = result.registration
        self.stdout.write(
            f"{result.action}: agent {r.agent_id} in {r.agent_registry} -> {r.agent_uri} "
            f"(owner {r.owner_address}, tx {r.last_tx_hash or r.tx_hash})"
        )
