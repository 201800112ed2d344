"""Intent -> unsigned transaction: calldata ABI-encoded (eth-abi), gas estimated by the chain."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from eth_abi import encode as abi_encode
from web3 import Web3
from web3.exceptions import ContractLogicError, ProviderConnectionError, Web3RPCError

from billing.txgen.intent import Intent, TxgenRefused


class ChainUnreachable(Exception):
    """The chain node did not answer: nothing can be estimated, nothing is charged."""


def selector(signature: str) -> bytes:
    return bytes(Web3.keccak(text=signature)[:4])


def calldata(intent: Intent) -> tuple[str, bytes, int]:
    """(to, data, value in wei) of the intent."""
    token = intent.token
    if intent.action == "wrap":  # ETH in, WETH out: deposit() with the ether as value
        return token_weth(), selector("deposit()"), intent.amount_atomic
    if intent.action == "unwrap":
        return (
            token_weth(),
            selector("withdraw(uint256)") + abi_encode(["uint256"], [intent.amount_atomic]),
            0,
        )
    assert intent.counterparty is not None  # transfer and approve name one
    if token.address is None:  # native ether: a plain transfer
        return intent.counterparty, b"", intent.amount_atomic
    signature = f"{intent.action}(address,uint256)"
    args = abi_encode(["address", "uint256"], [intent.counterparty, intent.amount_atomic])
    return token.address, selector(signature) + args, 0


def token_weth() -> str:
    return Web3.to_checksum_address(settings.WETH_ADDRESS)


def summary(intent: Intent, sender: str) -> str:
    what = f"{intent.amount} {intent.token.symbol}"
    if intent.action == "transfer":
        return f"Send {what} from {sender} to {intent.counterparty}"
    if intent.action == "approve":
        return f"Allow {intent.counterparty} to spend up to {what} of {sender}'s balance"
    if intent.action == "wrap":
        return f"Wrap {what} into WETH (WETH deposit) for {sender}"
    return f"Unwrap {what} into ETH (WETH withdraw) for {sender}"


def _w3() -> Web3:
    return Web3(
        Web3.HTTPProvider(
            settings.CHAIN_RPC_URL, request_kwargs={"timeout": settings.TXGEN_RPC_TIMEOUT_SECONDS}
        )
    )


def tx_build(intent: Intent, *, sender: str, chain_id: int) -> dict[str, Any]:
    """The unsigned transaction, with its gas estimated on CHAIN_RPC_URL (eth_estimateGas from
    the sender: a transfer the sender cannot afford reverts here, not after signing) and the
    sender's pending nonce as a hint."""
    to, data, value = calldata(intent)
    sender = Web3.to_checksum_address(sender)
    w3 = _w3()
    call: Any = {"from": sender, "to": to, "value": value, "data": "0x" + data.hex()}
    try:
        gas = w3.eth.estimate_gas(call)
        nonce = w3.eth.get_transaction_count(sender, "pending")
    except ContractLogicError as exc:
        reason = exc.message or str(exc)
        raise TxgenRefused("txgen_execution_reverted", f"gas estimation reverted: {reason}") from None
    except Web3RPCError as exc:
        # The node refused the call itself (e.g. the sender cannot pay the value).
        raise TxgenRefused(
            "txgen_execution_reverted", f"gas estimation failed: {exc.message or exc}"
        ) from None
    except (OSError, ProviderConnectionError) as exc:  # requests' connection errors and timeouts are OSErrors
        raise ChainUnreachable(str(exc)) from exc
    return {
        "from": sender,
        "to": to,
        "data": "0x" + data.hex(),
        "value": str(value),
        "gas": gas,
        "chainId": chain_id,
        "nonce": nonce,
        "summary": summary(intent, sender),
    }
