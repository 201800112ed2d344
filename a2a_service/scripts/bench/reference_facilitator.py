"""The benchmark's reference facilitator: the `x402` package's own facilitator (`x402Facilitator`
with its `exact` EVM scheme and web3 signer) behind the three HTTP routes of the x402 v2
facilitator protocol, as the SDK's facilitator example serves them with FastAPI. With the
reference server (reference.py) pointed at it, it is the reference stack whose full paid call
`make bench` times against ours (issue 27 item 2), on the same local chain.

Environment: REFERENCE_FACILITATOR_KEY (the gas key, a dev account of its own so that its
transactions never race ours for a nonce), CHAIN_RPC_URL, X402_NETWORK."""

from __future__ import annotations

import os
from typing import Any

from fastapi import FastAPI, HTTPException
from pydantic import BaseModel
from x402 import x402Facilitator
from x402.mechanisms.evm import FacilitatorWeb3Signer
from x402.mechanisms.evm.exact.register import register_exact_evm_facilitator
from x402.schemas import PaymentRequirements, parse_payment_payload

facilitator = register_exact_evm_facilitator(
    x402Facilitator(),
    FacilitatorWeb3Signer(private_key=os.environ["REFERENCE_FACILITATOR_KEY"], rpc_url=os.environ["CHAIN_RPC_URL"]),
    networks=os.environ.get("X402_NETWORK", "eip155:8453"),
)
app = FastAPI()


class PaymentRequest(BaseModel):
    paymentPayload: dict[str, Any]
    paymentRequirements: dict[str, Any]


def _parsed(request: PaymentRequest) -> tuple[Any, PaymentRequirements]:
    return (
        parse_payment_payload(request.paymentPayload),
        PaymentRequirements.model_validate(request.paymentRequirements),
    )


@app.post("/verify")
async def verify(request: PaymentRequest) -> dict[str, Any]:
    try:
        result = await facilitator.verify(*_parsed(request))
    except Exception as exc:  # the example's shape: the error as a 500's detail
        raise HTTPException(status_code=500, detail=str(exc)) from exc
    return {"isValid": result.is_valid, "payer": result.payer, "invalidReason": result.invalid_reason}


@app.post("/settle")
async def settle(request: PaymentRequest) -> dict[str, Any]:
    try:
        result = await facilitator.settle(*_parsed(request))
    except Exception as exc:
        raise HTTPException(status_code=500, detail=str(exc)) from exc
    return {
        "success": result.success,
        "transaction": result.transaction,
        "network": result.network,
        "payer": result.payer,
        "errorReason": result.error_reason,
    }


@app.get("/supported")
async def supported() -> dict[str, Any]:
    answer = facilitator.get_supported()
    return {
        "kinds": [kind.model_dump(by_alias=True, exclude_none=True) for kind in answer.kinds],
        "extensions": answer.extensions,
        "signers": answer.signers,
    }
