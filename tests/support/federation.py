"""Federation: partner signal documents, and a partner's fresh signals with our own prices for them."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from django.utils import timezone

from catalog.models import PartnerAgent, PartnerSignal
from tests.support.marketdata import market_write


def doc(*signals: dict) -> dict:
    return {"signals": list(signals)}


def sig(ident: str, symbol: str = "BTC/USDT", side: str = "long", entry: float = 100.0, **extra) -> dict:
    return {
        "id": ident,
        "symbol": symbol,
        "side": side,
        "entry": entry,
        "published_at": timezone.now().isoformat(),
        **extra,
    }


def federation_data(*, prices: bool = True) -> None:
    """A partner's fresh signals and our own prices for them (the product-outputs shop uses it
    without prices: other products' data write those)."""
    alpha = PartnerAgent.objects.create(
        slug="alpha",
        name="Alpha desk",
        description="d",
        url="https://alpha.example/",
        signals_url="https://alpha.example/s",
    )
    now = timezone.now()
    common = {"source": "federation", "observed_at": now}
    PartnerSignal.objects.create(
        partner=alpha,
        external_id="a1",
        symbol="BTC/USDT",
        side="long",
        entry_price=Decimal("100"),
        stop_price=Decimal("95"),
        target_price=Decimal("110"),
        published_at=now - timedelta(hours=1),
        **common,
    )
    PartnerSignal.objects.create(
        partner=alpha,
        external_id="a2",
        symbol="ETH/USDT",
        side="short",
        entry_price=Decimal("50"),
        stop_price=Decimal("52"),
        target_price=Decimal("45"),
        published_at=now - timedelta(hours=2),
        **common,
    )
    PartnerSignal.objects.create(  # too old to resell
        partner=alpha,
        external_id="old",
        symbol="BTC/USDT",
        side="long",
        entry_price=Decimal("90"),
        published_at=now - timedelta(hours=30),
        **common,
    )
    if not prices:
        return
    market_write(exchange="binance", symbol="BTC/USDT", bid=101.9, ask=102.1)
    market_write(exchange="okx", symbol="BTC/USDT", bid=103.9, ask=104.1)
    market_write(exchange="binance", symbol="ETH/USDT", bid=52.4, ask=52.6)
