"""Execution desks, one module per product family: the spread radar (spreads.py), pair arbitrage
(arbitrage.py), DCA routing (dca.py), the funding hedge (funding.py), the intent solver and the
tokenized auto-route (routing.py), the DeFi yield scout (yields.py) and the execution previews
(previews.py: TWAP and the market-making hint), computed from the ingested books, funding rates
and pools; what they share is in common.py.

Every figure comes from the exchanges feed's rows (ExchangeMarket book tops, OrderBook depth,
FundingRate, 1m/1h Candle) or DefiLlama's pools (YieldPool), with the maths in
catalog/analytics/execution/; fees are the venues' public taker/maker rates (ccxt's static
description, or EXCHANGE_TAKER_FEES / EXCHANGE_MAKER_FEES). A product with no fresh input
answers 503 and charges nothing."""

from __future__ import annotations

# In the catalog's order: the specs register as the modules are imported (a listing keeps that
# order among equal ranks).
# isort: off
from . import spreads, arbitrage, dca, funding, routing, yields, previews  # noqa: F401
# isort: on
