"""Registration proves wallet ownership (finding 1): nobody can take a wallet's deposits by
naming it first, a challenge is checked by its exact nonce and cannot be pushed out, challenge
issuing is rate-limited per wallet, and contract wallets prove with EIP-1271 on a real chain."""

from __future__ import annotations

import pytest
from eth_account import Account as EthAccount

from billing.chain.localchain import artifact, dev_account
from billing.credits import api_key_issue, deposit_settle, ledger_audit
from billing.models import Account, Deposit, LedgerEntry, OwnershipChallenge
from tests.support.wallets import register_over_http, sign

pytestmark = pytest.mark.django_db
REGISTER = "/api/a2a/account/register"
MESSAGE = "/api/a2a/account/register/message"


def deposit_from(wallet: str, amount_atomic: int, n: int = 0) -> Deposit:
    """A confirmed transfer from `wallet` to the treasury, as the watcher records it."""
    return Deposit.objects.create(
        tx_hash="0x" + f"{n:064x}",
        log_index=n,
        tx_log_index=0,
        block_number=100 + n,
        block_hash="0x" + "aa" * 32,
        from_address=wallet.lower(),
        amount_atomic=amount_atomic,
        state=Deposit.State.PENDING,
    )


def challenge(api, wallet: str) -> dict:
    resp = api.get(MESSAGE, {"wallet_address": wallet})
    assert resp.status_code == 200, resp.json()
    return resp.json()


def prove(api, wallet, ch: dict, *, signer=None, address: str | None = None):
    return api.post(
        REGISTER,
        {
            "wallet_address": address or wallet.address,
            "nonce": ch["nonce"],
            "signature": sign(signer or wallet, ch["message"]),
        },
        format="json",
    )


def test_naming_someone_elses_wallet_gets_no_account_and_none_of_its_deposits(api, chain, settings):
    settings.CHAIN_RPC_URL = chain.url
    victim, attacker = EthAccount.create(), EthAccount.create()
    early = deposit_from(victim.address, 2_000_000)
    assert deposit_settle(deposit_id=early.id).state == Deposit.State.UNMATCHED
    # The attack of the review: register the victim's (public) payer address first.
    squat = api.post(REGISTER, {"wallet_address": victim.address}, format="json")
    assert squat.status_code == 401 and squat.json()["code"] == "ownership_proof_required"
    # Signing the victim's challenge with the attacker's own key proves nothing.
    forged = prove(api, victim, challenge(api, victim.address), signer=attacker)
    assert forged.status_code == 401 and forged.json()["code"] == "ownership_not_proven"
    # Nor does the attacker's own valid proof, sent for the victim's wallet.
    own = challenge(api, attacker.address)
    swapped = prove(api, attacker, own, address=victim.address)
    assert swapped.status_code == 401
    assert not Account.objects.exists() and not LedgerEntry.objects.exists()
    early.refresh_from_db()
    assert early.state == Deposit.State.UNMATCHED and early.account_id is None
    # The owner proves and gets the deposit that waited.
    reg = register_over_http(api, victim)
    assert reg.status_code == 201 and reg.json()["credit_balance_usdc"] == 2.0
    early.refresh_from_db()
    assert early.state == Deposit.State.CREDITED and early.account.wallet_address == victim.address.lower()
    assert ledger_audit() == []


def test_an_account_registered_without_proof_gets_no_deposits_until_its_wallet_signs(api):
    """Accounts made before proofs were required (the migration leaves them unverified): the
    squatter keeps a working key, but deposits wait for the owner's signature."""
    owner = EthAccount.create()
    squatter_account = Account.objects.create(wallet_address=owner.address.lower())
    squatter_key = api_key_issue(account=squatter_account)
    before = deposit_from(owner.address, 1_000_000, n=1)
    after = deposit_from(owner.address, 5_000_000, n=2)  # arrives later: waits too
    assert deposit_settle(deposit_id=before.id).state == Deposit.State.UNMATCHED
    assert deposit_settle(deposit_id=after.id).state == Deposit.State.UNMATCHED
    shown = api.get("/api/a2a/account", HTTP_X_API_KEY=squatter_key).json()
    assert shown["credit_balance_usdc"] == 0 and shown["ownership_verified"] is False
    assert {d["state"] for d in shown["deposits"]} == {"unmatched"}
    rotated = register_over_http(api, owner)
    assert rotated.status_code == 200 and rotated.json()["rotated"] is True
    assert api.get("/api/a2a/account", HTTP_X_API_KEY=squatter_key).status_code == 401
    account = Account.objects.get()
    assert account.ownership_verified and account.credit_balance_atomic == 1_000_000 + 5_500_000
    assert Deposit.objects.filter(state=Deposit.State.CREDITED, account=account).count() == 2
    assert ledger_audit() == []


def test_a_challenge_cannot_be_pushed_out_and_issuing_is_rate_limited(api, settings):
    settings.OWNERSHIP_CHALLENGES_PER_WALLET = 5
    owner = EthAccount.create()
    mine = challenge(api, owner.address)
    # A third party asks for challenges for the same wallet until it is refused.
    for _ in range(4):
        challenge(api, owner.address)
    refused = api.get(MESSAGE, {"wallet_address": owner.address})
    assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"
    assert 1 <= int(refused["Retry-After"]) <= settings.OWNERSHIP_CHALLENGE_WINDOW_SECONDS
    assert refused.json()["retry_after"] == int(refused["Retry-After"])
    unsigned = api.post(REGISTER, {"wallet_address": owner.address}, format="json")
    assert unsigned.status_code == 429 and unsigned["Retry-After"]
    assert OwnershipChallenge.objects.filter(wallet_address=owner.address.lower()).count() == 5
    # The first challenge still proves: it is checked by its nonce, not among the latest few.
    resp = prove(api, owner, mine)
    assert resp.status_code == 201
    other = EthAccount.create()  # the limit is per wallet
    assert api.get(MESSAGE, {"wallet_address": other.address}).status_code == 200


def test_a_strangers_challenges_never_lock_the_owner_out(api, settings):
    """Finding 6 of the second review: five unauthenticated challenge requests for someone
    else's wallet gave its owner 429 for ten minutes, renewable forever. Limits are now per
    requester (for one wallet and over all wallets): the stranger is limited, the owner is not."""
    settings.OWNERSHIP_CHALLENGES_PER_WALLET = 5
    settings.OWNERSHIP_CHALLENGES_PER_REQUESTER = 8
    owner = EthAccount.create()
    stranger, owner_ip = {"REMOTE_ADDR": "198.51.100.7"}, {"REMOTE_ADDR": "203.0.113.9"}
    for _ in range(5):
        assert api.get(MESSAGE, {"wallet_address": owner.address}, **stranger).status_code == 200
    # The attack goes on (it used to renew the owner's lockout): the stranger alone is refused.
    for _ in range(3):
        refused = api.get(MESSAGE, {"wallet_address": owner.address}, **stranger)
        assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert api.post(REGISTER, {"wallet_address": owner.address}, format="json", **stranger).status_code == 429
    # The owner, from their own address, gets a challenge (both ways) and proves it.
    first = api.get(MESSAGE, {"wallet_address": owner.address}, **owner_ip)
    assert first.status_code == 200
    challenge_401 = api.post(REGISTER, {"wallet_address": owner.address}, format="json", **owner_ip)
    assert challenge_401.status_code == 401 and challenge_401.json()["code"] == "ownership_proof_required"
    proved = api.post(
        REGISTER,
        {
            "wallet_address": owner.address,
            "nonce": challenge_401.json()["nonce"],
            "signature": sign(owner, challenge_401.json()["message"]),
        },
        format="json",
        **owner_ip,
    )
    assert proved.status_code == 201 and proved.json()["api_key"]
    assert Account.objects.get(wallet_address=owner.address.lower()).ownership_verified
    # The stranger's requests for other wallets count too: 8 in all per window, then 429 for any.
    for _ in range(3):
        assert api.get(MESSAGE, {"wallet_address": EthAccount.create().address}, **stranger).status_code == 200
    over = api.get(MESSAGE, {"wallet_address": EthAccount.create().address}, **stranger)
    assert over.status_code == 429 and over.json()["code"] == "rate_limited"
    rows = OwnershipChallenge.objects.filter(wallet_address=owner.address.lower())
    assert rows.count() == 7 and rows.values("requester").distinct().count() == 2
    # The owner's first challenge, still unused, proves within its validity whatever happened
    # since (here: a rotation with it, after the account exists).
    again = prove(api, owner, first.json())
    assert again.status_code == 200 and again.json()["rotated"] is True


def test_an_ipv6_requester_is_its_64_and_an_issued_challenge_proves_after_its_requester_is_limited(
    api, settings
):
    settings.OWNERSHIP_CHALLENGES_PER_WALLET = 3
    owner = EthAccount.create()
    issued = api.get(MESSAGE, {"wallet_address": owner.address}, REMOTE_ADDR="2001:db8:5:7::1").json()
    # Addresses of the same /64 are one requester: rotating them buys no more challenges.
    for n in (2, 3):
        ok = api.get(MESSAGE, {"wallet_address": owner.address}, REMOTE_ADDR=f"2001:db8:5:7::{n}")
        assert ok.status_code == 200
    limited = api.get(MESSAGE, {"wallet_address": owner.address}, REMOTE_ADDR="2001:db8:5:7:ffff::9")
    assert limited.status_code == 429
    # Another /64 is another requester.
    assert api.get(MESSAGE, {"wallet_address": owner.address}, REMOTE_ADDR="2001:db8:5:8::1").status_code == 200
    # The first challenge proves though its requester is refused new ones.
    assert prove(api, owner, issued).status_code == 201


def test_a_nonce_proves_once_for_its_own_wallet_and_not_after_it_expires(api):
    from datetime import timedelta

    from django.utils import timezone

    a, b = EthAccount.create(), EthAccount.create()
    ch_a = challenge(api, a.address)
    # b signs a's message... for b's address: the nonce belongs to a.
    assert prove(api, b, ch_a).status_code == 401
    stale = challenge(api, b.address)
    OwnershipChallenge.objects.filter(nonce=stale["nonce"]).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert prove(api, b, stale).status_code == 401
    assert prove(api, b, {"nonce": "0" * 32, "message": stale["message"]}).status_code == 401
    nonce_missing = api.post(
        REGISTER, {"wallet_address": b.address, "signature": sign(b, stale["message"])}, format="json"
    )
    assert nonce_missing.status_code == 422 and nonce_missing.json()["detail"][0]["loc"] == ["body", "nonce"]
    bad = api.post(REGISTER, {"wallet_address": b.address, "nonce": "zz", "signature": "0x12"}, format="json")
    assert bad.status_code == 422 and {e["loc"][1] for e in bad.json()["detail"]} == {"nonce", "signature"}
    assert not Account.objects.exists()


def test_an_unreachable_chain_is_a_503_not_a_pass_for_a_foreign_signature(api, settings):
    settings.CHAIN_RPC_URL = "http://127.0.0.1:9"
    wallet = EthAccount.create()
    resp = prove(api, wallet, challenge(api, wallet.address), signer=EthAccount.create())
    assert resp.status_code == 503 and resp.json()["code"] == "ownership_check_unavailable"
    assert not Account.objects.exists()


def test_a_contract_wallet_registers_with_an_eip1271_signature_on_anvil(api, chain, settings):
    settings.CHAIN_RPC_URL = chain.url
    snapshot = chain.w3.provider.make_request("evm_snapshot", [])["result"]
    try:
        owner, stranger = dev_account(5), EthAccount.create()
        spec = artifact("Erc1271TestWallet")
        factory = chain.w3.eth.contract(abi=spec["abi"], bytecode=spec["bytecode"])
        tx = factory.constructor(owner.address).transact({"from": dev_account(0).address})
        wallet_address = chain.w3.eth.wait_for_transaction_receipt(tx)["contractAddress"]
        assert chain.w3.eth.get_code(wallet_address)
        refused = prove(api, owner, challenge(api, wallet_address), signer=stranger, address=wallet_address)
        assert refused.status_code == 401 and not Account.objects.exists()
        early = deposit_from(wallet_address, 3_000_000, n=7)
        deposit_settle(deposit_id=early.id)
        ok = prove(api, owner, challenge(api, wallet_address), address=wallet_address)
        assert ok.status_code == 201, ok.json()
        account = Account.objects.get(wallet_address=wallet_address.lower())
        assert account.ownership_verified and account.credit_balance_atomic == 3_000_000
        assert ledger_audit() == []
    finally:
        chain.w3.provider.make_request("evm_revert", [snapshot])


@pytest.mark.django_db(transaction=True)
def test_the_demo_agent_registers_and_rotates_its_key_with_a_proof(live_server, capsys):
    from a2a_service.scripts.demos.credits import register

    wallet = EthAccount.create()
    first = register(live_server.url, wallet)
    second = register(live_server.url, wallet)  # the same proof on an existing account rotates
    assert first != second and "rotated" in capsys.readouterr().out
    account = Account.objects.get(wallet_address=wallet.address.lower())
    assert account.ownership_verified and account.api_keys.filter(revoked_at__isnull=True).count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_deposit_settled_while_its_wallet_proves_ownership_is_credited_exactly_once(monkeypatch):
    """The watcher settles a deposit at the moment its wallet registers: whichever commits
    first, the deposit ends credited once (never left unmatched, never twice). The watcher's
    decision "unmatched" is slowed down so the registration runs inside that window."""
    import threading
    import time

    from django.db import connections

    from billing.credits import account_register, ownership_challenge_issue
    from catalog.services import catalog_seed

    catalog_seed()
    real_save = Deposit.save

    def slow_unmatched_save(self, *args, **kwargs):
        if self.state == Deposit.State.UNMATCHED:
            time.sleep(0.3)  # the watcher decided "no verified account" and has not committed yet
        return real_save(self, *args, **kwargs)

    monkeypatch.setattr(Deposit, "save", slow_unmatched_save)

    def race(n: int) -> None:
        wallet = EthAccount.create()
        deposit = deposit_from(wallet.address, 1_000_000, n=100 + n)
        ch = ownership_challenge_issue(wallet_address=wallet.address)
        barrier = threading.Barrier(2)
        errors: list[BaseException] = []

        def run(work, delay: float) -> None:
            try:
                barrier.wait()
                time.sleep(delay)
                work()
            except BaseException as exc:  # surfaced below
                errors.append(exc)
            finally:
                connections.close_all()

        threads = [
            threading.Thread(target=run, args=(lambda: deposit_settle(deposit_id=deposit.id), 0.0)),
            threading.Thread(
                target=run,
                args=(
                    lambda: account_register(
                        wallet_address=wallet.address, nonce=ch.nonce, signature=sign(wallet, ch.message)
                    ),
                    0.1,
                ),
            ),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        deposit.refresh_from_db()
        assert deposit.state == Deposit.State.CREDITED, n
        assert Account.objects.get(wallet_address=wallet.address.lower()).credit_balance_atomic == 1_000_000

    for n in range(3):
        race(n)
    assert LedgerEntry.objects.filter(kind="deposit").count() == 3 and ledger_audit() == []


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_challenges_keep_each_requesters_limit_and_no_one_elses(settings):
    """Twelve concurrent requests from one requester for twelve wallets get exactly its limit;
    twelve requesters asking at once for one wallet all get theirs."""
    import threading

    from django.db import connections

    from billing.credits import ChallengeRateLimited, ownership_challenge_issue

    settings.OWNERSHIP_CHALLENGES_PER_REQUESTER = 5
    settings.OWNERSHIP_CHALLENGES_PER_WALLET = 1

    def run_all(calls) -> tuple[int, int, list[BaseException]]:
        barrier = threading.Barrier(len(calls))
        issued, refused, errors = [], [], []

        def run(call) -> None:
            try:
                barrier.wait()
                issued.append(call())
            except ChallengeRateLimited:
                refused.append(1)
            except BaseException as exc:  # surfaced below
                errors.append(exc)
            finally:
                connections.close_all()

        threads = [threading.Thread(target=run, args=(c,)) for c in calls]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return len(issued), len(refused), errors

    wallets = [EthAccount.create().address for _ in range(12)]
    issued, refused, errors = run_all(
        [lambda w=w: ownership_challenge_issue(wallet_address=w, requester="one-requester") for w in wallets]
    )
    assert errors == [] and (issued, refused) == (5, 7)
    assert OwnershipChallenge.objects.filter(requester="one-requester").count() == 5
    victim = EthAccount.create().address
    issued, refused, errors = run_all(
        [lambda n=n: ownership_challenge_issue(wallet_address=victim, requester=f"r{n}") for n in range(12)]
    )
    assert errors == [] and (issued, refused) == (12, 0)


def test_expired_challenges_are_pruned_after_their_retention(settings):
    from datetime import timedelta

    from django.utils import timezone

    from billing.credits import ownership_challenge_issue
    from catalog.feeds.retention import feeds_prune

    settings.OWNERSHIP_CHALLENGE_RETENTION_DAYS = 2
    old = ownership_challenge_issue(wallet_address=EthAccount.create().address, requester="a")
    fresh = ownership_challenge_issue(wallet_address=EthAccount.create().address, requester="b")
    OwnershipChallenge.objects.filter(pk=old.pk).update(expires_at=timezone.now() - timedelta(days=3))
    assert feeds_prune()["billing.OwnershipChallenge"] == 1
    assert list(OwnershipChallenge.objects.values_list("pk", flat=True)) == [fresh.pk]
