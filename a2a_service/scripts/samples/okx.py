"""okx's answers (v5 REST, in its {code, msg, data} envelope)."""

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


def okx_envelope(data: list[Any]) -> dict[str, Any]:
    return {"code": "0", "msg": "", "data": data}


def okx() -> None:
    v = "okx"
    books = {b: Book(v, b) for b in SPOT[v]}
    blank = {
        "alias": "",
        "ctMult": "",
        "ctType": "",
        "ctVal": "",
        "ctValCcy": "",
        "expTime": "",
        "instFamily": "",
        "optType": "",
        "settleCcy": "",
        "stk": "",
        "uly": "",
        "ruleType": "normal",
    }
    spot = []
    for b, book in books.items():
        tick = fmt(Decimal(1).scaleb(-book.places), book.places)
        spot.append(
            {
                **blank,
                "baseCcy": b,
                "quoteCcy": "USDT",
                "category": "1",
                "instId": f"{b}-USDT",
                "instType": "SPOT",
                "lever": "10",
                "listTime": "1606468572000",
                "lotSz": "0.00000001",
                "maxIcebergSz": "9999999999.0000000000000000",
                "maxLmtAmt": "20000000",
                "maxLmtSz": "9999999999",
                "maxMktAmt": "1000000",
                "maxMktSz": "1000000",
                "maxStopSz": "1000000",
                "maxTriggerSz": "9999999999.0000000000000000",
                "maxTwapSz": "9999999999.0000000000000000",
                "minSz": "0.00001",
                "state": "live",
                "tickSz": tick,
            }
        )
    write(v, "api/v5/public/instruments/instType=SPOT", okx_envelope(spot))
    swaps = []
    for b in PERPS[v]:
        book = books[b]
        tick = fmt(Decimal(1).scaleb(-book.places), book.places)
        swaps.append(
            {
                **blank,
                "baseCcy": "",
                "quoteCcy": "",
                "category": "1",
                "ctMult": "1",
                "ctType": "linear",
                "ctVal": "0.01" if b in ("BTC", "ETH") else "1",
                "ctValCcy": b,
                "instFamily": f"{b}-USDT",
                "instId": f"{b}-USDT-SWAP",
                "instType": "SWAP",
                "lever": "100",
                "listTime": "1573557408000",
                "lotSz": "0.01",
                "maxIcebergSz": "100000000.0000000000000000",
                "maxLmtAmt": "20000000",
                "maxLmtSz": "100000000",
                "maxMktAmt": "",
                "maxMktSz": "12000",
                "maxStopSz": "12000",
                "maxTriggerSz": "100000000.0000000000000000",
                "maxTwapSz": "100000000.0000000000000000",
                "minSz": "0.01",
                "settleCcy": "USDT",
                "state": "live",
                "tickSz": tick,
                "uly": f"{b}-USDT",
            }
        )
    write(v, "api/v5/public/instruments/instType=SWAP", okx_envelope(swaps))
    tickers = []
    for b, book in books.items():
        p = book.places
        tickers.append(
            {
                "instType": "SPOT",
                "instId": f"{b}-USDT",
                "last": fmt(book.last, p),
                "lastSz": "0.0182",
                "askPx": fmt(book.ask, p),
                "askSz": f"{book.ask_size}",
                "bidPx": fmt(book.bid, p),
                "bidSz": f"{book.bid_size}",
                "open24h": fmt(book.open, p),
                "high24h": fmt(book.high, p),
                "low24h": fmt(book.low, p),
                "volCcy24h": f"{book.quote_volume}",
                "vol24h": f"{book.volume}",
                "ts": str(NOW_MS),
                "sodUtc0": fmt(book.open, p),
                "sodUtc8": fmt(book.open, p),
            }
        )
    write(v, "api/v5/market/tickers/instType=SPOT", okx_envelope(tickers))
    for b, book in books.items():
        for tf, step, count in (("1m", MINUTE, CANDLES["1m"]), ("1H", HOUR, CANDLES["1h"])):
            rows = [
                [
                    str(t),
                    o,
                    h,
                    lo,
                    c,
                    vol,
                    f"{Decimal(vol) * Decimal(c):.4f}",
                    f"{Decimal(vol) * Decimal(c):.4f}",
                    "0" if i == count - 1 else "1",
                ]
                for i, (t, o, h, lo, c, vol) in enumerate(book.candles(step, count))
            ]
            rows.reverse()  # okx answers newest first
            write(v, f"api/v5/market/candles/bar={tf},instId={b}-USDT", okx_envelope(rows))
    rates = []
    for b in PERPS[v]:
        rates.append(
            {
                "formulaType": "withRate",
                "fundingRate": FUNDING[v],
                "fundingTime": str(NOW_MS + 4 * HOUR),
                "impactValue": "20000",
                "instId": f"{b}-USDT-SWAP",
                "instType": "SWAP",
                "interestRate": "0.0001",
                "maxFundingRate": "0.00375",
                "method": "current_period",
                "minFundingRate": "-0.00375",
                "nextFundingRate": "",
                "nextFundingTime": str(NOW_MS + 12 * HOUR),
                "premium": "0.0000412",
                "settFundingRate": "0.0000951",
                "settState": "settled",
                "ts": str(NOW_MS),
            }
        )
    write(v, "api/v5/public/funding-rate/instId=ANY", okx_envelope(rates))
