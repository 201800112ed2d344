"""The server's channel state on our database (billing/x402/channels.py DatabaseChannelStorage,
the SDK's `ChannelStorage` protocol): every field of the SDK's `Channel` survives a round trip,
update_channel keeps the protocol's statuses, and concurrent updates of one channel, including
two that both find it missing, are applied one after the other (PostgreSQL: row locks). A
voucher-paid call holds its channel's row (`held`): the scheme's reads and updates work on one
copy written back once when the call commits, nothing when it fails, and a concurrent call of
the same channel waits for it."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, connections, transaction
from x402.mechanisms.evm.batch_settlement.server import Channel, PendingRequest
from x402.mechanisms.evm.batch_settlement.types import ChannelConfig

from billing.models import PaymentChannel
from billing.x402.channels import DatabaseChannelStorage
from tests.support.concurrency import at_once

CHANNEL_ID = "0x" + "ab" * 32


def channel(charged: int = 0, **changes: object) -> Channel:
    base = Channel(
        channel_id=CHANNEL_ID,
        channel_config=ChannelConfig(
            payer="0x" + "11" * 20,
            payer_authorizer="0x" + "22" * 20,
            receiver="0x" + "33" * 20,
            receiver_authorizer="0x" + "44" * 20,
            token="0x" + "55" * 20,
            withdraw_delay=900,
            salt="0x" + "66" * 32,
        ),
        charged_cumulative_amount=str(charged),
        signed_max_claimable=str(charged),
        signature="0x" + "77" * 65,
        balance=str(10**30),  # beyond 64 bits: uint128 amounts are kept whole
        total_claimed="5",
        withdraw_requested_at=1_700_000_000,
        refund_nonce=3,
        onchain_synced_at=1_700_000_000_123,
        last_request_timestamp=1_700_000_000_456,
        pending_request=PendingRequest(
            pending_id="p-1", signed_max_claimable=str(charged + 1), expires_at=99
        ),
    )
    for name, value in changes.items():
        setattr(base, name, value)
    return base


@pytest.mark.django_db
def test_every_field_round_trips_and_the_statuses_are_the_protocols():
    storage = DatabaseChannelStorage()
    assert storage.get(CHANNEL_ID) is None
    created = storage.update_channel(CHANNEL_ID.upper().replace("0X", "0x"), lambda current: channel(7))
    assert created.status == "updated"
    stored = storage.get(CHANNEL_ID)
    assert stored is not None and stored.to_dict() == channel(7).to_dict()
    assert [c.channel_id for c in storage.list()] == [CHANNEL_ID]

    assert storage.update_channel(CHANNEL_ID, lambda current: current).status == "unchanged"
    cleared = storage.update_channel(CHANNEL_ID, lambda current: channel(8, pending_request=None))
    assert cleared.status == "updated" and storage.get(CHANNEL_ID).pending_request is None  # type: ignore[union-attr]
    assert storage.update_channel(CHANNEL_ID, lambda current: None).status == "deleted"
    assert storage.update_channel(CHANNEL_ID, lambda current: None).status == "unchanged"
    assert not PaymentChannel.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_concurrent_updates_of_a_missing_channel_are_serialized():
    """Eight threads each add 1 to the channel's charged amount, starting together while the
    channel does not exist yet: every increment is kept (one creates it, the others wait for
    its row, or retry once they lose the race to create it)."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks: PostgreSQL")
    storage, threads = DatabaseChannelStorage(), 8

    def add_one(current: Channel | None) -> Channel:
        time.sleep(0.02)  # widen the window between the read and the write
        return channel(0 if current is None else int(current.charged_cumulative_amount) + 1)

    at_once(threads, lambda: storage.update_channel(CHANNEL_ID, add_one), timeout=30)
    stored = storage.get(CHANNEL_ID)
    assert stored is not None and stored.charged_cumulative_amount == str(threads - 1)


@pytest.mark.django_db
def test_a_held_channel_is_read_and_updated_in_memory_and_written_once(django_assert_num_queries):
    storage = DatabaseChannelStorage()
    storage.update_channel(CHANNEL_ID, lambda current: channel(7))
    with transaction.atomic():
        with django_assert_num_queries(3):  # the locked read, this test's read, one UPDATE at the end
            with storage.held(CHANNEL_ID) as held:
                assert held
                reserved = storage.update_channel(
                    CHANNEL_ID, lambda current: channel(7, last_request_timestamp=1)
                )
                assert reserved.status == "updated"
                assert storage.get(CHANNEL_ID).last_request_timestamp == 1  # type: ignore[union-attr]
                same = storage.update_channel(CHANNEL_ID, lambda current: current)
                assert same.status == "unchanged"
                assert storage.update_channel(
                    CHANNEL_ID, lambda current: channel(8, pending_request=None)
                ).status == ("updated")
                assert PaymentChannel.objects.get().charged_cumulative_atomic == 7  # not written yet
    stored = storage.get(CHANNEL_ID)
    assert stored is not None and stored.to_dict() == channel(8, pending_request=None).to_dict()

    # A call that fails writes nothing (its transaction rolls back what the block did).
    with pytest.raises(RuntimeError), transaction.atomic(), storage.held(CHANNEL_ID):
        storage.update_channel(CHANNEL_ID, lambda current: channel(9))
        raise RuntimeError("the product failed")
    assert PaymentChannel.objects.get().charged_cumulative_atomic == 8
    # Deleting a held channel deletes its row when the block ends.
    with transaction.atomic(), storage.held(CHANNEL_ID):
        assert storage.update_channel(CHANNEL_ID, lambda current: None).status == "deleted"
        assert storage.get(CHANNEL_ID) is None
    assert not PaymentChannel.objects.exists()
    # A channel with no row is not held: the scheme's updates go to the database as before.
    with transaction.atomic(), storage.held(CHANNEL_ID) as held:
        assert not held
        storage.update_channel(CHANNEL_ID, lambda current: channel(1))
    assert PaymentChannel.objects.get().charged_cumulative_atomic == 1


@pytest.mark.django_db(transaction=True)
def test_a_concurrent_update_of_a_held_channel_waits_for_its_call():
    """A call holding its channel: another update of that channel (a second call, a claim)
    waits for the call's commit and applies to what it committed."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks: PostgreSQL")
    storage = DatabaseChannelStorage()
    storage.update_channel(CHANNEL_ID, lambda current: channel(1))
    started, seen = threading.Event(), []

    def claim(current: Channel | None) -> Channel:
        seen.append(current.charged_cumulative_amount if current else "missing")
        return channel(100)

    def other() -> None:
        try:
            started.wait(10)
            storage.update_channel(CHANNEL_ID, claim)
        finally:
            connections.close_all()

    thread = threading.Thread(target=other)
    thread.start()
    with transaction.atomic(), storage.held(CHANNEL_ID):
        storage.update_channel(CHANNEL_ID, lambda current: channel(2))
        started.set()
        time.sleep(0.3)  # the other update is waiting for the row meanwhile
        assert seen == []
    thread.join(timeout=30)
    assert seen == ["2"] and PaymentChannel.objects.get().charged_cumulative_atomic == 100
