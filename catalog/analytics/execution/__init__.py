"""Execution maths over the ingested books (catalog.models.ExchangeMarket tops, OrderBook depth)
and funding readings, one module per computation: venue fees (fees.py), the books and walking
one for a notional (books.py), cross-venue gaps net of both taker fees and the executable size
of a gap (gaps.py), best execution split across venues (routing.py), annualized funding
(funding.py), atomic TWAP slices (slicing.py) and correlated-pair z-scores (pairs.py).

Conventions: prices in the quote currency, sizes in the base asset, notionals in the quote
currency (USDT/USDC/USD taken at par), basis points of the price paid (for a gap: of the buy
price, so a gap is the return on the capital spent). Costs are positive when they cost."""
