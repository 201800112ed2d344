"""The four agent-framework SKILL.md packs teach calls that work: every fenced example of every
pack, fetched from a live server (so with its base URL), runs in a subprocess and succeeds —
free discovery (python and curl), the 402 challenge read, registration with a wallet, credit
calls with a funded key (A2A_API_KEY from a fixture), the framework wiring (with stand-ins for
the frameworks the project does not install, tests/support/pack_stubs/) and, on the local chain, the
x402 payment with the official client (PAYER_PRIVATE_KEY)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from django.utils import timezone
from eth_account import Account as EthAccount

from billing.credits import credit_add
from billing.models import Account, LedgerEntry
from catalog.models import EditorialPiece, Sku
from tests.support import ROOT
from tests.support.marketdata import news_write, sentiment_market_write
from tests.support.wallets import register_wallet

PACKS = ("langchain", "crewai", "openai-agents", "mcp-client")
STUBS = ROOT / "tests" / "support" / "pack_stubs"
FENCE = re.compile(r"^```([A-Za-z0-9_-]*)\n(.*?)^```$", re.S | re.M)


def examples(text: str) -> list[tuple[str, str]]:
    return [(lang, code) for lang, code in FENCE.findall(text)]


def run_example(
    lang: str, code: str, tmp_path: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    script = tmp_path / ("example.py" if lang == "python" else "example.sh")
    script.write_text(code)
    cmd = [sys.executable, str(script)] if lang == "python" else ["bash", "-euo", "pipefail", str(script)]
    # The example's own directory and the stand-ins only: never this project's packages.
    full_env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(STUBS), **env}
    return subprocess.run(cmd, cwd=tmp_path, env=full_env, capture_output=True, text=True, timeout=120)


def shop_data() -> None:
    sentiment_market_write()
    news_write(title="Bitcoin ETF inflows hit a record", tickers=["BTC"])
    EditorialPiece.objects.create(
        kind="morning_brief",
        title="Rates day",
        summary="CPI at 08:30",
        body="The full brief: rates, CPI, FX.",
        published_at=timezone.now(),
    )


def funded_key() -> tuple[str, Account]:
    reg = register_wallet()
    credit_add(
        account_id=reg.account.id, amount_atomic=10_000_000, kind=LedgerEntry.Kind.ADJUSTMENT, reason="test"
    )
    return reg.api_key, reg.account


def pack_text(base: str, pack_id: str) -> str:
    resp = requests.get(f"{base}/api/a2a/discovery/agent-frameworks/{pack_id}", timeout=10)
    assert resp.status_code == 200 and resp.headers["Content-Type"].startswith("text/markdown")
    assert "{base_url}" not in resp.text and base in resp.text
    return resp.text


@pytest.fixture
def shop(live_server, transactional_db):
    from catalog.services import catalog_seed

    catalog_seed()  # on SQLite, a transactional test after another starts from empty tables
    shop_data()
    yield live_server.url
    import a2a_service.core.http

    a2a_service.core.http._session.close()


def test_every_example_of_every_pack_runs_against_the_service(shop, tmp_path):
    blocks: dict[str, tuple[str, str]] = {}  # the packs share their core sections: run each once
    for pack_id in PACKS:
        found = examples(pack_text(shop, pack_id))
        assert {lang for lang, _ in found} <= {"python", "bash"}, (
            f"{pack_id}: every example is python or bash"
        )
        assert len(found) >= 8 and sum("PAYER_PRIVATE_KEY" in code for _, code in found) == 1, pack_id
        for lang, code in found:
            blocks.setdefault(code, (pack_id, lang))
    assert len(blocks) == 7 + len(PACKS)  # the core's seven and one per framework
    key, account = funded_key()
    price = Sku.objects.get(sku="sentiment").price_atomic
    for code, (pack_id, lang) in blocks.items():
        if "PAYER_PRIVATE_KEY" in code:
            continue  # pays on chain: test_x402_example_pays_on_the_local_chain
        before = Account.objects.get(pk=account.pk).credit_balance_atomic
        env = {"A2A_API_KEY": key, "WALLET_PRIVATE_KEY": EthAccount.create().key.hex()}
        done = run_example(lang, code, tmp_path, env)
        assert done.returncode == 0, f"{pack_id} {lang} example failed:\n{code}\n--- stderr:\n{done.stderr}"
        assert done.stdout.strip(), code
        spent = before - Account.objects.get(pk=account.pk).credit_balance_atomic
        if "A2A_API_KEY" not in code:
            assert spent == 0, code  # free calls and the challenge read charge nothing
        elif "news_unlock" in code:
            assert (
                spent
                == LedgerEntry.objects.filter(account=account, sku__sku="news_unlock").get().amount_atomic
                * -1
            )
        else:
            assert spent == price, (code, spent)  # one sentiment call, one debit


def test_examples_print_the_services_numbers(shop, tmp_path):
    """The outputs are the service's own figures, not placeholders."""
    key, _ = funded_key()
    text = pack_text(shop, "langchain")
    read_402 = next(code for lang, code in examples(text) if "PAYMENT-REQUIRED" in code)
    out = run_example("python", read_402, tmp_path, {}).stdout.splitlines()
    price = Sku.objects.get(sku="morning_brief").price_atomic
    assert out[0] == "402" and out[1].startswith(f"{price} atomic USDC to ")
    assert out[2].endswith("/api/a2a/account/register")
    credits = next(code for lang, code in examples(text) if lang == "python" and "X-Credit-Charged" in code)
    out = run_example("python", credits, tmp_path, {"A2A_API_KEY": key}).stdout.splitlines()
    sentiment_price = Sku.objects.get(sku="sentiment").price_atomic / 1e6
    assert out[0] == f"charged {sentiment_price:g} USDC; balance {10 - sentiment_price:g} USDC"


@pytest.mark.slow
def test_x402_example_pays_on_the_local_chain(paid_stack, tmp_path):
    from billing.chain.localchain import DEMO_PAYER, dev_account

    shop_data()
    payer = dev_account(DEMO_PAYER)
    price = Sku.objects.get(sku="morning_brief").price_atomic
    token = paid_stack.chain.token
    paying: dict[str, str] = {}  # the packs share their x402 example (the core's): pay once per text
    for pack_id in PACKS:
        (code,) = [c for lang, c in examples(pack_text(paid_stack.url, pack_id)) if "PAYER_PRIVATE_KEY" in c]
        paying.setdefault(code, pack_id)
    for code, pack_id in paying.items():
        before = token.functions.balanceOf(payer.address).call()
        done = run_example(
            "python", code, tmp_path, {"PAYER_PRIVATE_KEY": "0x" + payer.key.hex().removeprefix("0x")}
        )
        assert done.returncode == 0, f"{pack_id}: {done.stderr}"
        assert done.stdout.startswith("Rates day - settlement: ")
        assert before - token.functions.balanceOf(payer.address).call() == price
