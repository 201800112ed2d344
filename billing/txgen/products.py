"""The `txgen_transaction` product: a prompt becomes an unsigned transaction (0.30 USDC).

Sold like any product: POST /api/a2a/txgen/transaction with X-API-Key (the JSON body is the
request), or GET /api/a2a/x402/txgen/transaction?prompt=...&address=... paid by x402. The
prompt is understood before anything is held (`price_for`: a 422 costs nothing and needs no
payment); the gas is estimated while the call is held, so a transaction the chain would revert
is a 422 whose hold is released (the credit debit rolls back, the x402 proof is not settled)."""

from __future__ import annotations

from typing import Any, Literal

from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field

from a2a_service.core.errors import RequestValidationError
from a2a_service.core.inputs import QueryModel
from billing.models import Account
from billing.txgen.build import ChainUnreachable, tx_build
from billing.txgen.intent import Intent, TxgenRefused, intent_parse
from billing.txgen.llm import RETRYABLE, llm_enabled, llm_understand
from billing.txgen.models import AccountReferral, TxgenCall
from catalog.api.bodies import BrianTransactionRequest
from catalog.products.registry import ProductCall, ProductFailed, ProductSpec, register

SKU = "txgen_transaction"


class TxgenParams(QueryModel, BrianTransactionRequest):
    """The request (the POST body, or the x402 path's query): prompt, address, chain_id."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class TxgenIntentOut(BaseModel):
    action: str = Field(description="transfer, approve, wrap or unwrap")
    token: str
    token_address: str | None = Field(description="the ERC-20 contract; null for native ETH")
    decimals: int
    amount: str
    amount_atomic: str = Field(description="the amount in the token's smallest unit (a decimal string)")
    counterparty: str | None = Field(description="recipient (transfer) or spender (approve)")
    understood_by: Literal["patterns", "llm"] = Field(
        description="the deterministic patterns, or the optional language model (its reading checked by them)"
    )


class TxgenTxOut(BaseModel):
    # "from" as wallets name it (a Python keyword: the field is from_), in every dump.
    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)

    from_: str = Field(alias="from", description="the sender (the request's address)")
    to: str
    data: str = Field(description="calldata, 0x hex (0x for a plain ether transfer)")
    value: str = Field(description="wei, a decimal string")
    gas: int = Field(description="eth_estimateGas on the service's chain node, from the sender")
    chainId: int  # noqa: N815 - the field name wallets read
    nonce: int = Field(description="the sender's pending nonce when built (a hint)")


class TxgenTransactionOut(BaseModel):
    transaction: TxgenTxOut = Field(description="unsigned: sign it with the sender's key and send it")
    summary: str
    intent: TxgenIntentOut
    affiliate_tag: str = Field(description="the referral recorded with this call (empty: none)")
    call_id: int


def _refusal(exc: TxgenRefused, call: ProductCall) -> RequestValidationError:
    where = str(call.extra.get("params_in", "body"))
    return RequestValidationError.single([where, exc.field], exc.message, exc.type)


def _understand(call: ProductCall) -> Intent:
    params = call.params
    assert isinstance(params, TxgenParams)
    if params.chain_id is not None and params.chain_id != settings.CHAIN_ID:
        raise TxgenRefused(
            "txgen_wrong_chain",
            f"chain {params.chain_id} is not served: transactions are built for chain {settings.CHAIN_ID}",
            field="chain_id",
        )
    return intent_parse(params.prompt)


def txgen_price_for(call: ProductCall) -> int | None:
    """Before any payment: the prompt must be understood (422 naming what was not). A prompt
    the patterns do not understand, with the LLM fallback on, is left to `run`: a language
    model is asked only for a call that is paid (held), never for an unpaid 402."""
    try:
        call.extra["intent"] = _understand(call)
    except TxgenRefused as exc:
        if exc.type in RETRYABLE and llm_enabled():
            call.extra["refused"] = exc
            return None
        raise _refusal(exc, call) from None
    return None  # the SKU's price


def _intent(call: ProductCall, prompt: str) -> tuple[Intent, str]:
    """(the intent, who understood it: patterns or llm)."""
    known = call.extra.get("intent")
    if isinstance(known, Intent):
        return known, "patterns"
    refused = call.extra.get("refused")
    if isinstance(refused, TxgenRefused):
        return llm_understand(prompt, refused), "llm"
    return _understand(call), "patterns"


def _affiliate(call: ProductCall, offered: str | None) -> str:
    """The account's referral (first touch: the first tag it sends is kept), else the tag of
    this call (an x402 payer has no account), else the service's default."""
    account = call.account
    if isinstance(account, Account):
        if offered:
            AccountReferral.objects.get_or_create(account=account, defaults={"tag": offered})
        tag = AccountReferral.objects.filter(account=account).values_list("tag", flat=True).first()
        if tag:
            return tag
    return offered or settings.TXGEN_DEFAULT_AFFILIATE_TAG


def _charged(call: ProductCall) -> int:
    # The credit rail says what it debits (0 when billing is off); a paid x402 call pays the
    # SKU's price (this product has no item price); a free call pays nothing.
    if "charge_atomic" in call.extra:
        return int(call.extra["charge_atomic"])
    if call.payer and call.sku is not None:
        return int(call.sku.price_atomic)
    return 0


def txgen_transaction(call: ProductCall) -> dict[str, Any]:
    params = call.params
    assert isinstance(params, TxgenParams)
    try:
        intent, understood_by = _intent(call, params.prompt)
        tx = tx_build(intent, sender=params.address, chain_id=settings.CHAIN_ID)
    except TxgenRefused as exc:
        raise _refusal(exc, call) from None
    except ChainUnreachable as exc:
        raise ProductFailed(f"the chain node cannot estimate gas now ({exc}); nothing was charged") from None
    tag = _affiliate(call, params.referral)
    summary = tx.pop("summary")
    understood = {**intent.as_dict(), "understood_by": understood_by}
    record = TxgenCall.objects.create(
        account=call.account if isinstance(call.account, Account) else None,
        payer=(call.payer or "")[:42],
        prompt=params.prompt,
        intent=understood,
        tx=tx,
        affiliate_tag=tag,
        charged_atomic=_charged(call),
    )
    out = TxgenTransactionOut(
        transaction=TxgenTxOut.model_validate(tx),
        summary=summary,
        intent=TxgenIntentOut.model_validate(understood),
        affiliate_tag=tag,
        call_id=record.id,
    )
    return out.model_dump(mode="json", by_alias=True)


register(
    ProductSpec(
        sku=SKU,
        path="/txgen/transaction",
        headline="Transaction from a prompt: an unsigned ERC-20/ETH/WETH transaction, gas estimated",
        price="0.3",
        family="agent",
        rank=43,
        run=txgen_transaction,
        params=TxgenParams,
        output=TxgenTransactionOut,
        price_for=txgen_price_for,
    )
)
