"""x402 end to end: the official x402 client pays on anvil through the self-hosted
facilitator; every refusal answers 402 with a facilitator-style reason and settles nothing."""

from __future__ import annotations

import base64
import dataclasses
import json
import threading

import pytest
import requests
from django.utils import timezone
from x402.http import x402HTTPClientSync
from x402.http.utils import decode_payment_required_header, decode_payment_response_header
from x402.schemas.v1 import PaymentRequiredV1

from billing.chain.localchain import DEMO_PAYER, dev_account
from billing.models import Payment
from catalog.models import EditorialPiece, NewsItem, Sku
from catalog.products import registry
from tests.support.payments import BRIEF, balances, challenge, payer_client, paying_session, signed_header


def test_unpaid_call_is_a_402_in_both_versions(paid_stack, brief):
    resp = requests.get(paid_stack.url + BRIEF, timeout=10)
    assert resp.status_code == 402
    v2 = decode_payment_required_header(resp.headers["PAYMENT-REQUIRED"])
    req = v2.accepts[0]
    assert v2.x402_version == 2 and v2.resource.url.endswith(BRIEF)
    assert (req.scheme, req.network, req.amount) == ("exact", "eip155:8453", "80000")
    assert req.pay_to == paid_stack.treasury and req.extra == {"name": "USD Coin", "version": "2"}
    body = resp.json()
    v1 = PaymentRequiredV1.model_validate(body)
    assert v1.accepts[0].max_amount_required == "80000" and v1.accepts[0].network == "base"
    assert body["hint"] and body["alternatives"]["credits"]["register"].endswith("/api/a2a/account/register")
    cors = requests.get(paid_stack.url + BRIEF, headers={"Origin": "https://agent.example"}, timeout=10)
    exposed = cors.headers["Access-Control-Expose-Headers"].lower()
    assert "payment-required" in exposed and "payment-response" in exposed and "x-payment-response" in exposed


def test_official_client_pays_and_usdc_moves_on_chain(paid_stack, brief):
    before_payer, before_treasury = balances(paid_stack)
    session = paying_session()
    resp = session.get(paid_stack.url + BRIEF, timeout=30)
    assert resp.status_code == 200, resp.text
    assert resp.json()["body"] == "The full brief: rates, CPI, FX."
    settled = decode_payment_response_header(resp.headers["PAYMENT-RESPONSE"])
    assert settled.success and settled.transaction.startswith("0x")
    receipt = paid_stack.chain.w3.eth.get_transaction_receipt(settled.transaction)
    assert receipt["status"] == 1
    after_payer, after_treasury = balances(paid_stack)
    assert (before_payer - after_payer, after_treasury - before_treasury) == (80_000, 80_000)
    payment = Payment.objects.get()
    assert payment.state == Payment.State.SETTLED and payment.tx_hash == settled.transaction
    assert payment.payer == dev_account(DEMO_PAYER).address.lower() and payment.amount_atomic == 80_000
    store = requests.get(paid_stack.url + "/api/a2a/discovery/storefront", timeout=10).json()
    sku = [s for s in store["storefront_skus"] if s["sku"] == "morning_brief"][0]
    assert sku["sales_30d"] == 1 and sku["revenue_30d_usdc"] == 0.08 and sku["trust_score"] == 100.0


@pytest.mark.parametrize(
    "case,reason",
    [
        ("wrong_amount", "invalid_exact_evm_payload_authorization_value_mismatch"),
        ("wrong_pay_to", "invalid_exact_evm_payload_recipient_mismatch"),
        ("expired", "invalid_exact_evm_payload_authorization_valid_before"),
        ("bad_signature", "invalid_exact_evm_payload_signature"),
        ("unknown_network", "network_mismatch"),
        ("malformed_base64", "invalid_payload"),
        ("malformed_json", "invalid_payload"),
    ],
)
def test_refused_proofs_answer_402_with_a_reason_and_settle_nothing(paid_stack, brief, case, reason):
    url = paid_stack.url + BRIEF
    required = challenge(url)
    if case == "wrong_amount":
        header = signed_header(required, amount="1")
    elif case == "wrong_pay_to":
        header = signed_header(required, pay_to=dev_account(5).address)
    elif case == "expired":
        header = signed_header(required, max_timeout_seconds=1)
    elif case == "bad_signature":
        data = json.loads(base64.b64decode(signed_header(required)))
        sig = data["payload"]["signature"]
        data["payload"]["signature"] = sig[:10] + ("0" if sig[10] != "0" else "1") + sig[11:]
        header = base64.b64encode(json.dumps(data).encode()).decode()
    elif case == "unknown_network":
        header = signed_header(required, network="eip155:1")
    elif case == "malformed_base64":
        header = "%%% not base64 %%%"
    else:
        header = base64.b64encode(b"{not json").decode()
    before = balances(paid_stack)
    resp = requests.get(url, headers={"PAYMENT-SIGNATURE": header}, timeout=30)
    assert resp.status_code == 402
    assert resp.json()["error"] == reason, resp.json()
    assert decode_payment_required_header(resp.headers["PAYMENT-REQUIRED"]).error == reason
    assert "The full brief" not in resp.text
    assert balances(paid_stack) == before
    assert not Payment.objects.filter(state=Payment.State.SETTLED).exists()


def test_replayed_proof_is_served_once(paid_stack, brief, monkeypatch):
    runs = count_product_runs(monkeypatch, "morning_brief")
    header = signed_header(challenge(paid_stack.url + BRIEF))
    first = requests.get(paid_stack.url + BRIEF, headers={"PAYMENT-SIGNATURE": header}, timeout=30)
    second = requests.get(paid_stack.url + BRIEF, headers={"PAYMENT-SIGNATURE": header}, timeout=30)
    assert first.status_code == 200 and second.status_code == 402
    assert second.json()["error"] == "invalid_exact_evm_nonce_already_used"
    assert "The full brief" not in second.text
    assert runs == [1] and Payment.objects.count() == 1


@pytest.mark.postgres
def test_concurrent_replays_are_served_once(paid_stack, brief, monkeypatch):
    runs = count_product_runs(monkeypatch, "morning_brief")
    header = signed_header(challenge(paid_stack.url + BRIEF))
    results: list[requests.Response] = []
    barrier = threading.Barrier(6)

    def send() -> None:
        barrier.wait()
        results.append(
            requests.get(paid_stack.url + BRIEF, headers={"PAYMENT-SIGNATURE": header}, timeout=60)
        )

    threads = [threading.Thread(target=send) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # One is served; the others are told the proof is being used (202 pending, while the first
    # holds its claim) or was used (402, once it was delivered).
    codes = sorted(r.status_code for r in results)
    assert codes[0] == 200 and codes.count(200) == 1 and set(codes[1:]) <= {202, 402}, codes
    assert sum("The full brief" in r.text for r in results) == 1
    assert runs == [1] and Payment.objects.filter(state=Payment.State.SETTLED).count() == 1


def test_failed_settlement_withholds_the_content(paid_stack, brief, monkeypatch):
    """The authorization is spent on chain by someone else while the product runs, so the
    facilitator's settlement fails: the agent gets a 402 and not the content."""
    header = signed_header(challenge(paid_stack.url + BRIEF))
    auth = json.loads(base64.b64decode(header))["payload"]
    original = registry.product_get("morning_brief")

    def front_run(call):
        a, sig = auth["authorization"], bytes.fromhex(auth["signature"][2:])
        token = paid_stack.chain.token
        tx = token.functions.transferWithAuthorization(
            a["from"],
            a["to"],
            int(a["value"]),
            int(a["validAfter"]),
            int(a["validBefore"]),
            bytes.fromhex(a["nonce"][2:]),
            sig,
        ).transact({"from": dev_account(0).address})
        paid_stack.chain.w3.eth.wait_for_transaction_receipt(tx)
        return original.run(call)

    monkeypatch.setitem(registry._SPECS, "morning_brief", dataclasses.replace(original, run=front_run))
    resp = requests.get(paid_stack.url + BRIEF, headers={"PAYMENT-SIGNATURE": header}, timeout=30)
    assert resp.status_code == 402 and "The full brief" not in resp.text
    payment = Payment.objects.get()
    assert payment.state == Payment.State.FAILED and "settle" in payment.error


def test_admin_price_edit_changes_the_next_challenge(paid_stack, brief, admin_client):
    sku = Sku.objects.get(sku="morning_brief")
    form = admin_client.get(f"/admin/catalog/sku/{sku.pk}/change/").context["adminform"].form
    data = {n: form[n].value() for n in form.fields if form[n].value() not in (None, False)}
    data = {k: ("on" if v is True else v) for k, v in data.items()}
    data["price_usdc"] = "0.11"
    assert admin_client.post(f"/admin/catalog/sku/{sku.pk}/change/", data).status_code == 302
    assert challenge(paid_stack.url + BRIEF).accepts[0].amount == "110000"
    session = paying_session()
    assert session.get(paid_stack.url + BRIEF, timeout=30).status_code == 200
    assert Payment.objects.get().amount_atomic == 110_000


def test_a_v1_client_pays_from_the_body(paid_stack, brief):
    resp = requests.get(paid_stack.url + BRIEF, timeout=10)
    http_client = x402HTTPClientSync(payer_client())
    required = http_client.get_payment_required_response(lambda name: None, resp.content)  # body only: v1
    assert isinstance(required, PaymentRequiredV1)
    payload = payer_client().create_payment_payload(required)
    headers = http_client.encode_payment_signature_header(payload)
    assert list(headers) == ["X-PAYMENT"]
    paid = requests.get(paid_stack.url + BRIEF, headers=headers, timeout=30)
    assert paid.status_code == 200, paid.text
    assert decode_payment_response_header(paid.headers["X-PAYMENT-RESPONSE"]).success
    assert Payment.objects.get().x402_version == 1


def test_news_unlock_charges_the_items_price(paid_stack):
    item = NewsItem.objects.create(
        title="Fed holds", teaser="Fed holds", body="Full text of the Fed story", category="equity"
    )
    url = f"{paid_stack.url}/api/a2a/x402/news/unlock?news_id={item.id}"
    assert challenge(url).accepts[0].amount == "180000"
    session = paying_session()
    resp = session.get(url, timeout=30)
    assert resp.status_code == 200 and resp.json()["body"] == "Full text of the Fed story"


def test_product_without_data_answers_503_before_any_payment(paid_stack):
    # No brief published: nothing to deliver, so nothing to sign (503, when to ask again).
    resp = requests.get(paid_stack.url + BRIEF, timeout=10)
    assert resp.status_code == 503 and resp.headers["Retry-After"] and "PAYMENT-REQUIRED" not in resp.headers
    # A proof signed while there was a brief, sent once it is gone: refused before any payment.
    brief = EditorialPiece.objects.create(
        kind="morning_brief", title="Brief", summary="s", body="b", published_at=timezone.now()
    )
    required = challenge(paid_stack.url + BRIEF)
    brief.delete()
    before = balances(paid_stack)
    paid = requests.get(
        paid_stack.url + BRIEF, headers={"PAYMENT-SIGNATURE": signed_header(required)}, timeout=30
    )
    assert paid.status_code == 503 and paid.json()["charged"] is False
    assert balances(paid_stack) == before and not Payment.objects.exists()


def count_product_runs(monkeypatch, sku: str) -> list[int]:
    runs = [0]
    original = registry.product_get(sku)

    def counted(call):
        runs[0] += 1
        return original.run(call)

    monkeypatch.setitem(registry._SPECS, sku, dataclasses.replace(original, run=counted))
    return runs


def test_facilitator_health_reads_the_self_hosted_facilitators_kinds(paid_stack):
    body = requests.get(paid_stack.url + "/api/a2a/facilitator/health", timeout=30).json()
    assert body["reachable"] is True and body["latency_ms"] is not None
    kinds = {(k["x402Version"], k["scheme"], k["network"]) for k in body["supported"]}
    assert (2, "exact", "eip155:8453") in kinds and (1, "exact", "base") in kinds
    store = requests.get(paid_stack.url + "/api/a2a/discovery/storefront", timeout=30).json()
    assert requests.get(store["well_known_x402"], timeout=30).json()["facilitator"] == body["facilitator"]
    assert body["facilitator"] + "/verify" in store["validate_hint"]


def test_the_self_hosted_facilitator_refuses_to_settle_for_strangers(paid_stack, brief, settings):
    """Its gas key pays only for payments to this service's treasury in its USDC."""
    settings.FACILITATOR_SHARED_SECRET = "s3cret-for-the-service-only"
    required = challenge(paid_stack.url + BRIEF)
    stranger = dev_account(6).address
    header = signed_header(required, pay_to=stranger)
    payload = json.loads(base64.b64decode(header))
    requirements = payload["accepted"]
    before = balances(paid_stack)
    for op in ("verify", "settle"):
        resp = requests.post(
            f"{paid_stack.url}/api/a2a/facilitator/{op}",
            timeout=30,
            headers={"Authorization": "Bearer s3cret-for-the-service-only"},
            json={"x402Version": 2, "paymentPayload": payload, "paymentRequirements": requirements},
        )
        body = resp.json()
        assert resp.status_code == 200 and (body.get("isValid") is False or body.get("success") is False)
        assert "recipient_mismatch" in (body.get("invalidReason") or body.get("errorReason"))
    assert balances(paid_stack) == before
