"""Equity tickers named in news text without a `$` or an exchange prefix ("NVDA jumps",
"AAPL falls as ..."), read at ingestion by catalog/feeds/news/parse.py (pure: no database; the
feed pass passes the tickers its stored rows price as `known`).

A bare word is a ticker only when it is one the service knows, in capitals, a word of its own:
- known: the equities it quotes (EQUITY_SYMBOLS), the tokenized watchlist's underlyings
  (TOKENIZED_WATCHLIST), the rows' own (`known`: quoted symbols, tokens' underlyings set in the
  admin), and MAINTAINED, widely traded US tickers that are no English word;
- never: ORDINARY, capitalised words and abbreviations of ordinary prose that are also
  tickers or look like them ("A", "ALL", "IT", "ON", "NOW", "US", "CEO", "AI"...), even when an
  operator lists one of them as a symbol (Allstate is ALL: "$ALL" or "(NYSE: ALL)" still names it);
- never in shouted text: in an all-caps stretch every word is in capitals, so "COIN" or "SPY"
  there is a word, not Coinbase or the S&P 500 ETF (a lower-case letter must stand nearby);
- word boundaries: not inside a longer word or symbol (NVDAX), a URL or a cashtag.
Company names count where they name one company only (COMPANY_NAMES, case-sensitive)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from django.conf import settings

# Widely traded US equities and ETFs, by ticker, chosen so that none is an English word.
MAINTAINED: frozenset[str] = frozenset(
    """
    AAPL MSFT NVDA TSLA AMZN GOOGL GOOG META NFLX AMD INTC AVGO ORCL CRM ADBE PYPL HOOD PLTR
    UBER JPM WFC BAC WMT NKE XOM CVX JNJ PFE MRK LLY UNH SBUX MCD IBM CSCO QCOM TSM ASML BABA
    SMCI DELL GME AMC RIVN LCID COIN MSTR SPY QQQ IWM GLD SLV TLT IBIT GBTC FBTC ETHA MARA
    RIOT CLSK BITO ARKK CRCL
    """.split()
)

# Capitalised words and abbreviations of ordinary prose: never a bare ticker.
ORDINARY: frozenset[str] = frozenset(
    """
    A I IT ALL ON NOW US USA UK EU UN AI AN AT BE BY GO SO OR IS NO OK ONE OUT NEW BIG KEY CAN ANY
    CAR CAT HAS HE REAL SEE FAST LOVE PLAY TRUE FUN GOOD BEST EAT LOW HIGH OPEN FREE WELL DAY
    ELSE SHOP COST SNOW ARM DOW GM MS BA KO MU PEP V T F C K X MA
    CEO CFO CTO COO EV EVS ETF ETFS IPO SEC FED GDP CPI PPI PCE FOMC EPS AM PM ET UTC GMT USD
    EUR NYSE NASDAQ LLC INC CORP CO FY YOY QOQ ATH NFT API IRS DOJ FBI FDA FTC ESG IMF ECB BOJ
    OPEC OTC TV PC HR PR IR VC Q1 Q2 Q3 Q4 H1 H2
    """.split()
)

# Company names that name one listed company only (matched case-sensitively, whole words).
# "Apple" and "Amazon" are left to their longer forms: the fruit and the river are news too.
COMPANY_NAMES: dict[str, tuple[str, ...]] = {
    "NVDA": ("Nvidia", "NVIDIA"),
    "AAPL": ("Apple Inc",),
    "MSFT": ("Microsoft",),
    "TSLA": ("Tesla",),
    "AMZN": ("Amazon.com", "Amazon Web Services"),
    "GOOGL": ("Alphabet", "Google"),
    "META": ("Meta Platforms",),
    "NFLX": ("Netflix",),
    "AVGO": ("Broadcom",),
    "PLTR": ("Palantir",),
    "COIN": ("Coinbase",),
    "MSTR": ("MicroStrategy",),
    "HOOD": ("Robinhood",),
    "WMT": ("Walmart",),
    "JPM": ("JPMorgan",),
    "PYPL": ("PayPal",),
    "CRM": ("Salesforce",),
    "QCOM": ("Qualcomm",),
    "TSM": ("TSMC",),
    "BABA": ("Alibaba",),
    "SMCI": ("Super Micro Computer", "Supermicro"),
    "GME": ("GameStop",),
}

# A stretch of text around a bare ticker without any lower-case letter is shouted text.
_NEARBY = 40
_SYMBOL_RE = re.compile(r"^[A-Z][A-Z0-9]{1,5}$")
_NAME_RE = re.compile(
    r"(?<![\w.])("
    + "|".join(re.escape(n) for n in sorted({n for ns in COMPANY_NAMES.values() for n in ns}, key=len, reverse=True))
    + r")(?![\w])"
)
_NAME_TO_TICKER = {n: t for t, ns in COMPANY_NAMES.items() for n in ns}
_LOWER_RE = re.compile(r"[a-z]")


def _underlyings(watchlist: Iterable[object]) -> set[str]:
    """TOKENIZED_WATCHLIST's underlyings (`SYMBOL|name|underlying`)."""
    return {str(entry).split("|")[2].strip().upper() for entry in watchlist if str(entry).count("|") >= 2}


def known_tickers(extra: Iterable[str] = ()) -> frozenset[str]:
    """The bare tickers read in text: configured, watchlist, maintained and `extra`, less the
    ordinary words; a symbol that is not a plain ticker (SAP.DE, BRK.B) is read only with a `$`."""
    names = {str(s).strip().upper() for s in settings.EQUITY_SYMBOLS}
    names |= _underlyings(settings.TOKENIZED_WATCHLIST)
    names |= MAINTAINED | {str(s).strip().upper() for s in extra}
    return frozenset(n for n in names if _SYMBOL_RE.match(n) and n not in ORDINARY)


@lru_cache(maxsize=8)
def _bare_re(tickers: frozenset[str]) -> re.Pattern[str] | None:
    if not tickers:
        return None
    # Not after a letter, digit, `$`, `.`, `/` or `-` (a longer symbol, a cashtag, a URL or a
    # slug), not before a letter, a digit or a market suffix (SAP.DE); a Reuters code's
    # one-letter venue (NVDA.O, XOM.N) still names the ticker.
    return re.compile(
        r"(?<![A-Za-z0-9$./\-])("
        + "|".join(sorted(tickers, key=len, reverse=True))
        + r")(?![A-Za-z0-9]|\.[A-Za-z]{2})"
    )


def equity_tickers_in(text: str, *, known: Iterable[str] = ()) -> list[str]:
    """The equity tickers `text` names by a bare known ticker or a company name, in order."""
    found: dict[str, None] = {}
    for match in _NAME_RE.finditer(text):
        found[_NAME_TO_TICKER[match.group(1)]] = None
    pattern = _bare_re(known_tickers(known))
    if pattern is not None:
        for match in pattern.finditer(text):
            around = text[max(match.start() - _NEARBY, 0) : match.end() + _NEARBY]
            if _LOWER_RE.search(around):
                found[match.group(1)] = None
    return list(found)
