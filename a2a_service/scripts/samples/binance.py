"""binance's answers (spot and USD-M futures REST)."""

from __future__ import annotations

from decimal import Decimal

from a2a_service.scripts.samples.market import (
    FUNDING,
    HOUR,
    MINUTE,
    NOW_MS,
    PERPS,
    SPOT,
    Book,
    fmt,
    write,
)
from a2a_service.scripts.samples.paths import CANDLES


def binance() -> None:
    v = "binance"
    books = {b: Book(v, b) for b in SPOT[v]}
    spot_symbols = []
    for b, book in books.items():
        tick = fmt(Decimal(1).scaleb(-book.places), book.places)
        spot_symbols.append(
            {
                "symbol": f"{b}USDT",
                "status": "TRADING",
                "baseAsset": b,
                "baseAssetPrecision": 8,
                "quoteAsset": "USDT",
                "quotePrecision": 8,
                "quoteAssetPrecision": 8,
                "baseCommissionPrecision": 8,
                "quoteCommissionPrecision": 8,
                "orderTypes": ["LIMIT", "LIMIT_MAKER", "MARKET", "STOP_LOSS_LIMIT", "TAKE_PROFIT_LIMIT"],
                "icebergAllowed": True,
                "ocoAllowed": True,
                "otoAllowed": True,
                "quoteOrderQtyMarketAllowed": True,
                "allowTrailingStop": True,
                "cancelReplaceAllowed": True,
                "isSpotTradingAllowed": True,
                "isMarginTradingAllowed": True,
                "filters": [
                    {
                        "filterType": "PRICE_FILTER",
                        "minPrice": tick,
                        "maxPrice": "1000000.00000000",
                        "tickSize": tick,
                    },
                    {
                        "filterType": "LOT_SIZE",
                        "minQty": "0.00001000",
                        "maxQty": "9000.00000000",
                        "stepSize": "0.00001000",
                    },
                    {
                        "filterType": "NOTIONAL",
                        "minNotional": "5.00000000",
                        "applyMinToMarket": True,
                        "maxNotional": "9000000.00000000",
                        "applyMaxToMarket": False,
                        "avgPriceMins": 5,
                    },
                ],
                "permissions": [],
                "permissionSets": [["SPOT", "MARGIN"]],
                "defaultSelfTradePreventionMode": "EXPIRE_MAKER",
                "allowedSelfTradePreventionModes": ["EXPIRE_TAKER", "EXPIRE_MAKER", "EXPIRE_BOTH"],
            }
        )
    write(
        v,
        "api/v3/exchangeInfo",
        {
            "timezone": "UTC",
            "serverTime": NOW_MS,
            "rateLimits": [],
            "exchangeFilters": [],
            "symbols": spot_symbols,
        },
    )
    perp_symbols = []
    for b in PERPS[v]:
        book = books[b]
        tick = fmt(Decimal(1).scaleb(-book.places), book.places)
        perp_symbols.append(
            {
                "symbol": f"{b}USDT",
                "pair": f"{b}USDT",
                "contractType": "PERPETUAL",
                "deliveryDate": 4133404800000,
                "onboardDate": 1569398400000,
                "status": "TRADING",
                "maintMarginPercent": "2.5000",
                "requiredMarginPercent": "5.0000",
                "baseAsset": b,
                "quoteAsset": "USDT",
                "marginAsset": "USDT",
                "pricePrecision": book.places,
                "quantityPrecision": 3,
                "baseAssetPrecision": 8,
                "quotePrecision": 8,
                "underlyingType": "COIN",
                "underlyingSubType": ["Layer-1"],
                "triggerProtect": "0.0500",
                "liquidationFee": "0.012500",
                "marketTakeBound": "0.05",
                "maxMoveOrderLimit": 10000,
                "filters": [
                    {"filterType": "PRICE_FILTER", "minPrice": tick, "maxPrice": "4529764", "tickSize": tick},
                    {"filterType": "LOT_SIZE", "minQty": "0.001", "maxQty": "1000", "stepSize": "0.001"},
                    {
                        "filterType": "MARKET_LOT_SIZE",
                        "minQty": "0.001",
                        "maxQty": "120",
                        "stepSize": "0.001",
                    },
                    {"filterType": "MAX_NUM_ORDERS", "limit": 200},
                    {"filterType": "MIN_NOTIONAL", "notional": "100"},
                    {
                        "filterType": "PERCENT_PRICE",
                        "multiplierUp": "1.0500",
                        "multiplierDown": "0.9500",
                        "multiplierDecimal": "4",
                    },
                ],
                "orderTypes": [
                    "LIMIT",
                    "MARKET",
                    "STOP",
                    "STOP_MARKET",
                    "TAKE_PROFIT",
                    "TAKE_PROFIT_MARKET",
                    "TRAILING_STOP_MARKET",
                ],
                "timeInForce": ["GTC", "IOC", "FOK", "GTX", "GTD"],
                "permissionSets": ["GRID", "COPY"],
            }
        )
    write(
        v,
        "fapi/v1/exchangeInfo",
        {
            "timezone": "UTC",
            "serverTime": NOW_MS,
            "futuresType": "U_MARGINED",
            "rateLimits": [],
            "exchangeFilters": [],
            "assets": [],
            "symbols": perp_symbols,
        },
    )
    tickers = []
    for b, book in books.items():
        p = book.places
        change = book.last - book.open
        tickers.append(
            {
                "symbol": f"{b}USDT",
                "priceChange": fmt(change, p),
                "priceChangePercent": f"{change / book.open * 100:.3f}",
                "weightedAvgPrice": fmt((book.last + book.open) / 2, p),
                "prevClosePrice": fmt(book.open, p),
                "lastPrice": fmt(book.last, p),
                "lastQty": "0.01200000",
                "bidPrice": fmt(book.bid, p),
                "bidQty": f"{book.bid_size:.8f}",
                "askPrice": fmt(book.ask, p),
                "askQty": f"{book.ask_size:.8f}",
                "openPrice": fmt(book.open, p),
                "highPrice": fmt(book.high, p),
                "lowPrice": fmt(book.low, p),
                "volume": f"{book.volume:.8f}",
                "quoteVolume": f"{book.quote_volume:.8f}",
                "openTime": NOW_MS - 86_400_000,
                "closeTime": NOW_MS - 1,
                "firstId": 4100000000,
                "lastId": 4101234567,
                "count": 1234568,
            }
        )
    write(v, "api/v3/ticker/24hr", tickers)
    for b, book in books.items():
        for tf, step, count in (("1m", MINUTE, CANDLES["1m"]), ("1h", HOUR, CANDLES["1h"])):
            rows = [
                [t, o, h, lo, c, vol, t + step - 1, f"{Decimal(vol) * Decimal(c):.8f}", 1000, "0", "0", "0"]
                for t, o, h, lo, c, vol in book.candles(step, count)
            ]
            write(v, f"api/v3/klines/interval={tf},symbol={b}USDT", rows)
    premium = []
    for b in PERPS[v]:
        book = books[b]
        premium.append(
            {
                "symbol": f"{b}USDT",
                "markPrice": fmt(book.last, book.places),
                "indexPrice": fmt(book.last, book.places),
                "estimatedSettlePrice": fmt(book.last, book.places),
                "lastFundingRate": FUNDING[v],
                "interestRate": "0.00010000",
                "nextFundingTime": NOW_MS + 4 * HOUR,
                "time": NOW_MS,
            }
        )
    write(v, "fapi/v1/premiumIndex", premium)
