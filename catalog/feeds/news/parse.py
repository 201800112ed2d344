"""News feeds, parsed: RSS 2.0 and Atom bytes -> plain NewsEntry records (pure: no database,
no network; the document is read and checked by catalog/feeds/syndication.py)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlsplit

from catalog.feeds.news.tickers import equity_tickers_in
from catalog.feeds.registry import FeedError
from catalog.feeds.syndication import entry_published, strip_html, syndication_parse

CATEGORIES = ("crypto", "equity", "general")

# Assets named in words or by ticker. Words match case-insensitively; a bare ticker only in
# capitals (so "sol" in Spanish text or "link" in prose is not a token).
ASSET_NAMES: dict[str, tuple[str, ...]] = {
    "BTC": ("bitcoin",),
    "ETH": ("ether", "ethereum"),
    "SOL": ("solana",),
    "XRP": ("ripple",),
    "DOGE": ("dogecoin",),
    "ADA": ("cardano",),
    "AVAX": ("avalanche",),
    "LINK": ("chainlink",),
    "DOT": ("polkadot",),
    "BNB": (),
    "LTC": ("litecoin",),
    "TON": ("toncoin",),
    "ARB": ("arbitrum",),
    "OP": ("optimism",),
    "POL": ("polygon",),
    "USDC": (),
    "USDT": ("tether",),
    "SUI": (),
    "TRX": ("tron",),
}
CRYPTO_TICKERS = frozenset(ASSET_NAMES)
_NAME_RE = re.compile(
    r"\b(" + "|".join(sorted({n for ns in ASSET_NAMES.values() for n in ns}, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)
_NAME_TO_TICKER = {n: t for t, ns in ASSET_NAMES.items() for n in ns}
_TICKER_RE = re.compile(
    r"(?<![A-Za-z0-9$])(" + "|".join(sorted(CRYPTO_TICKERS, key=len, reverse=True)) + r")\b"
)
_CASHTAG_RE = re.compile(r"(?<![A-Za-z0-9])\$([A-Z]{1,6})\b")
_EXCHANGE_RE = re.compile(
    r"\((?:NASDAQ|Nasdaq|NYSE(?: American| Arca)?|AMEX|OTC(?:QX|QB)?|TSX|LSE|CBOE|Cboe)\s*:\s*([A-Z][A-Z.]{0,6})\)"
)

REGULATION_RE = re.compile(
    r"\b(SEC|CFTC|FINRA|regulat\w*|enforcement|lawsuit|charged?|settle(?:s|d|ment)|fraud|complaint|"
    r"sanction\w*|compliance|rulemaking|licen[cs]e)\b",
    re.IGNORECASE,
)
MACRO_RE = re.compile(
    r"\b(Federal Reserve|FOMC|Fed|inflation|CPI|interest rates?|rate (?:cut|hike)s?|Treasury yields?|"
    r"GDP|payrolls|unemployment|monetary policy|central bank|discount rate)\b",
    re.IGNORECASE,
)


@dataclass(kw_only=True)
class NewsEntry:
    external_id: str
    title: str
    link: str
    summary: str  # text, HTML stripped
    content: str  # the full content the feed carried (HTML as sent), or ""
    text: str  # the full text (content, else summary), HTML stripped
    published_at: datetime | None
    title_hash: str
    tickers: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class ParsedFeed:
    title: str
    entries: list[NewsEntry]


def bounded(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,.;:")
    return cut + "…"


def title_hash(title: str) -> str:
    normalized = " ".join(re.findall(r"[a-z0-9]+", strip_html(title).lower()))
    return hashlib.sha256(normalized.encode()).hexdigest()[:40]


def tickers_in(text: str, *, known: Iterable[str] = ()) -> list[str]:
    """The assets `text` names: crypto by name or ticker, any ticker as a cashtag or with its
    exchange, and the equity tickers the service knows bare or by company name
    (catalog/feeds/news/tickers.py; `known`: those the stored rows price besides the settings)."""
    found: dict[str, None] = {}
    for match in _NAME_RE.finditer(text):
        found[_NAME_TO_TICKER[match.group(1).lower()]] = None
    for regex in (_TICKER_RE, _CASHTAG_RE, _EXCHANGE_RE):
        for match in regex.finditer(text):
            found[match.group(1)] = None
    for ticker in equity_tickers_in(text, known=known):
        found[ticker] = None
    return list(found)


def market_group(category: str, text: str, tickers: list[str]) -> str:
    """crypto / equities / macro / regulation: regulation first (an SEC action on a crypto
    firm is regulation news), then the category's own group, macro for general news."""
    if REGULATION_RE.search(text):
        return "regulation"
    if category == "crypto" or any(t in CRYPTO_TICKERS for t in tickers):
        return "crypto"
    if category == "equity":
        return "equities"
    if MACRO_RE.search(text):
        return "macro"
    return "equities" if tickers else "macro"


def parse_feed(body: bytes, *, url: str = "", known: Iterable[str] = ()) -> ParsedFeed:
    """Parse RSS 2.0/Atom bytes (`known`: equity tickers to read bare besides the settings').
    Raises FeedError for an empty body, malformed XML or a document that is no feed."""
    parsed = syndication_parse(body, url=url)
    known = frozenset(known)
    entries = []
    for entry in parsed.entries:
        title = strip_html(entry.get("title", ""))[:400]
        link = (entry.get("link") or "").strip()[:500]
        if not title and not link:
            continue
        summary = strip_html(entry.get("summary", ""))
        contents = entry.get("content") or []
        content = "\n".join(c.get("value", "") for c in contents if c.get("value"))
        text = strip_html(content) or summary or title
        entries.append(
            NewsEntry(
                external_id=(entry.get("id") or link or "")[:200],
                title=title or link,
                link=link,
                summary=summary,
                content=content,
                text=text,
                published_at=entry_published(entry),
                title_hash=title_hash(title or link),
                tickers=tickers_in(f"{title} {summary} {strip_html(content)}", known=known),
            )
        )
    return ParsedFeed(title=strip_html(parsed.feed.get("title", ""))[:120], entries=entries)


@dataclass(frozen=True)
class FeedConfig:
    category: str
    url: str
    name: str  # the source recorded on its items: the third field, else the URL's host


def feeds_setting(value: str) -> list[FeedConfig]:
    """NEWS_FEEDS (`category|url[|source name],...`) -> FeedConfigs. An unknown category is an
    error in configuration: raised (the pass fails with the reason)."""
    feeds = []
    for item in value.split(","):
        item = item.strip()
        if not item:
            continue
        parts = [p.strip() for p in item.split("|")]
        category = parts[0].lower()
        if len(parts) not in (2, 3) or category not in CATEGORIES or not parts[1]:
            raise FeedError(
                f"NEWS_FEEDS entry {item!r}: expected category|url[|name] with category in {CATEGORIES}"
            )
        host = (urlsplit(parts[1]).hostname or "news").removeprefix("www.")
        name = parts[2] if len(parts) == 3 and parts[2] else host
        feeds.append(FeedConfig(category=category, url=parts[1], name=name[:120]))
    return feeds
