"""bybit's answers (v5 REST, in its {retCode, retMsg, result} envelope)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

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


def bybit_envelope(result: dict[str, Any]) -> dict[str, Any]:
    return {"retCode": 0, "retMsg": "OK", "result": result, "retExtInfo": {}, "time": NOW_MS}


def bybit() -> None:
    v = "bybit"
    books = {b: Book(v, b) for b in SPOT[v]}
    spot = []
    for b, book in books.items():
        tick = fmt(Decimal(1).scaleb(-book.places), book.places)
        spot.append(
            {
                "symbol": f"{b}USDT",
                "baseCoin": b,
                "quoteCoin": "USDT",
                "innovation": "0",
                "status": "Trading",
                "marginTrading": "utaOnly",
                "stTag": "0",
                "lotSizeFilter": {
                    "basePrecision": "0.000001",
                    "quotePrecision": "0.00000001",
                    "minOrderQty": "0.000048",
                    "maxOrderQty": "71.73956243",
                    "minOrderAmt": "1",
                    "maxOrderAmt": "2000000",
                },
                "priceFilter": {"tickSize": tick},
                "riskParameters": {"priceLimitRatioX": "0.01", "priceLimitRatioY": "0.02"},
            }
        )
    write(
        v,
        "v5/market/instruments-info/category=spot",
        bybit_envelope({"category": "spot", "list": spot, "nextPageCursor": ""}),
    )
    linear = []
    for b in PERPS[v]:
        book = books[b]
        tick = fmt(Decimal(1).scaleb(-book.places), book.places)
        linear.append(
            {
                "symbol": f"{b}USDT",
                "contractType": "LinearPerpetual",
                "status": "Trading",
                "baseCoin": b,
                "quoteCoin": "USDT",
                "launchTime": "1585526400000",
                "deliveryTime": "0",
                "deliveryFeeRate": "",
                "priceScale": str(book.places),
                "leverageFilter": {"minLeverage": "1", "maxLeverage": "100.00", "leverageStep": "0.01"},
                "priceFilter": {"minPrice": tick, "maxPrice": "1999999.80", "tickSize": tick},
                "lotSizeFilter": {
                    "maxOrderQty": "1190.000",
                    "minOrderQty": "0.001",
                    "qtyStep": "0.001",
                    "postOnlyMaxOrderQty": "1190.000",
                    "maxMktOrderQty": "119.000",
                    "minNotionalValue": "5",
                },
                "unifiedMarginTrade": True,
                "fundingInterval": 480,
                "settleCoin": "USDT",
                "copyTrading": "both",
                "upperFundingRate": "0.00375",
                "lowerFundingRate": "-0.00375",
                "isPreListing": False,
                "preListingInfo": None,
            }
        )
    write(
        v,
        "v5/market/instruments-info/category=linear",
        bybit_envelope({"category": "linear", "list": linear, "nextPageCursor": ""}),
    )
    # ccxt also asks for the pre-launch perpetuals (none listed here).
    write(
        v,
        "v5/market/instruments-info/category=linear,status=PreLaunch",
        bybit_envelope({"category": "linear", "list": [], "nextPageCursor": ""}),
    )
    tickers = []
    for b, book in books.items():
        p = book.places
        tickers.append(
            {
                "symbol": f"{b}USDT",
                "bid1Price": fmt(book.bid, p),
                "bid1Size": f"{book.bid_size}",
                "ask1Price": fmt(book.ask, p),
                "ask1Size": f"{book.ask_size}",
                "lastPrice": fmt(book.last, p),
                "prevPrice24h": fmt(book.open, p),
                "price24hPcnt": f"{(book.last - book.open) / book.open:.4f}",
                "highPrice24h": fmt(book.high, p),
                "lowPrice24h": fmt(book.low, p),
                "turnover24h": f"{book.quote_volume}",
                "volume24h": f"{book.volume}",
                "usdIndexPrice": fmt(book.last, p),
            }
        )
    write(v, "v5/market/tickers/category=spot", bybit_envelope({"category": "spot", "list": tickers}))
    perps = []
    for b in PERPS[v]:
        book = books[b]
        p = book.places
        perps.append(
            {
                "symbol": f"{b}USDT",
                "lastPrice": fmt(book.last, p),
                "indexPrice": fmt(book.last, p),
                "markPrice": fmt(book.last, p),
                "prevPrice24h": fmt(book.open, p),
                "price24hPcnt": f"{(book.last - book.open) / book.open:.4f}",
                "highPrice24h": fmt(book.high, p),
                "lowPrice24h": fmt(book.low, p),
                "prevPrice1h": fmt(book.last, p),
                "openInterest": f"{book.volume / 10:.3f}",
                "openInterestValue": f"{book.quote_volume / 10:.2f}",
                "turnover24h": f"{book.quote_volume}",
                "volume24h": f"{book.volume}",
                "fundingRate": FUNDING[v],
                "nextFundingTime": str(NOW_MS + 4 * HOUR),
                "predictedDeliveryPrice": "",
                "basisRate": "",
                "deliveryFeeRate": "",
                "deliveryTime": "0",
                "ask1Size": f"{book.ask_size}",
                "bid1Price": fmt(book.bid, p),
                "ask1Price": fmt(book.ask, p),
                "bid1Size": f"{book.bid_size}",
                "basis": "",
                "fundingIntervalHour": "8",
                "fundingCap": "0.00375",
            }
        )
    write(v, "v5/market/tickers/category=linear", bybit_envelope({"category": "linear", "list": perps}))
    for b, book in books.items():
        for interval, step, count in (("1", MINUTE, CANDLES["1m"]), ("60", HOUR, CANDLES["1h"])):
            rows = [
                [str(t), o, h, lo, c, vol, f"{Decimal(vol) * Decimal(c):.4f}"]
                for t, o, h, lo, c, vol in book.candles(step, count)
            ]
            rows.reverse()  # bybit answers newest first
            write(
                v,
                f"v5/market/kline/category=spot,interval={interval},symbol={b}USDT",
                bybit_envelope({"symbol": f"{b}USDT", "category": "spot", "list": rows}),
            )
