"""A payment-channel voucher's signer (x402 `batch-settlement`: EIP-712 Voucher(bytes32
channelId, uint128 maxClaimableAmount) in the batch settlement's domain), recovered with
coincurve and the domain hashed once per chain: 0.1 ms instead of eth_account's 3 ms. The voucher
fast path (billing/api/voucher_fastpath.py) checks vouchers with it, and the channel rail
(billing/rails/channel.py) the voucher that collects an undelivered call."""

from __future__ import annotations

from functools import lru_cache

from eth_account.messages import encode_typed_data
from x402.mechanisms.evm.batch_settlement.constants import VOUCHER_TYPES
from x402.mechanisms.evm.batch_settlement.utils import get_batch_settlement_eip712_domain

from billing.x402.signin_message import digest_signer, keccak256

_HALF_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0
_VOUCHER_TYPEHASH = keccak256(b"Voucher(bytes32 channelId,uint128 maxClaimableAmount)")


@lru_cache(maxsize=8)
def _domain_separator(chain_id: int) -> bytes:
    signable = encode_typed_data(
        domain_data=get_batch_settlement_eip712_domain(chain_id),
        message_types=VOUCHER_TYPES,
        message_data={"channelId": b"\0" * 32, "maxClaimableAmount": 0},
    )
    return bytes(signable.header)


def voucher_signer(*, channel_id: str, max_claimable: int, signature: str, chain_id: int) -> str:
    """The lower-case address that signed this voucher (EIP-712 Voucher(channelId,
    maxClaimableAmount) in the batch settlement's domain), or "" for a signature the fast path
    leaves to the SDK (v not 0/1/27/28, s in the upper half)."""
    raw = bytes.fromhex(signature[2:])
    v = raw[64] - 27 if raw[64] >= 27 else raw[64]
    if v not in (0, 1) or int.from_bytes(raw[32:64], "big") > _HALF_ORDER:
        return ""
    struct = keccak256(_VOUCHER_TYPEHASH + bytes.fromhex(channel_id[2:]) + max_claimable.to_bytes(32, "big"))
    digest = keccak256(b"\x19\x01" + _domain_separator(chain_id) + struct)
    return digest_signer(digest, raw[:64] + bytes([v]))
