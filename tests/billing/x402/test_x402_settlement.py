"""The x402 paid call against a hostile or unlucky world (issue 9, findings 3, 4, 7, 11, 12, 13):
a settlement that confirms late is collected with the same proof, never lost; products with
effects are created only after settlement; the facilitator's gas key settles only the
service's own claims; its nonce heals after a failed send; forged smart-wallet proofs leave no
row in anyone's name. All on anvil, through the official x402 client's proofs."""

from __future__ import annotations

import base64
import json
import time
from datetime import timedelta

import pytest
import requests
from django.utils import timezone
from x402.http.utils import decode_payment_response_header

from billing.chain.localchain import DEMO_PAYER, FACILITATOR, dev_account
from billing.models import Account, Payment
from billing.reconcile import payments_reconcile
from sessions_app.models import PrepaidSession
from tests.support.payments import BRIEF, balances, challenge, signed_header
from webhooks.models import PushEntitlement

PRICE = 80_000  # the morning brief's seeded price
DESK_PACK = "/api/a2a/x402/session/desk-pack"
SIGNAL_PACK = "/api/a2a/x402/webhooks/signal-desk-pack"


def rpc(chain, method: str, *params):
    return chain.w3.provider.make_request(method, list(params))


def get(url: str, header: str) -> requests.Response:
    return requests.get(url, headers={"PAYMENT-SIGNATURE": header}, timeout=60)


def authorization(header: str) -> dict:
    return json.loads(base64.b64decode(header))["payload"]


def spend_directly(chain, header: str) -> str:
    """Settle an authorization on chain the way the facilitator would (from another account)."""
    auth = authorization(header)
    a = auth["authorization"]
    tx = chain.token.functions.transferWithAuthorization(
        a["from"],
        a["to"],
        int(a["value"]),
        int(a["validAfter"]),
        int(a["validBefore"]),
        bytes.fromhex(a["nonce"][2:]),
        bytes.fromhex(auth["signature"][2:]),
    ).transact({"from": dev_account(0).address})
    chain.w3.eth.wait_for_transaction_receipt(tx)
    return "0x" + bytes(tx).hex().removeprefix("0x")


def facilitator_nonce(chain) -> int:
    return chain.w3.eth.get_transaction_count(dev_account(FACILITATOR).address)


# --- 3. paid but not delivered -------------------------------------------------------------
def test_a_settlement_confirmed_late_stays_pending_and_the_same_proof_collects_it(
    paid_stack, brief, settings
):
    """The facilitator broadcasts but the block comes after its receipt wait: the agent is told
    'pending' (202, with the transaction), the reconciler sees the transfer on chain, and the
    same proof then collects the content once. The payer pays once."""
    settings.FACILITATOR_SETTLE_TIMEOUT_SECONDS = 1.0
    chain = paid_stack.chain
    url = paid_stack.url + BRIEF
    header = signed_header(challenge(url))
    before_payer, before_treasury = balances(paid_stack)
    rpc(chain, "evm_setAutomine", False)
    try:
        first = get(url, header)
        assert first.status_code == 202, first.text
        body = first.json()
        assert body["code"] == "settlement_pending" and body["transaction"].startswith("0x")
        assert body["collect"]["url"].endswith(BRIEF) and first.headers["Retry-After"] == "5"
        assert "The full brief" not in first.text
        # The payment is named by its authorization, and followed at `status` (free).
        signed = authorization(header)["authorization"]
        assert (body["payer"], body["nonce"]) == (signed["from"].lower(), signed["nonce"].lower())
        status_url = body["status"]["url"]
        assert status_url.startswith(paid_stack.url + "/api/a2a/x402/settlement?")
        pending = requests.get(status_url, timeout=30).json()
        assert (pending["state"], pending["final"], pending["delivered"]) == (
            "settlement_pending",
            False,
            False,
        )
        assert pending["transaction"] == body["transaction"] and pending["collect"]["url"].endswith(BRIEF)
        payment = Payment.objects.get()
        assert payment.state == Payment.State.PENDING and payment.tx_hash == body["transaction"]
        # Asked again before the block: still pending, nothing served, nothing claimed twice.
        again = get(url, header)
        assert again.status_code == 202 and Payment.objects.count() == 1
        assert again.json()["transaction"] == body["transaction"]
        assert payments_reconcile().waiting == 1
        rpc(chain, "evm_mine")
    finally:
        rpc(chain, "evm_setAutomine", True)
    result = payments_reconcile()
    assert (result.settled, result.released) == (1, 0)
    payment.refresh_from_db()
    assert payment.state == Payment.State.SETTLED and payment.delivered_at is None
    assert chain.w3.eth.get_transaction_receipt(payment.tx_hash)["status"] == 1
    # The broadcast sat unmined past the receipt wait, so the facilitator replaced it with a
    # higher gas price: the 202 named the replacement (the one that could still be mined), and
    # that is the one mined.
    assert payment.tx_hash == body["transaction"]
    settled = requests.get(status_url, timeout=30).json()
    assert (settled["state"], settled["final"], settled["delivered"]) == ("settled", True, False)
    assert settled["transaction"] == payment.tx_hash and settled["collect"] is not None
    collected = get(url, header)
    assert collected.status_code == 200, collected.text
    assert collected.json()["body"] == "The full brief: rates, CPI, FX."
    assert (
        decode_payment_response_header(collected.headers["PAYMENT-RESPONSE"]).transaction == payment.tx_hash
    )
    payment.refresh_from_db()
    assert payment.delivered_at is not None
    done = requests.get(status_url, timeout=30).json()
    assert (done["state"], done["delivered"], done["collect"], done["retry_after"]) == (
        "settled",
        True,
        None,
        None,
    )
    # Collected once: the proof is now spent.
    replay = get(url, header)
    assert replay.status_code == 402 and replay.json()["error"] == "invalid_exact_evm_nonce_already_used"
    after_payer, after_treasury = balances(paid_stack)
    assert (before_payer - after_payer, after_treasury - before_treasury) == (PRICE, PRICE)


def test_a_claim_left_by_a_dead_process_is_settled_or_released_from_the_chain(paid_stack, brief, settings):
    """A worker died between claim and answer. The reconciler looks at the chain: a claim whose
    authorization was used is settled (and collectable with the same proof); one whose
    authorization expired unused is released; a reverted broadcast is released."""
    chain = paid_stack.chain
    url = paid_stack.url + BRIEF
    old = timezone.now() - timedelta(seconds=settings.PAYMENT_CLAIM_STALE_SECONDS + 5)

    def claim(header: str) -> Payment:
        payment = payment_row(header, url)
        Payment.objects.filter(pk=payment.pk).update(created_at=old)
        return payment

    used = signed_header(challenge(url))
    used_payment = claim(used)
    spend_directly(chain, used)  # the broadcast happened before the crash
    expired = signed_header(challenge(url))
    expired_payment = claim(expired)
    Payment.objects.filter(pk=expired_payment.pk).update(valid_before=int(time.time()) - 120)
    fresh = claim(signed_header(challenge(url)))
    Payment.objects.filter(pk=fresh.pk).update(created_at=timezone.now())  # still in its request

    result = payments_reconcile()
    assert (result.settled, result.released) == (1, 1)
    used_payment.refresh_from_db()
    assert used_payment.state == Payment.State.SETTLED and used_payment.tx_hash.startswith("0x")
    assert not Payment.objects.filter(pk=expired_payment.pk).exists()
    assert Payment.objects.get(pk=fresh.pk).state == Payment.State.CLAIMED
    collected = get(url, used)
    assert collected.status_code == 200 and "The full brief" in collected.text


def test_the_same_proof_while_its_claim_is_undecided_is_told_pending_not_refused(paid_stack, brief, settings):
    """A request claimed the proof and then ended without answering (its worker killed, the
    database lost after the claim committed). The agent sends the same proof again: 202 pending
    with where to follow it (official clients give up on a 402 "nonce already used"), nothing
    claimed twice; once the reconciler settles it from the chain, the same proof collects it."""
    chain = paid_stack.chain
    url = paid_stack.url + BRIEF
    header = signed_header(challenge(url))
    payment = payment_row(header, url)  # the interrupted request's claim
    again = get(url, header)
    assert again.status_code == 202, again.text
    body = again.json()
    assert body["code"] == "settlement_pending" and again.headers["Retry-After"] == "5"
    assert "being processed" in body["detail"] and body["transaction"] == ""
    followed = requests.get(body["status"]["url"], timeout=30).json()
    assert (followed["state"], followed["final"]) == ("claimed", False)
    assert Payment.objects.count() == 1 and Payment.objects.get().state == Payment.State.CLAIMED
    # The interrupted request had broadcast: the reconciler settles the stale claim from the chain.
    spend_directly(chain, header)
    Payment.objects.filter(pk=payment.pk).update(
        created_at=timezone.now() - timedelta(seconds=settings.PAYMENT_CLAIM_STALE_SECONDS + 5)
    )
    assert payments_reconcile().settled == 1
    collected = get(url, header)
    assert collected.status_code == 200 and "The full brief" in collected.text


def test_a_reverted_settlement_is_released_and_the_proof_can_be_sent_again(paid_stack, brief, settings):
    chain = paid_stack.chain
    url = paid_stack.url + BRIEF
    header = signed_header(challenge(url))
    a = authorization(header)["authorization"]
    # A broadcast that reverted (a corrupt signature): its receipt has status 0.
    reverted = chain.token.functions.transferWithAuthorization(
        a["from"],
        a["to"],
        int(a["value"]),
        int(a["validAfter"]),
        int(a["validBefore"]),
        bytes.fromhex(a["nonce"][2:]),
        b"\x01" * 65,
    ).transact({"from": dev_account(0).address, "gas": 200_000})
    assert chain.w3.eth.wait_for_transaction_receipt(reverted)["status"] == 0
    payment_row(
        header, url, state=Payment.State.PENDING, tx_hash="0x" + bytes(reverted).hex().removeprefix("0x")
    )
    assert payments_reconcile().released == 1 and not Payment.objects.exists()
    before = balances(paid_stack)
    resp = get(url, header)
    assert resp.status_code == 200 and "The full brief" in resp.text
    assert before[0] - balances(paid_stack)[0] == PRICE


def payment_row(header: str, url: str, **fields) -> Payment:
    """The claim the service would have written for this proof (a crashed or pending call)."""
    from django.conf import settings

    from catalog.models import Sku

    a = authorization(header)["authorization"]
    return Payment.objects.create(
        sku=Sku.objects.get(sku="morning_brief"),
        resource=url,
        payer=a["from"].lower(),
        nonce=a["nonce"].lower(),
        amount_atomic=int(a["value"]),
        network="eip155:8453",
        asset=settings.USDC_ADDRESS,
        pay_to=settings.TREASURY_ADDRESS,
        valid_before=int(a["validBefore"]),
        **fields,
    )


@pytest.mark.django_db
def test_a_payment_is_followed_by_payer_and_nonce_to_its_end(api):
    """The free status route of one payment (issue 22, finding 9): each state says what to do,
    a released claim is gone (404, nothing charged) and malformed names are 422."""
    from catalog.models import Sku

    payer, nonce = "0x" + "ab" * 20, "0x" + "cd" * 32
    url = "http://testserver/api/a2a/x402/morning-brief"
    path = "/api/a2a/x402/settlement"
    payment = Payment.objects.create(
        sku=Sku.objects.get(sku="morning_brief"),
        resource=url,
        payer=payer,
        nonce=nonce,
        amount_atomic=PRICE,
        network="eip155:8453",
        asset="0x" + "0" * 40,
        pay_to="0x" + "1" * 40,
        state=Payment.State.FAILED,
        error="reconcile: authorization cancelled, nothing was paid",
    )
    # Looked up whatever the case of the names.
    failed = api.get(
        path, {"payer": payer.upper().replace("0X", "0x"), "nonce": nonce.upper().replace("0X", "0x")}
    )
    assert failed.status_code == 200, failed.json()
    body = failed.json()
    assert (body["state"], body["final"], body["collect"], body["retry_after"]) == (
        "failed",
        True,
        None,
        None,
    )
    assert (body["sku"], body["amount_atomic"], body["amount_usdc"]) == ("morning_brief", PRICE, 0.08)
    assert "cancelled" in body["error"] and "new authorization" in body["next"]
    Payment.objects.filter(pk=payment.pk).update(state=Payment.State.CLAIMED)
    claimed = api.get(path, {"payer": payer, "nonce": nonce}).json()
    assert (claimed["state"], claimed["final"], claimed["retry_after"]) == ("claimed", False, 5)
    Payment.objects.filter(pk=payment.pk).delete()  # released
    gone = api.get(path, {"payer": payer, "nonce": nonce})
    assert gone.status_code == 404 and "released (nothing was charged" in gone.json()["detail"]
    bad = api.get(path, {"payer": payer, "nonce": "0x12"})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["query", "nonce"]
    missing = api.get(path, {"nonce": nonce})
    assert missing.status_code == 422 and missing.json()["detail"][0]["loc"] == ["query", "payer"]


# --- 4. free but unpaid ---------------------------------------------------------------------
@pytest.fixture
def drained_between_verify_and_settle(paid_stack, monkeypatch):
    """After the facilitator verified the payment, the payer empties the wallet."""
    import billing.rails.x402 as paid_call

    chain = paid_stack.chain
    payer, sink = dev_account(DEMO_PAYER).address, dev_account(7).address
    original = paid_call.facilitator_verify
    moved: list[int] = []

    def verify_then_drain(proof):
        verified = original(proof)
        amount = chain.token.functions.balanceOf(payer).call()
        chain.w3.eth.wait_for_transaction_receipt(
            chain.token.functions.transfer(sink, amount).transact({"from": payer})
        )
        moved.append(amount)
        return verified

    monkeypatch.setattr(paid_call, "facilitator_verify", verify_then_drain)
    yield
    for amount in moved:  # give the shared chain's payer its USDC back
        chain.w3.eth.wait_for_transaction_receipt(
            chain.token.functions.transfer(payer, amount).transact({"from": sink})
        )


def pack_header(url: str) -> str:
    return signed_header(challenge(url))


@pytest.mark.parametrize("path", [DESK_PACK, SIGNAL_PACK])
def test_a_pack_whose_payment_fails_at_settlement_creates_nothing(
    paid_stack, path, drained_between_verify_and_settle, settings
):
    # Strict: every settle verifies and simulates again (FACILITATOR_VERIFY_REUSE_SECONDS=0).
    settings.FACILITATOR_VERIFY_REUSE_SECONDS = 0.0
    payer = dev_account(DEMO_PAYER).address.lower()
    Account.objects.create(wallet_address=payer)  # the signal desk pack pushes to an account
    url = paid_stack.url + path
    header = pack_header(url)
    gas_nonce = facilitator_nonce(paid_stack.chain)
    resp = get(url, header)
    assert resp.status_code == 402, resp.text
    assert "token" not in resp.json()
    assert not PrepaidSession.objects.exists() and not PushEntitlement.objects.exists()
    payment = Payment.objects.get()
    assert payment.state == Payment.State.FAILED and payment.delivered_at is None
    # The settlement was refused before broadcasting: the facilitator paid no gas for a revert.
    assert facilitator_nonce(paid_stack.chain) == gas_nonce


def test_a_payer_draining_within_the_verify_reuse_window_costs_one_reverted_transaction(
    paid_stack, drained_between_verify_and_settle, settings
):
    """By default a settle right after its verify takes that verification (simulation included)
    instead of simulating again: a drain in between is caught by the chain, not before it.
    Nothing is created or charged; the facilitator paid one reverted transaction's gas."""
    settings.FACILITATOR_VERIFY_REUSE_SECONDS = 60.0
    payer = dev_account(DEMO_PAYER).address.lower()
    url = paid_stack.url + DESK_PACK
    gas_nonce = facilitator_nonce(paid_stack.chain)
    before = paid_stack.chain.token.functions.balanceOf(dev_account(DEMO_PAYER).address).call()
    resp = get(url, pack_header(url))
    assert resp.status_code == 402, resp.text
    assert not PrepaidSession.objects.exists()
    payment = Payment.objects.get()
    assert payment.state == Payment.State.FAILED and payment.delivered_at is None
    assert payment.payer == payer
    # One transaction was broadcast and reverted; the payer's (drained) balance did not move.
    assert facilitator_nonce(paid_stack.chain) == gas_nonce + 1
    assert paid_stack.chain.token.functions.balanceOf(dev_account(DEMO_PAYER).address).call() == 0
    assert before > 0


def test_a_pack_is_created_once_its_payment_settled(paid_stack):
    payer = dev_account(DEMO_PAYER).address.lower()
    url = paid_stack.url + SIGNAL_PACK
    # Without an account there is nothing to push to: refused before any payment is held.
    refused = get(url, pack_header(url))
    assert refused.status_code == 503 and refused.json()["charged"] is False
    assert not Payment.objects.exists()
    account = Account.objects.create(wallet_address=payer)
    before = balances(paid_stack)
    resp = get(url, pack_header(url))
    assert resp.status_code == 200, resp.text
    payment = Payment.objects.get()
    assert payment.state == Payment.State.SETTLED and payment.delivered_at is not None
    assert PushEntitlement.objects.filter(account=account).count() == 1
    assert before[0] - balances(paid_stack)[0] == payment.amount_atomic


# --- 7. the facilitator's gas key --------------------------------------------------------------
def test_settle_over_http_is_not_public(paid_stack, brief, settings):
    """Anyone could otherwise have our gas key settle any authorization to the treasury,
    including value 0 from a wallet without ETH."""
    url = paid_stack.url + BRIEF
    header = signed_header(challenge(url))
    payload = json.loads(base64.b64decode(header))
    body = {"x402Version": 2, "paymentPayload": payload, "paymentRequirements": payload["accepted"]}
    settle = paid_stack.url + "/api/a2a/facilitator/settle"
    before, gas_nonce = balances(paid_stack), facilitator_nonce(paid_stack.chain)

    settings.FACILITATOR_SHARED_SECRET = ""
    assert requests.post(settle, json=body, timeout=30).status_code == 403
    settings.FACILITATOR_SHARED_SECRET = "the-service-knows-this"
    assert requests.post(settle, json=body, timeout=30).status_code == 401
    wrong = requests.post(settle, json=body, headers={"Authorization": "Bearer guess"}, timeout=30)
    assert wrong.status_code == 401
    auth = {"Authorization": "Bearer the-service-knows-this"}
    unclaimed = requests.post(settle, json=body, headers=auth, timeout=30).json()
    assert unclaimed["success"] is False and "claimed" in unclaimed["errorMessage"]
    zero = signed_header(challenge(url), amount="0")
    zero_payload = json.loads(base64.b64decode(zero))
    zero_body = {
        "x402Version": 2,
        "paymentPayload": zero_payload,
        "paymentRequirements": zero_payload["accepted"],
    }
    refused = requests.post(settle, json=zero_body, headers=auth, timeout=30).json()
    assert refused["success"] is False and "cheapest" in refused["errorMessage"]
    assert balances(paid_stack) == before and facilitator_nonce(paid_stack.chain) == gas_nonce
    # /verify stays public: agents check a payment before paying.
    assert requests.post(paid_stack.url + "/api/a2a/facilitator/verify", json=body, timeout=30).json()[
        "isValid"
    ]


def test_a_separately_run_facilitator_settles_the_services_claims_with_the_shared_secret(
    paid_stack, brief, settings
):
    """FACILITATOR_URL pointing at a facilitator process of this service (here the live
    server's) with the shared secret: the claim exists, so it settles."""
    settings.FACILITATOR_SHARED_SECRET = "the-service-knows-this"
    settings.FACILITATOR_URL = paid_stack.url + "/api/a2a/facilitator"
    try:
        resp = get(paid_stack.url + BRIEF, signed_header(challenge(paid_stack.url + BRIEF)))
    finally:
        from billing.x402.facilitator_client import _client

        _client.cache_clear()
    assert resp.status_code == 200, resp.text
    assert Payment.objects.get().state == Payment.State.SETTLED


# --- 11. the facilitator's nonce heals -------------------------------------------------------
def test_a_failed_send_leaves_no_nonce_gap(paid_stack, brief, settings, monkeypatch):
    """One RPC error after the signer reserved a nonce used to leave a gap that made every later
    settlement wait for ever. Now the next payment settles at once."""
    from billing.facilitator.service import facilitator_signer

    settings.FACILITATOR_SETTLE_TIMEOUT_SECONDS = 3.0
    signer = facilitator_signer()
    real_send = signer._w3.eth.send_raw_transaction
    failures = [1]

    def flaky_send(raw):
        if failures:
            failures.pop()
            raise requests.ConnectionError("RPC node dropped the connection")
        return real_send(raw)

    monkeypatch.setattr(signer._w3.eth, "send_raw_transaction", flaky_send)
    url = paid_stack.url + BRIEF
    first = get(url, signed_header(challenge(url)))
    assert first.status_code == 402 and "The full brief" not in first.text
    started = time.monotonic()
    second = get(url, signed_header(challenge(url)))
    assert second.status_code == 200, second.text
    assert time.monotonic() - started < 3.0  # settled at once, no receipt wait timed out
    assert Payment.objects.filter(state=Payment.State.SETTLED).count() == 1


# --- 13. forged smart-wallet proofs ---------------------------------------------------------------
def test_a_forged_smart_wallet_proof_leaves_no_row_in_the_payers_name(paid_stack, brief):
    url = paid_stack.url + BRIEF
    data = json.loads(base64.b64decode(signed_header(challenge(url))))
    data["payload"]["signature"] = "0x" + "cd" * 70  # not 65 bytes: not checkable locally
    forged = base64.b64encode(json.dumps(data).encode()).decode()
    for _ in range(3):
        resp = get(url, forged)
        assert resp.status_code == 402 and "The full brief" not in resp.text
    assert not Payment.objects.exists()
    store = requests.get(paid_stack.url + "/api/a2a/discovery/storefront", timeout=10).json()
    sku = [s for s in store["storefront_skus"] if s["sku"] == "morning_brief"][0]
    assert sku["trust_score"] == 0.0 and sku["sales_30d"] == 0


# --- 12. no HTTP round trip to itself --------------------------------------------------------------
def test_paid_calls_settle_in_process_by_default(paid_stack, brief, settings, monkeypatch):
    """With one web worker, a paid call that asked its own server over HTTP would deadlock."""
    import billing.x402.facilitator_client as fc

    assert settings.FACILITATOR_URL == ""

    def no_http(*args, **kwargs):
        raise AssertionError("the facilitator was asked over HTTP")

    monkeypatch.setattr(fc.HTTPFacilitatorClientSync, "verify", no_http)
    monkeypatch.setattr(fc.HTTPFacilitatorClientSync, "settle", no_http)
    resp = get(paid_stack.url + BRIEF, signed_header(challenge(paid_stack.url + BRIEF)))
    assert resp.status_code == 200 and Payment.objects.get().state == Payment.State.SETTLED
    health = requests.get(paid_stack.url + "/api/a2a/facilitator/health", timeout=10).json()
    assert health["reachable"] is True and health["facilitator"].endswith("/api/a2a/facilitator")


@pytest.mark.parametrize("reuse, simulations", [(60.0, 1), (0.0, 2)])
def test_a_paid_call_verifies_and_simulates_once_unless_told_to_do_it_again(
    paid_stack, brief, settings, monkeypatch, reuse, simulations
):
    """The settle takes the verification the same process made of the same payment moments
    earlier (billing/facilitator/exact_once.py): one simulated transfer per paid call; with FACILITATOR_VERIFY_REUSE_SECONDS=0 the settle simulates again."""
    from billing.facilitator import service

    settings.FACILITATOR_VERIFY_REUSE_SECONDS = reuse
    asked: list[str] = []
    original = service.WatchedHTTPProvider._make_request

    def counted(self, method, data):
        asked.append(method)
        return original(self, method, data)

    monkeypatch.setattr(service.WatchedHTTPProvider, "_make_request", counted)
    url = paid_stack.url + BRIEF
    before_payer, before_treasury = balances(paid_stack)
    resp = get(url, signed_header(challenge(url)))
    assert resp.status_code == 200, resp.text
    receipt = decode_payment_response_header(resp.headers["PAYMENT-RESPONSE"])
    assert receipt.success and receipt.transaction
    after_payer, after_treasury = balances(paid_stack)
    assert before_payer - after_payer == after_treasury - before_treasury > 0
    assert asked.count("eth_call") == simulations
    assert asked.count("eth_sendRawTransaction") == 1
