"""ccxt, routed through the project's one outbound HTTP function.

ccxt builds each venue's REST URL and parses its answer; we only carry the request: the
exchange instance's `fetch` (ccxt's base Exchange.fetch, which every API call goes through) is
overridden to GET through `FeedPass.fetch` (the feed limits, our User-Agent, no redirects, no
private targets) after rewriting the URL:

- EXCHANGE_API_BASES ("id=url,..."): the scheme and host of every URL of that venue are
  replaced by the given base (its path, if any, is prefixed); path and query are kept.
- replay: the base is the replay server's `exchange_<id>`. The replay server ignores query
  strings, but a venue's answer often depends on them (`/api/v3/klines?symbol=BTCUSDT&interval=1m`),
  so the query's meaningful parameters are folded into one last path segment, sorted:
  `/api/v3/klines/interval=1m,symbol=BTCUSDT`; the window parameters (limit, since, ...) are
  dropped. A path whose answer needs no parameter stays as it is (`/api/v3/exchangeInfo`)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from django.conf import settings

from catalog.feeds.registry import FeedError, FeedPass

# Query parameters that only bound a window or a list: a recorded answer does not depend on them
# (okx's "sz" is an order book's depth, as "limit" is binance's and bybit's).
WINDOW_PARAMS = frozenset(
    {
        "limit",
        "since",
        "startTime",
        "endTime",
        "start",
        "end",
        "after",
        "before",
        "symbols",
        "timestamp",
        "sz",
    }
)
# Market types loaded: spot (tickers, candles) and linear perpetuals (funding). Options and
# dated futures would multiply the requests (and the samples) for nothing we ingest.
MARKET_TYPES = ("spot", "swap", "linear")


def api_bases() -> dict[str, str]:
    """EXCHANGE_API_BASES parsed: {ccxt id: base URL}."""
    bases: dict[str, str] = {}
    for entry in str(settings.EXCHANGE_API_BASES or "").split(","):
        if not entry.strip():
            continue
        key, sep, url = entry.partition("=")
        if not sep or not key.strip() or not url.strip():
            raise FeedError(f"EXCHANGE_API_BASES entry {entry!r} is not id=url")
        bases[key.strip()] = url.strip().rstrip("/")
    return bases


def folded_query(query: str) -> str:
    pairs = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k not in WINDOW_PARAMS]
    return ",".join(f"{k}={v}" for k, v in sorted(pairs))


def rebased(url: str, base: str) -> str:
    """`url` with its scheme and host replaced by `base` (whose path prefixes url's)."""
    parts, to = urlsplit(url), urlsplit(base)
    return urlunsplit((to.scheme, to.netloc, to.path.rstrip("/") + parts.path, parts.query, ""))


def replay_url(url: str, base: str) -> str:
    """The replay server's URL for a venue URL (see the module's docstring)."""
    parts = urlsplit(url)
    folded = folded_query(parts.query)
    path = parts.path.rstrip("/") + (f"/{folded}" if folded else "")
    return base.rstrip("/") + path


def sample_path(url: str) -> str:
    """The path under catalog/feeds/samples/exchange_<id>/ a venue URL is recorded at (what
    replay_url asks the replay server for, without the base)."""
    return replay_url(url, "").lstrip("/")


def exchange_for(exchange_id: str, feed_pass: FeedPass) -> Any:
    """A ccxt exchange instance (sync) whose every request goes through `feed_pass.fetch`."""
    import ccxt  # loaded on first use: 200 modules, half a second of every process's start

    if exchange_id not in ccxt.exchanges:
        raise FeedError(f"{exchange_id} is not a ccxt exchange id")
    base_class = getattr(ccxt, exchange_id)
    if feed_pass.replay:
        base: str | None = feed_pass.replay_base(f"exchange_{exchange_id}")
    else:
        base = api_bases().get(exchange_id)

    class Routed(base_class):  # type: ignore[misc, valid-type]
        def fetch(self, url: str, method: str = "GET", headers: Any = None, body: Any = None) -> Any:
            if method != "GET":
                raise FeedError(f"{exchange_id}: public GETs only, not {method} {url}")
            if base is None:
                target = url
            elif feed_pass.replay:
                target = replay_url(url, base)
            else:
                target = rebased(url, base)
            resp = feed_pass.fetch(target)
            text = resp.text
            try:
                data = json.loads(text)
            except ValueError:
                raise FeedError(f"{exchange_id}: {target} answered malformed JSON") from None
            # The venue's own error envelope in a 200 (okx "code", bybit "retCode", ...) raises
            # ccxt's exception, as it would in ccxt's own fetch.
            self.handle_errors(
                resp.status_code, resp.reason, url, method, resp.headers, text, data, headers, body
            )
            return data

    exchange = Routed(
        {
            # ccxt's own throttle is for the real venue; a stand-in answers at once.
            "enableRateLimit": base is None,
            "timeout": int(settings.FEEDS_HTTP_TIMEOUT_SECONDS * 1000),
        }
    )
    fetch_markets = exchange.options.get("fetchMarkets")
    if isinstance(fetch_markets, dict) and isinstance(fetch_markets.get("types"), list):
        fetch_markets["types"] = [t for t in fetch_markets["types"] if t in MARKET_TYPES]
    return exchange
