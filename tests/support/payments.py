"""Paying for products in tests: funded credit accounts, the official x402 client paying on the
local chain (its proofs, the challenge it answers, the balances it moves), the morning brief
that gives a paid route something to sell, and prepaid sessions."""

from __future__ import annotations

import pytest
import requests
from django.utils import timezone
from x402 import x402ClientSync
from x402.http import x402HTTPClientSync
from x402.http.clients import wrapRequestsWithPayment
from x402.http.utils import decode_payment_required_header
from x402.mechanisms.evm.exact.register import register_exact_evm_client
from x402.schemas import PaymentRequired

from billing.chain.localchain import DEMO_PAYER, dev_account
from billing.credits import credit_add
from billing.models import Account
from catalog.models import EditorialPiece, Sku
from sessions_app.models import PrepaidSession
from sessions_app.services import session_create
from tests.support.wallets import register_wallet


# --- credits -------------------------------------------------------------------------------------
def funded(usdc: float) -> tuple[str, Account]:
    reg = register_wallet()
    credit_add(account_id=reg.account.id, amount_atomic=int(usdc * 10**6), kind="adjustment", reason="test")
    return reg.api_key, reg.account


def balance(account: Account) -> int:
    account.refresh_from_db()
    return account.credit_balance_atomic


# --- the morning brief, the paid product the tests buy ---------------------------------------------
BASE = "http://testserver"


BRIEF_PRICE = 80_000


def publish_brief() -> None:
    EditorialPiece.objects.create(
        kind="morning_brief", title="Brief", summary="s", body="full brief", published_at=timezone.now()
    )


# --- x402 on the local chain -----------------------------------------------------------------------
BRIEF = "/api/a2a/x402/morning-brief"
_SESSIONS: list[requests.Session] = []


@pytest.fixture(autouse=True)
def _close_paying_sessions():
    """Keep-alive connections left open would hold live-server threads at shutdown."""
    yield
    while _SESSIONS:
        _SESSIONS.pop().close()


def paying_session() -> requests.Session:
    session = wrapRequestsWithPayment(requests.Session(), payer_client())
    _SESSIONS.append(session)
    return session


def payer_client() -> x402ClientSync:
    return register_exact_evm_client(x402ClientSync(), dev_account(DEMO_PAYER))


def balances(stack) -> tuple[int, int]:
    token = stack.chain.token
    return (
        token.functions.balanceOf(dev_account(DEMO_PAYER).address).call(),
        token.functions.balanceOf(stack.treasury).call(),
    )


def challenge(url: str) -> PaymentRequired:
    resp = requests.get(url, timeout=10)
    assert resp.status_code == 402
    return decode_payment_required_header(resp.headers["PAYMENT-REQUIRED"])


def signed_header(required: PaymentRequired, **changes) -> str:
    """A v2 proof signed by the official client for (possibly altered) requirements."""
    accepts = [required.accepts[0].model_copy(update=changes)]
    # A careless or hostile client: no spend controls stop it from signing odd requirements.
    client = payer_client().set_spend_controls(False)
    payload = client.create_payment_payload(required.model_copy(update={"accepts": accepts}))
    return x402HTTPClientSync(payer_client()).encode_payment_signature_header(payload)["PAYMENT-SIGNATURE"]


# --- prepaid sessions ------------------------------------------------------------------------------
def new_session(pack: str = "m2m_session_desk", calls: int | None = None) -> PrepaidSession:
    session = session_create(pack_sku=Sku.objects.get(sku=pack), buyer="0x" + "5" * 40)
    if calls is not None:
        PrepaidSession.objects.filter(pk=session.pk).update(calls_total=calls)
        session.refresh_from_db()
    return session
