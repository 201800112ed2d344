"""Payment channels (x402 `batch-settlement`), the server's side: its channel state on our
database, the SDK's server scheme over it, and the SDK's resource server that runs the
scheme's lifecycle hooks with our facilitator as its client.

- `DatabaseChannelStorage` implements the SDK's `ChannelStorage` on `PaymentChannel` rows:
  `update_channel` reads the row under `select_for_update`, calls the scheme's update, and
  writes (or deletes) it in one transaction, so a voucher is used once and a channel's
  cumulative amount never goes back. Nested in a caller's transaction (the rail's commit),
  it commits or rolls back with it.
- `channel_server()` is the SDK's `x402ResourceServerSync` with the SDK's server scheme
  registered; the rail (billing/rails/channel.py) verifies and settles through it, the beat
  tasks (billing/tasks_channels.py) claim, settle and refund through `channel_manager()`.
- `channel_requirements` is the channel offer of every version 2 402 (billing/x402/challenge.py
  `accepts_register`): the `exact` requirements as the SDK server scheme enhances them
  (receiverAuthorizer, withdrawDelay, minDeposit).

Channels are on when X402_CHANNELS_ENABLED and RECEIVER_AUTHORIZER_PRIVATE_KEY are set: the
key is held by the self-hosted facilitator (billing/facilitator/service.py), which signs the
claims; its address is what the offer names."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from eth_account import Account
from x402 import x402ResourceServerSync
from x402.mechanisms.evm.batch_settlement.constants import SCHEME_BATCH_SETTLEMENT
from x402.mechanisms.evm.batch_settlement.server import (
    BatchSettlementChannelManagerSync,
    BatchSettlementEvmScheme,
    BatchSettlementEvmSchemeServerConfig,
    Channel,
    ChannelUpdateResult,
    PendingRequest,
)
from x402.mechanisms.evm.batch_settlement.types import ChannelConfig
from x402.mechanisms.evm.batch_settlement.utils import normalize_channel_id
from x402.schemas import PaymentRequirements, SettleResponse, SupportedKind, SupportedResponse, VerifyResponse

from billing.facilitator.service import facilitator_get, hosted_settle, hosted_verify
from billing.models import PaymentChannel
from billing.x402.challenge import ChallengeContext, accepts_register
from billing.x402.facilitator_client import FacilitatorUnavailable, facilitator_client, facilitator_in_process

SCHEME = SCHEME_BATCH_SETTLEMENT
# How often update_channel retries after losing the race to create a channel's row.
CREATE_RETRIES = 3


def channels_on() -> bool:
    return bool(settings.X402_CHANNELS_ENABLED and settings.RECEIVER_AUTHORIZER_PRIVATE_KEY)


@lru_cache(maxsize=4)
def _address(key: str) -> str:
    return str(Account.from_key(key).address)


def receiver_authorizer() -> str:
    return _address(settings.RECEIVER_AUTHORIZER_PRIVATE_KEY)


# --- the channel state on our database ------------------------------------------------------
def _atomic(value: str | int) -> Decimal:
    return Decimal(int(value))


def _text(value: Decimal | None) -> str:
    return str(int(value or 0))


def channel_from_row(row: PaymentChannel) -> Channel:
    pending = None
    if row.pending_id and row.pending_expires_at is not None:
        pending = PendingRequest(
            pending_id=row.pending_id,
            signed_max_claimable=_text(row.pending_signed_max_claimable_atomic),
            expires_at=int(row.pending_expires_at),
        )
    return Channel(
        channel_id=row.channel_id,
        channel_config=ChannelConfig(
            payer=row.payer,
            payer_authorizer=row.payer_authorizer,
            receiver=row.receiver,
            receiver_authorizer=row.receiver_authorizer,
            token=row.token,
            withdraw_delay=row.withdraw_delay,
            salt=row.salt,
        ),
        charged_cumulative_amount=_text(row.charged_cumulative_atomic),
        signed_max_claimable=_text(row.signed_max_claimable_atomic),
        signature=row.signature,
        balance=_text(row.balance_atomic),
        total_claimed=_text(row.total_claimed_atomic),
        withdraw_requested_at=int(row.withdraw_requested_at),
        refund_nonce=int(row.refund_nonce),
        onchain_synced_at=row.onchain_synced_at,
        last_request_timestamp=int(row.last_request_timestamp),
        pending_request=pending,
    )


def _fields(channel: Channel) -> dict[str, Any]:
    config = channel.channel_config
    pending = channel.pending_request
    return {
        "payer": config.payer.lower(),
        "payer_authorizer": config.payer_authorizer.lower(),
        "receiver": config.receiver.lower(),
        "receiver_authorizer": config.receiver_authorizer.lower(),
        "token": config.token.lower(),
        "withdraw_delay": int(config.withdraw_delay),
        "salt": config.salt,
        "charged_cumulative_atomic": _atomic(channel.charged_cumulative_amount),
        "signed_max_claimable_atomic": _atomic(channel.signed_max_claimable),
        "signature": channel.signature,
        "balance_atomic": _atomic(channel.balance),
        "total_claimed_atomic": _atomic(channel.total_claimed),
        "withdraw_requested_at": int(channel.withdraw_requested_at),
        "refund_nonce": int(channel.refund_nonce),
        "onchain_synced_at": channel.onchain_synced_at,
        "last_request_timestamp": int(channel.last_request_timestamp),
        "pending_id": pending.pending_id if pending else "",
        "pending_signed_max_claimable_atomic": _atomic(pending.signed_max_claimable) if pending else None,
        "pending_expires_at": pending.expires_at if pending else None,
    }


class _Held:
    """A channel's row locked for one voucher-paid call (DatabaseChannelStorage.held): the
    scheme's reads and updates of it during the call work on this copy, written back once."""

    def __init__(self, key: str, channel: Channel) -> None:
        self.key = key
        self.channel: Channel | None = channel
        self.changed = False

    def update(self, update: Callable[[Channel | None], Channel | None]) -> ChannelUpdateResult:
        # The same contract as _update_once: the same object back is "unchanged", None deletes.
        current = None if self.channel is None else self.channel.copy()
        following = update(current)
        if following is current:
            return ChannelUpdateResult(channel=current, status="unchanged")
        self.changed = True
        self.channel = following
        if following is None:
            return ChannelUpdateResult(channel=None, status="deleted")
        return ChannelUpdateResult(channel=following.copy(), status="updated")

    def write(self) -> None:
        if not self.changed:
            return
        if self.channel is None:
            PaymentChannel.objects.filter(pk=self.key).delete()
        else:
            PaymentChannel.objects.filter(pk=self.key).update(**_fields(self.channel))


_HELD = threading.local()


class DatabaseChannelStorage:
    """The SDK's server `ChannelStorage` protocol on `PaymentChannel` rows (the row is the
    truth; every process and node shares it)."""

    @contextmanager
    def held(self, channel_id: str) -> Iterator[bool]:
        """Inside the caller's transaction: lock the channel's row for the rest of it and let
        the scheme's get/update_channel of that channel work on a copy, written back in one
        UPDATE when the block ends without an error (an error leaves the row as it was: the
        caller's transaction rolls back). A voucher-paid call reads and updates its channel
        three times (snapshot, reservation, commit): one lock, one write and one transaction
        instead of a read and two transactions. Yields False, holding nothing, when the row
        does not exist (a channel this server has not seen: the scheme creates it)."""
        key = normalize_channel_id(channel_id)
        if not transaction.get_connection().in_atomic_block:
            raise RuntimeError("DatabaseChannelStorage.held runs inside a transaction")
        row = PaymentChannel.objects.select_for_update().filter(pk=key).first()
        if row is None:
            yield False
            return
        held = _Held(key, channel_from_row(row))
        _HELD.value = held
        try:
            yield True
            held.write()
        finally:
            _HELD.value = None

    @staticmethod
    def _held(key: str) -> _Held | None:
        held: _Held | None = getattr(_HELD, "value", None)
        return held if held is not None and held.key == key else None

    def get(self, channel_id: str) -> Channel | None:
        key = normalize_channel_id(channel_id)
        held = self._held(key)
        if held is not None:
            return None if held.channel is None else held.channel.copy()
        row = PaymentChannel.objects.filter(pk=key).first()
        return None if row is None else channel_from_row(row)

    def list(self) -> list[Channel]:
        return [channel_from_row(row) for row in PaymentChannel.objects.order_by("created_at")]

    def update_channel(
        self, channel_id: str, update: Callable[[Channel | None], Channel | None]
    ) -> ChannelUpdateResult:
        key = normalize_channel_id(channel_id)
        held = self._held(key)
        if held is not None:
            return held.update(update)
        for attempt in range(CREATE_RETRIES):
            try:
                return self._update_once(key, update)
            except IntegrityError:
                # Another request created this channel's row between our read and our insert:
                # read it again, now under its lock (`update` is a function of what it is given).
                if attempt == CREATE_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    def _update_once(
        self, key: str, update: Callable[[Channel | None], Channel | None]
    ) -> ChannelUpdateResult:
        with transaction.atomic():
            row = PaymentChannel.objects.select_for_update().filter(pk=key).first()
            current = None if row is None else channel_from_row(row)
            following = update(current)
            if following is current:
                return ChannelUpdateResult(channel=current, status="unchanged")
            if following is None:
                if row is None:
                    return ChannelUpdateResult(channel=None, status="unchanged")
                row.delete()
                return ChannelUpdateResult(channel=None, status="deleted")
            if row is None:
                with transaction.atomic():  # a savepoint: a lost creation race leaves the outer usable
                    PaymentChannel.objects.create(channel_id=key, **_fields(following))
            else:
                PaymentChannel.objects.filter(pk=key).update(**_fields(following))
            return ChannelUpdateResult(channel=following.copy(), status="updated")


# --- the SDK's resource server, with our facilitator as its client ----------------------------
class InProcessFacilitator:
    """The self-hosted facilitator as the SDK's resource server sees a facilitator client
    (in this process, as the `exact` path reaches it: billing/x402/facilitator_client.py)."""

    def verify(self, payload: Any, requirements: Any) -> VerifyResponse:
        return hosted_verify(payload, requirements)

    def settle(self, payload: Any, requirements: Any) -> SettleResponse:
        return hosted_settle(payload, requirements)

    def get_supported(self) -> SupportedResponse:
        facilitator = facilitator_get()
        if facilitator is None:
            raise FacilitatorUnavailable(
                "this deployment has no facilitator: set FACILITATOR_PRIVATE_KEY (self-hosted) or FACILITATOR_URL"
            )
        return facilitator.get_supported()


def _facilitator() -> Any:
    return InProcessFacilitator() if facilitator_in_process() else facilitator_client()


def _scheme_config() -> tuple[str, int, int]:
    return (
        settings.TREASURY_ADDRESS,
        settings.X402_CHANNEL_WITHDRAW_DELAY,
        settings.X402_CHANNEL_STATE_TTL_MS,
    )


@lru_cache(maxsize=4)
def _scheme(receiver: str, withdraw_delay: int, ttl_ms: int) -> BatchSettlementEvmScheme:
    return BatchSettlementEvmScheme(
        receiver,
        BatchSettlementEvmSchemeServerConfig(
            storage=DatabaseChannelStorage(),
            withdraw_delay=withdraw_delay,
            onchain_state_ttl_ms=ttl_ms or None,
        ),
    )


def channel_scheme() -> BatchSettlementEvmScheme:
    return _scheme(*_scheme_config())


def channel_storage() -> DatabaseChannelStorage:
    storage = channel_scheme().get_storage()
    assert isinstance(storage, DatabaseChannelStorage)
    return storage


@lru_cache(maxsize=4)
def _server(
    scheme_config: tuple[str, int, int], network: str, facilitator: tuple[str, str, str, str]
) -> x402ResourceServerSync:
    server = x402ResourceServerSync(_facilitator())
    # The SDK types its payment_flows table more loosely than the protocol it implements.
    server.register(network, _scheme(*scheme_config))  # type: ignore[arg-type]
    server.initialize()  # reads the facilitator's /supported (receiverAuthorizer)
    return server


def channel_server() -> x402ResourceServerSync:
    """The SDK resource server for this configuration (one per process; built on first use)."""
    facilitator = (
        settings.FACILITATOR_URL,
        settings.FACILITATOR_PRIVATE_KEY,
        settings.CHAIN_RPC_URL,
        settings.RECEIVER_AUTHORIZER_PRIVATE_KEY,
    )
    return _server(_scheme_config(), settings.X402_NETWORK, facilitator)


def channel_manager() -> BatchSettlementChannelManagerSync:
    """The SDK's claim / settle / refund driver, called by the beat tasks."""
    manager: BatchSettlementChannelManagerSync = channel_scheme().create_channel_manager_sync(
        _facilitator(), settings.X402_NETWORK
    )
    return manager


# --- the offer in every version 2 402 ------------------------------------------------------------
def channel_requirements(context: ChallengeContext) -> PaymentRequirements | None:
    """The `exact` requirements as the SDK's server scheme enhances them for a channel: the
    price of one call, and in `extra` the receiverAuthorizer, withdrawDelay and minDeposit."""
    if not channels_on():
        return None
    extra = dict(context.exact.extra or {})
    if settings.X402_CHANNEL_MIN_DEPOSIT:
        extra["minDeposit"] = settings.X402_CHANNEL_MIN_DEPOSIT
    requirements = context.exact.model_copy(update={"scheme": SCHEME, "extra": extra})
    kind = SupportedKind(
        x402_version=2,
        scheme=SCHEME,
        network=settings.X402_NETWORK,
        extra={"receiverAuthorizer": receiver_authorizer()},
    )
    return channel_scheme().enhance_payment_requirements(requirements, kind, [])


accepts_register(SCHEME, channel_requirements)
